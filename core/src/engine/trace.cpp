#include "headsplit/engine/trace.hpp"

namespace headsplit {

const char* storage_name(Storage s) {
    switch (s) {
        case Storage::New: return "new";
        case Storage::View: return "view";
        case Storage::InPlace: return "in_place";
        case Storage::Copy: return "copy";
    }
    return "?";
}

const char* storage_label(Storage s) {
    switch (s) {
        case Storage::New: return "new";
        case Storage::View: return "view (no data moved)";
        case Storage::InPlace: return "in place";
        case Storage::Copy: return "copy";
    }
    return "?";
}

const char* storage_sentence(Storage s) {
    switch (s) {
        case Storage::View: return "view: no data moved, only shape and strides";
        case Storage::InPlace: return "in place: same memory, values overwritten";
        case Storage::Copy: return "copied into a new buffer";
        case Storage::New: break;
    }
    return "computed into a new buffer";
}

const char* axis_name(Axis a) {
    switch (a) {
        case Axis::Batch: return "batch";
        case Axis::Head: return "head";
        case Axis::KvHead: return "kv_head";
        case Axis::Token: return "token";
        case Axis::Key: return "key";
        case Axis::Feature: return "feature";
    }
    return "?";
}

bool is_head_axis(Axis a) { return a == Axis::Head || a == Axis::KvHead; }

const TensorRecord* Step::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

bool Step::has_key_axis() const {
    for (const auto& t : tensors)
        if (t.has(Axis::Key)) return true;
    return false;
}

std::int64_t Trace::total_matmuls() const {
    std::int64_t n = 0;
    for (const auto& s : steps) n += s.matmuls;
    return n;
}

double Trace::total_ms() const {
    double ms = 0;
    for (const auto& s : steps) ms += s.ms;
    return ms;
}

std::size_t Trace::value_bytes() const {
    std::size_t n = 0;
    for (const auto& s : steps)
        for (const auto& t : s.tensors) n += t.data.size() * sizeof(float);
    return n;
}

const Step* Trace::source_step(const Source& link) const {
    if (link.is_weight() || link.step < 0 || link.step >= static_cast<int>(steps.size())) return nullptr;
    return &steps[static_cast<std::size_t>(link.step)];
}

const TensorRecord* Trace::source(const Source& link) const {
    const Step* s = source_step(link);
    return s ? s->find(link.tensor) : nullptr;
}

}  // namespace headsplit
