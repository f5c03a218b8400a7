#pragma once
// Presenter mode's live controls: the teacher changes the model in front of the class, one
// setting at a time, by key or from the strip under the caption, and the caption says what
// changed and what followed ("heads 2 -> 3: head_dim 3 -> 2, attn_scores [1, 3, 3, 3]").
// Every change goes through the configuration's rules (config_edit.hpp), as the Controls
// panel's do.
#include <string>

#include "headsplit/engine/config.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit::gui {

struct AppState;

enum class LiveChange {
    HeadsUp, HeadsDown,      // the next divisor of D_out above or below (H, Shift+H)
    DOutUp, DOutDown,        // D_out one feature per head more or less: head_dim +- 1 (D, Shift+D)
    KvHeadsUp, KvHeadsDown,  // the next divisor of heads (K, Shift+K)
    NextMode,                // loop -> split -> fused -> flash -> loop (M)
    Causal,                  // the causal mask on or off (C)
    Backward,                // the backward pass on or off (G: the gradients)
};

// What presenter mode remembers of the last change: the configuration before it, the words
// for it, and, once the new trace is in, the caption line.
struct LiveState {
    Config before;
    std::string what;      // "heads 2 -> 3"
    bool waiting = false;  // asked for, its trace not in yet
    std::string caption;   // the line under the code: what changed and what followed
    std::string caption_short;  // the same without the step's result (the caption's step line shows it); "" when none
    bool typing = false;   // the sentence box is open (T)
    char text[512] = {};
};

// Applies `change` to st.config and asks for its trace; false, with the reason as the
// caption, when it cannot be made (no divisor further that way, a checkpoint's sizes).
bool live_change(AppState& st, LiveChange change);
// Opens the sentence box (T) holding the first sentence as it reads now.
void open_sentence_box(AppState& st);
// The first sentence becomes `text` (the sentence box, Enter).
void live_sentence(AppState& st, const std::string& text);
// The caption for a change from `before` to `after`, named by `what`: the other settings and
// sizes that followed it, then the current step's result in the new trace.
std::string live_caption(const std::string& what, const Config& before, const Config& after, const Step* step);

}  // namespace headsplit::gui
