#version 430
#include "common.glsl"
// Row-wise attention ops on the score grids, one invocation per row of T scores; `mode` is one
// of the constants below (gl_backend.cpp's RowsMode, same names and numbers):
//   MASK:    s[..., i, j] = fill for j > i       scores.masked_fill_(causal, -inf) (fill -inf;
//                    0 for the mask's backward, which zeroes the gradient where it masked)
//   SCALE:   s *= factor                         scores.div_(sqrt(head_dim))
//   SOFTMAX: out = softmax(s, dim=-1)            torch.softmax(scores, dim=-1)
//   PADDING: s[b, ..., i, j] = fill where key_mask[b, j] != 0
//                    scores.masked_fill_(key_padding_mask[:, None, None, :], -inf)
//                    the mask [B, S] is bound as `o`, at out_offset with out_strides.zw
//                    (b, j); row r belongs to batch element r / group_rows.
//   MASKED_SOFTMAX, mask, scale and softmax in one pass (a forward that records nothing):
//                    out = softmax(s * factor) over the keys j <= i (when `causal`) whose
//                    key_mask[b, j] (binding 2, when use_mask) is 0; the others get 0.
//   SOFTMAX_BACK: out = s * (g - rowsum(g * s)), s the softmax's output, g its gradient
//                    (binding 3, at g_offset with g_strides): the softmax's backward.
//   s, out [B, H, T, S] (or [B, T, S] padded to 4-D); any strides.
// Dispatch: ceil(rows / 64) workgroups (x, then y past 65535).
layout(local_size_x = 64) in;

const float NEG_INF = uintBitsToFloat(0xFF800000u);
const int MASK = 0, SCALE = 1, SOFTMAX = 2, PADDING = 3, MASKED_SOFTMAX = 4, SOFTMAX_BACK = 5;

layout(std430, binding = 0) buffer InBuf { float s[]; };
layout(std430, binding = 1) buffer OutBuf { float o[]; };
layout(std430, binding = 2) readonly buffer MaskBuf { float key_mask[]; };
layout(std430, binding = 3) readonly buffer GradBuf { float g[]; };

uniform int mode;
uniform float factor;
uniform ivec4 shape;        // [d0, d1, rows, cols]
uniform ivec4 in_strides;
uniform int in_offset;
uniform ivec4 out_strides;
uniform int out_offset;
uniform int group_rows;
uniform int causal;
uniform int use_mask;
uniform ivec3 mask_layout;  // offset, batch stride, key stride
uniform float fill;
uniform ivec4 g_strides;
uniform int g_offset;

void main() {
    int row = linear_invocation(64u);
    int rows = shape.x * shape.y * shape.z;
    if (row >= rows) return;
    int cols = shape.w;
    int i = row % shape.z;  // the query's token position
    int ip = in_offset + strided_offset(row * cols, shape, in_strides);
    int op = mode == PADDING ? 0 : out_offset + strided_offset(row * cols, shape, out_strides);  // o is the mask there
    int sc = in_strides.w, oc = out_strides.w;

    if (mode == MASK) {
        for (int j = i + 1; j < cols; ++j) s[ip + j * sc] = fill;
    } else if (mode == PADDING) {
        int m = out_offset + (row / group_rows) * out_strides.z;
        for (int j = 0; j < cols; ++j)
            if (o[m + j * out_strides.w] != 0.0) s[ip + j * sc] = fill;
    } else if (mode == SOFTMAX_BACK) {
        int gp = g_offset + strided_offset(row * cols, shape, g_strides), gc = g_strides.w;
        float dot = 0.0;
        for (int j = 0; j < cols; ++j) dot += g[gp + j * gc] * s[ip + j * sc];
        for (int j = 0; j < cols; ++j) o[op + j * oc] = s[ip + j * sc] * (g[gp + j * gc] - dot);
    } else if (mode == MASKED_SOFTMAX) {
        int seen = causal != 0 ? min(cols, i + 1) : cols;
        int m = mask_layout.x + (row / group_rows) * mask_layout.y;
        float row_max = NEG_INF;
        for (int j = 0; j < seen; ++j)
            if (use_mask == 0 || key_mask[m + j * mask_layout.z] == 0.0) row_max = max(row_max, s[ip + j * sc] * factor);
        float sum = 0.0;
        for (int j = 0; j < cols; ++j) {
            bool keep = j < seen && (use_mask == 0 || key_mask[m + j * mask_layout.z] == 0.0);
            float e = keep ? exp(s[ip + j * sc] * factor - row_max) : 0.0;
            o[op + j * oc] = e;
            sum += e;
        }
        float inv = 1.0 / sum;
        for (int j = 0; j < seen; ++j) o[op + j * oc] *= inv;
    } else if (mode == SCALE) {
        for (int j = 0; j < cols; ++j) s[ip + j * sc] *= factor;
    } else {
        // pass 1: the row max, so exp never overflows (-inf cells give exactly 0)
        float row_max = NEG_INF;
        for (int j = 0; j < cols; ++j) row_max = max(row_max, s[ip + j * sc]);
        // pass 2: exponentials and their sum
        float sum = 0.0;
        for (int j = 0; j < cols; ++j) {
            float e = exp(s[ip + j * sc] - row_max);
            o[op + j * oc] = e;
            sum += e;
        }
        // pass 3: normalise
        float inv = 1.0 / sum;
        for (int j = 0; j < cols; ++j) o[op + j * oc] *= inv;
    }
}
