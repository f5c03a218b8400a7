#version 430
#include "common.glsl"
// Flash attention, one query row per invocation (no shared memory, no barriers): the row
// walks its key blocks in order, keeping its running max m and sum l and its accumulator
// acc (hd floats) in the buffers, as FlashArgs in backend.hpp says:
//   s = q . k_j * factor, -inf where masked (causal: j > i; key_mask[b, j] != 0)
//   m_new = max(m, max_j s); p_j = exp(s_j - m_new); c = exp(m - m_new)
//   l = l * c + sum_j p_j;  acc = acc * c + sum_j p_j v_j;  m = m_new
// per tile of `block` keys. A key block that starts at key 0 starts the row afresh; with
// `normalize` the row ends as acc /= l. A workgroup is 64 rows of one (b, h): row q_begin +
// 64 * x + local x of bh = y + z * (workgroups along y).
// Dispatch: (ceil(rows / 64), B * H, 1), y split into z past 65535.
// The key and value addresses then depend on the workgroup only, and every loop over keys
// and dimensions has the same bounds in all rows: on llvmpipe, which runs invocations as SIMD
// lanes, a lane's row differs in its data, never in where it reads K and V.
layout(local_size_x = 64) in;

const float NEG_INF = uintBitsToFloat(0xFF800000u);

layout(std430, binding = 0) readonly buffer QBuf { float q[]; };
layout(std430, binding = 1) readonly buffer KBuf { float k[]; };
layout(std430, binding = 2) readonly buffer VBuf { float v[]; };
layout(std430, binding = 3) buffer MBuf { float m[]; };
layout(std430, binding = 4) buffer LBuf { float l[]; };
layout(std430, binding = 5) buffer AccBuf { float acc[]; };
layout(std430, binding = 6) writeonly buffer TileBuf { float tile[]; };
layout(std430, binding = 7) readonly buffer MaskBuf { float key_mask[]; };

uniform ivec4 dims;         // B, H, T, hd
uniform ivec2 keys;         // S, group (query heads per key/value head)
uniform ivec4 q_layout;     // offset, batch, head, row stride (columns unit-stride)
uniform ivec4 k_layout;
uniform ivec4 v_layout;
uniform ivec3 state_offsets;  // m, l, acc (each contiguous)
uniform int tile_offset;    // the tile [B, H, block, block]; < 0: not kept
uniform ivec4 range;        // q_begin, q_end, k_begin, k_end
uniform int block;
uniform int causal;
uniform int normalize;
uniform float factor;
uniform int use_mask;
uniform ivec3 mask_layout;  // offset, batch stride, key stride

const int LOCAL_HD = 128;
const int LOCAL_KEYS = 128;
float q_loc[LOCAL_HD];  // the row's query, when head_dim fits

float score(int qp, int kp, int hd) {
    float dot = 0.0;
    if (hd <= LOCAL_HD)
        for (int d = 0; d < hd; ++d) dot += q_loc[d] * k[kp + d];
    else
        for (int d = 0; d < hd; ++d) dot += q[qp + d] * k[kp + d];
    return dot;
}

// A row keeps its state in registers for the whole dispatch, not in the buffers: m and l
// always, its query and acc when head_dim fits LOCAL_HD, and a tile's scores when the block
// fits LOCAL_KEYS (pass 2 then reads them instead of computing each dot product again). The
// same operations in the same order: the same numbers.

void main() {
    int rows = range.y - range.x;
    int H = dims.y, T = dims.z, hd = dims.w, S = keys.x;
    int bh = int(gl_WorkGroupID.y + gl_WorkGroupID.z * gl_NumWorkGroups.y);
    int r = int(gl_GlobalInvocationID.x);
    if (r >= rows || bh >= dims.x * H) return;
    int i = range.x + r;
    int b = bh / H, h = bh % H, g = h / keys.y;
    int qp = q_layout.x + b * q_layout.y + h * q_layout.z + i * q_layout.w;
    int kb = k_layout.x + b * k_layout.y + g * k_layout.z;
    int vb = v_layout.x + b * v_layout.y + g * v_layout.z;
    int mi = state_offsets.x + bh * T + i, li = state_offsets.y + bh * T + i;
    int ai = state_offsets.z + (bh * T + i) * hd;
    int qblock = i / block;
    int maskb = mask_layout.x + b * mask_layout.y;
    bool local_acc = hd <= LOCAL_HD, local_scores = block <= LOCAL_KEYS;
    float a_loc[LOCAL_HD];
    float s_loc[LOCAL_KEYS];
    if (local_acc)
        for (int d = 0; d < hd; ++d) q_loc[d] = q[qp + d];

    int j_begin = range.z / block, j_end = (range.w + block - 1) / block;
    // A pass that goes on from an earlier one (its first block is not key 0) starts from the
    // state that one left.
    float m_run = NEG_INF, l_run = 0.0;
    bool loaded = j_begin > 0;
    if (loaded) {
        m_run = m[mi];
        l_run = l[li];
        if (local_acc)
            for (int d = 0; d < hd; ++d) a_loc[d] = acc[ai + d];
    }
    for (int j = j_begin; j < j_end; ++j) {
        int k0 = j * block;
        // Under a causal mask a tile wholly above the diagonal is skipped (Config::tile_runs),
        // when it is so for the workgroup's last row (the same test in all its rows): a row
        // below that one runs such a tile with every key masked, which changes none of its
        // m, l and acc.
        int last_row = min(range.x + int(gl_WorkGroupID.x) * 64 + 63, range.y - 1);
        if (causal != 0 && k0 > min((last_row / block + 1) * block, T) - 1) continue;
        int nk = min(block, S - k0);
        int seen = causal != 0 ? min(nk, i - k0 + 1) : nk;
        bool fresh = k0 == 0;
        loaded = true;
        // pass 1: this tile's scores (kept for the trace) and their max
        float tile_max = NEG_INF;
        int tile_row = tile_offset + (bh * block + (i - qblock * block)) * block;
        if (local_scores && local_acc) {
            // Four keys at a time: each q value read once for four products. Every row takes
            // the dot product of every key, masked or not: loops of one length in every row.
            int key = 0;
            for (; key + 4 <= nk; key += 4) {
                int kp = kb + (k0 + key) * k_layout.w, ks = k_layout.w;
                float d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
                for (int d = 0; d < hd; ++d) {
                    float qd = q_loc[d];
                    d0 += qd * k[kp + d];
                    d1 += qd * k[kp + ks + d];
                    d2 += qd * k[kp + 2 * ks + d];
                    d3 += qd * k[kp + 3 * ks + d];
                }
                s_loc[key] = d0;
                s_loc[key + 1] = d1;
                s_loc[key + 2] = d2;
                s_loc[key + 3] = d3;
            }
            for (; key < nk; ++key) s_loc[key] = score(qp, kb + (k0 + key) * k_layout.w, hd);
            for (key = 0; key < nk; ++key) {
                bool masked = key >= seen || (use_mask != 0 && key_mask[maskb + (k0 + key) * mask_layout.z] != 0.0);
                float s = masked ? NEG_INF : s_loc[key] * factor;
                s_loc[key] = s;
                tile_max = max(tile_max, s);
                if (tile_offset >= 0) tile[tile_row + key] = s;
            }
        } else {
            for (int key = 0; key < nk; ++key) {
                bool masked = key >= seen || (use_mask != 0 && key_mask[maskb + (k0 + key) * mask_layout.z] != 0.0);
                float s = masked ? NEG_INF : score(qp, kb + (k0 + key) * k_layout.w, hd) * factor;
                if (local_scores) s_loc[key] = s;
                tile_max = max(tile_max, s);
                if (tile_offset >= 0) tile[tile_row + key] = s;
            }
        }
        float m_old = fresh ? NEG_INF : m_run;
        float m_new = max(m_old, tile_max);
        float c = m_old == NEG_INF ? 0.0 : exp(m_old - m_new);
        if (fresh) {
            for (int d = 0; d < hd; ++d) {
                if (local_acc) a_loc[d] = 0.0;
                else acc[ai + d] = 0.0;
            }
        } else if (c != 1.0) {
            for (int d = 0; d < hd; ++d) {
                if (local_acc) a_loc[d] *= c;
                else acc[ai + d] *= c;
            }
        }
        // pass 2: p = exp(s - m_new), summed into l and p v into acc
        float sum = 0.0;
        if (local_scores && local_acc) {
            // Every row walks all nk keys, a masked one with p = 0 (adding 0 changes no sum; a
            // row with every key masked so far adds only zeros): loops of one length in every
            // row, which llvmpipe runs side by side. acc takes p v key after key, four keys
            // per read and write of acc.
            for (int key = 0; key < nk; ++key) {
                float p = s_loc[key] == NEG_INF ? 0.0 : exp(s_loc[key] - m_new);
                s_loc[key] = p;
                sum += p;
            }
            int key = 0;
            for (; key + 4 <= nk; key += 4) {
                int vp = vb + (k0 + key) * v_layout.w, vs = v_layout.w;
                float p0 = s_loc[key], p1 = s_loc[key + 1], p2 = s_loc[key + 2], p3 = s_loc[key + 3];
                for (int d = 0; d < hd; ++d) {
                    float a = a_loc[d];
                    a += p0 * v[vp + d];
                    a += p1 * v[vp + vs + d];
                    a += p2 * v[vp + 2 * vs + d];
                    a += p3 * v[vp + 3 * vs + d];
                    a_loc[d] = a;
                }
            }
            for (; key < nk; ++key) {
                int vp = vb + (k0 + key) * v_layout.w;
                for (int d = 0; d < hd; ++d) a_loc[d] += s_loc[key] * v[vp + d];
            }
        } else if (m_new != NEG_INF) {
            for (int key = 0; key < seen; ++key) {
                if (use_mask != 0 && key_mask[maskb + (k0 + key) * mask_layout.z] != 0.0) continue;
                float s = local_scores ? s_loc[key] : score(qp, kb + (k0 + key) * k_layout.w, hd) * factor;
                float p = exp(s - m_new);
                sum += p;
                int vp = vb + (k0 + key) * v_layout.w;
                for (int d = 0; d < hd; ++d) {
                    if (local_acc) a_loc[d] += p * v[vp + d];
                    else acc[ai + d] += p * v[vp + d];
                }
            }
        }
        l_run = (fresh ? 0.0 : l_run * c) + sum;
        m_run = m_new;
    }
    if (!loaded) {  // no tile ran and nothing was read: the buffers stay as they were
        if (normalize != 0)
            for (int d = 0; d < hd; ++d) acc[ai + d] *= 1.0 / l[li];
        return;
    }
    m[mi] = m_run;
    l[li] = l_run;
    float inv_l = normalize != 0 ? 1.0 / l_run : 1.0;
    for (int d = 0; d < hd; ++d) {
        if (local_acc) acc[ai + d] = a_loc[d] * inv_l;
        else if (normalize != 0) acc[ai + d] *= inv_l;
    }
}
