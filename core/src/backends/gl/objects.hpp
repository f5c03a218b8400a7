#pragma once
// RAII, move-only GL objects (a copyable one would delete its name twice).
#include <cstdint>
#include <map>
#include <string>

#include <epoxy/gl.h>

namespace headsplit::gl {

// A shader storage buffer of `elements` floats.
class Buffer {
public:
    Buffer() = default;
    explicit Buffer(std::int64_t elements);
    ~Buffer() { reset(); }
    Buffer(Buffer&& o) noexcept : id_(o.id_), elements_(o.elements_) { o.id_ = 0; }
    Buffer& operator=(Buffer&& o) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    GLuint id() const { return id_; }
    std::int64_t elements() const { return elements_; }

private:
    void reset();
    GLuint id_ = 0;
    std::int64_t elements_ = 0;
};

// A linked compute program with its uniform locations looked up once.
class ComputeProgram {
public:
    ComputeProgram() = default;
    // Compiles `source` (already with includes inlined); throws GlError(Shader) naming
    // `name`, the line and the driver's log.
    ComputeProgram(const std::string& name, const std::string& source);
    ~ComputeProgram() { reset(); }
    ComputeProgram(ComputeProgram&& o) noexcept : id_(o.id_), name_(std::move(o.name_)), locations_(std::move(o.locations_)) { o.id_ = 0; }
    ComputeProgram& operator=(ComputeProgram&& o) noexcept;
    ComputeProgram(const ComputeProgram&) = delete;
    ComputeProgram& operator=(const ComputeProgram&) = delete;

    GLuint id() const { return id_; }
    const std::string& name() const { return name_; }
    GLint uniform(const char* name);  // -1 when the shader does not use it

private:
    void reset();
    GLuint id_ = 0;
    std::string name_;
    std::map<std::string, GLint> locations_;
};

// The source of shaders/<name> with `#include "common.glsl"` inlined and #line set so
// that the driver's line numbers are the .comp file's own; `defines` ("#define X\n" lines)
// go in after its #version line.
std::string shader_source(const std::string& name, const std::string& defines = "");

}  // namespace headsplit::gl
