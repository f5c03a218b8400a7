#include "headsplit/base/op.hpp"

namespace headsplit {

namespace {
const char* const kOpNames[] = {
    "input",   "project", "split",          "view",  "transpose", "cache_append", "repeat_kv",
    "scores",  "mask",    "pad_mask",       "scale", "softmax",   "dropout",      "context",
    "tile",    "normalize",
    "transpose_back",     "merge",          "concat", "out_proj", "assemble",
    "out_proj_back", "merge_back", "concat_back", "transpose_back_grad", "context_back", "dropout_back",
    "softmax_back", "scale_back", "mask_back", "pad_mask_back", "scores_back", "repeat_kv_back",
    "transpose_grad", "view_back", "split_back", "project_back", "flash_back_rows", "tile_back",
};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == kOpCount,
              "kOpNames must name every Op exactly once");
}  // namespace

const char* op_name(Op op) {
    const auto i = static_cast<std::size_t>(op);
    return i < kOpCount ? kOpNames[i] : "?";
}

const char* pass_name(Op op) { return is_backward(op) ? "backward" : "forward"; }

}  // namespace headsplit
