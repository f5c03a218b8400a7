#pragma once
// A headless OpenGL 4.3 core context on EGL's surfaceless platform (Mesa), no display.
#include <memory>

namespace headsplit::gl {

class EglContext {
public:
    // Throws GlError(NoContext) with the reason in one line.
    static std::unique_ptr<EglContext> create();
    ~EglContext();
    EglContext(const EglContext&) = delete;
    EglContext& operator=(const EglContext&) = delete;

    void make_current() const;  // cheap when it already is

private:
    EglContext() = default;
    void* display_ = nullptr;
    void* context_ = nullptr;
};

}  // namespace headsplit::gl
