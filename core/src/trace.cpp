#include "headsplit/trace.hpp"

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

const TensorRecord* Step::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
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

}  // namespace headsplit
