#include "headsplit/base/op.hpp"

namespace headsplit {

namespace {
const char* const kOpNames[] = {
    "input",   "project", "split",          "view",  "transpose", "cache_append", "repeat_kv",
    "scores",  "mask",    "pad_mask",       "scale", "softmax",   "dropout",      "context",
    "tile",    "normalize",
    "transpose_back",     "merge",          "concat", "out_proj", "assemble",
};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == kOpCount,
              "kOpNames must name every Op exactly once");
}  // namespace

const char* op_name(Op op) {
    const auto i = static_cast<std::size_t>(op);
    return i < kOpCount ? kOpNames[i] : "?";
}

}  // namespace headsplit
