#include "recorder.hpp"

#include <stdexcept>

namespace headsplit::detail {

Recorder::Recorder(Backend& backend, std::vector<Step>& steps, bool values)
    : backend_(backend), steps_(steps), values_(values) {}

void Recorder::begin(const StepTag& tag) {
    backend_.finish();
    backend_.take_stats();
    step_ = Step{};
    step_.index = static_cast<int>(steps_.size());
    step_.op = tag.op, step_.head = tag.head, step_.round = tag.round;
    step_.rows = tag.rows, step_.keys = tag.keys;
    step_.tile_q = tag.tile_q, step_.tile_k = tag.tile_k, step_.tile_values = tag.keep_values;
    readback_.clear();
    start_ = Clock::now();
}

void Recorder::computed(std::int64_t matmuls, double flops) {
    backend_.finish();
    step_.ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
    step_.stats = backend_.take_stats();
    step_.matmuls = matmuls;
    step_.flops = flops;
}

Source Recorder::tensor(TensorEvent e) {
    check_axes(e.name, e.t.shape, e.axes);
    const TensorDesc& t = e.t;
    TensorRecord r{e.name, t.shape, t.strides, t.offset, t.buffer, e.storage, {}, nullptr, std::move(e.from),
                   std::move(e.axes)};
    if (values_ && step_.tile_values && e.later) {
        r.deferred = std::move(e.later);
    } else if (values_ && step_.tile_values) {
        std::int64_t size = 0;
        if (const float* host = backend_.host_view(t.buffer, &size)) {  // host memory: no whole-buffer copy
            r.data = gather(host, size, t, true);
        } else {
            auto it = readback_.find(t.buffer);
            if (it == readback_.end()) {
                it = readback_.emplace(t.buffer, std::vector<float>()).first;
                backend_.read(t.buffer, it->second);
            }
            r.data = gather(it->second, t);
        }
    }
    step_.tensors.push_back(std::move(r));
    return Source::of_step(step_.index, e.name);
}

void Recorder::end() {
    steps_.push_back(std::move(step_));
    readback_.clear();
}

void Recorder::check_axes(const std::string& name, const Shape& shape, const Axes& axes) const {
    bool ok = axes.size() == shape.size();
    for (std::size_t i = 0; ok && i < axes.size(); ++i) {
        if (axes[i] == Axis::Token) ok = shape[i] == step_.rows.count;
        if (axes[i] == Axis::Key) ok = shape[i] == step_.keys.count;
    }
    if (!ok)
        throw std::logic_error("step " + std::to_string(step_.index) + " (" + op_name(step_.op) + "): tensor " + name +
                               " " + shape_str(shape) + " does not match its axes, rows or keys");
}

}  // namespace headsplit::detail
