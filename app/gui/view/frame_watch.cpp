#include "gui/view/frame_watch.hpp"

namespace headsplit::gui {

namespace {
FrameWatch g_nobody;
FrameWatch* g_watch = &g_nobody;
}  // namespace

FrameWatch& frame_watch() { return *g_watch; }

void watch_frames(FrameWatch* watch) { g_watch = watch ? watch : &g_nobody; }

}  // namespace headsplit::gui
