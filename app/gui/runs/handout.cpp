#include "gui/runs/handout.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "gui/platform/gl.hpp"
#include <imgui.h>
#include <backends/imgui_impl_opengl3.h>

#include "headsplit/engine/engine.hpp"
#include "headsplit/io/config_options.hpp"
#include "headsplit/formats/files.hpp"
#include "headsplit/io/writing.hpp"
#include "gui/runs/audit.hpp"
#include "gui/panels/panels.hpp"
#include "gui/platform/png.hpp"
#include "gui/model/state.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

// A picture per step: wide enough for a page, text at 1.25x so it prints at a readable size.
constexpr int kWidth = 1600, kHeight = 1000;
constexpr float kFontScale = 1.25f;

std::string html_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += ch;
        }
    }
    return out;
}

std::string sentence(const std::vector<std::string>& tokens) {
    std::string out;
    for (const std::string& t : tokens) out += (out.empty() ? "" : " ") + t;
    return out;
}

std::string picture_name(int step) {
    char name[32];
    std::snprintf(name, sizeof name, "step-%02d.png", step);
    return name;
}

// The step's result and what it was made from (its first link), as the caption shows them.
std::string shape_change(const Trace& tr, const Step& s) {
    const TensorRecord& out = s.result();
    const TensorRecord* in = out.from.empty() ? nullptr : tr.source(out.from.front());
    return (in ? shape_str(in->shape) + " &rarr; " : std::string()) + shape_str(out.shape);
}

// ImGui's context, GL objects and the audit's switch, made for the handout and given back
// however write_handout leaves (a throw included).
class Offscreen {
public:
    Offscreen() : previous_(ImGui::GetCurrentContext()), audit_was_(layout_audit().enabled) {
        glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous_fbo_);
        layout_audit().enabled = false;
        try {
            set_up();
        } catch (...) {
            release();  // a constructor that throws gets no destructor: the window must get its state back
            throw;
        }
    }
    ~Offscreen() { release(); }
    Offscreen(const Offscreen&) = delete;
    Offscreen& operator=(const Offscreen&) = delete;

    // One frame of step st.step: the stage above, the heatmaps below, as in class.
    void draw(AppState& st) {
        ImGui_ImplOpenGL3_NewFrame();
        ImGui::NewFrame();
        const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                       ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoScrollbar;
        // The whole picture for the stage where the heatmaps have nothing to show (before the
        // weights are computed, after their last use): no half-blank picture on paper.
        const bool heatmaps = heatmaps_off(st).empty();
        const float stage_h = heatmaps ? kHeight * 0.56f : static_cast<float>(kHeight);
        ImGui::SetNextWindowPos({0, 0});
        ImGui::SetNextWindowSize({kWidth, stage_h});
        if (ImGui::Begin("Stage", nullptr, fixed)) DrawStage(st, 0.0);
        ImGui::End();
        if (heatmaps) {
            ImGui::SetNextWindowPos({0, stage_h});
            ImGui::SetNextWindowSize({kWidth, kHeight - stage_h});
            if (ImGui::Begin("Attention heatmaps", nullptr, fixed)) DrawHeatmaps(st);
            ImGui::End();
        }
        ImGui::Render();
        glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
        glViewport(0, 0, kWidth, kHeight);
        const ImVec4 bg = panel_background(false);
        glClearColor(bg.x, bg.y, bg.z, 1);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    }

private:
    void set_up() {
        context_ = ImGui::CreateContext();
        ImGui::SetCurrentContext(context_);
        ImGuiIO& io = ImGui::GetIO();
        io.IniFilename = nullptr;
        io.DisplaySize = ImVec2(kWidth, kHeight);
        io.DeltaTime = 1.0f / 60;
        add_fonts(kFontScale);
        apply_theme(false);
        if (!ImGui_ImplOpenGL3_Init(kGlslVersion)) throw std::runtime_error("the handout cannot draw: no OpenGL 3.3 here");
        backend_ = true;
        glGenTextures(1, &texture_);
        glBindTexture(GL_TEXTURE_2D, texture_);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, kWidth, kHeight, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        glGenFramebuffers(1, &fbo_);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture_, 0);
        if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
            throw std::runtime_error("the handout cannot draw: no offscreen framebuffer of " + std::to_string(kWidth) + "x" +
                                     std::to_string(kHeight));
    }

    // Gives back what set_up made, however far it got.
    void release() {
        if (backend_) ImGui_ImplOpenGL3_Shutdown();
        if (context_) ImGui::DestroyContext(context_);
        context_ = nullptr;
        backend_ = false;
        ImGui::SetCurrentContext(previous_);
        glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(previous_fbo_));
        if (fbo_) glDeleteFramebuffers(1, &fbo_);
        if (texture_) glDeleteTextures(1, &texture_);
        fbo_ = texture_ = 0;
        layout_audit().enabled = audit_was_;
    }

    ImGuiContext* previous_ = nullptr;
    ImGuiContext* context_ = nullptr;
    bool audit_was_ = false;
    bool backend_ = false;
    GLint previous_fbo_ = 0;
    GLuint texture_ = 0, fbo_ = 0;
};

}  // namespace

namespace {

namespace fs = std::filesystem;

// The file in which a handout lists what it made: each file's name, size and modification
// time. A file of the folder is the handout's own, to replace or remove, only while it is
// listed there unchanged; anything else is the user's and is never touched.
constexpr const char* kManifest = ".headsplit-manifest";
constexpr const char* kManifestHeading = "headsplit handout files v1";

std::string file_stamp(const fs::path& file) {
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return "";
    return std::to_string(info.st_size) + " " + std::to_string(info.st_mtim.tv_sec) + "." +
           std::to_string(info.st_mtim.tv_nsec);
}

std::string read_head(const fs::path& file, std::size_t limit) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return "";
    std::string text(limit, '\0');
    std::FILE* f = std::fopen(file.c_str(), "rb");
    const std::size_t n = f ? std::fread(text.data(), 1, limit, f) : 0;
    if (f) std::fclose(f);
    text.resize(n);
    return text;
}

// Whether `name` is one a handout writes: index.html, step-NN.png.
bool handout_name(const std::string& name) {
    if (name == "index.html") return true;
    return name.size() > 9 && name.compare(0, 5, "step-") == 0 && name.compare(name.size() - 4, 4, ".png") == 0 &&
           name.find_first_not_of("0123456789", 5) == name.size() - 4;
}

// The files of `folder` an earlier handout made and that are as it left them: those its
// manifest lists with the same size and time. A handout from before manifests is known by its
// page's title, and owns that page and the pictures the page shows.
std::set<std::string> earlier_handout(const fs::path& folder) {
    std::set<std::string> own;
    std::istringstream manifest(read_head(folder / kManifest, 1 << 20));
    std::string line;
    if (std::getline(manifest, line) && line == kManifestHeading) {
        while (std::getline(manifest, line)) {
            const auto space = line.find(' ');
            if (space == std::string::npos) continue;
            const std::string name = line.substr(0, space);
            if (handout_name(name) && file_stamp(folder / name) == line.substr(space + 1)) own.insert(name);
        }
        return own;
    }
    const std::string page = read_head(folder / "index.html", 1 << 22);
    if (page.find("<title>HeadSplit handout: ") == std::string::npos) return own;
    own.insert("index.html");
    for (std::size_t at = 0; (at = page.find("<img src=\"step-", at)) != std::string::npos;) {
        at += 10;
        const std::string name = page.substr(at, page.find('"', at) - at);
        if (handout_name(name)) own.insert(name);
    }
    return own;
}

// Refuses a folder holding a file a handout would write or remove that it did not make.
void refuse_foreign_files(const fs::path& folder) {
    const std::set<std::string> own = earlier_handout(folder);
    std::error_code ec;
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
        if (!handout_name(name) || own.count(name)) continue;
        const fs::file_status st = fs::symlink_status(folder / name, ec);
        if (!fs::is_regular_file(st) && !fs::is_symlink(st)) continue;  // a folder in the way is named when it is reached
        const std::string path = (folder / name).string();
        if (name == "index.html")
            throw std::runtime_error(path + " is there and is not a HeadSplit handout; choose an empty folder (or an earlier handout's)");
        throw std::runtime_error(path + " is there and was not made by a HeadSplit handout (or was changed since); "
                                 "move it away or choose another folder");
    }
}

}  // namespace

void check_handout_dir(const std::string& dir) {
    if (dir.empty()) throw std::runtime_error("the handout needs a folder: --out DIR");
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
        throw std::runtime_error("cannot make the handout folder " + dir + (ec ? ": " + ec.message() : ": a file has that name") +
                                 "; choose a folder you can write to");
    refuse_foreign_files(dir);
    check_writable((fs::path(dir) / "index.html").string());
}

std::string handout_html(const Trace& tr) {
    const Config& c = tr.config;
    std::string h;
    h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    // The sentence is the user's, in any script: isolated from the text around it, so that a
    // right-to-left word cannot reorder the title, the heading or the rerun line (a title
    // holds no markup: Unicode's first-strong isolate, U+2068 .. U+2069).
    h += "<title>HeadSplit handout: \u2068" + html_escape(sentence(c.tokens)) + "\u2069</title>\n";
    h += R"(<style>
body { font-family: "DejaVu Sans", Arial, sans-serif; color: #111; max-width: 60em; margin: 1.5em auto; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
table.config td { padding: 0.1em 1em 0.1em 0; }
section.step { page-break-inside: avoid; break-inside: avoid; border-top: 1px solid #999; padding: 0.6em 0; }
section.step h2 { font-size: 1.15em; margin: 0 0 0.3em 0; }
.shape { font-family: "DejaVu Sans Mono", monospace; font-weight: bold; }
pre { background: #f3f3f3; padding: 0.3em 0.6em; margin: 0.3em 0; white-space: pre-wrap; }
.view { color: #14733a; } .inplace { color: #8c5900; } .copy { color: #b8241f; } .computed { color: #1f59bf; }
img { width: 100%; height: auto; border: 1px solid #ccc; }
table.counts { border-collapse: collapse; } table.counts td, table.counts th { border: 1px solid #999; padding: 0.2em 0.8em; }
@page { margin: 12mm; }
@media print { body { max-width: none; margin: 0; padding: 0; } section.step { box-sizing: border-box; break-before: page; page-break-before: always; } }
</style>
</head>
<body>
)";
    h += "<h1>Multi-head attention, step by step: &ldquo;<bdi>" + html_escape(sentence(c.tokens)) + "</bdi>&rdquo;</h1>\n";
    h += "<table class=\"config\">\n";
    auto row = [&](const std::string& k, const std::string& v) { h += "<tr><td>" + k + "</td><td>" + v + "</td></tr>\n"; };
    row("tokens", "T = " + std::to_string(c.num_tokens()) + ", a batch of " + std::to_string(c.batch));
    row("sizes", "D_in = " + std::to_string(c.d_in) + ", D_out = " + std::to_string(c.d_out) + ", " + std::to_string(c.heads) +
                     " heads of head_dim = " + std::to_string(c.head_dim()));
    row("mode", std::string(mode_name(c.mode)) + (c.causal ? ", causal mask" : ", no mask") +
                    (c.dropout > 0 ? ", dropout " + format_number(c.dropout) + " (seed " + std::to_string(c.seed) + ")" : ""));
    row("weights", html_escape(weights_source(c)) + (c.qkv_bias ? ", Q/K/V bias" : "") + (c.out_proj ? ", output projection" : ""));
    if (const std::string o = shell_options(c); !o.empty()) row("rerun it", "<code dir=\"ltr\"><bdi>headsplit trace " + html_escape(o) + "</bdi></code>");
    h += "</table>\n";

    for (const Step& s : tr.steps) {
        const TensorRecord& out = s.result();
        // What happened to memory, in the app's colours: a view green, in place amber, a copy red, computed blue.
        const char* kind = out.storage == Storage::View ? "view" : out.storage == Storage::InPlace ? "inplace"
                           : out.storage == Storage::Copy ? "copy" : "computed";
        h += "<section class=\"step\">\n<h2>Step " + std::to_string(s.index) + ": " + op_name(s.op) +
             (s.part().empty() ? "" : " (" + s.part() + ")") + " &nbsp; <span class=\"shape\">" +
             shape_change(tr, s) + "</span></h2>\n";
        h += "<pre>" + html_escape(s.code) + "</pre>\n";
        h += "<p>" + html_escape(s.explain) + "</p>\n";
        h += "<p>" + html_escape(out.name) + ": strides <span class=\"shape\">" + shape_str(out.strides) + "</span>; <span class=\"" +
             std::string(kind) + "\">" + html_escape(storage_sentence(out.storage)) + "</span></p>\n";
        h += "<img src=\"" + picture_name(s.index) + "\" alt=\"step " + std::to_string(s.index) + ": the stage and the heatmaps\">\n";
        h += "</section>\n";
    }

    h += "<section class=\"step\">\n<h2>The lesson in numbers: matmul calls for this configuration</h2>\n";
    h += "<table class=\"counts\"><tr><th>mode</th><th>matmul calls</th><th>steps</th></tr>\n";
    for (const ModeCount& n : matmul_counts(c)) {
        if (n.refused.empty())  // a mode this configuration cannot take (fused cross-attention, ...) says why
            h += "<tr><td>" + std::string(mode_name(n.mode)) + "</td><td>" + std::to_string(n.total) + "</td><td>" +
                 std::to_string(n.steps) + "</td></tr>\n";
        else
            h += "<tr><td>" + std::string(mode_name(n.mode)) + "</td><td>-</td><td>not with this configuration: " +
                 html_escape(n.refused) + "</td></tr>\n";
    }
    h += "</table>\n<p>The same numbers in every mode; loop runs a small matmul per head, split one large one per "
         "projection, fused one for Q, K and V together.</p>\n</section>\n</body>\n</html>\n";
    return h;
}

namespace {

// Draws every step's picture into `staging`, then the page and the manifest; the names made,
// each guarded (guard_folder_file) as it is written. Throws std::runtime_error naming the file.
std::vector<std::string> make_handout_files(const std::shared_ptr<const Trace>& trace, const fs::path& staging) {
    std::vector<std::string> names;
    Offscreen screen;
    AppState st;
    st.trace = trace;
    st.dark = false;
    st.document = true;
    st.font_scale = kFontScale;
    st.font_dirty = false;
    for (const Step& s : trace->steps) {
        st.step = s.index;
        st.anim_start = -1e9;  // settled, no animation
        for (int frame = 0; frame < 3; ++frame) screen.draw(st);  // sizes settle over two frames
        std::string why;
        names.push_back(picture_name(s.index));
        guard_folder_file(names.back());
        if (!save_png((staging / names.back()).string(), kWidth, kHeight, &why, GL_COLOR_ATTACHMENT0))
            throw std::runtime_error(why);
    }
    names.push_back("index.html");
    guard_folder_file(names.back());
    write_file_atomically((staging / names.back()).string(), handout_html(*trace));
    std::string manifest = std::string(kManifestHeading) + "\n";
    for (const std::string& name : names) manifest += name + " " + file_stamp(staging / name) + "\n";
    names.push_back(kManifest);
    guard_folder_file(names.back());
    write_file_atomically((staging / names.back()).string(), manifest);
    return names;
}

}  // namespace

int write_handout(const std::shared_ptr<const Trace>& trace, const std::string& dir, std::string* replaced) {
    if (!trace || trace->steps.empty()) throw std::runtime_error("the handout needs a trace");
    for (const Step& s : trace->steps)
        for (const TensorRecord& t : s.tensors)
            if (!t.has_values() && !t.shape.empty())
                throw std::runtime_error("the handout needs values: this configuration is shown as shapes only");
    check_handout_dir(dir);
    const fs::path folder(dir);
    // Every file is made in a folder of its own inside `dir` first, then moved into place all
    // at once: a full disk or a signal while they are made leaves `dir` as it was (never half
    // an old handout and half a new one), and takes the made files away.
    std::string staging_name = (folder / ".headsplit-handout.XXXXXX").string();
    if (!mkdtemp(staging_name.data()))
        throw std::runtime_error("cannot write the handout into " + dir + ": " + std::strerror(errno) +
                                 "; choose a folder you can write to");
    const fs::path staging(staging_name);
    std::error_code ec;
    guard_folder(staging.string());
    const auto abandon = [&] {  // the made files go; `dir` keeps what it had
        fs::remove_all(staging, ec);
        guard_folder("");
    };
    std::vector<std::string> names;
    try {
        names = make_handout_files(trace, staging);
    } catch (const std::exception& e) {
        abandon();
        // Said of the file it was to become ("cannot write DIR/step-04.png: No space left on
        // device; nothing there was replaced").
        std::string why = e.what();
        for (std::size_t at; (at = why.find(staging.string())) != std::string::npos;)
            why.replace(at, staging.string().size(), folder.string());
        if (why.find("nothing there was replaced") == std::string::npos) why += "; " + dir + " was left as it was";
        if (why.find("No space left") != std::string::npos && fs::exists(folder / "index.html", ec))
            why += " (a new handout is made beside the earlier one, so the disk needs room for both)";
        throw std::runtime_error(why);
    }
    // What a file cannot be moved over (a folder or a device of that name) is found before
    // anything moves, so that the move is all or none.
    for (const std::string& name : names) {
        const fs::file_status there = fs::status(folder / name, ec);
        if (fs::exists(there) && !fs::is_regular_file(there)) {
            abandon();
            throw std::runtime_error((folder / name).string() + " is a folder or a device, not a file, so the handout cannot go there; " +
                                     "move it away or choose another folder (" + dir + " was left as it was)");
        }
    }
    // Checked again now that the work is done: a file the user put there meanwhile stays.
    std::set<std::string> own;
    try {
        refuse_foreign_files(folder);
        own = earlier_handout(folder);
    } catch (const std::exception& e) {
        abandon();
        throw std::runtime_error(std::string(e.what()) + " (" + dir + " was left as it was)");
    }
    const bool earlier = own.count("index.html") > 0;
    int removed = 0;
    {
        const HoldSignals hold;  // the pictures and the page move together
        for (const std::string& name : names) {
            fs::rename(staging / name, folder / name, ec);
            if (ec) {
                const std::string why = ec.message();
                abandon();
                throw std::runtime_error("cannot move the handout's " + name + " into " + dir + ": " + why);
            }
        }
        fs::remove(staging, ec);
        guard_folder("");
        // An earlier, longer handout's last pictures: this page does not show them, so they go.
        for (const std::string& name : own)
            if (std::find(names.begin(), names.end(), name) == names.end() && fs::remove(folder / name, ec)) ++removed;
    }
    if (replaced && earlier)
        *replaced = "replaced the handout that was in " + dir +
                    (removed ? " and removed its " + std::to_string(removed) + " pictures past step " +
                                   std::to_string(trace->steps.size() - 1)
                             : std::string());
    return static_cast<int>(trace->steps.size());
}

}  // namespace headsplit::gui
