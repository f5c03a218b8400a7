#include "gui/root/window.hpp"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <iterator>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "gui/platform/gl.hpp"
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include "gui/panels/panels.hpp"
#include "gui/runs/layout_record.hpp"
#include "gui/runs/requests.hpp"
#include "gui/root/settings.hpp"
#include "gui/model/state.hpp"
#include "gui/panels/style.hpp"
#include "gui/runs/unattended.hpp"
#include "headsplit/base/slices.hpp"
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#include "web/page.hpp"
#endif

namespace headsplit::gui {

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

std::string g_glfw_error;

// Tries GL 4.3 core (EGL first, so a worker thread's headless EGL context and the window
// share one GL dispatch), then the platform's native API, then GL 3.3 (CPU backend only).
GLFWwindow* open_window(const GuiOptions& o) {
    if (kInPage)  // the page's canvas, WebGL2 (the build asks for version 2 only)
        return glfwCreateWindow(o.width, o.height, "HeadSplit", nullptr, nullptr);
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
    if (st.panels.fonts_built) {
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
    } else {
        ImGui_ImplOpenGL3_CreateDeviceObjects();  // shaders, buffers and the font texture
    }
    st.panels.fonts_built = true;
    glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<std::intptr_t>(io.Fonts->TexID)));
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    st.font_dirty = false;
}

// Presenter mode's live changes, named on the strip under the caption: H heads, D D_out,
// K key/value heads (Shift: down), M mode, C causal mask, T the sentence box.
void handle_live_keys(AppState& st) {
    const bool down = ImGui::GetIO().KeyShift;
    const struct {
        int key;
        LiveChange up, down;
    } steps[] = {{GLFW_KEY_H, LiveChange::HeadsUp, LiveChange::HeadsDown},
                 {GLFW_KEY_D, LiveChange::DOutUp, LiveChange::DOutDown},
                 {GLFW_KEY_K, LiveChange::KvHeadsUp, LiveChange::KvHeadsDown}};
    for (const auto& k : steps)
        if (ImGui::IsKeyPressed(k.key)) live_change(st, down ? k.down : k.up);
    if (ImGui::IsKeyPressed(GLFW_KEY_M)) live_change(st, LiveChange::NextMode);
    if (ImGui::IsKeyPressed(GLFW_KEY_C)) live_change(st, LiveChange::Causal);
    if (ImGui::IsKeyPressed(GLFW_KEY_G)) live_change(st, LiveChange::Backward);
    if (ImGui::IsKeyPressed(GLFW_KEY_T)) open_sentence_box(st);
    using Side = AppState::PresenterSide;
    const struct {
        int key;
        Side side;
    } sides[] = {{GLFW_KEY_W, Side::Weights}, {GLFW_KEY_Y, Side::Why}, {GLFW_KEY_I, Side::Inspector}};
    for (const auto& k : sides)
        if (ImGui::IsKeyPressed(k.key)) st.presenter_side = st.presenter_side == k.side ? Side::Heads : k.side;
}

// The Train view's keys: Space trains or pauses, S one step, Home again from step 0, Left and
// Right scrub the filmstrip; N leaves (and opens it, from anywhere).
bool handle_train_keys(AppState& st) {
    TrainView& v = st.training;
    if (ImGui::IsKeyPressed(GLFW_KEY_N)) {
        v.shown = !v.shown;
        if (v.shown && !v.trainer) start_training(v, TrainConfig{});
        return true;
    }
    if (!v.shown) return false;
    auto pressed = [](ImGuiKey k) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k)); };
    if (pressed(ImGuiKey_Space)) v.running = !v.running;
    if (ImGui::IsKeyPressed(GLFW_KEY_S)) train_some(v, 1, 1e9);
    if (pressed(ImGuiKey_Home)) start_training(v, v.base, v.experiment);
    const int last = static_cast<int>(v.film.size()) - 1, at = v.shown_snapshot < 0 ? last : v.shown_snapshot;
    if (pressed(ImGuiKey_LeftArrow)) v.shown_snapshot = std::max(0, at - 1), v.running = false;
    if (pressed(ImGuiKey_RightArrow)) v.shown_snapshot = at + 1 >= last ? -1 : at + 1;
    if (ImGui::IsKeyPressed(GLFW_KEY_B) || ImGui::IsKeyPressed(GLFW_KEY_PERIOD)) st.blank = !st.blank;
    if (ImGui::IsKeyPressed(GLFW_KEY_F11)) st.fullscreen = !st.fullscreen;
    if (ImGui::IsKeyPressed(GLFW_KEY_F12)) st.screenshot_requested = true;
    return true;
}

void handle_keys(AppState& st, GLFWwindow* win, double now) {
    ImGuiIO& io = ImGui::GetIO();
    if (io.WantTextInput) return;
    if (handle_train_keys(st)) return;
    auto pressed = [](ImGuiKey k) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k)); };
    // A presentation clicker sends Page Down / Page Up (and B or . to blank the screen).
    if (pressed(ImGuiKey_RightArrow) || pressed(ImGuiKey_PageDown)) go_to_step(st, st.step + 1, now);
    if (pressed(ImGuiKey_LeftArrow) || pressed(ImGuiKey_PageUp)) go_to_step(st, st.step - 1, now);
    if (ImGui::IsKeyPressed(GLFW_KEY_B) || ImGui::IsKeyPressed(GLFW_KEY_PERIOD)) st.blank = !st.blank;
    if (ImGui::IsKeyPressed(GLFW_KEY_F1)) st.show_keys = !st.show_keys;
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
    if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT_BRACKET)) step_focus_head(st, +1);  // the heatmaps' head shown large
    if (ImGui::IsKeyPressed(GLFW_KEY_LEFT_BRACKET)) step_focus_head(st, -1);
    if (ImGui::IsKeyPressed(GLFW_KEY_F11)) st.fullscreen = !st.fullscreen;
    if (ImGui::IsKeyPressed(GLFW_KEY_F5)) st.presenting = !st.presenting;
    if (st.presenting && pressed(ImGuiKey_Escape)) st.presenting = false;
    if (st.presenting && !quiz_waiting(st)) handle_live_keys(st);
    if (ImGui::IsKeyPressed(GLFW_KEY_F12)) st.screenshot_requested = true;
    if (st.lesson.on) {  // the live lesson: J the join card, P pause, L lock exploring
        if (ImGui::IsKeyPressed(GLFW_KEY_J)) st.lesson.card = !st.lesson.card;
        if (ImGui::IsKeyPressed(GLFW_KEY_P)) st.lesson.paused = !st.lesson.paused;
        if (ImGui::IsKeyPressed(GLFW_KEY_L)) st.lesson.locked = !st.lesson.locked;
    }
    (void)win;
}

// A student's page held by the teacher's lock (LessonView::held): the frame sees none of its
// clicks, typed characters or keys but those of its own view (blank, the keys' list,
// fullscreen, screenshot, the head shown large, the side panel) and the modifiers; play
// stops. What was dropped is counted for the page to say so.
void drop_held_input(AppState& st) {
    static bool mouse_was_down = false;
    if (!st.lesson.held) {
        mouse_was_down = false;
        return;
    }
    ImGuiIO& io = ImGui::GetIO();
    static const int own[] = {GLFW_KEY_B, GLFW_KEY_PERIOD, GLFW_KEY_F1, GLFW_KEY_F11, GLFW_KEY_F12,
                              GLFW_KEY_LEFT_BRACKET, GLFW_KEY_RIGHT_BRACKET, GLFW_KEY_W, GLFW_KEY_Y, GLFW_KEY_I,
                              GLFW_KEY_LEFT_SHIFT, GLFW_KEY_RIGHT_SHIFT, GLFW_KEY_LEFT_CONTROL, GLFW_KEY_RIGHT_CONTROL,
                              GLFW_KEY_LEFT_ALT, GLFW_KEY_RIGHT_ALT, GLFW_KEY_LEFT_SUPER, GLFW_KEY_RIGHT_SUPER};
    bool dropped = false;
    constexpr int keys = static_cast<int>(sizeof io.KeysDown / sizeof io.KeysDown[0]);
    for (int k = 0; k < keys; ++k) {
        if (!io.KeysDown[k] || std::find(std::begin(own), std::end(own), k) != std::end(own)) continue;
        io.KeysDown[k] = false;  // a press: the key stays up until the next one
        dropped = true;
    }
    bool mouse_down = false;
    for (bool& b : io.MouseDown) {
        mouse_down |= b;
        b = false;
    }
    dropped |= mouse_down && !mouse_was_down;
    mouse_was_down = mouse_down;
    dropped |= !io.InputQueueCharacters.empty();
    io.InputQueueCharacters.resize(0);
    st.playing = false;
    if (dropped) ++st.lesson.ignored;
}

// What the window shows now, to notice when the state asks for something else.
struct Shown {
    bool dark = true;
    bool fullscreen = false;
    int windowed[4] = {};  // the window's position and size before fullscreen, to go back to
};

void apply_fullscreen(AppState& st, GLFWwindow* win, Shown& shown) {
    if (st.fullscreen == shown.fullscreen) return;
    int* saved = shown.windowed;
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
    shown.fullscreen = st.fullscreen;
}

// A key pressed and let go between two frames (a presentation clicker's tap, a quick finger;
// the page gets many) would never be seen down: ImGui 1.86 reads the keys' state once a
// frame. So each change of a key (down, up) gets a frame of its own: a change that comes
// while the key has already changed since the last frame began waits, and one waiting
// change a key goes through at the end of each frame.
struct KeyTaps {
    struct Event {
        int action, scancode, mods;
    };
    static inline std::map<int, std::deque<Event>> waiting;  // per key, in order
    static inline std::set<int> changed;                     // keys changed since the last frame began
    static void callback(GLFWwindow* w, int key, int scancode, int action, int mods) {
        if (action != GLFW_REPEAT) {
            std::deque<Event>& q = waiting[key];
            if (!q.empty() || changed.count(key)) {
                q.push_back({action, scancode, mods});
                return;
            }
            changed.insert(key);
        }
        ImGui_ImplGlfw_KeyCallback(w, key, scancode, action, mods);
    }
    static void frame_begins() { changed.clear(); }
    // While text is typed, the waiting presses go (replayed after the box closed, a doubled
    // letter would become a command): the releases alone go through.
    static void frame_ended(GLFWwindow* w) {
        const bool typing = ImGui::GetIO().WantTextInput;
        for (auto& [key, q] : waiting) {
            while (typing && !q.empty() && q.front().action == GLFW_PRESS) q.pop_front();
            if (q.empty()) continue;
            const Event e = q.front();
            q.pop_front();
            ImGui_ImplGlfw_KeyCallback(w, key, e.scancode, e.action, e.mods);
            changed.insert(key);
        }
    }
};

// While the why tab times the modes, frames come 4 a second (its progress bar): a frame drawn
// in software takes the cores the timed runs need, and its modes' ratios would change with
// how many frames fell on each.
constexpr double kMeasuringFrame = 0.25;
bool measuring(const AppState& st) { return st.why && !st.why->result; }

// Events: an idle interactive window waits for one (up to 0.1 s) instead of drawing frames
// no one looks at; animations, play, a computation under way and the unattended runs draw
// every frame, but during the why tab's measurement.
void poll_events(const AppState& st, bool unattended, double now) {
    const bool animating = now - st.anim_start < st.anim_seconds;
    if (measuring(st))
        glfwWaitEventsTimeout(kMeasuringFrame);
    else if (!unattended && !animating && !st.playing && !st.computer->busy())
        glfwWaitEventsTimeout(0.1);  // idle: no busy loop on a teacher's laptop
    else
        glfwPollEvents();
}

// The page's frames. The browser offers 60 a second; the page draws them all while the user
// acts (and half a second after), an animation moves or play runs, and otherwise 10 a second,
// as the desktop's idle loop does: an idle tab need not keep the graphics busy (drawing every
// frame, a page drawn in software takes more than a core). While a trace computes, 10 a
// second: the spinner still turns, and
// the computation gets the time the frames would take.
constexpr double kPageSlowFrame = 0.1;  // seconds between the frames of an idle or busy page
// The most a tick between them gives the single-threaded page's computation: a slice ends at
// the first slice point past it, and some pieces between two slice points take 90 ms where
// fresh memory is slow to map, so a tick stays well under 200 ms.
constexpr double kPageSliceTick = 0.03;
bool page_skips_frame(const AppState& st, double started, double last_drawn) {
#ifdef __EMSCRIPTEN__
    if (measuring(st)) return started - last_drawn < kMeasuringFrame;
    const bool animating = started - st.anim_start < st.anim_seconds;
    const bool lively = !st.computer->busy() && (animating || st.playing || page_seconds_since_input() < 0.5);
    return !lively && started - last_drawn < kPageSlowFrame;
#else
    (void)st, (void)started, (void)last_drawn;
    return false;
#endif
}

// Play: the next step every seconds_per_step, stopping at the last. Playing waits while a
// question does.
void play(AppState& st, double now) {
    if (!st.playing || !st.trace || quiz_waiting(st) || now - st.last_advance < st.seconds_per_step) return;
    if (st.step + 1 < static_cast<int>(st.trace->steps.size())) go_to_step(st, st.step + 1, now);
    else st.playing = false;
    st.last_advance = now;
}

void begin_audit_frame(const AppState& st) {
    if (!layout_audit().enabled) return;
    const ImVec2 ds = ImGui::GetIO().DisplaySize;
    layout_audit().begin_frame(static_cast<int>(ds.x), static_cast<int>(ds.y), st.font_scale, "step " + std::to_string(st.step));
}

// ImGui's frame into the back buffer, over the panels' background (the clear colour); with
// `pixels` false, the frame ends with nothing rasterized.
FrameInfo render(const AppState& st, GLFWwindow* win, double started, double now, bool pixels) {
    ImGui::Render();
    FrameInfo f;
    glfwGetFramebufferSize(win, &f.fb_w, &f.fb_h);
    f.started = started;
    f.now = now;
    if (!pixels) return f;
    glViewport(0, 0, f.fb_w, f.fb_h);
    const ImVec4 bg = panel_background(st.dark);
    glClearColor(bg.x, bg.y, bg.z, bg.w);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    return f;
}

// GLFW and the window, its GL context current; nullptr (the reason on stderr) when either
// cannot be had.
GLFWwindow* start_window(const GuiOptions& o) {
    glfwSetErrorCallback([](int, const char* what) { g_glfw_error = what; });
    if (!glfwInit()) {
        std::cerr << "headsplit: cannot open a window: " << g_glfw_error
                  << "; set DISPLAY, run under xvfb-run, or use `headsplit trace`\n";
        return nullptr;
    }
    GLFWwindow* win = open_window(o);
    if (!win) {
        std::cerr << "headsplit: cannot open an OpenGL 3.3+ window: " << g_glfw_error << "; use `headsplit trace`\n";
        glfwTerminate();
        return nullptr;
    }
    glfwMakeContextCurrent(win);
    return win;
}

// The state the options ask for; the first trace is asked for.
void set_up_state(AppState& st, const GuiOptions& o) {
    st.presenting = o.present;
    st.compare_masks = o.compare_masks;
    st.focus_head = o.focus_head;
    set_quiz(st, o.quiz);
    st.stage_view.zoom = o.zoom;
    st.stage_view.token0 = o.pan[0], st.stage_view.col0 = o.pan[1], st.stage_view.head0 = o.pan[2];
    st.config = o.config;
    // The first trace shows --step (the last step when there are fewer); a screenshot run
    // walks there itself, as a teacher would, so that the quiz asks it.
    st.step = o.screenshot.empty() ? o.step : 0;
    st.font_scale = o.font_scale;
    st.dark = !o.light;
    st.gl_renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    st.computer = std::make_unique<TraceComputer>(window_has_compute());
    apply_theme(st.dark);
    recompute(st);
    if (o.tab.rfind("why", 0) == 0) {  // why, why-sweep, why-kv: the tab and its view
        st.open_why = true;
        st.why_view = o.tab == "why-sweep" ? AppState::WhyView::Sweep
                      : o.tab == "why-kv"  ? AppState::WhyView::KvCache
                                           : AppState::WhyView::Modes;
        if (st.why_view != AppState::WhyView::KvCache) st.why = start_why(st.config);  // measured at once
    }
    if (o.tab == "train") {
        st.training.shown = true;
        start_training(st.training, TrainConfig{}, o.train_compare);
        train_some(st.training, o.train_steps, 1e12);
    }
    if (o.tab.rfind("weights", 0) == 0) {  // weights, weights-matmuls, weights-kv: the tab and its view
        st.open_weights = true;
        st.weights_view = o.tab == "weights-matmuls" ? AppState::WeightsView::Matmuls
                          : o.tab == "weights-kv"    ? AppState::WeightsView::KvHeads
                                                     : AppState::WeightsView::Query;
    }
}

void shut_down(AppState& st, GLFWwindow* win) {
    if (st.why && st.why->future.valid()) {
        st.why->cancel = true;  // what is left of a measurement is not waited for
        st.why->future.wait();
    }
    st.computer.reset();  // its GL objects die while the context is current
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(win);
    glfwTerminate();
}

// One window's life: set up, drawn frame by frame, shut down. The desktop calls frame() in
// a loop; the page lets the browser call it (a timer, 60 times a second).
class WindowLoop {
public:
    WindowLoop(GLFWwindow* win, const GuiOptions& o, std::unique_ptr<UnattendedRun> run)
        : win_(win), run_(std::move(run)) {
        glfwSwapInterval(run_ && !kInPage ? 0 : 1);
        IMGUI_CHECKVERSION();
        ImGui::CreateContext();
        ImGui_ImplGlfw_InitForOpenGL(win_, true);
        glfwSetKeyCallback(win_, KeyTaps::callback);  // ImGui's own, short taps kept
        ImGui_ImplOpenGL3_Init(kGlslVersion);
        // The splitters are kept in the user's settings folder, never in the working folder;
        // the unattended runs (screenshots, audits, soaks) and the page neither read nor write
        // it, so they are the same on every machine.
        settings_file_ = run_ ? "" : settings_path();
        if (!use_settings_file(st_, settings_file_)) settings_file_.clear();
        set_up_state(st_, o);
        shown_ = Shown{st_.dark, false, {0, 0, o.width, o.height}};
        lesson_starter_ = o.lesson_starter;
        st_.lesson.port = o.lesson_port;
        if (o.lesson.link) lesson_adopt(st_, lesson_, o.lesson);
    }

    // One frame: events, the state's clock, the panels, the pixels. false: the window was
    // closed or the unattended run is over.
    bool frame() {
        if (glfwWindowShouldClose(win_)) return false;
        const double started = now_seconds();
        if (page_skips_frame(st_, started, last_drawn_)) {
            // The single-threaded page computes a large trace in the ticks it draws no frame
            // in, until the next frame is due (at least 20 ms a tick, so that it moves on where
            // the frames take longer than their period, and at most kPageSliceTick).
            run_sliced_jobs(std::clamp(last_drawn_ + kPageSlowFrame - started, 0.02, kPageSliceTick));
            return true;
        }
        last_drawn_ = started;
        poll_events(st_, run_ != nullptr, started);
        const double now = now_seconds();
        take_result(st_, now);
        play(st_, now);
        // Training takes a share of each frame (12 ms), so that the window keeps drawing.
        if (st_.training.running) train_some(st_.training, 1000000, 12);
        if (st_.font_dirty) load_fonts(st_);
        if (shown_.dark != st_.dark) {
            apply_theme(st_.dark);
            shown_.dark = st_.dark;
        }
        apply_fullscreen(st_, win_, shown_);
        if (run_ && !run_->before_frame(st_, win_, now)) return false;

        KeyTaps::frame_begins();
        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        if (run_ && run_->pointer_away()) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
        drop_held_input(st_);
        // Two frames within the clock's resolution (the browser's is coarse) give a zero
        // frame time, which ImGui refuses.
        ImGui::GetIO().DeltaTime = std::max(ImGui::GetIO().DeltaTime, 1e-4f);
        ImGui::NewFrame();
        begin_audit_frame(st_);
        handle_keys(st_, win_, now);
        if (st_.training.shown && !st_.blank) DrawTrain(st_);
        else DrawPanels(st_, now);
        if (st_.lesson.on && !st_.blank) DrawLesson(st_);
        lesson_frame(st_, lesson_, lesson_starter_, now);
        if (st_.lesson.close_window) glfwSetWindowShouldClose(win_, GLFW_TRUE);
        const FrameInfo frame = render(st_, win_, started, now, !run_ || run_->draws_pixels());
        serve_requests(st_, frame.fb_w, frame.fb_h);
        if (run_ && !run_->frame_drawn(st_, frame)) return false;  // a frame to save is read before it is shown
        glfwSwapBuffers(win_);
        KeyTaps::frame_ended(win_);
        if (run_) run_->after_frame(st_, frame);
        save_settings_file(settings_file_, false, settings_said_);
        return true;
    }

    // The exit code; the window is closed.
    int finish() {
        const int exit_code = run_ ? run_->finish() : 0;
        save_settings_file(settings_file_, true, settings_said_);
        lesson_end(st_, lesson_);  // every student is told
        shut_down(st_, win_);
        return exit_code;
    }

private:
    GLFWwindow* win_;
    std::unique_ptr<UnattendedRun> run_;
    std::string settings_file_;   // the settings file's path; "" when none is read or written
    std::string settings_said_;   // the last line said about writing it
    AppState st_;
    Shown shown_;
    std::shared_ptr<LessonLink> lesson_;  // the live lesson's server, while one runs
    LessonStarter lesson_starter_;
    double last_drawn_ = 0;  // when the last frame began
};

}  // namespace

int run_gui(const GuiOptions& o) {
    GLFWwindow* win = start_window(o);
    if (!win) return 1;
#ifdef __EMSCRIPTEN__
    // The page: the loop lives as long as the page does, and the browser calls its frames.
    auto* loop = new WindowLoop(win, o, make_page_run(o));
    emscripten_set_main_loop_arg([](void* p) { static_cast<WindowLoop*>(p)->frame(); }, loop, 60, false);
    return 0;
#else
    WindowLoop loop(win, o, make_unattended_run(o));
    while (loop.frame()) {
    }
    return loop.finish();
#endif
}

}  // namespace headsplit::gui
