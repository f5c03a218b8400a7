#include "headsplit/teaching/quiz.hpp"

#include <algorithm>
#include <cctype>

#include "headsplit/engine/inputs.hpp"
#include "headsplit/teaching/narration.hpp"

namespace headsplit {

namespace {

// Axis i's name as named_shape gives it: the keys' positions are tokens but as a grid's columns.
std::string words_at(const Axes& axes, std::size_t i) {
    if (i >= axes.size()) return "sizes";
    return axis_words(axes[i] == Axis::Key && i + 1 < axes.size() ? Axis::Token : axes[i]);
}

// Where `axes` has an axis of kind `a` (the first), or -1.
int axis_at(const Axes& axes, Axis a) {
    const auto it = std::find(axes.begin(), axes.end(), a);
    return it == axes.end() ? -1 : static_cast<int>(it - axes.begin());
}

// The words for a step's input left as it was: the step this one undoes or skips, named.
std::string left_out(Op op, const std::string& made_by) {
    switch (op) {
        case Op::View: return "the shape before the view: the heads were not split out of D_out";
        case Op::Transpose: return "the " + made_by + "'s shape: the transpose was left out, so tokens still come before heads";
        case Op::TransposeBack: return "the " + made_by + "'s shape: the transpose back was left out, so heads still come before tokens";
        case Op::Merge:
        case Op::Concat: return "the " + made_by + "'s shape: the heads were never merged back into D_out";
        default: return "the " + made_by + "'s shape: as if this step changed no shape";
    }
}

// The slips a student makes at this step, most instructive first, each a clause that reads
// after "[1, 3, 2, 3] is". Every one keeps the batch where the answer's first axis is it: a
// different batch size is no slip of any step.
std::vector<QuizOption> mistakes(const Step& step, const TensorRecord& out, const Shape& in, const std::string& made_by,
                                 const Config& c) {
    const Shape& a = out.shape;
    const Axes& ax = out.axes;
    const std::int64_t T = c.num_tokens(), H = c.heads, hd = c.head_dim(), G = c.kv_head_count();
    const std::string sH = std::to_string(H), sG = std::to_string(G);
    std::vector<QuizOption> out_opts;
    auto add = [&](Shape s, std::string why) { out_opts.push_back({std::move(s), std::move(why)}); };
    // The slips of the steps after plain multi-head attention come first.
    if (step.op == Op::RepeatKv && a.size() == 4) {
        add(in, "the shape before repeat_kv: the key/value heads were left at " + sG +
                    ", where repeat_interleave makes one per query head");
        add({a[0], a[1] * c.group_size(), a[2], a[3]}, "each query head's copy repeated again, " +
                                                           std::to_string(a[1] * c.group_size()) + " heads for " + sH);
    }
    if (step.op == Op::CacheAppend && a.size() == 4) {
        if (!in.empty()) add({a[0], a[1], step.round > 0 ? 1 : a[2], a[3]}, "the new token alone: the cache so far is kept as well");
        add({a[0], a[1], T, a[3]}, "the whole preallocated cache: only the part filled so far is used");
        add({a[0], H, a[2], a[3]}, "a cache of every query head: it holds the " + sG + " key/value heads");
    }
    if ((step.op == Op::Scores || step.op == Op::Softmax) && a.size() >= 3 && a[a.size() - 2] != a.back()) {
        Shape s = a;
        s.back() = a[a.size() - 2];
        add(s, step.round > 0 ? "a square grid: one new query meets every key so far"
                              : "a square T x T grid: the keys are the context's " + std::to_string(a.back()) + " tokens");
    }
    if (!in.empty() && in != a) add(in, left_out(step.op, made_by));
    const int head = std::max(axis_at(ax, Axis::Head), axis_at(ax, Axis::KvHead)), feature = axis_at(ax, Axis::Feature);
    const int token = axis_at(ax, Axis::Token), key = axis_at(ax, Axis::Key);
    if (a.size() == 4) {
        Shape s = a;
        std::swap(s[1], s[2]);
        add(s, "axes 1 and 2 swapped: " + words_at(ax, 1) + " and " + words_at(ax, 2) + " in each other's place");
        if (head >= 0 && feature >= 0) {
            const std::int64_t heads = a[static_cast<std::size_t>(head)];
            add({a[0], token >= 0 ? a[static_cast<std::size_t>(token)] : T, heads * hd},
                "the shape with the heads not split: " + std::to_string(heads) + " heads x " + std::to_string(hd) +
                    " features still one axis");
            s = a;
            std::swap(s[static_cast<std::size_t>(head)], s[static_cast<std::size_t>(feature)]);
            add(s, "head_dim and heads confused: " + std::to_string(heads) + " heads of " + std::to_string(hd) +
                       " features read as " + std::to_string(hd) + " heads of " + std::to_string(heads));
        }
        if (key == 3) {
            s = a;
            s.back() = hd;
            add(s, "a token's head_dim features: each query's row holds a weight for every key, " + std::to_string(a.back()) + " of them");
            add({a[0], a[2], a[3]}, "one grid for all the heads: each of the " + std::to_string(a[1]) + " heads has a grid of its own");
            add({a[0], a[1] * a[2], a[3]}, "the heads and the queries flattened into one axis of rows");
        } else if (feature == 3 && a.back() != T) {
            s = a;
            s.back() = T;
            add(s, "a T x T grid: the weights @ values product keeps each token's " + std::to_string(a.back()) + " features");
        }
    } else if (a.size() == 3 && ax.size() == 3 && ax[0] == Axis::Batch) {
        Shape s = a;
        std::swap(s[1], s[2]);
        add(s, words_at(ax, 1) + " and " + words_at(ax, 2) + " swapped: a transpose this step does not make");
        if (key == 2) {  // loop mode's grid of one head
            s = a;
            s.back() = hd;
            add(s, "a token's head_dim features: each query's row holds a weight for every key, " + std::to_string(a.back()) + " of them");
            add({a[0], H, a[1], a[2]}, "every head's grid at once: the loop computes one head at a time");
            add({a[0], a[1], H * a[2]}, "the " + sH + " heads' grids side by side: the loop keeps each head's grid apart");
        }
        if (step.op == Op::Project && a.back() == 3 * c.d_out)
            add({a[0], a[1], c.d_out}, "one of the three: the fused projection makes queries, keys and values side by side");
        if (hd > 0 && a.back() % hd == 0 && a.back() == c.d_out)
            add({a[0], a[1], a.back() / hd, hd}, step.op == Op::Merge || step.op == Op::Concat || step.op == Op::OutProj
                                                     ? "the heads left split: this step has made their " +
                                                           std::to_string(a.back() / hd) + " x " + std::to_string(hd) + " features one axis"
                                                     : "the view's shape, too early: the heads are split out of D_out only at the view, " +
                                                           std::to_string(a.back() / hd) + " heads x " + std::to_string(hd) + " features");
        if (ax[2] == Axis::Feature) {
            s = a;
            s.back() = a.back() == c.d_in ? c.d_out : a.back() == c.d_out ? c.d_in : c.d_out;
            add(s, a.back() == c.d_in    ? "D_out where x's D_in features are"
                   : a.back() == c.d_out ? "D_in where the D_out features are"
                                         : "all D_out features where one head's head_dim are");
            s = a;
            s.back() = T;
            add(s, "a T x T grid: each token keeps its " + std::to_string(a.back()) + " features");
        }
    }
    // Axes of other sizes swapped, past the batch: what is left of a transposition misplaced.
    const std::size_t first = !ax.empty() && ax[0] == Axis::Batch ? 1 : 0;
    for (std::size_t i = first; i < a.size(); ++i)
        for (std::size_t j = i + 1; j < a.size(); ++j) {
            if (a[i] == a[j]) continue;
            Shape s = a;
            std::swap(s[i], s[j]);
            add(s, "axes " + std::to_string(i) + " and " + std::to_string(j) + " swapped");
        }
    // A batch only where the answer has it first.
    if (first == 1)
        out_opts.erase(std::remove_if(out_opts.begin(), out_opts.end(),
                                      [&](const QuizOption& o) { return o.shape.empty() || o.shape[0] != a[0]; }),
                       out_opts.end());
    return out_opts;
}

}  // namespace

QuizQuestion make_question(const Trace& tr, int step, std::uint64_t seed) {
    QuizQuestion q;
    q.step = step;
    const Step& s = tr.steps.at(static_cast<std::size_t>(step));
    const TensorRecord& out = s.lead();
    q.tensor = out.name;
    q.answer = out.shape;
    q.answer_named = named_shape(out);
    if (!out.from.empty())
        if (const TensorRecord* in = tr.source(out.from.front())) q.input = in->shape;
    std::vector<QuizOption> opts{{q.answer, ""}};
    auto fresh = [&](const Shape& sh) {
        if (sh.empty()) return false;
        for (const QuizOption& o : opts)
            if (o.shape == sh) return false;
        return true;
    };
    const Step* maker = out.from.empty() ? nullptr : tr.source_step(out.from.front());
    for (QuizOption& m : mistakes(s, out, q.input, maker ? op_name(maker->op) : "input", tr.config))
        if (opts.size() < 4 && fresh(m.shape)) opts.push_back(std::move(m));
    // Small examples make many slips coincide (D_in = D_out, T = head_dim): a size counted
    // twice, or a size more, past the batch, fills the rest, each still a distinct wrong shape.
    const std::size_t past_batch = !out.axes.empty() && out.axes[0] == Axis::Batch ? 1 : 0;
    for (std::int64_t k = 1; opts.size() < 4; ++k)
        for (std::size_t i = q.answer.size(); i-- > past_batch && opts.size() < 4;) {
            Shape sh = q.answer;
            sh[i] *= k + 1;
            if (fresh(sh))
                opts.push_back({sh, "axis " + std::to_string(i) + " counted " + std::to_string(k + 1) + " times over"});
        }
    Rng rng(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(step) + 1);
    for (std::size_t i = opts.size(); i > 1; --i) std::swap(opts[i - 1], opts[rng.next_u64() % i]);
    for (std::size_t i = 0; i < opts.size(); ++i)
        if (opts[i].mistake.empty()) q.right = static_cast<int>(i);
    q.options = std::move(opts);
    return q;
}

std::string quiz_verdict(const QuizQuestion& q, const Shape& given) {
    if (given == q.answer) return "Right: " + q.tensor + " is " + q.answer_named + ".";
    std::string slip = "is not what this step gives";
    for (const QuizOption& o : q.options)
        if (o.shape == given && !o.mistake.empty()) slip = "is " + o.mistake;
    return "Not quite: " + shape_str(given) + " " + slip + ". The step gives " + q.tensor + " " + q.answer_named + ".";
}

std::optional<Shape> parse_shape_answer(const std::string& text) {
    // Spaces go, except between two numbers, where they separate ("1 3 2 3").
    std::string t;
    bool space = false;
    for (char ch : text) {
        const auto u = static_cast<unsigned char>(ch);
        if (std::isspace(u)) {
            space = true;
            continue;
        }
        if (space && std::isdigit(u) && !t.empty() && std::isdigit(static_cast<unsigned char>(t.back()))) t += ' ';
        space = false;
        t += static_cast<char>(std::tolower(u));
    }
    if (t.size() >= 2 && ((t.front() == '[' && t.back() == ']') || (t.front() == '(' && t.back() == ')')))
        t = t.substr(1, t.size() - 2);
    if (t.empty()) return std::nullopt;
    // One separator kind for the whole answer: commas, x, or spaces.
    const int kinds = (t.find(',') != std::string::npos) + (t.find('x') != std::string::npos) + (t.find(' ') != std::string::npos);
    if (kinds > 1) return std::nullopt;
    const char sep = t.find(',') != std::string::npos ? ',' : t.find(' ') != std::string::npos ? ' ' : 'x';
    Shape out;
    std::size_t at = 0;
    while (at <= t.size()) {
        std::size_t end = t.find(sep, at);
        if (end == std::string::npos) end = t.size();
        const std::string part = t.substr(at, end - at);
        if (part.empty() && end == t.size() && sep == ',' && !out.empty()) break;  // "1,3," trailing comma
        if (part.empty() || part.size() > 12) return std::nullopt;
        for (char ch : part)
            if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
        out.push_back(std::stoll(part));
        at = end + 1;
    }
    return out;
}

}  // namespace headsplit
