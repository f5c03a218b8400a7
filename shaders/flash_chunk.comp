#version 430
// Flash attention over one chunk of keys, for renderers that run invocations as SIMD lanes of
// a CPU thread (llvmpipe). The chunk's keys and values are read through two uniform blocks:
// every row of the dispatch reads the same K and V values at the same time, which such a
// renderer loads once and broadcasts, where a storage-buffer read is made lane by lane. The
// query row and the accumulator stay in registers (HEAD_DIM4, the head size / 4, is defined
// by the backend when it compiles this kernel for a head size, so their loops unroll; so is
// CHUNK_VEC4, the uniform blocks' size in vec4, which every window is bound whole).
//   The online softmax of flash.comp, four keys at a time: for keys j of the group,
//   s_j = q . k_j * factor, p_j = exp(s_j - m_new) (0 where masked: causal j > i,
//   key_mask[b, j] != 0), m_new = max(m, s_j), c = exp(m - m_new),
//   l = l * c + sum_j p_j, acc = acc * c + sum_j p_j v_j, m = m_new.
// A chunk that starts at key 0 starts the row afresh; otherwise the row goes on from the m,
// l and acc that the buffers hold. With `normalize` a row that ends in this chunk ends as
// acc /= l.
// Dispatch: (ceil(rows / 64), heads of the key/value head's group, 1) for one (b, g) and one
// chunk [chunk.x, chunk.y) of keys, the uniform blocks bound to that chunk of K and V (b, g):
// key j of the chunk at vec4 (j - chunk.x) * HEAD_DIM4.
layout(local_size_x = 64) in;

const float NEG_INF = uintBitsToFloat(0xFF800000u);
const int HD4 = HEAD_DIM4;

layout(std140, binding = 0) uniform KChunk { vec4 kc[CHUNK_VEC4]; };
layout(std140, binding = 1) uniform VChunk { vec4 vc[CHUNK_VEC4]; };
layout(std430, binding = 0) readonly buffer QBuf { vec4 q[]; };
layout(std430, binding = 1) buffer MBuf { float m[]; };
layout(std430, binding = 2) buffer LBuf { float l[]; };
layout(std430, binding = 3) buffer AccBuf { vec4 acc[]; };
layout(std430, binding = 4) readonly buffer MaskBuf { float key_mask[]; };

uniform ivec4 dims;          // B, H, T, group (query heads per key/value head)
uniform ivec2 bg;            // b, g of this dispatch
uniform ivec3 q_layout;      // offset, batch, head strides in vec4; row stride below
uniform int q_row4;
uniform ivec3 state_offsets; // m, l (floats), acc (vec4), each contiguous [B, H, T(, hd)]
uniform ivec2 rows_range;    // first row, end row of this dispatch
uniform ivec3 chunk;         // first key, end key, end key of the whole pass
uniform int causal;
uniform int normalize;
uniform float factor;
uniform int use_mask;
uniform ivec3 mask_layout;   // offset, batch stride, key stride

void main() {
    int i = rows_range.x + int(gl_GlobalInvocationID.x);
    if (i >= rows_range.y) return;
    int H = dims.y, T = dims.z;
    int b = bg.x, h = bg.y * dims.w + int(gl_WorkGroupID.y);
    int bh = b * H + h;
    int qp = q_layout.x + b * q_layout.y + h * q_layout.z + i * q_row4;
    int mi = state_offsets.x + bh * T + i, li = state_offsets.y + bh * T + i;
    int ai = state_offsets.z + (bh * T + i) * HD4;
    int maskb = mask_layout.x + b * mask_layout.y;

    vec4 qv[HD4];
    vec4 a[HD4];
    for (int d = 0; d < HD4; ++d) qv[d] = q[qp + d];
    float m_run = NEG_INF, l_run = 0.0;
    if (chunk.x == 0) {
        for (int d = 0; d < HD4; ++d) a[d] = vec4(0.0);
    } else {
        m_run = m[mi];
        l_run = l[li];
        for (int d = 0; d < HD4; ++d) a[d] = acc[ai + d];
    }

    int n = chunk.y - chunk.x;
    for (int j0 = 0; j0 < n; j0 += 4) {
        // Four keys (the last group's missing ones read key n - 1 and count as masked).
        ivec4 key = min(ivec4(j0) + ivec4(0, 1, 2, 3), ivec4(n - 1));
        vec4 s = vec4(0.0);
        for (int d = 0; d < HD4; ++d) {
            s.x += dot(qv[d], kc[key.x * HD4 + d]);
            s.y += dot(qv[d], kc[key.y * HD4 + d]);
            s.z += dot(qv[d], kc[key.z * HD4 + d]);
            s.w += dot(qv[d], kc[key.w * HD4 + d]);
        }
        ivec4 kj = chunk.x + ivec4(j0) + ivec4(0, 1, 2, 3);
        bvec4 masked = greaterThanEqual(ivec4(j0) + ivec4(0, 1, 2, 3), ivec4(n));
        if (causal != 0) masked = bvec4(ivec4(masked) | ivec4(greaterThan(kj, ivec4(i))));
        if (use_mask != 0) {
            vec4 km = vec4(key_mask[maskb + min(kj.x, chunk.y - 1) * mask_layout.z],
                           key_mask[maskb + min(kj.y, chunk.y - 1) * mask_layout.z],
                           key_mask[maskb + min(kj.z, chunk.y - 1) * mask_layout.z],
                           key_mask[maskb + min(kj.w, chunk.y - 1) * mask_layout.z]);
            masked = bvec4(ivec4(masked) | ivec4(notEqual(km, vec4(0.0))));
        }
        s *= factor;
        s = mix(s, vec4(NEG_INF), masked);
        // No branch on the data (a row whose keys are all masked so far adds zeros: c = 0 on an
        // acc of 0, p = 0 by the select): the loop stays the same in every lane, and so do the
        // uniform blocks' addresses.
        float m_new = max(m_run, max(max(s.x, s.y), max(s.z, s.w)));
        float c = m_run == NEG_INF ? 0.0 : exp(m_run - m_new);
        vec4 p = mix(exp(s - vec4(m_new)), vec4(0.0), masked);
        l_run = l_run * c + ((p.x + p.y) + (p.z + p.w));
        for (int d = 0; d < HD4; ++d)
            a[d] = a[d] * c + p.x * vc[key.x * HD4 + d] + p.y * vc[key.y * HD4 + d] + p.z * vc[key.z * HD4 + d] +
                   p.w * vc[key.w * HD4 + d];
        m_run = m_new;
    }

    // The row's last chunk: this one, or (causal) the one holding key i.
    bool last = chunk.y >= chunk.z || (causal != 0 && i < chunk.y);
    float inv_l = normalize != 0 && last ? 1.0 / l_run : 1.0;
    m[mi] = m_run;
    l[li] = l_run;
    for (int d = 0; d < HD4; ++d) acc[ai + d] = a[d] * inv_l;
}
