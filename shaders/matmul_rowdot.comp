#version 430
#include "common.glsl"
// Register-blocked "row dot" matmul for operands that are both contiguous along K, as in
// x @ W^T (nn.Linear weights) and Q @ K^T: each invocation computes a 4 x 4 block of C
// from vec4 loads of 4 rows of A and 4 rows of B^T, 16 dot products per 8 loads.
//   C[b, m, n] = sum_k A[b, m, k] * Bt[b, n, k] (+ bias[n])     PyTorch: C = A @ Bt.T (+ bias)
//   Needs K, the offsets and the row strides of A and Bt to be multiples of 4 (vec4
//   alignment); the backend falls back to matmul_blocked.comp otherwise.
//   Uniforms as matmul_plain.comp; b_strides = (k stride 1, n stride = row stride of Bt).
// Dispatch: (ceil(N / 32), ceil(M / 32), batch).
layout(local_size_x = 8, local_size_y = 8) in;

layout(std430, binding = 0) readonly buffer ABuf { vec4 a[]; };
layout(std430, binding = 1) readonly buffer BBuf { vec4 b[]; };
layout(std430, binding = 2) buffer CBuf { float c[]; };
layout(std430, binding = 3) readonly buffer BiasBuf { float bias[]; };

uniform ivec3 mnk;
uniform int batch1;
uniform ivec4 a_layout;
uniform ivec2 a_strides;
uniform ivec4 b_layout;
uniform ivec2 b_strides;
uniform ivec4 c_layout;
uniform ivec2 c_strides;
uniform ivec2 bias_layout;
uniform int use_bias;

void main() {
    int M = mnk.x, N = mnk.y, K4 = mnk.z / 4;
    int n0 = int(gl_GlobalInvocationID.x) * 4;
    int m0 = int(gl_GlobalInvocationID.y) * 4;
    if (m0 >= M || n0 >= N) return;
    int z = int(gl_GlobalInvocationID.z);
    int b0 = z / batch1, b1 = z % batch1;

    // pass 1: the vec4 index of each of the 4 rows of A and of Bt (clamped at the edges)
    int a_base = (a_layout.x + b0 * a_layout.y + b1 * a_layout.z) / 4;
    int b_base = (b_layout.x + b0 * b_layout.y + b1 * b_layout.z) / 4;
    ivec4 ar = min(ivec4(m0) + ivec4(0, 1, 2, 3), ivec4(M - 1));
    ivec4 bc = min(ivec4(n0) + ivec4(0, 1, 2, 3), ivec4(N - 1));
    ivec4 ap = a_base + ar * (a_strides.x / 4);
    ivec4 bp = b_base + bc * (b_strides.y / 4);

    // pass 2: acc[i][j] accumulates row m0 + i of A with row n0 + j of Bt, 4 k at a time
    vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
    for (int k = 0; k < K4; ++k) {
        vec4 b0v = b[bp.x + k], b1v = b[bp.y + k], b2v = b[bp.z + k], b3v = b[bp.w + k];
        vec4 av = a[ap.x + k];
        acc0 += vec4(dot(av, b0v), dot(av, b1v), dot(av, b2v), dot(av, b3v));
        av = a[ap.y + k];
        acc1 += vec4(dot(av, b0v), dot(av, b1v), dot(av, b2v), dot(av, b3v));
        av = a[ap.z + k];
        acc2 += vec4(dot(av, b0v), dot(av, b1v), dot(av, b2v), dot(av, b3v));
        av = a[ap.w + k];
        acc3 += vec4(dot(av, b0v), dot(av, b1v), dot(av, b2v), dot(av, b3v));
    }

    // pass 3: add the bias and store the rows and columns that exist
    if (use_bias != 0) {
        vec4 bias_v = vec4(bias[bias_layout.x + bc.x * bias_layout.y], bias[bias_layout.x + bc.y * bias_layout.y],
                           bias[bias_layout.x + bc.z * bias_layout.y], bias[bias_layout.x + bc.w * bias_layout.y]);
        acc0 += bias_v; acc1 += bias_v; acc2 += bias_v; acc3 += bias_v;
    }
    int c_base = c_layout.x + b0 * c_layout.y + b1 * c_layout.z;
    mat4 rows = mat4(acc0, acc1, acc2, acc3);
    for (int i = 0; i < 4; ++i) {
        if (m0 + i >= M) break;
        for (int j = 0; j < 4; ++j) {
            if (n0 + j >= N) break;
            c[c_base + (m0 + i) * c_strides.x + (n0 + j) * c_strides.y] = rows[i][j];
        }
    }
}
