#include "headsplit/backends/gl_backend.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "headsplit/backends/egl_context.hpp"
#include "backends/gl/objects.hpp"

namespace headsplit {

namespace {

using gl::Buffer;
using gl::ComputeProgram;

// A tensor of rank <= 4 as the kernels take it: shape padded with leading 1s, strides
// with leading 0s.
struct Padded {
    std::array<GLint, 4> shape{1, 1, 1, 1};
    std::array<GLint, 4> strides{0, 0, 0, 0};
};

Padded pad4(const TensorDesc& t) {
    if (t.rank() > 4) throw std::invalid_argument("GL kernels take tensors of rank <= 4, not " + shape_str(t.shape));
    Padded p;
    const int lead = 4 - t.rank();
    for (int d = 0; d < t.rank(); ++d) {
        p.shape[lead + d] = static_cast<GLint>(t.shape[d]);
        p.strides[lead + d] = static_cast<GLint>(t.strides[d]);
    }
    return p;
}

// The process's faults (set_process_gl_faults): set once at start, before any backend.
GlFaults& process_gl_faults() {
    static GlFaults faults;
    return faults;
}

class GlBackend final : public Backend {
public:
    explicit GlBackend(const GlOptions& options) : kernel_(options.kernel), tiled_vec4_(options.tiled_vec4) {
        if (!options.faults) env_faults_ = process_gl_faults();
        faults_ = options.faults ? options.faults : &env_faults_;
        if (options.own_context) context_ = gl::EglContext::create();
        if (epoxy_gl_version() < 43)
            throw GlError(GlError::Kind::NoContext,
                          "OpenGL 4.3 is needed for compute shaders, this context has " +
                              std::to_string(epoxy_gl_version() / 10) + "." + std::to_string(epoxy_gl_version() % 10) +
                              "; use --backend cpu");
        GLint block = 0;
        glGetIntegerv(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &block);
        max_elements_ = std::min<std::int64_t>(block / 4, INT_MAX);
        software_ = software_renderer();
        glGetIntegerv(GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT, &uniform_alignment_);
        uniform_alignment_ = std::max<GLint>(uniform_alignment_, 1);
        glGetIntegerv(GL_MAX_UNIFORM_BLOCK_SIZE, &max_uniform_block_);
        kernel_ = resolved_kernel(kernel_);
        // Every kernel is compiled up front, so a broken one is reported before any step.
        plain_ = ComputeProgram("matmul_plain.comp", source("matmul_plain.comp"));
        blocked_ = ComputeProgram("matmul_blocked.comp", source("matmul_blocked.comp"));
        rowdot_ = ComputeProgram("matmul_rowdot.comp", source("matmul_rowdot.comp"));
        // A test's fault: the vec4 copy loads zeros (matmul_tiled.comp).
        const std::string vec4 = std::string("#define TILED_VEC4\n") + (faults_->vec4_probe ? "#define TILED_VEC4_PROBE\n" : "");
        tiled_ = ComputeProgram("matmul_tiled.comp", source("matmul_tiled.comp", tiled_vec4_ ? vec4 : ""));
        rows_ = ComputeProgram("attn_rows.comp", source("attn_rows.comp"));
        elementwise_ = ComputeProgram("elementwise.comp", source("elementwise.comp"));
        flash_ = ComputeProgram("flash.comp", source("flash.comp"));
        flash_back_ = ComputeProgram("flash_back.comp", source("flash_back.comp"));
        placeholder_ = Buffer(1);  // bound where a kernel's optional operand is absent
        check("compiling the kernels");
        warm_up();
    }

    ~GlBackend() override {
        if (context_) context_->make_current();  // the GL objects die in their own context
    }

    const char* name() const override { return "gl"; }

    int create_buffer(std::int64_t elements) override {
        current();
        if (elements > max_elements_)
            throw GlError(GlError::Kind::Runtime,
                          "a tensor of " + std::to_string(elements) + " floats exceeds this GL's buffer limit of " +
                              std::to_string(max_elements_) + " floats; use fewer tokens or --backend cpu");
        // Reuse a released buffer of the same size: a configuration run again allocates nothing.
        Buffer buffer;
        auto pooled = pool_.find(elements);
        if (pooled != pool_.end()) {
            buffer = std::move(pooled->second);
            pool_.erase(pooled);
        } else {
            buffer = Buffer(elements);
            ++stats_.buffers_created;
        }
        check("creating a buffer");
        if (!free_.empty()) {  // a released id is handed out again
            const int id = free_.back();
            free_.pop_back();
            buffers_[static_cast<std::size_t>(id)] = std::move(buffer);
            return id;
        }
        buffers_.push_back(std::move(buffer));
        return static_cast<int>(buffers_.size()) - 1;
    }

    void write(int id, const std::vector<float>& data) override {
        current();
        const Buffer& b = buffers_.at(id);
        if (static_cast<std::int64_t>(data.size()) != b.elements()) throw std::invalid_argument("write: size mismatch");
        glBindBuffer(GL_SHADER_STORAGE_BUFFER, b.id());
        glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(data.size() * 4), data.data());
        check("uploading a buffer");
    }

    void read(int id, std::vector<float>& out) override {
        current();
        const Buffer& b = buffers_.at(id);
        out.resize(static_cast<std::size_t>(b.elements()));
        glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
        glBindBuffer(GL_SHADER_STORAGE_BUFFER, b.id());
        glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(out.size() * 4), out.data());
        check("reading a buffer back");
    }

    // The pool keeps the buffers of the last released run only: what that run did not take
    // back is deleted, so a GUI that wanders through many sizes holds no more than two
    // configurations' worth, while running the same configuration again allocates nothing.
    void release_buffers() override {
        current();
        if (buffers_.empty()) return;
        pool_.clear();
        for (auto& b : buffers_)
            if (b.id() != 0) pool_.emplace(b.elements(), std::move(b));
        buffers_.clear();
        free_.clear();
        scratch_ = {-1, -1};
    }

    // The same policy for one Runner's buffers: they replace what the pool kept before.
    void release(const std::vector<int>& ids) override {
        current();
        pool_.clear();
        for (int id : ids) {
            if (id < 0 || id >= static_cast<int>(buffers_.size())) continue;
            Buffer& b = buffers_[static_cast<std::size_t>(id)];
            if (b.id() == 0) continue;
            pool_.emplace(b.elements(), std::move(b));
            b = Buffer();
            free_.push_back(id);
        }
    }

    std::int64_t held_bytes() const override {
        std::int64_t elements = 0;
        for (const auto& [n, b] : pool_) elements += n;
        for (int id : scratch_)
            if (id >= 0) elements += buffers_[static_cast<std::size_t>(id)].elements();
        return used_bytes() + elements * static_cast<std::int64_t>(sizeof(float));
    }

    // The buffers handed out; flash_by_chunks's own copies are held, not handed out.
    std::int64_t used_bytes() const override {
        std::int64_t elements = 0;
        for (std::size_t i = 0; i < buffers_.size(); ++i)
            if (buffers_[i].id() != 0 && static_cast<int>(i) != scratch_[0] && static_cast<int>(i) != scratch_[1])
                elements += buffers_[i].elements();
        return elements * static_cast<std::int64_t>(sizeof(float));
    }

    void matmul(const TensorDesc& a, const TensorDesc& b, bool b_transposed, const TensorDesc* bias,
                const TensorDesc& c) override {
        current();
        const int ar = a.rank(), br = b.rank(), cr = c.rank();
        const GLint M = static_cast<GLint>(a.shape[ar - 2]), K = static_cast<GLint>(a.shape[ar - 1]);
        const GLint N = static_cast<GLint>(b_transposed ? b.shape[br - 2] : b.shape[br - 1]);
        const GLint bK = static_cast<GLint>(b_transposed ? b.shape[br - 1] : b.shape[br - 2]);
        if (bK != K || c.shape[cr - 2] != M || c.shape[cr - 1] != N || cr > 4)
            throw std::invalid_argument("matmul " + shape_str(a.shape) + " @ " + shape_str(b.shape) +
                                        (b_transposed ? "^T" : "") + " -> " + shape_str(c.shape) + ": shapes do not match");
        // The batch is c's leading dims, at most two of them (B, H).
        const Shape batch(c.shape.begin(), c.shape.end() - 2);
        if (batch.size() > 2) throw std::invalid_argument("matmul: more than two batch dims in " + shape_str(c.shape));
        const GLint batch0 = batch.size() == 2 ? static_cast<GLint>(batch[0]) : 1;
        const GLint batch1 = batch.empty() ? 1 : static_cast<GLint>(batch.back());

        // Both operands contiguous along K with vec4-aligned rows: the vec4 row-dot kernel.
        const std::int64_t a_k = a.strides[ar - 1], a_row = a.strides[ar - 2];
        const std::int64_t b_k = b_transposed ? b.strides[br - 1] : b.strides[br - 2];
        const std::int64_t b_row = b_transposed ? b.strides[br - 2] : b.strides[br - 1];
        auto aligned = [](const TensorDesc& t) {
            for (int i = 0; i < t.rank() - 2; ++i)
                if (t.shape[i] != 1 && t.strides[i] % 4 != 0) return false;
            return t.offset % 4 == 0;
        };
        const bool rowdot = kernel_ == MatmulKernel::Blocked && K % 4 == 0 && a_k == 1 && b_k == 1 &&
                            (M == 1 || a_row % 4 == 0) && (N == 1 || b_row % 4 == 0) && aligned(a) && aligned(b);
        ComputeProgram& p = rowdot                            ? rowdot_
                            : kernel_ == MatmulKernel::Plain ? plain_
                            : kernel_ == MatmulKernel::Tiled ? tiled_
                                                             : blocked_;
        glUseProgram(p.id());
        glUniform3i(p.uniform("mnk"), M, N, K);
        glUniform1i(p.uniform("batch1"), batch1);
        set_matrix(p, "a", a, batch.size(), a.strides[ar - 2], a.strides[ar - 1]);
        if (b_transposed) set_matrix(p, "b", b, batch.size(), b.strides[br - 1], b.strides[br - 2]);
        else set_matrix(p, "b", b, batch.size(), b.strides[br - 2], b.strides[br - 1]);
        set_matrix(p, "c", c, batch.size(), c.strides[cr - 2], c.strides[cr - 1]);
        glUniform1i(p.uniform("use_bias"), bias ? 1 : 0);
        if (kernel_ == MatmulKernel::Tiled && tiled_vec4_) {
            // Whole slices as vec4s: both along k, every row starting on a vec4.
            const bool vec4 = a_k == 1 && b_k == 1 && a_row % 4 == 0 && b_row % 4 == 0 && aligned(a) && aligned(b);
            glUniform1i(p.uniform("vec4_ok"), vec4 ? 1 : 0);
            bind(4, a);
            bind(5, b);
        }
        glUniform2i(p.uniform("bias_layout"), bias ? static_cast<GLint>(bias->offset) : 0,
                    bias ? static_cast<GLint>(bias->strides[0]) : 0);
        bind(0, a);
        bind(1, b);
        bind(2, c);
        if (bias) bind(3, *bias);
        else glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, placeholder_.id());
        // outputs per workgroup side
        const GLint tile = kernel_ == MatmulKernel::Tiled ? 128 : kernel_ == MatmulKernel::Blocked ? 32 : 16;
        dispatch((N + tile - 1) / tile, (M + tile - 1) / tile, batch0 * batch1, "matmul");
    }

    void causal_mask(const TensorDesc& scores) override {
        rows(RowsMode::Mask, 1.0f, scores, scores, "causal mask", 1, kNegInf);
    }
    void scale(const TensorDesc& t, float factor) override { rows(RowsMode::Scale, factor, t, t, "scale"); }
    void masked_softmax(const TensorDesc& scores, const TensorDesc& out, float factor, bool causal,
                        const TensorDesc* key_mask) override {
        const std::int64_t n_rows = scores.numel() / std::max<std::int64_t>(scores.shape.back(), 1);
        current();
        glUseProgram(rows_.id());
        glUniform1i(rows_.uniform("causal"), causal ? 1 : 0);
        glUniform1i(rows_.uniform("use_mask"), key_mask ? 1 : 0);
        glUniform3i(rows_.uniform("mask_layout"), key_mask ? static_cast<GLint>(key_mask->offset) : 0,
                    key_mask ? static_cast<GLint>(key_mask->strides[0]) : 0,
                    key_mask ? static_cast<GLint>(key_mask->strides[1]) : 0);
        if (key_mask) bind(2, *key_mask);
        else glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, placeholder_.id());
        rows(RowsMode::MaskedSoftmax, factor, scores, out, "softmax",
             key_mask ? n_rows / std::max<std::int64_t>(key_mask->shape[0], 1) : 1);
    }
    void masked_fill(const TensorDesc& scores, const TensorDesc& key_mask) override {
        const std::int64_t n_rows = scores.numel() / std::max<std::int64_t>(scores.shape.back(), 1);
        rows(RowsMode::Padding, 1.0f, scores, key_mask, "padding mask", n_rows / std::max<std::int64_t>(key_mask.shape[0], 1),
             kNegInf);
    }
    void mask_gradient(const TensorDesc& grad, bool causal, const TensorDesc* key_mask) override {
        if (causal) rows(RowsMode::Mask, 1.0f, grad, grad, "the mask's backward", 1, 0.0f);
        if (key_mask) {
            const std::int64_t n_rows = grad.numel() / std::max<std::int64_t>(grad.shape.back(), 1);
            rows(RowsMode::Padding, 1.0f, grad, *key_mask, "the padding mask's backward",
                 n_rows / std::max<std::int64_t>(key_mask->shape[0], 1), 0.0f);
        }
    }
    void softmax_backward(const TensorDesc& weights, const TensorDesc& d_weights, const TensorDesc& d_scores) override {
        current();
        const Padded pg = pad4(d_weights);
        glUseProgram(rows_.id());
        glUniform4iv(rows_.uniform("g_strides"), 1, pg.strides.data());
        glUniform1i(rows_.uniform("g_offset"), static_cast<GLint>(d_weights.offset));
        bind(3, d_weights);
        rows(RowsMode::SoftmaxBack, 1.0f, weights, d_scores, "the softmax's backward");
    }
    void softmax(const TensorDesc& in, const TensorDesc& out) override { rows(RowsMode::Softmax, 1.0f, in, out, "softmax"); }

    // shaders/flash_back.comp's passes: the rows (and dk, dv zeroed), or dq by query rows and
    // dk, dv by key rows. m, l, lse and delta must be windows of one buffer.
    void flash_backward(const FlashBackArgs& a) override {
        current();
        if (a.m.buffer != a.l.buffer || a.lse.buffer != a.m.buffer || a.delta.buffer != a.m.buffer)
            throw std::invalid_argument("flash_backward: m, l, lse and delta must share one buffer on GL");
        ComputeProgram& p = flash_back_;
        glUseProgram(p.id());
        const auto i = [](std::int64_t v) { return static_cast<GLint>(v); };
        const std::int64_t B = a.q.shape[0], H = a.q.shape[1], T = a.q.shape[2], G = a.k.shape[1], S = a.k.shape[2];
        glUniform4i(p.uniform("dims"), i(B), i(H), i(T), i(a.q.shape[3]));
        glUniform2i(p.uniform("kv_dims"), i(G), i(S));
        for (const auto& [name, t] : {std::pair<const char*, const TensorDesc*>{"q_strides", &a.q}, {"k_strides", &a.k},
                                      {"v_strides", &a.v}, {"g_strides", &a.d_out}, {"o_strides", &a.out}})
            glUniform4i(p.uniform(name), i(t->strides[0]), i(t->strides[1]), i(t->strides[2]), i(t->strides[3]));
        glUniform4i(p.uniform("offsets"), i(a.q.offset), i(a.k.offset), i(a.v.offset), i(a.d_out.offset));
        glUniform1i(p.uniform("o_offset"), i(a.out.offset));
        glUniform4i(p.uniform("stats"), i(a.m.offset), i(a.l.offset), i(a.lse.offset), i(a.delta.offset));
        glUniform4i(p.uniform("ranges"), i(a.q_begin), i(a.q_end), i(a.k_begin), i(a.k_end));
        glUniform1i(p.uniform("block"), i(std::max<std::int64_t>(a.block, 1)));
        glUniform1i(p.uniform("causal"), a.causal ? 1 : 0);
        glUniform1i(p.uniform("keep_tile"), a.tile.buffer >= 0 ? 1 : 0);
        glUniform1f(p.uniform("factor"), a.factor);
        glUniform1i(p.uniform("use_mask"), a.key_mask ? 1 : 0);
        glUniform3i(p.uniform("mask_layout"), a.key_mask ? i(a.key_mask->offset) : 0,
                    a.key_mask ? i(a.key_mask->strides[0]) : 0, a.key_mask ? i(a.key_mask->strides[1]) : 0);
        int binding = 0;
        for (const TensorDesc* t : {&a.q, &a.k, &a.v, &a.d_out, &a.out, &a.m, &a.dq, &a.dk, &a.dv}) bind(binding++, *t);
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 9, a.tile.buffer >= 0 ? buffers_.at(a.tile.buffer).id() : placeholder_.id());
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 10, a.key_mask ? buffers_.at(a.key_mask->buffer).id() : placeholder_.id());
        const auto pass = [&](int mode, std::int64_t n, const char* what) {
            glUniform1i(p.uniform("mode"), mode);
            dispatch_linear(n, 64, what);
            glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
        };
        if (a.rows) {
            pass(0, B * H * T, "flash backward: the rows");
            pass(1, B * G * S, "flash backward: dk, dv zeroed");
            return;
        }
        if (a.q_end <= a.q_begin || a.k_end <= a.k_begin) return;
        pass(2, B * H * (a.q_end - a.q_begin), "flash backward: dq");
        pass(3, B * G * (a.k_end - a.k_begin), "flash backward: dk, dv");
    }

    // One query row per invocation, 64 rows of one head per workgroup (shaders/flash.comp);
    // on a software renderer, by chunks of keys where the layouts allow (flash_by_chunks).
    void flash_attention(const FlashArgs& a) override {
        current();
        if (flash_by_chunks(a)) return;
        ComputeProgram& p = flash_;
        glUseProgram(p.id());
        const auto i = [](std::int64_t v) { return static_cast<GLint>(v); };
        const std::int64_t H = a.q.shape[1];
        glUniform4i(p.uniform("dims"), i(a.q.shape[0]), i(H), i(a.q.shape[2]), i(a.q.shape[3]));
        glUniform2i(p.uniform("keys"), i(a.k.shape[2]), i(H / std::max<std::int64_t>(a.k.shape[1], 1)));
        for (const auto& [name, t] : {std::pair<const char*, const TensorDesc*>{"q_layout", &a.q}, {"k_layout", &a.k},
                                      {"v_layout", &a.v}})
            glUniform4i(p.uniform(name), i(t->offset), i(t->strides[0]), i(t->strides[1]), i(t->strides[2]));
        glUniform3i(p.uniform("state_offsets"), i(a.m.offset), i(a.l.offset), i(a.acc.offset));
        glUniform1i(p.uniform("tile_offset"), a.tile.buffer >= 0 ? i(a.tile.offset) : -1);
        glUniform4i(p.uniform("range"), i(a.q_begin), i(a.q_end), i(a.k_begin), i(a.k_end));
        glUniform1i(p.uniform("block"), i(std::max<std::int64_t>(a.block, 1)));
        set_softmax_uniforms(p, a);
        bind(0, a.q);
        bind(1, a.k);
        bind(2, a.v);
        bind(3, a.m);
        bind(4, a.l);
        bind(5, a.acc);
        if (a.tile.buffer >= 0) bind(6, a.tile);
        else glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 6, placeholder_.id());
        if (a.key_mask) bind(7, *a.key_mask);
        else glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 7, placeholder_.id());
        // (row groups of 64, b * H + h): y past GL's 65535 goes on in z.
        const std::int64_t bh = a.q.shape[0] * H, gy = std::min<std::int64_t>(bh, 65535);
        dispatch(i((std::max<std::int64_t>(a.q_end - a.q_begin, 0) + 63) / 64), i(gy), i((bh + gy - 1) / std::max<std::int64_t>(gy, 1)),
                 "flash");
    }

    // Flash on a renderer that runs invocations as SIMD lanes of the CPU (shaders/
    // flash_chunk.comp): K and V copied into contiguous [B, G, S, hd] buffers of the backend's
    // own (kept for the next pass, one chunk longer so that every window is whole), then one
    // dispatch per (b, g, chunk of keys), the chunk's keys and values bound as uniform blocks
    // (64 KiB each, or GL's largest block if smaller: 16384 / hd keys), which such a renderer
    // reads once for all of a workgroup's rows. false (nothing done) where it does not apply:
    // a kept tile (its scores are written by flash.comp), a head size that is not a multiple
    // of 4 or over 128, a query or accumulator not aligned to vec4, a causal pass whose rows
    // start before its keys (rows with no key in the pass), or copies over GL's buffer size.
    bool flash_by_chunks(const FlashArgs& a) {
        const std::int64_t B = a.q.shape[0], H = a.q.shape[1], T = a.q.shape[2], hd = a.q.shape[3];
        const std::int64_t G = a.k.shape[1], S = a.k.shape[2];
        const auto aligned = [](const TensorDesc& t) {
            return t.offset % 4 == 0 && t.strides[0] % 4 == 0 && t.strides[1] % 4 == 0 && t.strides[2] % 4 == 0 &&
                   t.strides[3] == 1;
        };
        if (!software_ || a.tile.buffer >= 0 || hd % 4 != 0 || hd > 128 || G <= 0 || H % G != 0 || !aligned(a.q) ||
            a.acc.offset % 4 != 0 || (a.causal && a.q_begin < a.k_begin) || a.q_begin >= a.q_end ||
            a.k_begin >= a.k_end || (hd * 4) % uniform_alignment_ != 0)
            return false;
        const std::int64_t chunk = chunk_keys(hd), n = B * G * S * hd;
        if (n + chunk * hd > max_elements_) return false;
        ComputeProgram& p = flash_chunk(static_cast<int>(hd / 4));
        const std::array<int, 2> copies{scratch(0, n + chunk * hd), scratch(1, n + chunk * hd)};
        const auto packed = [&](int buffer) {
            return TensorDesc{buffer, 0, {B, G, S, hd}, {G * S * hd, S * hd, hd, 1}};
        };
        copy(a.k, packed(copies[0]));
        copy(a.v, packed(copies[1]));
        glUseProgram(p.id());
        const auto i = [](std::int64_t v) { return static_cast<GLint>(v); };
        glUniform4i(p.uniform("dims"), i(B), i(H), i(T), i(H / G));
        glUniform3i(p.uniform("q_layout"), i(a.q.offset / 4), i(a.q.strides[0] / 4), i(a.q.strides[1] / 4));
        glUniform1i(p.uniform("q_row4"), i(a.q.strides[2] / 4));
        glUniform3i(p.uniform("state_offsets"), i(a.m.offset), i(a.l.offset), i(a.acc.offset / 4));
        set_softmax_uniforms(p, a);
        bind(0, a.q);
        bind(1, a.m);
        bind(2, a.l);
        bind(3, a.acc);
        if (a.key_mask) bind(4, *a.key_mask);
        else glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 4, placeholder_.id());
        const auto bytes = chunk * hd * 4;  // the block's whole size, the last window too
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t g = 0; g < G; ++g)
                for (std::int64_t c0 = a.k_begin; c0 < a.k_end; c0 += chunk) {
                    const std::int64_t c1 = std::min(c0 + chunk, a.k_end);
                    const std::int64_t r0 = a.causal ? std::max(a.q_begin, c0) : a.q_begin;
                    if (r0 >= a.q_end) continue;  // causal: no row of the pass sees these keys
                    const auto window = (((b * G + g) * S + c0) * hd) * 4;
                    glBindBufferRange(GL_UNIFORM_BUFFER, 0, buffers_.at(copies[0]).id(), window, bytes);
                    glBindBufferRange(GL_UNIFORM_BUFFER, 1, buffers_.at(copies[1]).id(), window, bytes);
                    glUniform2i(p.uniform("bg"), i(b), i(g));
                    glUniform2i(p.uniform("rows_range"), i(r0), i(a.q_end));
                    glUniform3i(p.uniform("chunk"), i(c0), i(c1), i(a.k_end));
                    dispatch(i((a.q_end - r0 + 63) / 64), i(H / G), 1, "flash");
                }
        return true;
    }

    // Keys per chunk for a head of hd floats: as many as a uniform block holds.
    std::int64_t chunk_keys(std::int64_t hd) const {
        return std::min<std::int64_t>(kChunkBytes, max_uniform_block_) / 4 / hd;
    }

    // The backend's own buffer `which` (flash's copy of K or V) of at least `elements` floats:
    // a slot of buffers_ that used_bytes() leaves out, kept until release_buffers().
    int scratch(int which, std::int64_t elements) {
        int& id = scratch_[static_cast<std::size_t>(which)];
        if (id >= 0 && buffers_.at(static_cast<std::size_t>(id)).elements() >= elements) return id;
        if (id >= 0) {
            buffers_[static_cast<std::size_t>(id)] = Buffer();
            free_.push_back(id);
            id = -1;  // freed: not freed again if the next buffer cannot be made
        }
        id = create_buffer(elements);
        return id;
    }

    // The uniforms flash.comp and flash_chunk.comp share: the mask, the scale, the division.
    static void set_softmax_uniforms(ComputeProgram& p, const FlashArgs& a) {
        const auto i = [](std::int64_t v) { return static_cast<GLint>(v); };
        glUniform1i(p.uniform("causal"), a.causal ? 1 : 0);
        glUniform1i(p.uniform("normalize"), a.normalize ? 1 : 0);
        glUniform1f(p.uniform("factor"), a.factor);
        glUniform1i(p.uniform("use_mask"), a.key_mask ? 1 : 0);
        glUniform3i(p.uniform("mask_layout"), a.key_mask ? i(a.key_mask->offset) : 0,
                    a.key_mask ? i(a.key_mask->strides[0]) : 0, a.key_mask ? i(a.key_mask->strides[1]) : 0);
    }

    // flash_chunk.comp compiled for a head size of 4 * hd4 (its loops over the head unroll).
    ComputeProgram& flash_chunk(int hd4) {
        auto it = flash_chunks_.find(hd4);
        if (it != flash_chunks_.end()) return it->second;
        std::string source = this->source("flash_chunk.comp");
        const std::size_t first_line = source.find('\n') + 1;
        source.insert(first_line, "#define HEAD_DIM4 " + std::to_string(hd4) + "\n#define CHUNK_VEC4 " +
                                      std::to_string(chunk_keys(4 * hd4) * hd4) + "\n#line 2\n");
        ComputeProgram& p = flash_chunks_.emplace(hd4, ComputeProgram("flash_chunk.comp", source)).first->second;
        check("compiling flash_chunk.comp");
        return p;
    }

    void multiply(const TensorDesc& a, const TensorDesc& b, float factor, const TensorDesc& out) override {
        elementwise(a, &b, factor, out, "multiply", Combine::Multiply);
    }
    void copy(const TensorDesc& src, const TensorDesc& dst) override { elementwise(src, nullptr, 1.0f, dst, "copy"); }
    void add(const TensorDesc& a, const TensorDesc& b, const TensorDesc& out) override {
        elementwise(a, &b, 1.0f, out, "add", Combine::Add);
    }

    void finish() override {
        current();
        glFinish();
        check("finishing a step");
    }

    BackendStats take_stats() override {
        BackendStats s = stats_;
        stats_ = {};
        return s;
    }

private:
    // Mesa compiles a kernel to machine code at its first dispatch; run each once on a
    // 2 x 2 problem here, so that no step's time includes a compiler.
    void warm_up() {
        const int a = create_buffer(4), c = create_buffer(4);
        write(a, {1, 2, 3, 4});
        const TensorDesc m = contiguous(a, {2, 2}), out = contiguous(c, {2, 2});
        for (MatmulKernel k : {MatmulKernel::Plain, MatmulKernel::Blocked, MatmulKernel::Tiled}) {
            std::swap(kernel_, k);
            matmul(m, m, true, &m, out);
            std::swap(kernel_, k);
        }
        causal_mask(out);
        masked_fill(out, m);
        scale(out, 0.5f);
        softmax(m, out);
        masked_softmax(m, out, 0.5f, true, &m);
        multiply(m, m, 2.0f, out);
        copy(m, out);
        FlashArgs f;
        f.q = f.k = f.v = f.acc = TensorDesc{a, 0, {1, 1, 2, 2}, {4, 4, 2, 1}};
        f.m = f.l = TensorDesc{c, 0, {1, 1, 2}, {2, 2, 1}};
        f.block = 1, f.q_end = 2, f.k_end = 2, f.causal = f.normalize = true;
        flash_attention(f);
        // flash_chunk.comp for a head of 64 (GPT-2's; other sizes compile when first used)
        const int h = create_buffer(64), s = create_buffer(1);
        f.q = f.k = f.v = f.acc = TensorDesc{h, 0, {1, 1, 1, 64}, {64, 64, 64, 1}};
        f.m = f.l = TensorDesc{s, 0, {1, 1, 1}, {1, 1, 1}};
        f.q_end = f.k_end = 1;
        flash_attention(f);
        finish();
        release_buffers();
        stats_ = {};
    }

    void current() {
        if (context_) context_->make_current();
    }

    // A GL error is reported as one line naming what was being done.
    void check(const char* what) {
        const GLenum err = glGetError();
        if (err == GL_NO_ERROR) return;
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%04X", err);
        throw GlError(GlError::Kind::Runtime, std::string("GL error ") + hex + " while " + what);
    }

    void bind(GLuint binding, const TensorDesc& t) {
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, binding, buffers_.at(t.buffer).id());
    }

    // <x>_layout = (offset, batch0 stride, batch1 stride, 0), <x>_strides = (row, column).
    // A batch dim the operand lacks (a 2-D weight under a batched input) gets stride 0.
    void set_matrix(ComputeProgram& p, const std::string& x, const TensorDesc& t, std::size_t batch_dims,
                    std::int64_t row_stride, std::int64_t col_stride) {
        // The kernel's batch slots are (b0, b1); with one batch dim only b1 is used. An
        // operand's own batch dims line up with c's trailing ones.
        std::array<GLint, 2> bs{0, 0};
        const int nb = static_cast<int>(batch_dims), own = t.rank() - 2;
        for (int i = 0; i < own; ++i) {
            const int slot = (nb - own + i) + (2 - nb);
            if (t.shape[i] != 1) bs[slot] = static_cast<GLint>(t.strides[i]);
        }
        glUniform4i(p.uniform((x + "_layout").c_str()), static_cast<GLint>(t.offset), bs[0], bs[1], 0);
        glUniform2i(p.uniform((x + "_strides").c_str()), static_cast<GLint>(row_stride), static_cast<GLint>(col_stride));
    }

    // What attn_rows.comp does to each row (its constants MASK ... MASKED_SOFTMAX, same numbers).
    enum class RowsMode { Mask = 0, Scale = 1, Softmax = 2, Padding = 3, MaskedSoftmax = 4, SoftmaxBack = 5 };
    static constexpr float kNegInf = -std::numeric_limits<float>::infinity();

    // `fill`: what Mask and Padding write where they mask.
    void rows(RowsMode mode, float factor, const TensorDesc& in, const TensorDesc& out, const char* what,
              std::int64_t group_rows = 1, float fill = kNegInf) {
        current();
        const Padded pi = pad4(in), po = pad4(out);
        glUseProgram(rows_.id());
        glUniform1i(rows_.uniform("mode"), static_cast<GLint>(mode));
        glUniform1f(rows_.uniform("factor"), factor);
        glUniform1f(rows_.uniform("fill"), fill);
        glUniform4iv(rows_.uniform("shape"), 1, pi.shape.data());
        glUniform4iv(rows_.uniform("in_strides"), 1, pi.strides.data());
        glUniform1i(rows_.uniform("in_offset"), static_cast<GLint>(in.offset));
        glUniform4iv(rows_.uniform("out_strides"), 1, po.strides.data());
        glUniform1i(rows_.uniform("out_offset"), static_cast<GLint>(out.offset));
        glUniform1i(rows_.uniform("group_rows"), static_cast<GLint>(std::max<std::int64_t>(group_rows, 1)));
        if (mode != RowsMode::MaskedSoftmax)  // only the one-pass softmax reads the mask binding
            glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, placeholder_.id());
        if (mode != RowsMode::SoftmaxBack)  // only the softmax's backward reads the gradient's
            glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, placeholder_.id());
        bind(0, in);
        bind(1, out);
        const std::int64_t n_rows = in.numel() / std::max<std::int64_t>(in.shape.back(), 1);
        dispatch_linear(n_rows, 64, what);
    }

    // How elementwise.comp combines x with y (its use_y), when y is given.
    enum class Combine { Multiply = 1, Add = 2 };

    void elementwise(const TensorDesc& x, const TensorDesc* y, float factor, const TensorDesc& out, const char* what,
                     Combine combine = Combine::Multiply) {
        current();
        if (x.shape != out.shape || (y && y->shape != out.shape))
            throw std::invalid_argument(std::string(what) + ": shapes " + shape_str(x.shape) + " and " +
                                        shape_str(out.shape) + " differ");
        if (out.rank() > 4) {  // the kernel takes 4 dims: one dispatch per index of the first
            const auto slice = [](const TensorDesc& t, std::int64_t i) {
                return TensorDesc{t.buffer, t.offset + i * t.strides[0], Shape(t.shape.begin() + 1, t.shape.end()),
                                  Shape(t.strides.begin() + 1, t.strides.end())};
            };
            for (std::int64_t i = 0; i < out.shape[0]; ++i) {
                const TensorDesc yi = y ? slice(*y, i) : TensorDesc{};
                elementwise(slice(x, i), y ? &yi : nullptr, factor, slice(out, i), what, combine);
            }
            return;
        }
        const Padded px = pad4(x), po = pad4(out);
        const Padded py = y ? pad4(*y) : Padded{};
        ComputeProgram& p = elementwise_;
        glUseProgram(p.id());
        glUniform4iv(p.uniform("shape"), 1, px.shape.data());
        glUniform4iv(p.uniform("x_strides"), 1, px.strides.data());
        glUniform1i(p.uniform("x_offset"), static_cast<GLint>(x.offset));
        glUniform4iv(p.uniform("y_strides"), 1, py.strides.data());
        glUniform1i(p.uniform("y_offset"), y ? static_cast<GLint>(y->offset) : 0);
        glUniform4iv(p.uniform("out_strides"), 1, po.strides.data());
        glUniform1i(p.uniform("out_offset"), static_cast<GLint>(out.offset));
        glUniform1i(p.uniform("use_y"), y ? static_cast<GLint>(combine) : 0);
        glUniform1f(p.uniform("factor"), factor);
        bind(0, x);
        if (y) bind(1, *y);
        else glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, placeholder_.id());
        bind(2, out);
        dispatch_linear(out.numel(), 256, what);
    }

    // n invocations of a 1-D kernel: workgroups along x, spilling into y past 65535.
    void dispatch_linear(std::int64_t n, std::int64_t local, const char* what) {
        const std::int64_t groups = (n + local - 1) / local;
        const std::int64_t gx = std::min<std::int64_t>(groups, 65535);
        const std::int64_t gy = (groups + gx - 1) / std::max<std::int64_t>(gx, 1);
        dispatch(static_cast<GLint>(gx), static_cast<GLint>(gy), 1, what);
    }

    void dispatch(GLint gx, GLint gy, GLint gz, const char* what) {
        if (gx <= 0 || gy <= 0 || gz <= 0) return;
        if (gx > 65535 || gy > 65535 || gz > 65535)
            throw GlError(GlError::Kind::Runtime, std::string(what) + " needs more workgroups than GL allows (" +
                                                      std::to_string(gx) + " x " + std::to_string(gy) + " x " +
                                                      std::to_string(gz) + "); use --backend cpu");
        // A test's fault (GlFaults::fail_dispatch = what: "softmax", "matmul", ...) makes that
        // dispatch ask for more workgroups than GL allows: a real GL_INVALID_VALUE mid-step.
        if (faults_->fail_dispatch == what)
            gz = 0x7FFFFFFF;  // over every GL's z limit (NVIDIA allows 2^31 - 1 along x)
        glDispatchCompute(static_cast<GLuint>(gx), static_cast<GLuint>(gy), static_cast<GLuint>(gz));
        // The next kernel (or a readback) sees these writes.
        glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT | GL_UNIFORM_BARRIER_BIT);
        ++stats_.dispatches;
        stats_.workgroups += static_cast<std::int64_t>(gx) * gy * gz;
        check(what);
    }

    // Shader `name`'s source (gl::shader_source), broken when a test's fault names it.
    std::string source(const std::string& name, const std::string& defines = "") const {
        std::string text = gl::shader_source(name, defines);
        if (faults_->break_shader == name) text += "this is not GLSL;\n";  // a broken kernel is reported
        return text;
    }

    // Declared first so it is destroyed last, after every GL object.
    std::unique_ptr<gl::EglContext> context_;
    GlFaults env_faults_;                 // the process's, when the options name none
    const GlFaults* faults_ = &env_faults_;
    MatmulKernel kernel_;
    bool tiled_vec4_ = false;
    std::int64_t max_elements_ = 0;
    ComputeProgram plain_, blocked_, rowdot_, tiled_, rows_, elementwise_, flash_, flash_back_;
    std::map<int, ComputeProgram> flash_chunks_;  // flash_chunk.comp by head size / 4
    static constexpr std::int64_t kChunkBytes = 4 * kFlashChunkFloats;  // llvmpipe's largest uniform block
    std::array<int, 2> scratch_{-1, -1};                // flash_by_chunks's K and V copies
    bool software_ = false;
    GLint uniform_alignment_ = 256, max_uniform_block_ = 16384;
    Buffer placeholder_;
    std::vector<Buffer> buffers_;
    std::vector<int> free_;  // ids of released buffers (their slots hold an empty Buffer)
    std::multimap<std::int64_t, Buffer> pool_;
    BackendStats stats_;
};

}  // namespace

std::unique_ptr<Backend> make_gl_backend(const GlOptions& options) { return std::make_unique<GlBackend>(options); }

void set_process_gl_faults(const GlFaults& faults) { process_gl_faults() = faults; }

bool software_renderer() {
    // Mesa's llvmpipe and softpipe, and SwiftShader, run the kernels on the CPU.
    const std::string r = gl_renderer();
    for (const char* name : {"llvmpipe", "softpipe", "SwiftShader"})
        if (r.find(name) != std::string::npos) return true;
    return false;
}

std::string gl_renderer() {
    const auto text = [](GLenum what) {
        const auto* s = reinterpret_cast<const char*>(glGetString(what));
        return std::string(s ? s : "");
    };
    return text(GL_RENDERER) + ", OpenGL " + text(GL_VERSION);
}

MatmulKernel resolved_kernel(MatmulKernel kernel) {
    if (kernel != MatmulKernel::Auto) return kernel;
    return software_renderer() ? MatmulKernel::Blocked : MatmulKernel::Tiled;
}

}  // namespace headsplit
