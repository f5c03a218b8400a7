#include "backends/gl/objects.hpp"

#include <regex>
#include <vector>

#include "embedded.hpp"
#include "headsplit/backends/gl_backend.hpp"

namespace headsplit::gl {

Buffer::Buffer(std::int64_t elements) : elements_(elements) {
    glGenBuffers(1, &id_);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_);
    glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(std::max<std::int64_t>(elements, 1) * 4), nullptr,
                 GL_DYNAMIC_COPY);
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
    if (this != &o) {
        reset();
        id_ = o.id_;
        elements_ = o.elements_;
        o.id_ = 0;
    }
    return *this;
}

void Buffer::reset() {
    if (id_) glDeleteBuffers(1, &id_);
    id_ = 0;
}

namespace {

std::string one_line(std::string s) {
    for (auto& ch : s)
        if (ch == '\n' || ch == '\r') ch = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

// "0:12(5): error: ..." (Mesa) -> "matmul_plain.comp line 12"; source string 1 is common.glsl.
std::string where(const std::string& name, const std::string& log) {
    std::smatch m;
    if (std::regex_search(log, m, std::regex(R"((\d+):(\d+)\(\d+\))")) ||
        std::regex_search(log, m, std::regex(R"((\d+)\((\d+)\) : )")))  // "0(72) : error C0000" (NVIDIA)
        return (m[1] == "1" ? std::string("common.glsl") : name) + " line " + m[2].str();
    return name;
}

// A shader's or a program's info log (get_iv: glGetShaderiv or glGetProgramiv; get_log:
// glGetShaderInfoLog or glGetProgramInfoLog).
template <class GetIv, class GetLog>
std::string info_log(GLuint id, GetIv get_iv, GetLog get_log) {
    GLint len = 0;
    get_iv(id, GL_INFO_LOG_LENGTH, &len);
    std::vector<char> log(static_cast<std::size_t>(std::max(len, 1)));
    get_log(id, len, nullptr, log.data());
    return log.data();
}

}  // namespace

ComputeProgram::ComputeProgram(const std::string& name, const std::string& source) : name_(name) {
    const GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
    const char* text = source.c_str();
    glShaderSource(shader, 1, &text, nullptr);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        const std::string text_log = info_log(shader, glGetShaderiv, glGetShaderInfoLog);
        glDeleteShader(shader);
        throw GlError(GlError::Kind::Shader, "shader " + name + " failed to compile at " + where(name, text_log) +
                                                 ": " + one_line(text_log));
    }
    id_ = glCreateProgram();
    glAttachShader(id_, shader);
    glLinkProgram(id_);
    glDeleteShader(shader);
    glGetProgramiv(id_, GL_LINK_STATUS, &ok);
    if (!ok) {
        const std::string text_log = info_log(id_, glGetProgramiv, glGetProgramInfoLog);
        reset();
        throw GlError(GlError::Kind::Shader, "shader " + name + " failed to link: " + one_line(text_log));
    }
}

ComputeProgram& ComputeProgram::operator=(ComputeProgram&& o) noexcept {
    if (this != &o) {
        reset();
        id_ = o.id_;
        name_ = std::move(o.name_);
        locations_ = std::move(o.locations_);
        o.id_ = 0;
    }
    return *this;
}

void ComputeProgram::reset() {
    if (id_) glDeleteProgram(id_);
    id_ = 0;
}

GLint ComputeProgram::uniform(const char* name) {
    auto it = locations_.find(name);
    if (it == locations_.end()) it = locations_.emplace(name, glGetUniformLocation(id_, name)).first;
    return it->second;
}

std::string shader_source(const std::string& name, const std::string& defines) {
    const std::string text(headsplit_shader(name));
    if (text.empty()) throw GlError(GlError::Kind::Shader, "shader " + name + " is not compiled into this build");
    const std::string include = "#include \"common.glsl\"";
    std::string out;
    std::size_t line = 1, start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string l = text.substr(start, end - start);
        if (line == 1 && !defines.empty()) {  // after #version, which must come first
            out += l + "\n" + defines + "#line 2 0\n";
        } else if (l == include) {
            out += "#line 1 1\n" + std::string(headsplit_shader("common.glsl")) + "\n#line " + std::to_string(line + 1) + " 0\n";
        } else {
            out += l + "\n";
        }
        start = end + 1;
        ++line;
    }
    return out;
}

}  // namespace headsplit::gl
