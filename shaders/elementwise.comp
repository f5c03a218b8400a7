#version 430
#include "common.glsl"
// Elementwise over strided 4-D tensors, one element per invocation:
//   out = x * factor                 (use_y = 0) .contiguous() copy when factor = 1
//   out = x * y * factor             (use_y = 1) dropout: weights * keep_mask / (1 - p)
//   out = (x + y) * factor           (use_y = 2) a gradient summed from two paths
// Dispatch: ceil(n / 256) workgroups (x, then y past 65535).
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer YBuf { float y[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float o[]; };

uniform ivec4 shape;
uniform ivec4 x_strides;
uniform int x_offset;
uniform ivec4 y_strides;
uniform int y_offset;
uniform ivec4 out_strides;
uniform int out_offset;
uniform int use_y;
uniform float factor;

void main() {
    int i = linear_invocation(256u);
    if (i >= shape.x * shape.y * shape.z * shape.w) return;
    float v = x[x_offset + strided_offset(i, shape, x_strides)];
    if (use_y == 1) v *= y[y_offset + strided_offset(i, shape, y_strides)];
    else if (use_y == 2) v += y[y_offset + strided_offset(i, shape, y_strides)];
    o[out_offset + strided_offset(i, shape, out_strides)] = v * factor;
}
