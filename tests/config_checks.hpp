#pragma once
// A configuration made from options as a user types them, and the check that two
// configurations are the same in every field the options set (config_options' tests and
// the lesson's query, which both spell a configuration and parse it back).
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "headsplit/engine/config.hpp"

namespace headsplit::test {

// The configuration the command line makes of `words` (options after `headsplit`).
inline Config parsed(const std::vector<std::string>& words) {
    app::ConfigOptions o;
    CLI::App cli;
    app::add_config_options(cli, o);
    std::vector<std::string> args = {"headsplit"};
    args.insert(args.end(), words.begin(), words.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    cli.parse(static_cast<int>(argv.size()), argv.data());
    return app::make_config(o).config;
}

// Every field the options set, and the preset's own rows: `b`, parsed from what config_options
// spelled for `a`, is the same configuration.
inline void check_same(const Config& a, const Config& b) {
    CHECK(b.sentences() == a.sentences());
    CHECK(b.embeddings == a.embeddings);
    CHECK(b.context == a.context);
    CHECK(b.d_in == a.d_in);
    CHECK(b.d_out == a.d_out);
    CHECK(b.d_context == a.d_context);
    CHECK(b.heads == a.heads);
    CHECK(b.kv_head_count() == a.kv_head_count());
    CHECK(b.mode == a.mode);
    CHECK(b.flash_block() == a.flash_block());
    CHECK(b.causal == a.causal);
    CHECK(b.decode_from == a.decode_from);
    CHECK(b.dropout == a.dropout);
    CHECK(b.seed == a.seed);
    CHECK(b.qkv_bias == a.qkv_bias);
    CHECK(b.scale_first == a.scale_first);
    CHECK(b.out_proj == a.out_proj);
    CHECK(b.weights_dir == a.weights_dir);
    CHECK(b.layer == a.layer);
    CHECK(b.token_ids == a.token_ids);
    CHECK(b.preset == a.preset);
    CHECK(b.layers == a.layers);
    CHECK(b.backend == a.backend);
}

}  // namespace headsplit::test
