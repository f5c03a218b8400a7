#include "web/page.hpp"
#include "web/page_lesson.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <thread>

#include <emscripten.h>
#include <emscripten/html5.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <nlohmann/json.hpp>

#include "headsplit/base/threads.hpp"
#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/engine/inputs.hpp"
#include "headsplit/io/address.hpp"
#include "headsplit/io/config_options.hpp"
#include "headsplit/io/trace_json.hpp"
#include "gui/model/compute.hpp"
#include "gui/root/window.hpp"
#include "gui/runs/audit.hpp"
#include "gui/panels/style.hpp"

static_assert(sizeof(ImDrawIdx) == 4,
              "the page draws with WebGL2, which has no base vertex: a draw list past 65,536 vertices needs "
              "32-bit indices (cmake/Web.cmake)");

namespace headsplit::gui {

namespace {

extern "C" {  // web/page_library.js
char* headsplit_page_query();
void headsplit_page_set_query(const char* pairs_json);
void headsplit_page_set_text(const char* id, const char* text);
void headsplit_page_mark(const char* name, const char* value);
void headsplit_page_refuse(const char* line);
void headsplit_page_download(const char* path, const char* name, int handout);
void headsplit_page_download_zip(const char* paths_json, const char* name);
void headsplit_page_copy(const char* text);
double headsplit_page_since_input();
}

// ImGui's clipboard in the page: GLFW has none in a browser. Copies go to the system's
// clipboard where the browser allows it; a paste arrives as the browser's paste event
// (headsplit_page_paste), so ImGui's own Ctrl+V finds nothing to paste.
const char* clipboard_text(void*) { return ""; }
void set_clipboard_text(void*, const char* text) { headsplit_page_copy(text); }

constexpr const char* kDownloads = "/downloads";

// What a frame shows of its trace: the step, the layout, presenter mode's side, a blank screen.
std::string view_of(const AppState& st) {
    return std::to_string(st.step) + " " + std::to_string(st.presenting) + " " +
           std::to_string(static_cast<int>(st.presenter_side)) + " " + std::to_string(st.blank);
}

class PageRun final : public UnattendedRun {
public:
    PageRun() {
        std::error_code ec;
        std::filesystem::create_directories(kDownloads, ec);
    }

    bool before_frame(AppState& st, GLFWwindow* win, double now) override {
        lesson_.before_frame(st, now);
        // The panels are recorded until a trace's layout has settled (LayoutSettle), and on
        // every frame when the layout report is asked for.
        layout_audit().enabled = page_requests().layout_report || st.trace.get() != reported_;
        st.screenshot_dir = kDownloads;
        ImGui::GetIO().GetClipboardTextFn = clipboard_text;
        ImGui::GetIO().SetClipboardTextFn = set_clipboard_text;
        follow_canvas(st, win);
        return true;
    }

    bool frame_drawn(AppState& st, const FrameInfo& f) override {
        // The longest time between two drawn frames while a trace computes off the frame (0
        // when no frame was drawn meanwhile): the page's answer to "does it freeze?".
        const bool busy = st.computer->busy();
        if ((busy || was_busy_) && last_started_ > 0) longest_gap_ = std::max(longest_gap_, f.started - last_started_);
        busy_frames_ += busy ? 1 : 0;
        was_busy_ = busy;
        last_started_ = f.started;
        headsplit_page_mark("framesDrawn", std::to_string(++frames_).c_str());  // the frame rate, for tests
        if (!drawn_) {  // the first frame on the canvas: milliseconds since the page began to load
            drawn_ = true;
            headsplit_page_mark("firstFrame", std::to_string(emscripten_get_now()).c_str());
            headsplit_page_mark("threads", kHaveThreads ? "1" : "0");  // which of the two builds runs
        }
        if (st.trace && !st.computer->busy() && !trace_shown_) {
            // The first frame with a computed trace: milliseconds since the page began to load
            // (a link's whole wait: loading, starting, computing).
            trace_shown_ = true;
            headsplit_page_mark("traceShown", std::to_string(emscripten_get_now()).c_str());
        }
        // Settled: the trace in for three frames and the panels where they stood the frame
        // before (LayoutSettle; a layout still moving after kMaxSettleFrames is taken as it is).
        // A new trace (one computed in the frame too) starts again; so does, where the layout
        // report is asked for, another view of it (a key moved the step, blanked the screen or
        // turned presenter mode's side), whose report is written again once it settles.
        const std::string view = page_requests().layout_report ? view_of(st) : std::string();
        if (st.trace.get() != last_trace_ || view != last_view_) {
            last_trace_ = st.trace.get();
            last_view_ = view;
            settled_ = 0;
            settle_.reset();
        }
        settled_ = picture_ready(st) ? settled_ + 1 : 0;
        const bool still = layout_audit().enabled && settle_.still(layout_audit().report());
        if (take_frame(settled_, still) != Take::Wait && (st.trace.get() != reported_ || view != reported_view_)) {
            settle_.reset();
            reported_ = st.trace.get();
            reported_view_ = view;
            if (page_requests().json) headsplit_page_set_text("trace-json", trace_to_json(*st.trace).c_str());
            if (page_requests().layout_report) {
                // The report and the audit's verdict on it (its rules, the same code as the
                // desktop's --layout-audit): one problem a line, none when the frame reads well.
                const LayoutReport& report = layout_audit().report();
                std::string problems;
                for (const std::string& p : audit_problems(report, AuditRules{})) problems += p + "\n";
                headsplit_page_set_text("layout-report", layout_report_json(report).c_str());
                headsplit_page_set_text("layout-problems", problems.c_str());
            }
            headsplit_page_mark("longestBusyFrameMs", std::to_string(longest_gap_ * 1e3).c_str());
            headsplit_page_mark("busyFrames", std::to_string(busy_frames_).c_str());
            double steps_ms = 0;  // the trace's own step times, as `headsplit trace` totals them
            std::string each;
            for (const Step& s : st.trace->steps) {
                steps_ms += s.ms;
                each += (each.empty() ? "" : " ") + std::to_string(s.ms);
            }
            headsplit_page_mark("stepsMs", std::to_string(steps_ms).c_str());
            headsplit_page_mark("stepMs", each.c_str());
            headsplit_page_mark("computeMs", std::to_string(st.last_compute_ms).c_str());  // the trace's, as the status line says
            headsplit_page_mark("settled", std::to_string(st.step).c_str());
        }
        return true;
    }

    void after_frame(AppState& st, const FrameInfo&) override {
        offer_downloads(st);
        lesson_.after_frame(st, update_address(st));
    }

    int finish() override { return 0; }

private:
    // The canvas fills the tab (CSS); its pixels are the CSS size times the device pixel
    // ratio, and the text grows with the ratio so that it keeps its size on the screen.
    void follow_canvas(AppState& st, GLFWwindow* win) {
        double css_w = 0, css_h = 0;
        emscripten_get_element_css_size("#canvas", &css_w, &css_h);
        const double ratio = std::clamp(emscripten_get_device_pixel_ratio(), 0.5, 4.0);
        if (ratio != ratio_) {
            st.font_scale = static_cast<float>(st.font_scale / ratio_ * ratio);
            st.font_dirty = true;
            ratio_ = ratio;
        }
        const int w = std::max(320, static_cast<int>(std::lround(css_w * ratio)));
        const int h = std::max(240, static_cast<int>(std::lround(css_h * ratio)));
        int now_w = 0, now_h = 0;
        glfwGetWindowSize(win, &now_w, &now_h);
        if (w != now_w || h != now_h) glfwSetWindowSize(win, w, h);
    }

    // What the window saved under /downloads goes to the browser's downloads, then is removed:
    // the take-home scripts (PyTorch and NumPy) as one zip, so the browser asks no leave for
    // a second download.
    void offer_downloads(AppState& st) {
        namespace fs = std::filesystem;
        std::error_code ec;
        std::vector<fs::path> saved;
        std::vector<std::string> scripts;
        for (const auto& entry : fs::directory_iterator(kDownloads, ec)) saved.push_back(entry.path());
        std::sort(saved.begin(), saved.end());
        for (const fs::path& p : saved) {
            if (p.extension() == ".py") {
                scripts.push_back(p.string());
                continue;
            }
            const bool handout = fs::is_directory(p, ec);
            const std::string name = p.filename().string() + (handout ? ".html" : "");
            headsplit_page_download(p.c_str(), name.c_str(), handout);
            fs::remove_all(p, ec);
        }
        const std::string prefix = std::string("saved ") + kDownloads + "/";
        if (!scripts.empty()) {
            // headsplit-lab-<time>-torch.py, -numpy.py: headsplit-lab-<time>.zip
            std::string stem = fs::path(scripts.front()).stem().string();
            stem = stem.substr(0, stem.rfind('-'));
            std::string inside;
            for (const std::string& s : scripts) inside += (inside.empty() ? "" : ", ") + fs::path(s).filename().string();
            headsplit_page_download_zip(nlohmann::json(scripts).dump().c_str(), (stem + ".zip").c_str());
            for (const std::string& s : scripts) fs::remove(s, ec);
            if (st.last_screenshot.rfind(prefix, 0) == 0)
                st.last_screenshot = "downloaded " + stem + ".zip (" + inside + "; python3 FILE reruns it)";
        }
        if (st.last_screenshot.rfind(prefix, 0) == 0)
            st.last_screenshot = "downloaded " + st.last_screenshot.substr(prefix.size());
    }

    // The address: the configuration's options, then the step and the view, then the lesson
    // it follows. Returns its parameters.
    QueryPairs update_address(const AppState& st) {
        std::vector<std::pair<std::string, std::string>> q = config_options(st.config);
        if (q.empty()) q = page_requests().config_query;  // (config_options spells --backend gl)
        q.emplace_back("step", std::to_string(st.step));
        const double scale = st.font_scale / ratio_;
        if (std::abs(scale - 1.0) > 1e-3) q.emplace_back("font-scale", format_scale(scale));
        if (st.presenting) q.emplace_back("present", "");
        if (st.quiz.on) q.emplace_back("quiz", "");
        if (!st.dark) q.emplace_back("light", "");
        if (page_requests().json) q.emplace_back("json", "1");
        if (page_requests().layout_report) q.emplace_back("layout-report", "1");
        if (!page_requests().lesson.empty()) q.emplace_back("lesson", page_requests().lesson);
        if (!page_requests().teacher.empty()) q.emplace_back("teacher", page_requests().teacher);
        const std::string json = nlohmann::json(q).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (json == last_query_) return q;
        last_query_ = json;
        headsplit_page_set_query(json.c_str());
        return q;
    }

    static std::string format_scale(double s) {
        char text[16];
        std::snprintf(text, sizeof text, "%.3g", s);
        return text;
    }

    double ratio_ = 1.0;
    bool drawn_ = false;
    bool trace_shown_ = false;
    long frames_ = 0;
    bool was_busy_ = false;
    int busy_frames_ = 0;  // frames drawn while a trace computed off the frame
    double last_started_ = 0, longest_gap_ = 0;
    int settled_ = 0;
    const Trace* reported_ = nullptr;
    LayoutSettle settle_;  // whether the panels have come to rest
    const Trace* last_trace_ = nullptr;  // the trace last frame showed
    std::string reported_view_, last_view_;  // view_of() when reported, and last frame
    std::string last_query_;
    PageLesson lesson_;  // the live lesson the page follows or drives, if any
};

}  // namespace

// The page's paste event (index.html): its text typed into the text box that has the keyboard.
extern "C" EMSCRIPTEN_KEEPALIVE void headsplit_page_paste(const char* text) {
    if (ImGui::GetCurrentContext()) ImGui::GetIO().AddInputCharactersUTF8(text);
}

PageRequests& page_requests() {
    static PageRequests r;
    return r;
}

std::unique_ptr<UnattendedRun> make_page_run(const GuiOptions&) { return std::make_unique<PageRun>(); }

std::vector<std::pair<std::string, std::string>> page_query() {
    char* text = headsplit_page_query();
    const std::string query = text ? text : "";
    std::free(text);
    return parse_query(query);
}

double page_seconds_since_input() { return headsplit_page_since_input(); }

void warm_up_engine(const Config& first) {
    const bool plain = first.weights_dir.empty() && first.embeddings.empty() && first.batch == 1 &&
                       first.context.empty() && first.decode_from == 0;
    if (is_small(first) || !plain || !kHaveThreads) return;
    // A failure anywhere here changes nothing: the window computes `first` itself and says
    // what is wrong.
    try {
        std::thread([c = first]() mutable {
            c.backend = BackendKind::Cpu;  // the page's engine
            // 48 tokens, fewer for wide layers: at most 0.5 GFLOP (gpt2-small at 48 tokens, whose
            // 12 x 48 x 48 score grid takes the engine's path for large grids, as T = 128 does);
            // nothing for layers wider still (llama).
            try {
                for (std::size_t tokens : {48, 32, 16, 8}) {
                    c.tokens.resize(std::min(c.tokens.size(), tokens));
                    if (c.block > 0) c.block = std::min<std::int64_t>(c.block, c.num_tokens());  // flash's tile
                    const CheckedConfig shorter = check_config(c, kNoWords);  // a warm-up: no one reads it
                    if (shorter.flops > 5e8 || !shorter.fits_budget()) continue;
                    const std::unique_ptr<Backend> cpu = make_cpu_backend();
                    (void)run(shorter, make_inputs(c), make_weights(c), *cpu);
                    return;
                }
            } catch (...) {
            }
        }).detach();
    } catch (...) {  // no thread to be had
    }
}

void show_refusal(const std::string& line) { headsplit_page_refuse(line.c_str()); }

}  // namespace headsplit::gui
