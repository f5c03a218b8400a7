#version 430
#include "common.glsl"
// Plain matmul: one output element per invocation.
//   C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] (+ bias[n])
//   A [batch, M, K], B [batch, K, N], C [batch, M, N]; any strides (B^T is B with its
//   row and column strides swapped, so Q @ K^T reads K in place).
//   PyTorch: C = A @ B (+ bias)
// Dispatch: (ceil(N / 16), ceil(M / 16), batch); the batch is (b0, b1) = (z / batch1, z % batch1).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
layout(std430, binding = 2) buffer CBuf { float c[]; };
layout(std430, binding = 3) readonly buffer BiasBuf { float bias[]; };

uniform ivec3 mnk;           // M, N, K
uniform int batch1;          // size of the inner batch dim
uniform ivec4 a_layout;      // offset, batch0 stride, batch1 stride, unused
uniform ivec2 a_strides;     // row (m), column (k)
uniform ivec4 b_layout;
uniform ivec2 b_strides;     // row (k), column (n)
uniform ivec4 c_layout;
uniform ivec2 c_strides;     // row (m), column (n)
uniform ivec2 bias_layout;   // offset, stride; stride 0 and use_bias 0 when absent
uniform int use_bias;

void main() {
    int n = int(gl_GlobalInvocationID.x);
    int m = int(gl_GlobalInvocationID.y);
    if (m >= mnk.x || n >= mnk.y) return;
    int z = int(gl_GlobalInvocationID.z);
    int b0 = z / batch1, b1 = z % batch1;
    int ap = a_layout.x + b0 * a_layout.y + b1 * a_layout.z + m * a_strides.x;
    int bp = b_layout.x + b0 * b_layout.y + b1 * b_layout.z + n * b_strides.y;
    float acc = use_bias != 0 ? bias[bias_layout.x + n * bias_layout.y] : 0.0;
    for (int k = 0; k < mnk.z; ++k)
        acc += a[ap + k * a_strides.y] * b[bp + k * b_strides.x];
    c[c_layout.x + b0 * c_layout.y + b1 * c_layout.z + m * c_strides.x + n * c_strides.y] = acc;
}
