#pragma once
// The seam between computing and recording. The forward pass emits ops on a backend and
// reports each one, as a step, to a StepObserver; it records nothing itself. The recorder
// (recorder.hpp) is the observer of every run and of the shapes-only walk.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headsplit/base/op.hpp"
#include "headsplit/base/tensor.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit::detail {

// Which op a step is and where in the pass it stands.
struct StepTag {
    Op op = Op::Input;
    int head = -1;                 // loop mode: the head it belongs to; -1: all heads
    int round = -1;                // decoding: its round; -1: none
    Span rows, keys;               // the query rows and key positions its tensors hold
    int tile_q = -1, tile_k = -1;  // flash: the tile's query and key block; -1: not a tile
    bool keep_values = true;       // whether its values may be kept (a flash tile: the first ones)
};

// A tensor a step gives: a new buffer, a view, a copy or an update in place. It lives for
// the call that reports it (`t` is the emitter's).
struct TensorEvent {
    std::string name;
    const TensorDesc& t;
    Storage storage = Storage::New;
    std::vector<Source> from;  // what it was made from
    Axes axes;                 // what each dim counts
    std::shared_ptr<const DeferredValues> later;  // its values made when first asked for, or none
};

// Hears a forward pass op by op: begin(), the backend calls of the op, computed(), the
// tensors it gives, end(). Its answers change nothing the pass computes, only which of the
// equivalent paths it takes (reads_values).
class StepObserver {
public:
    virtual ~StepObserver() = default;
    // Whether it reads the tensors' values as the pass goes: then each op computes on its own
    // (or leaves its values to be made again later, DeferredValues); else attention takes its
    // fused paths (replay_plan.hpp).
    virtual bool reads_values() const = 0;
    // A step begins: the backend calls up to computed() are its compute.
    virtual void begin(const StepTag& tag) = 0;
    // Its compute is done: `matmuls` matmul calls, `flops` floating-point operations.
    virtual void computed(std::int64_t matmuls, double flops) = 0;
    // It gives this tensor; returns the link later steps name it by.
    virtual Source tensor(TensorEvent e) = 0;
    virtual void end() = 0;
};

}  // namespace headsplit::detail
