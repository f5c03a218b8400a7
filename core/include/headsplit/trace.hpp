#pragma once
// The trace: the ordered steps of one forward pass, each with its op, explanation,
// PyTorch line, cost, and the tensors it produced (shape, strides, storage, values).
#include <cstdint>
#include <string>
#include <vector>

#include "headsplit/backend.hpp"
#include "headsplit/config.hpp"
#include "headsplit/inputs.hpp"
#include "headsplit/op.hpp"
#include "headsplit/tensor.hpp"

namespace headsplit {

// How a step's tensor relates to memory that existed before the step.
enum class Storage {
    New,      // freshly computed into a new buffer
    View,     // same buffer as its source, new shape/strides: no data moved
    InPlace,  // same buffer, values overwritten
    Copy,     // data moved into a new buffer (contiguous copy, concat)
};
const char* storage_name(Storage s);  // "new" | "view" | "in_place" | "copy"

struct TensorRecord {
    std::string name;
    Shape shape;
    Shape strides;             // elements
    std::int64_t offset = 0;   // elements from the buffer's start
    int buffer = -1;           // backend buffer id: equal ids share memory
    Storage storage = Storage::New;
    std::vector<float> data;   // row-major in `shape`; -inf where masked
};

struct Step {
    int index = 0;
    Op op = Op::Input;
    int head = -1;               // loop mode: the head this step belongs to; -1 otherwise
    std::string code;            // the PyTorch-equivalent line
    std::string explain;         // one sentence
    std::int64_t matmuls = 0;    // matmul calls (a batched matmul over heads counts 1)
    double flops = 0;            // multiply-adds x 2
    double ms = 0;               // compute time of the step (backend finished)
    BackendStats stats;
    std::vector<TensorRecord> tensors;

    const TensorRecord* find(const std::string& name) const;
};

struct Trace {
    Config config;
    Inputs inputs;
    Weights weights;
    std::vector<Step> steps;

    std::int64_t total_matmuls() const;
    double total_ms() const;
    std::size_t value_bytes() const;  // bytes of all recorded tensor values
};

}  // namespace headsplit
