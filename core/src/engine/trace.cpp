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

const std::vector<float>& DeferredValues::get() const {
    if (made_) return values_;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!made_) {
        values_ = make();
        made_ = true;
    }
    return values_;
}

const std::vector<float>& DeferredValues::get_once(std::vector<float>& scratch) const {
    if (made_) return values_;
    scratch = make();
    return scratch;
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
        for (const auto& t : s.tensors)
            n += (t.data.empty() && t.deferred ? static_cast<std::size_t>(numel(t.shape)) : t.data.size()) * sizeof(float);
    return n;
}

namespace {

constexpr std::size_t kPerAllocation = 16;  // glibc's chunk header and rounding, about

// Heap bytes of a string or a vector.
std::size_t heap_of(const std::string& s) { return heap_bytes(s); }
template <class T>
std::size_t heap_of(const std::vector<T>& v) {
    return v.capacity() > 0 ? v.capacity() * sizeof(T) + kPerAllocation : 0;
}

}  // namespace

std::size_t heap_bytes(const std::string& s) {
    return s.capacity() > 15 ? s.capacity() + 1 + kPerAllocation : 0;
}

std::size_t Trace::record_bytes() const {
    std::size_t n = heap_of(steps);
    for (const Step& s : steps) {
        n += heap_of(s.code) + heap_of(s.explain) + heap_of(s.tensors);
        for (const TensorRecord& t : s.tensors) {
            n += heap_of(t.name) + heap_of(t.shape) + heap_of(t.strides) + heap_of(t.from) + heap_of(t.axes);
            for (const Source& f : t.from) n += heap_of(f.tensor) + heap_of(f.weight);
        }
    }
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
