#version 430
#include "common.glsl"
// Flash attention's backward (FlashAttention-2, gl_backend.hpp's FlashBackArgs), in passes
// that need no atomics: each writes only what its invocation owns.
//   ROWS: one query row (b, h, t): lse = m + log l; delta = rowsum(d_out * out); dq row = 0
//   ZERO_KV: one key row (b, g, s): dk, dv rows = 0
//   DQ: one query row (b, h, t) in [q_begin, q_end): over the keys of the tiles in range,
//       p = exp(q . k * factor - lse) (0 where masked), ds = p * (d_out . v - delta),
//       dq += ds * k * factor; with a tile buffer, p is written there [B, H, block, block]
//   DKV: one key row (b, g, s) in [k_begin, k_end): over its query heads and the query rows of
//       the tiles in range, the same p and ds: dv += p * d_out, dk += ds * q * factor
// q, d_out, out: [B, H, T, hd]; k, v: [B, G, S, hd]; any strides (as ivec4). m, l, lse, delta:
// [B, H, T]; dq [B, H, T, hd], dk, dv [B, G, S, hd]: contiguous.
// Dispatch: ceil(rows / 64) workgroups (x, then y past 65535).
layout(local_size_x = 64) in;

const int ROWS = 0, ZERO_KV = 1, DQ = 2, DKV = 3;

layout(std430, binding = 0) readonly buffer QBuf { float q[]; };
layout(std430, binding = 1) readonly buffer KBuf { float k[]; };
layout(std430, binding = 2) readonly buffer VBuf { float v[]; };
layout(std430, binding = 3) readonly buffer GBuf { float g[]; };      // d_out
layout(std430, binding = 4) readonly buffer OBuf { float o[]; };      // out (ROWS only)
layout(std430, binding = 5) buffer RowBuf { float row_stats[]; };     // m, l, lse, delta at offsets
layout(std430, binding = 6) buffer DqBuf { float dq[]; };
layout(std430, binding = 7) buffer DkBuf { float dk[]; };
layout(std430, binding = 8) buffer DvBuf { float dv[]; };
layout(std430, binding = 9) buffer TileBuf { float tile[]; };
layout(std430, binding = 10) readonly buffer MaskBuf { float key_mask[]; };

uniform int mode;
uniform ivec4 dims;        // B, H, T, hd
uniform ivec2 kv_dims;     // G, S
uniform ivec4 q_strides, k_strides, v_strides, g_strides, o_strides;
uniform ivec4 offsets;     // q, k, v, d_out
uniform int o_offset;
uniform ivec4 stats;       // offsets of m, l, lse, delta in row_stats (one buffer holds them all)
uniform ivec4 ranges;      // q_begin, q_end, k_begin, k_end
uniform int block;
uniform int causal;
uniform int keep_tile;
uniform float factor;
uniform int use_mask;
uniform ivec3 mask_layout;  // offset, batch stride, key stride

float qv(int b, int h, int t, int e) { return q[offsets.x + b * q_strides.x + h * q_strides.y + t * q_strides.z + e * q_strides.w]; }
float kv_k(int b, int g, int s, int e) { return k[offsets.y + b * k_strides.x + g * k_strides.y + s * k_strides.z + e * k_strides.w]; }
float kv_v(int b, int g, int s, int e) { return v[offsets.z + b * v_strides.x + g * v_strides.y + s * v_strides.z + e * v_strides.w]; }
float gv(int b, int h, int t, int e) { return g[offsets.w + b * g_strides.x + h * g_strides.y + t * g_strides.z + e * g_strides.w]; }

bool tile_runs(int i, int j, int T) { return causal == 0 || j * block <= min((i + 1) * block, T) - 1; }

bool masked(int b, int t, int s) {
    if (causal != 0 && s > t) return true;
    return use_mask != 0 && key_mask[mask_layout.x + b * mask_layout.y + s * mask_layout.z] != 0.0;
}

// p and ds of query (b, h, t) against key s of key/value head gh.
void p_ds(int b, int h, int t, int gh, int s, out float p, out float ds) {
    int B = dims.x, H = dims.y, T = dims.z, hd = dims.w;
    int r = (b * H + h) * T + t;
    float dot_qk = 0.0, dot_gv = 0.0;
    for (int e = 0; e < hd; ++e) {
        dot_qk += qv(b, h, t, e) * kv_k(b, gh, s, e);
        dot_gv += gv(b, h, t, e) * kv_v(b, gh, s, e);
    }
    p = masked(b, t, s) ? 0.0 : exp(dot_qk * factor - row_stats[stats.z + r]);
    ds = p * (dot_gv - row_stats[stats.w + r]);
}

void main() {
    int B = dims.x, H = dims.y, T = dims.z, hd = dims.w, G = kv_dims.x, S = kv_dims.y;
    int group = H / G;
    int n = linear_invocation(64u);
    if (mode == ROWS) {
        if (n >= B * H * T) return;
        int t = n % T, h = (n / T) % H, b = n / (T * H);
        float dot = 0.0;
        for (int e = 0; e < hd; ++e)
            dot += o[o_offset + b * o_strides.x + h * o_strides.y + t * o_strides.z + e * o_strides.w] * gv(b, h, t, e);
        row_stats[stats.w + n] = dot;
        row_stats[stats.z + n] = row_stats[stats.x + n] + log(row_stats[stats.y + n]);
        for (int e = 0; e < hd; ++e) dq[n * hd + e] = 0.0;
    } else if (mode == ZERO_KV) {
        if (n >= B * G * S) return;
        for (int e = 0; e < hd; ++e) { dk[n * hd + e] = 0.0; dv[n * hd + e] = 0.0; }
    } else if (mode == DQ) {
        int rows = ranges.y - ranges.x;
        if (n >= B * H * rows) return;
        int t = ranges.x + n % rows, h = (n / rows) % H, b = n / (rows * H);
        int gh = h / group, i = t / block;
        int r = (b * H + h) * T + t;
        for (int s = ranges.z; s < ranges.w; ++s) {
            if (!tile_runs(i, s / block, T)) continue;
            float p, ds;
            p_ds(b, h, t, gh, s, p, ds);
            if (keep_tile != 0) tile[((b * H + h) * block + (t - ranges.x)) * block + (s - ranges.z)] = p;
            for (int e = 0; e < hd; ++e) dq[r * hd + e] += ds * kv_k(b, gh, s, e) * factor;
        }
    } else {
        int keys = ranges.w - ranges.z;
        if (n >= B * G * keys) return;
        int s = ranges.z + n % keys, gh = (n / keys) % G, b = n / (keys * G);
        int j = s / block;
        int r = (b * G + gh) * S + s;
        for (int h = gh * group; h < (gh + 1) * group; ++h)
            for (int t = ranges.x; t < ranges.y; ++t) {
                if (!tile_runs(t / block, j, T)) continue;
                float p, ds;
                p_ds(b, h, t, gh, s, p, ds);
                for (int e = 0; e < hd; ++e) {
                    dv[r * hd + e] += p * gv(b, h, t, e);
                    dk[r * hd + e] += ds * qv(b, h, t, e) * factor;
                }
            }
    }
}
