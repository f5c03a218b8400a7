#pragma once
// A small cache of what depends only on (trace, step) pairs, such as a step's layout or the
// cells two steps share: computed once, not every frame. It holds weak pointers, so a trace
// freed and another allocated at its address is a miss.
#include <cstdint>
#include <list>
#include <memory>

#include "headsplit/engine/trace.hpp"

namespace headsplit::gui {

template <class Value>
struct TraceCache {
    struct Entry {
        std::weak_ptr<const Trace> a, b;
        int step_a;
        std::int64_t step_b;
        Value value;
    };
    // A list: references stay valid while others are added; the most recent use is last, so
    // eviction takes the least recently used and never what this frame just looked up.
    std::list<Entry> entries;

    Value* find(const std::shared_ptr<const Trace>& a, int sa, const std::shared_ptr<const Trace>& b, std::int64_t sb) {
        for (auto it = entries.begin(); it != entries.end(); ++it)
            if (it->step_a == sa && it->step_b == sb && it->a.lock() == a && it->b.lock() == b) {
                entries.splice(entries.end(), entries, it);
                return &entries.back().value;
            }
        return nullptr;
    }
    Value& add(const std::shared_ptr<const Trace>& a, int sa, const std::shared_ptr<const Trace>& b, std::int64_t sb, Value v) {
        if (entries.size() >= 256) entries.pop_front();  // the least recently used goes first
        entries.push_back({a, b, sa, sb, std::move(v)});
        return entries.back().value;
    }
};

}  // namespace headsplit::gui
