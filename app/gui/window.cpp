#include "window.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <vector>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sys/stat.h>

#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <stb_image_write.h>

#include "audit_sweep.hpp"
#include "headsplit/export.hpp"
#include "headsplit/trace_json.hpp"
#include "driver.hpp"
#include "handout.hpp"
#include "panels.hpp"
#include "state.hpp"
#include "style.hpp"

namespace headsplit::gui {

namespace {

std::string g_glfw_error;

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Tries GL 4.3 core (EGL first, so a worker thread's headless EGL context and the window
// share one GL dispatch), then the platform's native API, then GL 3.3 (CPU backend only).
GLFWwindow* open_window(const GuiOptions& o) {
    struct Attempt {
        int api, major, minor;
    };
    const Attempt attempts[] = {{GLFW_EGL_CONTEXT_API, 4, 3}, {GLFW_NATIVE_CONTEXT_API, 4, 3}, {GLFW_NATIVE_CONTEXT_API, 3, 3}};
    for (const Attempt& a : attempts) {
        glfwDefaultWindowHints();
        glfwWindowHint(GLFW_CONTEXT_CREATION_API, a.api);
        glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, a.major);
        glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, a.minor);
        glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
        glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
        glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE);
        if (GLFWwindow* w = glfwCreateWindow(o.width, o.height, "HeadSplit: multi-head attention, step by step", nullptr, nullptr))
            return w;
    }
    return nullptr;
}

void load_fonts(AppState& st) {
    ImGuiIO& io = ImGui::GetIO();
    add_fonts(st.font_scale);
    // The texture is made here, not by the first frame's NewFrame, so its sampling can be
    // set: glyphs are baked at the size they are drawn, so the atlas is read texel for texel,
    // and nearest sampling shows the same text while costing llvmpipe less for every pixel
    // drawn (solid shapes read the atlas too).
    static bool built_once = false;
    if (built_once) {
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
    } else {
        ImGui_ImplOpenGL3_CreateDeviceObjects();  // shaders, buffers and the font texture
    }
    built_once = true;
    glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<std::intptr_t>(io.Fonts->TexID)));
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    st.font_dirty = false;
}



void handle_keys(AppState& st, GLFWwindow* win, double now) {
    ImGuiIO& io = ImGui::GetIO();
    if (io.WantTextInput) return;
    auto pressed = [](ImGuiKey k) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k)); };
    if (pressed(ImGuiKey_RightArrow)) go_to_step(st, st.step + 1, now);
    if (pressed(ImGuiKey_LeftArrow)) go_to_step(st, st.step - 1, now);
    if (pressed(ImGuiKey_Home)) go_to_step(st, 0, now);
    if (pressed(ImGuiKey_End) && st.trace) go_to_step(st, static_cast<int>(st.trace->steps.size()) - 1, now);
    if (pressed(ImGuiKey_Space)) {
        st.playing = !st.playing;
        st.last_advance = now;
    }
    if (ImGui::IsKeyPressed(GLFW_KEY_Q)) set_quiz(st, !st.quiz.on);
    if (quiz_waiting(st))  // keys 1 to 4 choose an option (the stage's buttons say which)
        for (int i = 0; i < 4 && quiz_waiting(st); ++i)
            if (ImGui::IsKeyPressed(GLFW_KEY_1 + i) && i < static_cast<int>(st.quiz.pending->options.size()))
                quiz_answer(st, st.quiz.pending->options[static_cast<std::size_t>(i)].shape, now);
    if (ImGui::IsKeyPressed(GLFW_KEY_F11)) st.fullscreen = !st.fullscreen;
    if (ImGui::IsKeyPressed(GLFW_KEY_F5)) st.presenting = !st.presenting;
    if (st.presenting && pressed(ImGuiKey_Escape)) st.presenting = false;
    if (ImGui::IsKeyPressed(GLFW_KEY_F12)) st.screenshot_requested = true;
    (void)win;
}

void apply_fullscreen(AppState& st, GLFWwindow* win, bool& is_full, int saved[4]) {
    if (st.fullscreen == is_full) return;
    GLFWmonitor* monitor = glfwGetPrimaryMonitor();
    if (st.fullscreen && monitor) {
        glfwGetWindowPos(win, &saved[0], &saved[1]);
        glfwGetWindowSize(win, &saved[2], &saved[3]);
        const GLFWvidmode* mode = glfwGetVideoMode(monitor);
        glfwSetWindowMonitor(win, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
    } else {
        glfwSetWindowMonitor(win, nullptr, saved[0], saved[1], saved[2], saved[3], 0);
        st.fullscreen = false;
    }
    is_full = st.fullscreen;
}

// One fixed window per panel, laid out for the display size.
// Takes a finished trace onto the screen. A GL problem that sent the work to the CPU is
// shown in the Controls panel and, once per message, written to stderr for whoever
// launched the app from a terminal.
void take_result(AppState& st, double now) {
    auto r = st.computer->take();
    if (!r) return;
    static std::string last_said;
    if (r->notice.find("using the CPU backend") != std::string::npos && r->notice != last_said) {
        std::cerr << "headsplit: " << r->notice << "\n";
        last_said = r->notice;
    }
    apply_result(st, std::move(*r), now);
}

// A splitter: a thin strip on a boundary between panels; dragging it moves the boundary,
// a fraction of the window kept in st.splits.
struct Splitter {
    int id;
    bool vertical;    // a vertical line (drag left and right)
    float at;         // its x (vertical) or y
    float from, to;   // its extent along the other axis
    float* fraction;  // what dragging sets
    float origin, span, lo, hi;  // fraction = (mouse - origin) / span, clamped to [lo, hi]
};

void handle_splitters(const std::vector<Splitter>& splitters) {
    static int dragging = -1;
    const ImGuiIO& io = ImGui::GetIO();
    const ImVec2 m = io.MousePos;
    const float grab = 5.0f;
    for (const Splitter& sp : splitters) {
        const float along = sp.vertical ? m.y : m.x, across = sp.vertical ? m.x : m.y;
        const bool hovered = along >= sp.from && along <= sp.to && std::abs(across - sp.at) <= grab;
        if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) dragging = sp.id;
        if (!hovered && dragging != sp.id) continue;
        ImGui::SetMouseCursor(sp.vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
        const ImVec2 a = sp.vertical ? ImVec2(sp.at, sp.from) : ImVec2(sp.from, sp.at);
        const ImVec2 b = sp.vertical ? ImVec2(sp.at, sp.to) : ImVec2(sp.to, sp.at);
        ImGui::GetForegroundDrawList()->AddLine(a, b, ImGui::GetColorU32(ImGuiCol_SeparatorActive), 3.0f);
        if (dragging == sp.id) {
            if (ImGui::IsMouseDown(ImGuiMouseButton_Left))
                *sp.fraction = std::clamp((across - sp.origin) / sp.span, sp.lo, sp.hi);
            else
                dragging = -1;
        }
    }
}

void draw_presenter(AppState& st, double now) {
    // Keys only: the caption across the top, the stage and the heatmaps share the rest.
    const ImVec2 size = ImGui::GetIO().DisplaySize;
    const float W = size.x, H = size.y;
    const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   ImGuiWindowFlags_NoSavedSettings;
    auto place = [&](float x, float y, float w, float h) {
        ImGui::SetNextWindowPos({x, y}, ImGuiCond_Always);
        ImGui::SetNextWindowSize({std::max(w, 50.0f), std::max(h, 50.0f)}, ImGuiCond_Always);
    };
    take_result(st, now);
    const ImGuiStyle& style = ImGui::GetStyle();
    const float caption_h = ImGui::GetTextLineHeightWithSpacing() * 1.5f + 2 * ImGui::GetTextLineHeightWithSpacing() +
                            style.WindowPadding.y * 2 + 4;
    place(0, 0, W, caption_h);
    if (ImGui::Begin("Presenter", nullptr, fixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_HorizontalScrollbar))
        DrawCaption(st);
    ImGui::End();
    st.hover = Hover{};
    const float stage_w = W * st.splits.stage;
    place(0, caption_h, stage_w, H - caption_h);
    if (ImGui::Begin("Stage", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
        audit_panel("stage");
        DrawStage(st, now);
    }
    ImGui::End();
    place(stage_w, caption_h, W - stage_w, H - caption_h);
    if (ImGui::Begin("Heads", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar)) DrawHeatmaps(st);
    ImGui::End();
    handle_splitters({{5, true, stage_w, caption_h, H, &st.splits.stage, 0, W, 0.3f, 0.8f}});
}

void draw_panels(AppState& st, double now) {
    if (st.presenting) {
        draw_presenter(st, now);
        return;
    }
    const ImVec2 size = ImGui::GetIO().DisplaySize;
    const float W = size.x, H = size.y;
    // The stage and the heads are the show: by default the controls and the code columns
    // take what their text needs at this font, no more than a fifth and a quarter of the
    // width; the splitters move every boundary.
    // (At the default fractions the caps are 330 and 560 px x font scale.)
    const float left = st.splits.left * std::min(W, 1650.0f * st.font_scale);
    const float right = st.splits.right * std::min(W, 2240.0f * st.font_scale);
    const ImGuiStyle& style = ImGui::GetStyle();
    const float timeline_h = ImGui::GetFrameHeight() /* title */ + ImGui::GetFrameHeightWithSpacing() /* buttons */ +
                             ImGui::GetTextLineHeight() * 2 + 10 /* tiles */ + style.ScrollbarSize +
                             style.WindowPadding.y * 2 + style.ItemSpacing.y * 2;
    const float bottom_h = (H - timeline_h) * (1.0f - st.splits.stage);
    const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   ImGuiWindowFlags_NoSavedSettings;
    auto place = [&](float x, float y, float w, float h) {
        ImGui::SetNextWindowPos({x, y}, ImGuiCond_Always);
        ImGui::SetNextWindowSize({std::max(w, 50.0f), std::max(h, 50.0f)}, ImGuiCond_Always);
    };

    place(0, 0, left, H);
    if (ImGui::Begin("Controls", nullptr, fixed)) DrawControls(st, now);
    ImGui::End();
    // A change made above is computed at once for teaching sizes: show it in this frame.
    take_result(st, now);

    place(left, 0, W - left, timeline_h);
    if (ImGui::Begin("Timeline", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar)) {
        audit_panel("timeline");
        DrawTimeline(st, now);
    }
    ImGui::End();

    st.hover = Hover{};
    place(left, timeline_h, W - left - right, H - timeline_h - bottom_h);
    if (ImGui::Begin("Stage", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
        audit_panel("stage");
        DrawStage(st, now);
    }
    ImGui::End();

    place(left, H - bottom_h, W - left - right, bottom_h);
    if (ImGui::Begin("Heads", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar)) {
        if (ImGui::BeginTabBar("bottom")) {
            if (ImGui::BeginTabItem("Attention heatmaps", nullptr, st.open_heatmaps ? ImGuiTabItemFlags_SetSelected : 0)) {
                DrawHeatmaps(st);
                ImGui::EndTabItem();
            }
            if (ImGui::BeginTabItem("Weight split", nullptr, st.open_weights ? ImGuiTabItemFlags_SetSelected : 0)) {
                DrawWeightSplit(st);
                ImGui::EndTabItem();
            }
            if (ImGui::BeginTabItem("Why weight splits", nullptr, st.open_why ? ImGuiTabItemFlags_SetSelected : 0)) {
                DrawWhy(st);
                ImGui::EndTabItem();
            }
            st.open_why = st.open_weights = st.open_heatmaps = false;
            ImGui::EndTabBar();
        }
    }
    ImGui::End();

    const float code_h = (H - timeline_h) * st.splits.code;
    place(W - right, timeline_h, right, code_h);
    if (ImGui::Begin("PyTorch code", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar)) {
        audit_panel("code");
        DrawCode(st);
    }
    ImGui::End();

    place(W - right, timeline_h + code_h, right, H - timeline_h - code_h);
    if (ImGui::Begin("Inspector", nullptr, fixed)) DrawInspector(st);
    ImGui::End();

    handle_splitters({
        {1, true, left, 0, H, &st.splits.left, 0, W, 0.1f, 0.4f},
        {2, true, W - right, timeline_h, H, &st.splits.right, W, -W, 0.1f, 0.45f},
        {3, false, H - bottom_h, left, W - right, &st.splits.stage, timeline_h, H - timeline_h, 0.2f, 0.85f},
        {4, false, timeline_h + code_h, W - right, W, &st.splits.code, timeline_h, H - timeline_h, 0.15f, 0.85f},
    });
}

// The splitters' fractions in the settings file, as a section of ImGui's ini file:
// [HeadSplit][Layout] left=0.2 right=0.25 stage=0.55 code=0.5
void register_layout_settings(AppState& st) {
    ImGuiSettingsHandler h;
    h.TypeName = "HeadSplit";
    h.TypeHash = ImHashStr("HeadSplit");
    h.UserData = &st;
    h.ReadOpenFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, const char* name) -> void* {
        return std::string(name) == "Layout" ? handler->UserData : nullptr;
    };
    h.ReadLineFn = [](ImGuiContext*, ImGuiSettingsHandler*, void* entry, const char* line) {
        AppState::Splits& sp = static_cast<AppState*>(entry)->splits;
        float v = 0;
        if (std::sscanf(line, "left=%f", &v) == 1) sp.left = std::clamp(v, 0.1f, 0.4f);
        else if (std::sscanf(line, "right=%f", &v) == 1) sp.right = std::clamp(v, 0.1f, 0.45f);
        else if (std::sscanf(line, "stage=%f", &v) == 1) sp.stage = std::clamp(v, 0.2f, 0.85f);
        else if (std::sscanf(line, "code=%f", &v) == 1) sp.code = std::clamp(v, 0.15f, 0.85f);
    };
    h.WriteAllFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, ImGuiTextBuffer* buf) {
        const AppState::Splits& sp = static_cast<AppState*>(handler->UserData)->splits;
        buf->appendf("[HeadSplit][Layout]\nleft=%.3f\nright=%.3f\nstage=%.3f\ncode=%.3f\n\n", sp.left, sp.right, sp.stage,
                     sp.code);
    };
    ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
}

// ~/.config/headsplit/imgui.ini (XDG_CONFIG_HOME when set); "" when there is no home.
std::string settings_path() {
    std::string dir;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) dir = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home) dir = std::string(home) + "/.config";
    if (dir.empty()) return "";
    dir += "/headsplit";
    ::mkdir(dir.c_str(), 0755);  // best effort: without it the layout is simply not kept
    return dir + "/imgui.ini";
}

}  // namespace

// "save take-home scripts": the trace on screen as lab-<time>-torch.py and lab-<time>-numpy.py
// beside the screenshots; the line Controls shows.
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

bool save_png(const std::string& path, int w, int h, std::string* why, unsigned read_buffer) {
    std::vector<unsigned char> pixels(static_cast<std::size_t>(w) * h * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(read_buffer);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // opaque
    stbi_flip_vertically_on_write(1);
    const std::string tmp = path + ".tmp.png";
    if (!stbi_write_png(tmp.c_str(), w, h, 4, pixels.data(), w * 4)) {
        *why = "cannot write " + path + "; choose a path in a folder you can write to";
        std::remove(tmp.c_str());
        return false;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        *why = "cannot write " + path;
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

int run_gui(const GuiOptions& o) {
    glfwSetErrorCallback([](int, const char* what) { g_glfw_error = what; });
    if (!glfwInit()) {
        std::cerr << "headsplit: cannot open a window: " << g_glfw_error
                  << "; set DISPLAY, run under xvfb-run, or use `headsplit trace`\n";
        return 1;
    }
    GLFWwindow* win = open_window(o);
    if (!win) {
        std::cerr << "headsplit: cannot open an OpenGL 3.3+ window: " << g_glfw_error << "; use `headsplit trace`\n";
        glfwTerminate();
        return 1;
    }
    glfwMakeContextCurrent(win);
    const bool unattended = !o.screenshot.empty() || o.drive_frames > 0 || !o.layout_audit.empty();
    glfwSwapInterval(unattended ? 0 : 1);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    // The splitters are kept in the user's settings folder, never in the working folder; the
    // unattended runs (screenshots, audits, soaks) neither read nor write it, so they are
    // the same on every machine.
    static std::string ini;
    ini = unattended ? "" : settings_path();
    ImGui::GetIO().IniFilename = ini.empty() ? nullptr : ini.c_str();
    ImGui_ImplGlfw_InitForOpenGL(win, true);
    ImGui_ImplOpenGL3_Init("#version 330");

    AppState st;
    register_layout_settings(st);
    if (!ini.empty()) ImGui::LoadIniSettingsFromDisk(ini.c_str());
    st.presenting = o.present;
    st.compare_masks = o.compare_masks;
    st.focus_head = o.focus_head;
    set_quiz(st, o.quiz);
    st.stage_view.zoom = o.zoom;
    st.stage_view.token0 = o.pan[0], st.stage_view.col0 = o.pan[1], st.stage_view.head0 = o.pan[2];
    st.config = o.config;
    st.font_scale = o.font_scale;
    st.dark = !o.light;
    st.gl_renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    st.computer = std::make_unique<TraceComputer>(epoxy_gl_version() >= 43);
    apply_theme(st.dark);
    recompute(st);
    if (o.tab == "why") {
        st.open_why = true;
        st.why = start_why(st.config);
    }
    st.open_weights = o.tab == "weights";

    bool is_full = false;
    int saved[4] = {0, 0, o.width, o.height};
    bool theme_dark = st.dark;
    int frames_settled = 0;
    int exit_code = 0;
    const double started = now_seconds();
    bool placed_step = false;
    std::unique_ptr<Driver> driver;
    if (o.drive_frames > 0) driver = std::make_unique<Driver>(o.drive_frames, o.drive_report);
    std::unique_ptr<AuditSweep> sweep;
    if (!o.layout_audit.empty())
        sweep = std::make_unique<AuditSweep>(o.audit_windows, o.audit_fonts, audit_cases(), o.layout_audit);
    layout_audit().enabled = !o.layout_report.empty() || sweep;

    while (!glfwWindowShouldClose(win)) {
        const double frame_start = now_seconds();
        const bool animating = frame_start - st.anim_start < st.anim_seconds;
        if (!unattended && !animating && !st.playing && !st.computer->busy())
            glfwWaitEventsTimeout(0.1);  // idle: no busy loop on a teacher's laptop
        else
            glfwPollEvents();
        const double now = now_seconds();

        take_result(st, now);
        if (!o.screenshot.empty() && st.trace && !placed_step) {
            go_to_step(st, o.step, now);  // as a teacher would: with --quiz, the step is asked
            st.anim_start = -1e9;         // settled: no animation in the saved frame
            placed_step = true;
        }
        // Playing waits while a question does.
        if (st.playing && st.trace && !quiz_waiting(st) && now - st.last_advance >= st.seconds_per_step) {
            if (st.step + 1 < static_cast<int>(st.trace->steps.size())) go_to_step(st, st.step + 1, now);
            else st.playing = false;
            st.last_advance = now;
        }
        if (st.font_dirty) load_fonts(st);
        if (theme_dark != st.dark) {
            apply_theme(st.dark);
            theme_dark = st.dark;
        }
        apply_fullscreen(st, win, is_full, saved);

        if (driver && !driver->before_frame(st, win, now)) break;
        if (sweep && !sweep->before_frame(st, win)) break;

        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        ImGui::NewFrame();
        if (layout_audit().enabled) {
            const ImVec2 ds = ImGui::GetIO().DisplaySize;
            layout_audit().begin_frame(static_cast<int>(ds.x), static_cast<int>(ds.y), st.font_scale,
                                       "step " + std::to_string(st.step));
        }
        handle_keys(st, win, now);
        draw_panels(st, now);
        ImGui::Render();
        int fw = 0, fh = 0;
        glfwGetFramebufferSize(win, &fw, &fh);
        glViewport(0, 0, fw, fh);
        const ImVec4 bg = panel_background(st.dark);
        glClearColor(bg.x, bg.y, bg.z, bg.w);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

        if (st.screenshot_requested) {
            st.screenshot_requested = false;
            char name[64];
            std::snprintf(name, sizeof name, "headsplit-step%02d-%ld.png", st.step, static_cast<long>(std::time(nullptr)));
            const std::string path = st.screenshot_dir + "/" + name;
            std::string why;
            st.last_screenshot = save_png(path, fw, fh, &why) ? "saved " + path : why;
        }
        if (st.scripts_requested) {
            st.scripts_requested = false;
            st.last_screenshot = save_scripts(st);
        }
        if (st.handout_requested) {
            st.handout_requested = false;
            char name[64];
            std::snprintf(name, sizeof name, "headsplit-handout-%ld", static_cast<long>(std::time(nullptr)));
            const std::string dir = st.screenshot_dir + "/" + name;
            if (!st.trace || st.shapes_only) {
                st.last_screenshot = "no handout: this configuration is shown as shapes only";
            } else {
                try {
                    const int n = write_handout(st.trace, dir);
                    st.last_screenshot = "saved " + dir + "/index.html (" + std::to_string(n) + " steps)";
                } catch (const std::exception& e) {
                    st.last_screenshot = e.what();
                }
                glViewport(0, 0, fw, fh);
            }
        }
        if (!o.screenshot.empty()) {
            // Real frames until the trace is in and the layout has settled, then save one.
            const bool measuring = st.why && !st.why->result;
            frames_settled = st.trace && !st.computer->busy() && !measuring ? frames_settled + 1 : 0;
            if (frames_settled >= 3) {
                std::string why;
                if (!save_png(o.screenshot, fw, fh, &why)) {
                    std::cerr << "headsplit: " << why << "\n";
                    exit_code = 1;
                } else if (!o.layout_report.empty()) {
                    try {
                        write_file_atomically(o.layout_report, layout_report_json(layout_audit().report()));
                    } catch (const std::exception& e) {
                        std::cerr << "headsplit: " << e.what() << "\n";
                        exit_code = 1;
                    }
                }
                break;
            }
            if (now - started > 300) {
                std::cerr << "headsplit: --screenshot gave up after 300 s waiting for the trace\n";
                exit_code = 1;
                break;
            }
        }
        glfwSwapBuffers(win);
        if (sweep) sweep->after_frame(st, fw, fh);
        if (driver) {
            glFinish();  // the frame is on screen: count its whole cost
            driver->after_frame(st, (now_seconds() - frame_start) * 1e3, glGetError() != GL_NO_ERROR);
        }
    }
    if (sweep) {
        std::string why;
        if (!sweep->finish(&why)) {
            std::cerr << "headsplit: " << why << "\n";
            exit_code = 1;
        }
    }
    if (driver) {
        std::string why;
        if (!driver->finish(&why)) {
            std::cerr << "headsplit: " << why << "\n";
            exit_code = 1;
        }
    }

    if (st.why && st.why->future.valid()) st.why->future.wait();
    st.computer.reset();  // its GL objects die while the context is current
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(win);
    glfwTerminate();
    return exit_code;
}

}  // namespace headsplit::gui
