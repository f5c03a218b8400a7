#include "gui/runs/requests.hpp"

#include <cstdio>
#include <ctime>
#include <exception>

#include "gui/platform/gl.hpp"

#include "headsplit/io/export.hpp"
#include "headsplit/io/writing.hpp"
#include "gui/runs/handout.hpp"
#include "gui/platform/png.hpp"

namespace headsplit::gui {

namespace {

// F12: the frame just rendered, as headsplit-stepNN-<time>.png beside the other screenshots.
void save_screenshot(AppState& st, int fw, int fh) {
    char name[64];
    std::snprintf(name, sizeof name, "headsplit-step%02d-%ld.png", st.step, static_cast<long>(std::time(nullptr)));
    const std::string path = st.screenshot_dir + "/" + name;
    std::string why;
    st.last_screenshot = save_png(path, fw, fh, &why) ? "saved " + path : why;
}

// "save handout": a new folder headsplit-handout-<time> beside the screenshots. It is drawn
// offscreen, which leaves another viewport set: the window's is put back.
void save_handout(AppState& st, int fw, int fh) {
    char name[64];
    std::snprintf(name, sizeof name, "headsplit-handout-%ld", static_cast<long>(std::time(nullptr)));
    const std::string dir = st.screenshot_dir + "/" + name;
    if (!st.trace || st.shapes_only) {
        st.last_screenshot = "no handout: this configuration is shown as shapes only";
        return;
    }
    const auto steps = static_cast<std::int64_t>(st.trace->steps.size());
    if (steps > kHandoutPictures) {
        st.last_screenshot = "no handout: " + std::to_string(steps) + " steps are more than the " +
                             std::to_string(kHandoutPictures) + " pictures a handout draws from here; headsplit handout " +
                             "--out DIR --max-pictures " + std::to_string(steps) + " draws them";
        return;
    }
    try {
        const int n = write_handout(st.trace, dir);
        st.last_screenshot = "saved " + dir + "/index.html (" + std::to_string(n) + " steps)";
    } catch (const std::exception& e) {
        st.last_screenshot = e.what();
    }
    glViewport(0, 0, fw, fh);
}

}  // namespace

void serve_requests(AppState& st, int fw, int fh) {
    if (st.screenshot_requested) {
        st.screenshot_requested = false;
        save_screenshot(st, fw, fh);
    }
    if (st.scripts_requested) {
        st.scripts_requested = false;
        st.last_screenshot = save_scripts(st);
    }
    if (st.handout_requested) {
        st.handout_requested = false;
        save_handout(st, fw, fh);
    }
}

std::string save_scripts(const AppState& st) {
    if (!st.trace || st.shapes_only) return "no scripts: this configuration is shown as shapes only";
    const std::string stem = st.screenshot_dir + "/headsplit-lab-" + std::to_string(static_cast<long>(std::time(nullptr)));
    try {
        write_file_atomically(stem + "-torch.py", export_script(*st.trace, ScriptKind::PyTorch));
        write_file_atomically(stem + "-numpy.py", export_script(*st.trace, ScriptKind::NumPy));
    } catch (const std::exception& e) {
        return e.what();
    }
    return "saved " + stem + "-torch.py and -numpy.py (python3 FILE reruns it)";
}

}  // namespace headsplit::gui
