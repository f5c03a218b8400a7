#include "gui/runs/unattended.hpp"

#include "gui/runs/audit_sweep.hpp"
#include "gui/runs/driver.hpp"
#include "gui/runs/screenshot.hpp"
#include "gui/model/gui_options.hpp"

namespace headsplit::gui {

std::unique_ptr<UnattendedRun> make_unattended_run(const GuiOptions& o) {
    if (!o.layout_audit.empty())
        return std::make_unique<AuditSweep>(o.audit_windows, o.audit_fonts, audit_cases(), o.layout_audit);
    if (o.drive_frames > 0) return std::make_unique<Driver>(o.drive_frames, o.drive_report);
    if (!o.screenshot.empty()) return std::make_unique<ScreenshotRun>(o.screenshot, o.step, o.layout_report);
    return nullptr;
}

}  // namespace headsplit::gui
