#include "headsplit/model/presets.hpp"

#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "embedded.hpp"
#include "headsplit/model/checkpoint.hpp"

namespace headsplit {

namespace {

std::vector<Preset> load_presets() {
    const std::string_view text = headsplit_asset("presets.json");
    const auto doc = nlohmann::json::parse(text.begin(), text.end());
    std::vector<Preset> out;
    for (const auto& p : doc.at("presets")) {
        Preset preset;
        preset.name = p.at("name").get<std::string>();
        preset.about = p.value("about", "");
        preset.text = p.value("text", "");
        preset.default_tokens = p.value("tokens", 0);
        preset.weights = p.value("weights", "");
        preset.layer = p.value("layer", std::int64_t{0});
        // A checkpoint preset takes its sizes from the checkpoint.
        const bool sized = preset.weights.empty();
        preset.d_in = sized ? p.at("d_in").get<std::int64_t>() : 0;
        preset.d_out = sized ? p.at("d_out").get<std::int64_t>() : 0;
        preset.heads = sized ? p.at("heads").get<std::int64_t>() : 0;
        preset.kv_heads = p.value("kv_heads", std::int64_t{0});
        preset.layers = p.value("layers", std::int64_t{1});
        if (p.contains("embeddings"))
            for (const auto& row : p.at("embeddings"))
                for (const auto& v : row) preset.embeddings.push_back(v.get<float>());
        out.push_back(std::move(preset));
    }
    return out;
}

}  // namespace

const std::vector<Preset>& presets() {
    static const std::vector<Preset> all = load_presets();
    return all;
}

std::vector<std::string> preset_names() {
    std::vector<std::string> names;
    for (const auto& p : presets()) names.push_back(p.name);
    return names;
}

const Preset* find_preset(const std::string& name) {
    for (const auto& p : presets())
        if (p.name == name) return &p;
    return nullptr;
}

std::string shipped_weights_dir(const std::string& folder) {
    namespace fs = std::filesystem;
    std::vector<fs::path> places;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) places.push_back(exe.parent_path().parent_path() / "share" / "headsplit" / folder);
    places.push_back(fs::path(HEADSPLIT_SOURCE_ASSETS) / folder);
    for (const fs::path& dir : places)
        if (fs::is_regular_file(dir / "config.json", ec)) return dir.lexically_normal().string();
    std::string looked;
    for (const fs::path& dir : places) looked += (looked.empty() ? "" : " and ") + dir.lexically_normal().string();
    throw ConfigError("the shipped model " + folder + " is not installed (looked in " + looked +
                      "); reinstall the headsplit package or build from a full source tree");
}

Config config_from_preset(const std::string& name, const std::string& text, std::int64_t layer) {
    for (const auto& p : presets()) {
        if (p.name != name) continue;
        if (!p.weights.empty()) {
            Config c = gpt2_config(shipped_weights_dir(p.weights), text.empty() ? p.text : text,
                                   layer < 0 ? p.layer : layer);
            c.preset = p.name;
            return c;
        }
        Config c;
        c.preset = p.name;
        c.tokens = p.text.empty() ? synthetic_tokens(p.default_tokens) : split_words(p.text);
        c.embeddings = p.embeddings;
        c.d_in = p.d_in;
        c.d_out = p.d_out;
        c.heads = p.heads;
        c.kv_heads = p.kv_heads == p.heads ? 0 : p.kv_heads;
        c.layers = p.layers;
        return c;
    }
    std::string names;
    for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw ConfigError("unknown preset \"" + name + "\"; presets: " + names);
}

}  // namespace headsplit
