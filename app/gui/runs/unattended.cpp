#include "gui/runs/unattended.hpp"

#include <algorithm>

#include "gui/runs/audit_sweep.hpp"
#include "gui/runs/driver.hpp"
#include "gui/runs/screenshot.hpp"
#include "gui/model/gui_options.hpp"

namespace headsplit::gui {

std::unique_ptr<UnattendedRun> make_unattended_run(const GuiOptions& o) {
    if (!o.layout_audit.empty()) {
        std::vector<AuditCase> cases = audit_cases();
        if (!o.audit_cases.empty())
            cases.erase(std::remove_if(cases.begin(), cases.end(),
                                       [&](const AuditCase& a) {
                                           return std::find(o.audit_cases.begin(), o.audit_cases.end(), a.name) == o.audit_cases.end();
                                       }),
                        cases.end());
        return std::make_unique<AuditSweep>(o.audit_windows, o.audit_fonts, std::move(cases), o.layout_audit);
    }
    if (o.drive_frames > 0) return std::make_unique<Driver>(o.drive_frames, o.drive_report);
    if (!o.screenshot.empty()) return std::make_unique<ScreenshotRun>(o.screenshot, o.step, o.layout_report, o.keys);
    return nullptr;
}

}  // namespace headsplit::gui
