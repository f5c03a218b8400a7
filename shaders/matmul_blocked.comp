#version 430
#include "common.glsl"
// Register-blocked matmul: each invocation computes a 4 x 4 block of C, so every A and B
// value it loads is used 4 times from registers (16 FMAs per 8 loads instead of 1 per 2).
// On llvmpipe, where invocations are SIMD lanes of one CPU thread, this beats both the
// plain kernel and shared-memory tiling (barrier() is costly there).
//   C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] (+ bias[n])      PyTorch: C = A @ B (+ bias)
//   Same operands and uniforms as matmul_plain.comp.
// Dispatch: (ceil(N / 32), ceil(M / 32), batch): 8 x 8 invocations of 4 x 4 outputs.
layout(local_size_x = 8, local_size_y = 8) in;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
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
    int M = mnk.x, N = mnk.y, K = mnk.z;
    int n0 = int(gl_GlobalInvocationID.x) * 4;
    int m0 = int(gl_GlobalInvocationID.y) * 4;
    if (m0 >= M || n0 >= N) return;
    int z = int(gl_GlobalInvocationID.z);
    int b0 = z / batch1, b1 = z % batch1;

    // pass 1: row and column starts, clamped so that edge blocks read valid memory (the
    // clamped rows/columns are computed but never stored).
    int a_base = a_layout.x + b0 * a_layout.y + b1 * a_layout.z;
    int b_base = b_layout.x + b0 * b_layout.y + b1 * b_layout.z;
    ivec4 ar = ivec4(min(m0, M - 1), min(m0 + 1, M - 1), min(m0 + 2, M - 1), min(m0 + 3, M - 1));
    ivec4 bc = ivec4(min(n0, N - 1), min(n0 + 1, N - 1), min(n0 + 2, N - 1), min(n0 + 3, N - 1));
    ivec4 ap = a_base + ar * a_strides.x;
    ivec4 bp = b_base + bc * b_strides.y;

    // pass 2: accumulate the 4 x 4 block, one k at a time.
    vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
    for (int k = 0; k < K; ++k) {
        int ak = k * a_strides.y, bk = k * b_strides.x;
        vec4 bv = vec4(b[bp.x + bk], b[bp.y + bk], b[bp.z + bk], b[bp.w + bk]);
        acc0 += a[ap.x + ak] * bv;
        acc1 += a[ap.y + ak] * bv;
        acc2 += a[ap.z + ak] * bv;
        acc3 += a[ap.w + ak] * bv;
    }

    // pass 3: add the bias and store the rows and columns that exist.
    if (use_bias != 0) {
        vec4 bias_v = vec4(bias[bias_layout.x + bc.x * bias_layout.y], bias[bias_layout.x + bc.y * bias_layout.y],
                           bias[bias_layout.x + bc.z * bias_layout.y], bias[bias_layout.x + bc.w * bias_layout.y]);
        acc0 += bias_v; acc1 += bias_v; acc2 += bias_v; acc3 += bias_v;
    }
    int c_base = c_layout.x + b0 * c_layout.y + b1 * c_layout.z;
    mat4 rows = mat4(acc0, acc1, acc2, acc3);  // rows[i] = output row m0 + i
    for (int i = 0; i < 4; ++i) {
        if (m0 + i >= M) break;
        for (int j = 0; j < 4; ++j) {
            if (n0 + j >= N) break;
            c[c_base + (m0 + i) * c_strides.x + (n0 + j) * c_strides.y] = rows[i][j];
        }
    }
}
