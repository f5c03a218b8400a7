#version 430
#pragma optionNV(unroll all)  // NVIDIA: unroll the loops over k (other drivers ignore it)
#include "common.glsl"
// Shared-memory tiled matmul for a real GPU: a workgroup of 16 x 16 invocations computes a
// 128 x 128 tile of C. For every 8 steps of k it copies a 128 x 8 slice of A and an 8 x 128
// slice of B into shared memory (4 values of each per invocation), then each invocation
// multiplies an 8 x 8 block of C from them: 64 FMAs per 4 vec4 reads of shared memory.
// Its 8 rows are ty*4 .. ty*4+3 and 64+ty*4 .. 64+ty*4+3 of the tile, its columns likewise
// with tx, so that neighbouring invocations read neighbouring vec4s (no bank conflicts).
// On an H100 (NVIDIA 580) it ran 4096^3 at 14.4 TFLOP/s, 21% of the FP32 peak (README).
// Measured there and slower: the 16 accumulators as an array (12.9), slices of 16 k (8.4),
// the next slice loaded into registers during the multiply (11.0), and this code with the
// copy split into one loop per operand and the tile height a parameter (6.9). NVIDIA's
// compiler is sensitive to the shape of this code: time a change before keeping it.
// Built with TILED_VEC4 defined (GlOptions::tiled_vec4, `headsplit kernels`' "tiled vec4" row),
// a workgroup whose tile lies inside C, with both operands contiguous along k and every row on
// a vec4 boundary (x @ W^T; Q @ K^T with a head size of 8 or more and a multiple of 4), copies
// each whole 8-deep slice with one vec4 load of A and one of B per invocation and no bounds
// checks (binding 4 and 5: A and B again, as vec4s; uniform vec4_ok: the operands allow it);
// the other tiles and a last partial slice copy as above. Not yet timed on a GPU, so not
// the default. Test hook: TILED_VEC4_PROBE also defined (HEADSPLIT_GL_VEC4_PROBE=1) makes the
// vec4 copy load zeros, so a test can see which slices took it.
// On llvmpipe barrier() is costly and this kernel is slower than matmul_blocked.comp; the
// backend chooses it where the renderer is a GPU.
//   C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] (+ bias[n])      PyTorch: C = A @ B (+ bias)
//   Same operands and uniforms as matmul_plain.comp (and, with TILED_VEC4, the above); any strides.
// Dispatch: (ceil(N / 128), ceil(M / 128), batch).
layout(local_size_x = 16, local_size_y = 16) in;

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

#ifdef TILED_VEC4
// The same buffers as A and B, bound again, read a vec4 at a time.
layout(std430, binding = 4) readonly buffer A4Buf { vec4 a4[]; };
layout(std430, binding = 5) readonly buffer B4Buf { vec4 b4[]; };
uniform int vec4_ok;  // A and B contiguous along k, their offsets and other strides multiples of 4
#endif

#define DEPTH 8  // k values per slice
const int TILE = 128, COPIES = TILE * DEPTH / 256;

// a_tile[k][m / 4][m % 4] = A[m0 + m, k0 + k] in buffer s, b_tile[k][n / 4][n % 4] =
// B[k0 + k, n0 + n]. One spare vec4 per row spreads the copy's writes over the banks.
shared vec4 a_tile[DEPTH][TILE / 4 + 1];
shared vec4 b_tile[DEPTH][TILE / 4 + 1];

// The copy: value i (of COPIES) of this invocation is row a_m + a_step_m * i, column
// a_k + a_step_k * i of A's slice. It walks memory in order: along k where k is A's
// contiguous dim (x @ W^T), along m otherwise; B's copy likewise along k or n.
int M, N, K, m0, n0, a_m, a_k, a_step_m, a_step_k, b_n, b_k, b_step_n, b_step_k, a_at, b_at;

float a_value(int i, int k0) {
    int m = a_m + a_step_m * i, k = k0 + a_k + a_step_k * i;
    return m0 + m < M && k < K ? a[a_at + m * a_strides.x + k * a_strides.y] : 0.0;
}
float b_value(int i, int k0) {
    int n = b_n + b_step_n * i, k = k0 + b_k + b_step_k * i;
    return n0 + n < N && k < K ? b[b_at + n * b_strides.y + k * b_strides.x] : 0.0;
}
void put(int i, float av, float bv) {
    int m = a_m + a_step_m * i, n = b_n + b_step_n * i;
    a_tile[a_k + a_step_k * i][m >> 2][m & 3] = av;
    b_tile[b_k + b_step_k * i][n >> 2][n & 3] = bv;
}

// Row m of C gets lo (columns n .. n+3) and hi (columns n+64 .. n+67), where they exist.
void store(int c_base, int m, int n, vec4 lo, vec4 hi) {
    if (m >= M) return;
    for (int j = 0; j < 8; ++j) {
        int col = n + (j < 4 ? j : 60 + j);
        if (col >= N) continue;
        float bj = use_bias != 0 ? bias[bias_layout.x + col * bias_layout.y] : 0.0;
        c[c_base + m * c_strides.x + col * c_strides.y] = (j < 4 ? lo[j] : hi[j - 4]) + bj;
    }
}

void main() {
    M = mnk.x, N = mnk.y, K = mnk.z;
    m0 = int(gl_WorkGroupID.y) * TILE, n0 = int(gl_WorkGroupID.x) * TILE;
    int z = int(gl_WorkGroupID.z);
    int b0 = z / batch1, b1 = z % batch1;
    int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
    int tid = ty * 16 + tx;
    bool a_along_k = a_strides.y == 1, b_along_k = b_strides.x == 1;
    a_m = a_along_k ? tid / DEPTH : tid & 127, a_step_m = a_along_k ? 256 / DEPTH : 0;
    a_k = a_along_k ? tid % DEPTH : tid >> 7, a_step_k = a_along_k ? 0 : 2;
    b_n = b_along_k ? tid / DEPTH : tid & 127, b_step_n = b_along_k ? 256 / DEPTH : 0;
    b_k = b_along_k ? tid % DEPTH : tid >> 7, b_step_k = b_along_k ? 0 : 2;
    a_at = a_layout.x + b0 * a_layout.y + b1 * a_layout.z + m0 * a_strides.x;
    b_at = b_layout.x + b0 * b_layout.y + b1 * b_layout.z + n0 * b_strides.y;

    // c<r>l, c<r>h: row r of the invocation's 8, columns tx*4 .. +3 and 64+tx*4 .. +3.
    vec4 c0l = vec4(0.0), c0h = vec4(0.0), c1l = vec4(0.0), c1h = vec4(0.0), c2l = vec4(0.0), c2h = vec4(0.0),
         c3l = vec4(0.0), c3h = vec4(0.0), c4l = vec4(0.0), c4h = vec4(0.0), c5l = vec4(0.0), c5h = vec4(0.0),
         c6l = vec4(0.0), c6h = vec4(0.0), c7l = vec4(0.0), c7h = vec4(0.0);

#ifdef TILED_VEC4
    // Invocation tid copies row tid / 2 of each slice, its k values (tid % 2) * 4 .. +3.
    const bool whole = vec4_ok != 0 && m0 + TILE <= M && n0 + TILE <= N;
    const int v_row = tid >> 1, v_k = (tid & 1) * 4;
    const int a4_at = a_at + v_row * a_strides.x + v_k, b4_at = b_at + v_row * b_strides.y + v_k;
#endif
    for (int k0 = 0; k0 < K; k0 += DEPTH) {
#ifdef TILED_VEC4
        if (whole && k0 + DEPTH <= K) {
            vec4 av = a4[(a4_at + k0) >> 2], bv = b4[(b4_at + k0) >> 2];
#ifdef TILED_VEC4_PROBE
            av = vec4(0.0), bv = vec4(0.0);
#endif
            const int q = v_row >> 2, r = v_row & 3;
            a_tile[v_k][q][r] = av.x, a_tile[v_k + 1][q][r] = av.y, a_tile[v_k + 2][q][r] = av.z, a_tile[v_k + 3][q][r] = av.w;
            b_tile[v_k][q][r] = bv.x, b_tile[v_k + 1][q][r] = bv.y, b_tile[v_k + 2][q][r] = bv.z, b_tile[v_k + 3][q][r] = bv.w;
        } else
#endif
        for (int i = 0; i < COPIES; ++i) put(i, a_value(i, k0), b_value(i, k0));
        barrier();
        for (int k = 0; k < DEPTH; ++k) {
            vec4 al = a_tile[k][ty], ah = a_tile[k][ty + 16];
            vec4 bl = b_tile[k][tx], bh = b_tile[k][tx + 16];
            c0l += al.x * bl; c0h += al.x * bh;
            c1l += al.y * bl; c1h += al.y * bh;
            c2l += al.z * bl; c2h += al.z * bh;
            c3l += al.w * bl; c3h += al.w * bh;
            c4l += ah.x * bl; c4h += ah.x * bh;
            c5l += ah.y * bl; c5h += ah.y * bh;
            c6l += ah.z * bl; c6h += ah.z * bh;
            c7l += ah.w * bl; c7h += ah.w * bh;
        }
        barrier();
    }

    // Add the bias and store the rows and columns that exist.
    int c_base = c_layout.x + b0 * c_layout.y + b1 * c_layout.z;
    int m = m0 + ty * 4, n = n0 + tx * 4;
    store(c_base, m, n, c0l, c0h);
    store(c_base, m + 1, n, c1l, c1h);
    store(c_base, m + 2, n, c2l, c2h);
    store(c_base, m + 3, n, c3l, c3h);
    store(c_base, m + 64, n, c4l, c4h);
    store(c_base, m + 65, n, c5l, c5h);
    store(c_base, m + 66, n, c6l, c6h);
    store(c_base, m + 67, n, c7l, c7h);
}
