#include "headsplit/presets.hpp"

#include <nlohmann/json.hpp>

#include "embedded.hpp"

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
        preset.d_in = p.at("d_in").get<std::int64_t>();
        preset.d_out = p.at("d_out").get<std::int64_t>();
        preset.heads = p.at("heads").get<std::int64_t>();
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

Config config_from_preset(const std::string& name) {
    for (const auto& p : presets()) {
        if (p.name != name) continue;
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
