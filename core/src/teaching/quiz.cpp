#include "headsplit/teaching/quiz.hpp"

#include <algorithm>
#include <cctype>

#include "headsplit/engine/inputs.hpp"
#include "headsplit/teaching/narration.hpp"

namespace headsplit {

namespace {

// The slips, most instructive first; each returns nothing when it does not apply.
std::vector<QuizOption> mistakes(const Step& step, const Shape& a, const Shape& in, const Config& c) {
    const std::int64_t T = c.num_tokens(), H = c.heads, hd = c.head_dim(), G = c.kv_head_count();
    std::vector<QuizOption> out;
    auto add = [&](Shape s, std::string why) { out.push_back({std::move(s), std::move(why)}); };
    // The slips of the steps after plain multi-head attention come first.
    if (step.op == Op::RepeatKv && a.size() == 4) {
        add(in, "the key/value heads left at " + std::to_string(G) + " (repeat_interleave makes one per query head)");
        add({a[0], a[1] * c.group_size(), a[2], a[3]}, "each query head's copy repeated again");
    }
    if (step.op == Op::CacheAppend && a.size() == 4) {
        if (!in.empty()) add({a[0], a[1], step.round > 0 ? 1 : a[2], a[3]}, "only the new token, not the cache so far");
        add({a[0], a[1], T, a[3]}, "the whole preallocated cache, not the part filled so far");
        add({a[0], H, a[2], a[3]}, "the cache holding every query head (it holds the key/value heads)");
    }
    if ((step.op == Op::Scores || step.op == Op::Softmax) && a.size() >= 3 && a[a.size() - 2] != a.back()) {
        Shape s = a;
        s.back() = a[a.size() - 2];
        add(s, step.round > 0 ? "a square grid, but one new query meets every key so far"
                              : "a square T x T grid, but the keys are the context's S tokens");
    }
    if (!in.empty() && in != a) add(in, "as if the step changed no shape");
    if (a.size() == 4) {
        Shape s = a;
        std::swap(s[1], s[2]);
        add(s, "the transpose forgotten (tokens and heads in the other order)");
        add({a[0], T, H * hd}, "heads not split");
        s = a;
        for (auto& d : s)
            if (d == H) d = hd;
            else if (d == hd) d = H;
        add(s, "head_dim and heads confused");
        if (a.back() == T) {
            s = a;
            s.back() = hd;
            add(s, "the T x T grid taken for T x head_dim");
        } else {
            s = a;
            s.back() = T;
            add(s, "T x head_dim taken for the T x T grid");
        }
    } else if (a.size() == 3) {
        Shape s = a;
        std::swap(s[1], s[2]);
        add(s, "dimensions swapped");
        if (hd > 0 && a.back() % hd == 0 && a.back() / hd > 1) add({a[0], a[1], a.back() / hd, hd}, "heads split where they are merged");
        s = a;
        s.back() = a.back() == c.d_in ? c.d_out : c.d_in;
        add(s, "D_in and D_out confused");
        s = a;
        s.back() = T;
        add(s, "the features taken for a T x T grid");
    }
    if (a.size() > 1) add(Shape(a.begin() + 1, a.end()), "the batch dimension dropped");
    Shape r(a.rbegin(), a.rend());
    add(r, "dimensions in reverse order");
    return out;
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
    for (QuizOption& m : mistakes(s, q.answer, q.input, tr.config))
        if (opts.size() < 4 && fresh(m.shape)) opts.push_back(std::move(m));
    // Small examples make many slips coincide (D_in = D_out, T = head_dim): a last dim off
    // by one, two, ... fills the rest, each still a distinct wrong shape.
    for (std::int64_t k = 1; opts.size() < 4; ++k) {
        Shape sh = q.answer;
        sh.back() += k;
        if (fresh(sh)) opts.push_back({sh, "the last size miscounted"});
    }
    Rng rng(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(step) + 1);
    for (std::size_t i = opts.size(); i > 1; --i) std::swap(opts[i - 1], opts[rng.next_u64() % i]);
    for (std::size_t i = 0; i < opts.size(); ++i)
        if (opts[i].mistake.empty()) q.right = static_cast<int>(i);
    q.options = std::move(opts);
    return q;
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
