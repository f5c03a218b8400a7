#include "headsplit/io/trace_json.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <functional>
#include <map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "headsplit/engine/config.hpp"
#include "headsplit/engine/engine.hpp"

namespace headsplit {

namespace {

// number_float_t = float: values print in the shortest form that reads back as the same
// float (0.1, not 0.10000000149011612), which keeps large traces a third the size.
using Json = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t, std::uint64_t, float>;

Json values(const std::vector<float>& data) {
    Json a = Json::array();
    auto& arr = a.get_ref<Json::array_t&>();
    arr.reserve(data.size());
    for (float v : data) {
        if (std::isfinite(v)) arr.emplace_back(v);
        else arr.emplace_back(nullptr);  // JSON has no infinity: masked cells are null
    }
    return a;
}

// Tokens are whatever the user typed: bytes that are not UTF-8 become U+FFFD rather than an
// exception (found by the fuzzer: tests/fuzz/regressions/crash-invalid-utf8-text).
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Keys of an object whose values are written by their own function (see write_with_holes).
using Holes = std::map<std::string, std::function<void()>>;

// Writes dump(j) with each key of `holes` added to the object j, its value written by its
// function. Each goes into the text as "key":"@@written-in-pieces@@" and is cut out there:
// inside a user's string every quote is escaped, so that text cannot occur there; the holes
// come in the text's order because both the map and j sort their keys.
void write_with_holes(Json j, const Holes& holes, const TextSink& out) {
    const std::string kHole = "@@written-in-pieces@@";
    for (const auto& [key, fill] : holes) j[key] = kHole;
    const std::string text = dump(j);
    std::size_t from = 0;
    for (const auto& [key, fill] : holes) {
        const std::string needle = "\"" + key + "\":\"" + kHole + "\"";
        const std::size_t at = text.find(needle, from);
        if (at == std::string::npos) throw std::logic_error("trace JSON: no place for " + key);
        out(text.substr(from, at + key.size() + 3 - from));  // up to and with "key":
        fill();
        from = at + needle.size();
    }
    out(text.substr(from));
}

// A float array as values(data) dumps it, kJsonPieceValues (65,536) values at a time.
void write_values(const std::vector<float>& data, const TextSink& out) {
    constexpr auto kChunk = static_cast<std::size_t>(kJsonPieceValues);
    out("[");
    for (std::size_t i = 0; i < data.size(); i += kChunk) {
        const std::size_t end = std::min(data.size(), i + kChunk);
        const std::string text = dump(values(std::vector<float>(data.begin() + static_cast<std::ptrdiff_t>(i),
                                                                data.begin() + static_cast<std::ptrdiff_t>(end))));
        out((i ? "," : "") + text.substr(1, text.size() - 2));  // without its brackets
    }
    out("]");
}

// {"data": [...], "shape": [...]}, the values a piece at a time.
void write_tensor(const Shape& shape, const std::vector<float>& data, const TextSink& out) {
    write_with_holes(Json{{"shape", shape}}, {{"data", [&] { write_values(data, out); }}}, out);
}

// [each(0),each(1),...]
void write_array(std::size_t n, const std::function<void(std::size_t)>& each, const TextSink& out) {
    out("[");
    for (std::size_t i = 0; i < n; ++i) {
        if (i) out(",");
        each(i);
    }
    out("]");
}

// A step's tensor: where it comes from, its shape, axes and layout, then its values.
void write_record(const TensorRecord& t, const TextSink& out) {
    Json from = Json::array();
    for (const Source& link : t.from) {
        if (link.is_weight()) from.push_back({{"weight", link.weight}});
        else from.push_back({{"step", link.step}, {"tensor", link.tensor}});
    }
    Json axes = Json::array();
    for (Axis a : t.axes) axes.push_back(axis_name(a));
    write_with_holes({{"name", t.name},
                      {"from", std::move(from)},
                      {"shape", t.shape},
                      {"axes", std::move(axes)},
                      {"strides", t.strides},
                      {"offset", t.offset},
                      {"buffer", t.buffer},
                      {"view", t.storage == Storage::View},
                      {"storage", storage_name(t.storage)}},
                     {{"data", [&] {
                          std::vector<float> scratch;  // a deferred tensor's values, made for this write only
                          write_values(t.values_once(scratch), out);
                      }}},
                     out);
}

void write_step(const Step& s, const TextSink& out) {
    Json js = {{"index", s.index},       {"op", op_name(s.op)},          {"pass", pass_name(s.op)},
               {"code", s.code},
               {"explain", s.explain},   {"matmuls", s.matmuls},         {"flops", s.flops},
               {"ms", s.ms},             {"dispatches", s.stats.dispatches},
               {"workgroups", s.stats.workgroups}};
    if (s.head >= 0) js["head"] = s.head;
    if (s.round >= 0) js["round"] = s.round;
    js["rows"] = {s.rows.first, s.rows.count};
    if (s.has_key_axis()) js["keys"] = {s.keys.first, s.keys.count};
    if (s.tile_q >= 0) {
        js["tile"] = {{"query_block", s.tile_q},
                      {"key_block", s.tile_k},
                      {"rows", {s.rows.first, s.rows.end()}},
                      {"keys", {s.keys.first, s.keys.end()}},
                      {"values", s.tile_values}};
    }
    const auto record = [&](std::size_t i) { write_record(s.tensors[i], out); };
    write_with_holes(std::move(js), {{"tensors", [&] { write_array(s.tensors.size(), record, out); }}}, out);
}

}  // namespace

std::string trace_to_json(const Trace& tr) {
    std::string text;
    write_trace_json(tr, [&](const std::string& piece) { text += piece; });
    return text;
}

void write_trace_json(const Trace& tr, const TextSink& out) {
    const Config& c = tr.config;
    Json doc;
    doc["format"] = "headsplit-trace";
    doc["version"] = kTraceFormatVersion;
    doc["config"] = {
        {"preset", c.preset},         {"tokens", c.tokens},        {"batch", c.batch},
        {"d_in", c.d_in},             {"d_out", c.d_out},          {"heads", c.heads},
        {"head_dim", c.head_dim()},   {"causal", c.causal},        {"mode", mode_name(c.mode)},
        {"backend", backend_name(c.backend)}, {"seed", c.seed},    {"dropout", c.dropout},
        {"out_proj", c.out_proj},     {"qkv_bias", c.qkv_bias},    {"scale_first", c.scale_first},
    };
    doc["config"]["kv_heads"] = c.kv_head_count();
    doc["config"]["decode_from"] = c.decode_from;
    doc["config"]["backward"] = c.backward;
    if (c.backward) doc["config"]["dout"] = c.dout_ones ? "ones" : "seeded";
    doc["config"]["batch_tokens"] = c.sentences();
    if (!c.weights_dir.empty()) {
        doc["config"]["checkpoint"] = {{"dir", c.weights_dir}, {"layer", c.layer}};
        doc["config"]["token_ids"] = c.token_ids;
    }
    if (c.mode == Mode::Flash) {
        // The tiles: how many ran of how many, and which kept their values (the first ones).
        std::int64_t kept = 0;
        for (const Step& s : tr.steps) kept += s.op == Op::Tile && s.tile_values ? 1 : 0;
        doc["config"]["block"] = c.flash_block();
        doc["flash"] = {{"block", c.flash_block()},
                        {"query_blocks", c.query_blocks()},
                        {"key_blocks", c.key_blocks()},
                        {"tiles", c.tiles_run()},
                        {"skipped_tiles", c.query_blocks() * c.key_blocks() - c.tiles_run()},
                        {"tiles_with_values", kept}};
    }
    if (c.cross()) {
        doc["config"]["context"] = c.context;
        doc["config"]["d_context"] = c.context_dim();
    }
    // Every large array is written a piece at a time (write_with_holes): a JSON document held
    // whole costs several times its text, and a step's text alone can be tens of MB. What is held at once is one piece's
    // (MemoryEstimate::json_bytes). The text is the same as the whole document's.
    const auto tensor = [&out](const Shape& shape, const std::vector<float>& data) {
        return [&out, shape, d = &data] { write_tensor(shape, *d, out); };
    };
    Holes inputs = {{"x", tensor({c.batch, c.num_tokens(), c.d_in}, tr.inputs.x)}};
    if (c.cross()) inputs["context"] = tensor({c.batch, c.num_keys(), c.key_dim()}, tr.inputs.context);
    if (c.backward) inputs["dout"] = tensor({c.batch, c.num_tokens(), c.d_out}, tr.inputs.dout);
    Json input_doc = Json::object();
    if (c.padded()) {
        Json mask = Json::array();
        for (float v : tr.inputs.key_padding_mask) mask.push_back(v != 0.0f);
        input_doc["key_padding_mask"] = Json{{"shape", Shape{c.batch, c.num_keys()}}, {"data", std::move(mask)}};
    }
    const Weights& wt = tr.weights;
    Holes weights = {{"w_query", tensor({c.d_out, c.d_in}, wt.w_query)},
                     {"w_key", tensor({c.kv_width(), c.key_dim()}, wt.w_key)},
                     {"w_value", tensor({c.kv_width(), c.key_dim()}, wt.w_value)}};
    if (c.qkv_bias) {
        weights["b_query"] = tensor({c.d_out}, wt.b_query);
        weights["b_key"] = tensor({c.kv_width()}, wt.b_key);
        weights["b_value"] = tensor({c.kv_width()}, wt.b_value);
    }
    if (c.out_proj) {
        weights["w_out"] = tensor({c.d_out, c.d_out}, wt.w_out);
        weights["b_out"] = tensor({c.d_out}, wt.b_out);
    }

    const auto step = [&](std::size_t i) { write_step(tr.steps[i], out); };
    write_with_holes(doc,
                     {{"inputs", [&] { write_with_holes(std::move(input_doc), inputs, out); }},
                      {"steps", [&] { write_array(tr.steps.size(), step, out); }},
                      {"weights", [&] { write_with_holes(Json::object(), weights, out); }}},
                     out);
}

}  // namespace headsplit
