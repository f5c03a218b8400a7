#include "recorder.hpp"

#include <stdexcept>

namespace headsplit::detail {

Recorder::Recorder(const Config& config, Backend& backend, std::vector<Step>& steps, bool values)
    : config_(config), backend_(backend), steps_(steps), values_(values) {
    whole_pass();
}

void Recorder::begin(Op op, int head) {
    backend_.finish();
    backend_.take_stats();
    step_ = Step{};
    step_.index = static_cast<int>(steps_.size());
    step_.op = op;
    step_.head = head;
    step_.round = round_;
    step_.rows = rows_;
    step_.keys = keys_;
    step_.tile_values = true;
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

Val Recorder::tensor(const std::string& name, const TensorDesc& t, Storage storage, std::vector<Source> from, Axes axes,
                     std::shared_ptr<const DeferredValues> later) {
    check_axes(name, t.shape, axes);
    TensorRecord r{name, t.shape, t.strides, t.offset, t.buffer, storage, {}, nullptr, std::move(from), std::move(axes)};
    if (values_ && step_.tile_values && later) {
        r.deferred = std::move(later);
    } else if (values_ && step_.tile_values) {
        std::int64_t size = 0;
        if (const float* host = backend_.host_view(t.buffer, &size)) {  // host memory: no whole-buffer copy
            r.data = gather(host, size, t);
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
    return {t, Source::of_step(step_.index, name)};
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
