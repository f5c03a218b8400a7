#pragma once
// The trace: the ordered steps of one forward pass, each with its op, cost, and the tensors
// it produced (shape, strides, storage, values), and room for its words (PyTorch line,
// explanation), which a reader above the engine writes from those facts.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/inputs.hpp"
#include "headsplit/base/op.hpp"
#include "headsplit/base/tensor.hpp"

namespace headsplit {

// How a step's tensor relates to memory that existed before the step.
enum class Storage {
    New,      // freshly computed into a new buffer
    View,     // same buffer as its source, new shape/strides: no data moved
    InPlace,  // same buffer, values overwritten
    Copy,     // data moved into a new buffer (contiguous copy, concat)
};
const char* storage_name(Storage s);  // "new" | "view" | "in_place" | "copy" (the JSON's)
// For people: "new" | "view (no data moved)" | "in place" | "copy" (tables, tiles).
const char* storage_label(Storage s);
// One clause for the stage: "view: no data moved, only shape and strides", ...
const char* storage_sentence(Storage s);

// What a tensor was computed or viewed from (ggml's src[]): a tensor of an earlier step, or
// a weight. The trace is a graph through these links; nothing downstream finds a tensor's
// sources by its name or by the step before it.
struct Source {
    int step = -1;        // >= 0: the tensor named `tensor` of that step
    std::string tensor;
    std::string weight;   // or a weight: "w_query", "b_query", ..., "w_out", "b_out"

    static Source of_step(int step, std::string tensor) { return {step, std::move(tensor), {}}; }
    static Source of_weight(std::string weight) { return {-1, {}, std::move(weight)}; }
    bool is_weight() const { return !weight.empty(); }
    bool operator==(const Source& o) const { return step == o.step && tensor == o.tensor && weight == o.weight; }
};

// What each dim of a recorded tensor counts. Token rows are the queries' positions; key rows
// are the keys' positions (the keys, the values, the KV cache, the context, the key columns of
// a score grid). A head axis counts query heads; kv_head counts key/value heads of grouped-
// query attention before repeat_kv. The engine names them as it records; nothing downstream
// works them out from the op, the rank or the tensor's name.
enum class Axis { Batch, Head, KvHead, Token, Key, Feature };
const char* axis_name(Axis a);  // "batch", "head", "kv_head", "token", "key", "feature" (the JSON's)
bool is_head_axis(Axis a);      // Head or KvHead
using Axes = std::vector<Axis>;

// A run of positions: first, first + 1, ..., first + count - 1 (count 0: none).
struct Span {
    std::int64_t first = 0, count = 0;
    std::int64_t end() const { return first + count; }
    bool empty() const { return count == 0; }
    bool operator==(const Span& o) const { return first == o.first && count == o.count; }
};

// Values a record leaves to when they are first asked for: on the CPU, a large score grid's
// and a flash tile's, computed again from the step's queries and keys (and values) on a
// fresh backend (core/src/backends/replay.cpp), as the engine plans it (replay_plan.cpp).
// Made once, then kept; safe to ask for from several threads.
class DeferredValues {
public:
    virtual ~DeferredValues() = default;
    const std::vector<float>& get() const;
    // The values as get() gives them, without keeping them when they were not made yet (the
    // JSON writer's way: one tensor at a time). `scratch` holds them then.
    const std::vector<float>& get_once(std::vector<float>& scratch) const;

protected:
    virtual std::vector<float> make() const = 0;

private:
    // Made under a plain lock, not std::call_once: make() may reach a slice point in the
    // single-threaded page's sliced job, and call_once's own frames are not ones a job can
    // pause in (slices.hpp, app/web/asyncify_only.txt).
    mutable std::mutex mutex_;
    mutable std::atomic<bool> made_{false};
    mutable std::vector<float> values_;
};

struct TensorRecord {
    std::string name;
    Shape shape;
    Shape strides;             // elements
    std::int64_t offset = 0;   // elements from the buffer's start
    int buffer = -1;           // backend buffer id: equal ids share memory
    Storage storage = Storage::New;
    std::vector<float> data;   // row-major in `shape`; -inf where masked. Empty when deferred:
                               // read values(), which is the same numbers either way.
    std::shared_ptr<const DeferredValues> deferred;  // or none
    // Made from these, in the op's argument order (x, then the weight, then the bias; queries
    // before keys; weights before values). Empty for x and for dropout's mask (drawn from
    // the seed); dropout's output names its mask, recorded just before it in the same step.
    std::vector<Source> from;
    Axes axes;  // one per dim of `shape`

    // Its values: `data`, or those of `deferred` (made now if they were not yet).
    const std::vector<float>& values() const { return data.empty() && deferred ? deferred->get() : data; }
    bool has_values() const { return !data.empty() || deferred != nullptr; }
    // The same, made for the caller alone when deferred and not made yet (DeferredValues::get_once).
    const std::vector<float>& values_once(std::vector<float>& scratch) const {
        return data.empty() && deferred ? deferred->get_once(scratch) : data;
    }

    // The dim that counts `a`, or -1.
    int dim_of(Axis a) const {
        for (std::size_t i = 0; i < axes.size(); ++i)
            if (axes[i] == a) return static_cast<int>(i);
        return -1;
    }
    bool has(Axis a) const { return dim_of(a) >= 0; }
    // Its rows are key positions: the keys, the values, the cache, the context (a score grid's
    // keys are its columns, the key padding mask's too).
    bool key_rows() const {
        const int k = dim_of(Axis::Key);
        return k >= 0 && k + 1 < static_cast<int>(axes.size());
    }

    // Memory position of element `i` (row-major in `shape`): offset + index . strides.
    std::int64_t address(std::int64_t i) const { return element_offset(shape, strides, offset, i); }
};

struct Step {
    int index = 0;
    Op op = Op::Input;
    int head = -1;               // loop mode: the head this step belongs to; -1 otherwise
    int round = -1;              // decoding: 0 for the prefill, r for the r-th token decoded alone; -1 otherwise
    // Flash mode's tile steps: the query block and key block of the tile (-1 otherwise), and
    // whether the tile's values were kept (a long pass keeps those of its first tiles only).
    int tile_q = -1, tile_k = -1;
    bool tile_values = true;
    // The query token rows it works on (a decoding round: its token; a flash tile: its query
    // block; otherwise all T) and its key positions: those its tensors hold where one has a key
    // axis (a round's new key up to its cache_append, the cache so far from there, a tile's
    // key block, all S), else those its queries attend to. Set by the engine, which knows them.
    Span rows, keys;
    bool has_key_axis() const;  // a tensor of it counts keys (the JSON writes "keys" then)
    // The words, empty as the engine records the step; teaching's narrate() writes them.
    std::string code;            // the PyTorch-equivalent line
    std::string explain;         // one sentence
    std::int64_t matmuls = 0;    // matmul calls (a batched matmul over heads counts 1)
    double flops = 0;            // multiply-adds x 2
    double ms = 0;               // compute time of the step (backend finished)
    BackendStats stats;
    std::vector<TensorRecord> tensors;

    const TensorRecord* find(const std::string& name) const;
    // How many values the step's tensors hold together.
    std::int64_t numbers() const {
        std::int64_t n = 0;
        for (const TensorRecord& t : tensors) n += numel(t.shape);
        return n;
    }
    // What the step gives: its last tensor (dropout records its mask before the weights),
    // except the input step's, which is x (the context and the key padding mask follow it).
    const TensorRecord& result() const { return op == Op::Input ? tensors.front() : tensors.back(); }
    // Several tensors one line makes alike (the projection's, the split's, a view's or a
    // transpose's queries, keys and values, repeat_kv's keys and values: of one storage kind,
    // shape and strides), so that one of them tells what the step does.
    bool alike() const {
        const bool one_line = op == Op::Project || op == Op::Split || op == Op::View || op == Op::Transpose || op == Op::RepeatKv;
        if (tensors.size() < 2 || !one_line) return false;
        for (const TensorRecord& t : tensors)
            if (t.storage != tensors.front().storage || t.shape != tensors.front().shape ||
                t.strides != tensors.front().strides)
                return false;
        return true;
    }
    // Several views made by one line (queries, keys and values; grouped-query attention's keys
    // and values with fewer heads than the queries).
    bool views() const {
        if (tensors.size() < 2) return false;
        for (const TensorRecord& t : tensors)
            if (t.storage != Storage::View) return false;
        return true;
    }
    // The tensor the step's code line is about: the first of several alike or viewed together
    // (queries, where the line makes keys and values the same way), else the result.
    const TensorRecord& lead() const { return alike() || views() ? tensors.front() : result(); }
    // Which part of the pass the step belongs to, for people: "head 1", "prefill", "round 2",
    // "query block 1, key block 0" (a flash tile), or "" for a step of the whole pass.
    // The position of row r of tensor `t`: a key position for key rows, a token's otherwise.
    std::int64_t position(const TensorRecord& t, std::int64_t r) const { return (t.key_rows() ? keys : rows).first + r; }
    std::string part() const {
        if (head >= 0) return "head " + std::to_string(head);
        if (round == 0) return "prefill";
        if (round > 0) return "round " + std::to_string(round);
        if (tile_q >= 0) return "query block " + std::to_string(tile_q) + ", key block " + std::to_string(tile_k);
        return "";
    }
};

// The heap a string holds as record_bytes() counts it: none while it fits the string's own
// small buffer, else its capacity and the allocator's overhead.
std::size_t heap_bytes(const std::string& s);

struct Trace {
    Config config;
    Inputs inputs;
    Weights weights;
    std::vector<Step> steps;
    // Per head of the attention weights, what its rows look at ("the token before"; "" for
    // none that stands out), where a trained model's heads show it: written with the words.
    std::vector<std::string> head_notes;

    std::int64_t total_matmuls() const;
    double total_ms() const;
    std::size_t value_bytes() const;  // bytes of all recorded tensor values (deferred ones whole, made or not)
    // The heap the steps hold beside their values: each step, its words (code, explanation)
    // once narrated, its tensors' names, shapes, strides, links and axes, every allocation
    // counted with the allocator's own 16 bytes: a few KB a flash tile, which a memory
    // estimate of values alone would miss.
    std::size_t record_bytes() const;

    // The tensor a link names (nullptr for a weight link or a link to nothing).
    const TensorRecord* source(const Source& link) const;
    // The step a link names (nullptr for a weight link).
    const Step* source_step(const Source& link) const;
};

}  // namespace headsplit
