#pragma once
// The rules for changing a configuration one setting at a time, beside check_config: what a
// control, an option or a preset switch changes with it so that the configuration stays one
// that runs, and the one line that says so. The command line and the window both use them;
// neither keeps a rule of its own.
#include <cstddef>
#include <cstdint>
#include <string>

#include "headsplit/engine/config.hpp"

namespace headsplit {

// Mode names both ways (mode_name is the other way): false when `name` is no mode.
bool mode_from_name(const std::string& name, Mode* out);
bool backend_from_name(const std::string& name, BackendKind* out);

// "1, 2, 3, 6": the divisors of n, for messages.
std::string divisor_list(std::int64_t n);
// Whether c.kv_heads key/value heads serve c.heads query heads in equal groups (0: one per head).
bool kv_heads_fit(const Config& c);

// Sets D_out; when the head count no longer divides it, picks the nearest divisor below (and
// fits the key/value heads to it) and returns a one-line notice saying so ("" otherwise).
std::string set_d_out(Config& c, std::int64_t d_out);
// Sets the head count and fits the key/value heads to it; returns fit_kv_heads' notice.
std::string set_heads(Config& c, std::int64_t heads);
// After the head count changed: key/value heads that no longer divide it become the nearest
// divisor below; returns a one-line notice saying so ("" otherwise).
std::string fit_kv_heads(Config& c);
// `kv` key/value heads (kv = heads: plain multi-head attention, stored as 0).
void set_kv_heads(Config& c, std::int64_t kv);

// Another mode. Flash starts at about three blocks of queries, so that the tiles and those
// skipped show, and runs without dropout and without decoding (it would refuse them).
void set_mode(Config& c, Mode m);
// Decoding with a KV cache on (prefill half the text; causal, no dropout, not loop mode) or off.
void set_decoding(Config& c, bool on);
// Cross-attention on (a short context; no causal mask, no decoding) or off.
void set_cross(Config& c, bool on);
// After the text changed: the tile block stays within the text, and a prefill leaves at least
// one round (no decoding under 2 tokens).
void fit_to_text(Config& c);

// Sentence `b` of the batch becomes `text`'s words (b = batch size: a new sentence); an empty
// text is kept as it is typed and refused by the check, with the reason.
void set_sentence(Config& c, std::size_t b, const std::string& text);
void remove_sentence(Config& c, std::size_t b);
// A checkpoint run's text: its BPE pieces put back together (" cat" + " sleeps").
std::string checkpoint_text(const Config& c);
// Another layer of the checkpoint: its words kept, x left to be run to that layer's input.
void set_checkpoint_layer(Config& c, std::int64_t layer);

// How `from` runs, copied onto `to`, whose sizes and text stay: mode, tile block, backend,
// masks, order of scale and mask, dropout, decoding, output projection, seed, memory budget;
// then fitted to `to`'s text. A new preset and a re-tokenized checkpoint keep them.
void keep_run_settings(const Config& from, Config& to);

}  // namespace headsplit
