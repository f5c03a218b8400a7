// The stage's drawing of one frame: the cells gliding into place, the tensors' and tokens'
// names, the captions under the grid, and the buffer as it lies in memory.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <list>
#include <memory>

#include <imgui.h>

#include "gui/panels/stage_parts.hpp"

namespace headsplit::gui::stage {

namespace {

// `text` without the spaces after its commas and around " = ": "[1,3,2,3]", for the narrowest
// room before a cut.
std::string without_spaces(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == ' ' && i > 0 && (text[i - 1] == ',' || text[i - 1] == '=' || (i + 1 < text.size() && text[i + 1] == '=')))
            continue;
        out += text[i];
    }
    return out;
}

}  // namespace

std::string window_text(const TensorLayout& tl, const LayoutLimits& lim, std::int64_t batch) {
    std::string out;
    auto range = [&](const char* what, std::int64_t start, std::int64_t shown, std::int64_t all) {
        if (shown >= all) return;
        out += (out.empty() ? "" : ", ") + std::string(what) + " " + std::to_string(start) + "-" +
               std::to_string(start + shown - 1) + " of " + std::to_string(all);
    };
    range("tokens", tl.token0, std::min(tl.rows, lim.tokens), tl.rows);
    range(tl.axes.back() == Axis::Key ? "keys" : "columns", tl.col0,
          std::min(tl.cols, tl.axes.back() == Axis::Key ? lim.tokens : lim.features), tl.cols);
    range("heads", tl.head0, std::min(tl.heads, lim.heads), tl.heads);
    if (!tl.batch_rows && batch > tl.batches)
        out += (out.empty() ? "" : ", ") + std::string("sentence") + (tl.batches > 1 ? "s " : " ") +
               std::to_string(tl.batch0) + (tl.batches > 1 ? "-" + std::to_string(tl.batch0 + tl.batches - 1) : "") +
               " of " + std::to_string(batch) + " (the heatmaps' slider picks)";
    return out;
}

namespace {

// The width the caption under tensor `ti` may take: to the next tensor in its row, or to the
// panel's right edge.
float block_width(const Canvas& cv, std::size_t ti) {
    const TensorLayout& tl = cv.L.tensors[ti];
    const bool row_ends = ti + 1 == cv.L.tensors.size() || cv.L.tensors[ti + 1].y != tl.y;
    return !row_ends ? tl.width * cv.cell + kTensorGap * cv.cell * 0.8f
                     : cv.origin.x + cv.room.avail.x - (cv.grid0.x + tl.x * cv.cell);
}

// `text` at `pos` in `room` px: shorter (without "each ", then without spaces), then smaller
// down to the smallest label, before a cut.
void place_caption(Canvas& cv, ImVec2 pos, const std::string& text, float room) {
    const std::string bare = text.rfind("each ", 0) == 0 ? text.substr(5) : text, tight = without_spaces(bare);
    const float tight_w = ImGui::CalcTextSize(tight.c_str()).x, font = cv.room.font;
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    if (tight_w <= room)
        cv.label(pos, dim, first_fitting({text, bare, tight}, room));
    else
        cv.label_sized(pos, dim, tight, std::max(kSmallestLabel * font, font * room / tight_w), room, "");
}

}  // namespace

void draw_tensor_captions(Canvas& cv, float below, bool beside, bool shapes) {
    const Step& s = cv.s;
    const TensorRecord& first = s.tensors.front();
    const float cell = cv.cell, font = cv.room.font, right = cv.origin.x + cv.room.avail.x;
    bool same = true;
    for (const TensorRecord& r : s.tensors) same &= r.shape == first.shape && r.strides == first.strides;
    // Each tensor's name as shown: a gradient's with the scale of its numbers (shown_name).
    std::vector<std::string> names;
    for (const TensorRecord& r : s.tensors) names.push_back(shown_name(s, r));
    // Shapes that differ go under their tensors; all on one line from the panel's edge, each
    // with its name, where one would not fit under its tensor even at the smallest label (a
    // name that does not fit over its tensor at that size is then left to that line).
    bool joined = false;
    std::string all_shapes;
    auto name_fits = [&](std::size_t ti) {
        return ImGui::CalcTextSize(names[ti].c_str()).x * kSmallestLabel <= block_width(cv, ti) || cv.L.tensors.size() == 1;
    };
    for (std::size_t ti = 0; !same && shapes && ti < cv.L.tensors.size(); ++ti) {
        const TensorRecord& rec = s.tensors[ti];
        const float tight_w = ImGui::CalcTextSize(without_spaces(shape_str(rec.shape)).c_str()).x;
        joined |= tight_w * kSmallestLabel > block_width(cv, ti) || !name_fits(ti);
        all_shapes += (ti ? ", " : "") + names[ti] + " " + shape_str(rec.shape);
    }
    if (beside) below = cv.grid0.y + cv.L.tensors.back().y * cell;
    if (joined) place_caption(cv, {cv.origin.x, below}, all_shapes, cv.room.avail.x);
    for (std::size_t ti = 0; ti < cv.L.tensors.size(); ++ti) {
        const TensorLayout& tl = cv.L.tensors[ti];
        const TensorRecord& rec = s.tensors[ti];
        const float block_w = block_width(cv, ti);
        // One drawn for several viewed together: the others named beside it, and their key/value
        // heads where they have fewer.
        const std::string& own = names[ti];
        std::string name = own;
        if (cv.L.tensors.size() < s.tensors.size()) {
            name += s.views() || s.alike() ? " (" : " (then ";
            for (std::size_t o = cv.L.tensors.size(); o < s.tensors.size(); ++o)
                name += (o > cv.L.tensors.size() ? ", " : "") + names[o];
            const TensorRecord& other = s.tensors.back();
            const int kv = other.dim_of(Axis::KvHead);
            name += !s.views() && !s.alike() ? ")"  // not made alike: only named (the projections' backward)
                    : kv >= 0 && other.shape != rec.shape
                        ? " alike, with " + std::to_string(other.shape[static_cast<std::size_t>(kv)]) + " kv heads)"
                        : " alike)";
        }
        const float name_w = cv.L.tensors.size() == 1 ? right - (cv.grid0.x + tl.x * cell) : block_w;
        const bool named_below = joined && !name_fits(ti);  // on the line under the tensors
        if (!named_below && tl.y == 0) {
            // The name alone where the others' do not fit; smaller, down to the smallest label,
            // where even it does not.
            const float w = ImGui::CalcTextSize(own.c_str()).x;
            const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
            const ImVec2 at(cv.grid0.x + tl.x * cell, cv.origin.y);
            if (ImGui::CalcTextSize(name.c_str()).x <= name_w || w <= name_w) {
                cv.label(at, ink, first_fitting({name, own}, name_w));
            } else {
                const float size = std::max(kSmallestLabel * font, font * name_w / w);
                cv.label_sized({at.x, at.y + font - size}, ink, own, size, name_w, "");
            }
        } else if (!named_below) {  // a later row of tensors: in the gap above it, as large as the gap allows up to the text
            const float size = std::max(kSmallestLabel * font, std::min(font, kTensorRowGap * cell - 3));
            const ImVec2 pos(cv.grid0.x + tl.x * cell, cv.grid0.y + tl.y * cell - size - 2);
            cv.label_sized(pos, ImGui::GetColorU32(ImGuiCol_Text), name, size, name_w, "");
        }
        if (!shapes || (same && ti > 0) || joined) continue;
        if (!same) {
            const std::string shape = shape_str(rec.shape);
            const float x = cv.grid0.x + (beside ? beside_x(cv.L) * cell : tl.x * cell);
            place_caption(cv, {x, below}, ImGui::CalcTextSize((own + " " + shape).c_str()).x <= block_w ? own + " " + shape : shape,
                          block_w);
            continue;
        }
        // From under the grid, or from the panel's left edge (under the token names) when that
        // keeps them whole.
        const std::array<std::string, 2> shared = shared_captions(s, cv.c);
        const float x = cv.grid0.x + (beside ? beside_x(cv.L) * cell : 0);
        auto place = [&](const std::string& text, float y) {
            const float at = x + ImGui::CalcTextSize(text.c_str()).x <= right ? x : cv.origin.x;
            place_caption(cv, {at, y}, text, right - at);
        };
        if (one_caption_line(cv.room) && !short_stage(cv.room) && !beside) {
            place(shared_caption_line(shared), below);
            continue;
        }
        place(shared[0], below);
        if (!shared[1].empty() && !short_stage(cv.room)) place(shared[1], below + cv.room.line);
    }
}

void draw_window_note(Canvas& cv, float below, bool beside) {
    std::string name, window;
    for (const TensorLayout& tl : cv.L.tensors)
        if (tl.hidden > 0) {
            name = tl.name + ": ", window = window_text(tl, layout_variant(cv.variant), cv.c.batch);
            break;
        }
    // From the panel's left edge, on two lines (broken after a comma) when one is too narrow;
    // without the tensor's name (its grid is titled), then "of" written "/", where the lines
    // need it; the how-to only where it fits whole: cut, it would end in a broken word.
    const float note_w = std::max(cv.room.avail.x, 4 * cv.room.font);
    const auto fits = [&](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x <= note_w; };
    std::string note, second;
    std::string compact = window;  // "tokens 0-5/9"
    for (std::size_t at = compact.find(" of "); at != std::string::npos; at = compact.find(" of ", at)) compact.replace(at, 4, "/");
    for (const std::string& whole : {name + window, window, compact}) {
        note = whole, second.clear();
        const std::string with_hint = note + "  (drag: pan, wheel: zoom, double-click: reset)";
        if (!cv.document && fits(with_hint)) note = with_hint;
        if (!fits(note))
            for (std::size_t at = note.rfind(", "); at != std::string::npos && at > 0; at = note.rfind(", ", at - 1))
                if (fits(note.substr(0, at + 1))) {
                    second = note.substr(at + 2);
                    note = note.substr(0, at + 1);
                    break;
                }
        if (fits(note) && fits(second) && (second.empty() || note_lines(cv.room) > 1)) break;
    }
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const float y = below + (beside ? 0.0f : caption_lines(cv.room)) * cv.room.line;  // under the captions
    // Without the parenthesis (the slider's hint) before a cut.
    auto bare = [](const std::string& t) { return t.find(" (") == std::string::npos ? t : t.substr(0, t.find(" (")); };
    cv.label({cv.origin.x, y}, dim, first_fitting({note, bare(note)}, note_w));
    if (!second.empty() && note_lines(cv.room) > 1)
        cv.label({cv.origin.x, y + cv.room.line}, dim, first_fitting({second, bare(second)}, note_w));
}

ImU32 head_colour_of(const Config& c, const TensorLayout& t, std::int64_t h) {
    const std::int64_t head = t.head0 + h;
    return head_ink(static_cast<int>(t.kv_heads ? head * c.group_size() : head));
}

std::string token_label(const Config& c, const TensorLayout& tl, std::int64_t b, std::int64_t r) {
    const std::string word = row_name(c, tl, b, r);
    if (tl.batch_rows || word.empty()) return word;
    std::vector<std::string> words;
    if (tl.key_rows) words = c.key_tokens(std::min(b, c.batch - 1));
    else
        for (std::int64_t t = 0; t < c.num_tokens(); ++t) words.push_back(c.token_at(std::min(b, c.batch - 1), t));
    return word_label(words, static_cast<std::size_t>(tl.row_offset + r), tl.row_offset + r);  // row_name's word
}

void draw_panel_titles(Canvas& cv) {
    ImFont* font = ImGui::GetFont();
    // A tensor of one row of panels under the tensors' names: its titles may reach up to that
    // line (a tensor of more rows keeps one size of title in every row).
    const float names_bottom = cv.origin.y + ImGui::GetTextLineHeight();
    for (const TensorLayout& t : cv.L.tensors) {
        bool one_row = !t.panels.empty();
        for (const PanelBox& box : t.panels) one_row = one_row && std::abs(box.y - t.panels.front().y) < 1e-3f;
        for (const PanelBox& box : t.panels) {
            const std::string text = t.token_panels ? token_label(cv.c, t, box.batch, box.index)
                                                    : head_name(t, box.index - t.head0);
            const ImU32 colour = t.token_panels ? ImGui::GetColorU32(ImGuiCol_Text)
                                                : head_colour_of(cv.c, t, box.index - t.head0);
            const float room_w = (box.w + kPanelGap * 0.9f) * cv.cell;
            // Small cells: the title reaches into the gap above its slot (the names' line
            // above the first row) to stay kSmallestLabel of the text.
            const float slot_bottom = cv.grid0.y + box.y * cv.cell + kPanelTitle * cv.cell - 1;
            float size = std::min(cv.room.font, kPanelTitle * cv.cell - 2);
            if (size < kSmallestLabel * cv.room.font)
                size = std::min(kSmallestLabel * cv.room.font, (kPanelTitle + kPanelRowGap) * cv.cell - 2);
            const auto width_at = [&](float px) { return font->CalcTextSizeA(px, FLT_MAX, 0, text.c_str()).x; };
            if (const float w = width_at(size); w > room_w) size = std::max(size * room_w / w, std::min(size, 0.6f * cv.room.font));
            // Over the first row, up to the names' line where the panel's width holds it whole.
            if (t.y == 0 && one_row) {
                const float up = std::min(cv.room.font, slot_bottom - names_bottom - 2);
                const float whole = std::min(up, up * (room_w - 2) / std::max(width_at(up), 1.0f));
                if (width_at(whole) <= room_w - 1) size = std::max(size, whole);
            }
            if (size + 0.01f < kSmallestLabel * cv.room.font) {  // cells of a few pixels: the colours tell the panels
                if (t.token_panels) frame_watch().thinned("token panels untitled");
                continue;
            }
            // At the bottom of the slot, over its panel.
            const ImVec2 pos(cv.grid0.x + box.x * cv.cell, slot_bottom - size);
            cv.label_sized(pos, colour, text, size, room_w, t.token_panels ? row_name(cv.c, t, box.batch, box.index) : "");
        }
    }
}

void want_row_labels(const Canvas& cv, const TensorLayout& tl, float size, int stride, std::vector<RowLabel>& wanted) {
    const Config& c = cv.c;
    const bool split = tl.axes.size() == 4;
    Shape ix;
    std::int64_t last_block = -1;
    for (const Cell& k : tl.cells) {
        unravel(tl.colours.shape, k.index, ix);
        if (ix.back() != tl.col0 || k.x - tl.x > 0.5f) continue;  // the first column of the first panels
        const std::int64_t b = tl.batch_rows ? 0 : ix[0];
        const bool head_row = split && tl.token_panels;
        const std::int64_t r = tl.batch_rows ? ix[0] : split ? ix[2] : ix.size() >= 2 ? ix[1] : 0;
        const std::int64_t rel = r - (head_row ? tl.head0 : tl.token0);
        const bool first_line = rel == 0;
        if (rel % stride != 0 && !first_line) continue;
        RowLabel l;
        l.y = cv.grid0.y + k.y * cv.cell + cv.cell * 0.5f - size * 0.5f;
        l.text = head_row ? head_name(tl, r - tl.head0) : token_label(c, tl, b, r);
        if (!head_row && !tl.batch_rows) l.token = row_name(c, tl, b, r);
        l.colour = head_row ? head_colour_of(c, tl, r - tl.head0) : ImGui::GetColorU32(ImGuiCol_Text);
        if (c.batch > 1 && !tl.batch_rows && b != last_block) l.text = "s" + std::to_string(b) + " " + l.text;
        last_block = b;
        l.first = first_line;
        wanted.push_back(l);
    }
}

int row_label_stride(float cell, float font) {
    const float size = std::clamp(cell - 1, kSmallestLabel * font, font);
    return label_stride(cell, ImGui::GetTextLineHeight() * size / font);
}

void draw_row_labels(Canvas& cv) {
    // As large as the text where the rows are, down to kSmallestLabel of it so that every row keeps its
    // name; smaller rows name every k-th.
    const float cell = cv.cell, size = std::clamp(cell - 1, kSmallestLabel * cv.room.font, cv.room.font);
    const float label_h = ImGui::GetTextLineHeight() * size / cv.room.font;
    const int stride = row_label_stride(cell, cv.room.font);
    std::vector<RowLabel> wanted;
    for (const TensorLayout& tl : cv.L.tensors)
        if (tl.x == 0) want_row_labels(cv, tl, size, stride, wanted);  // the first tensor of each row of tensors
    std::stable_sort(wanted.begin(), wanted.end(), [](const RowLabel& a, const RowLabel& b) { return a.first > b.first; });
    if (stride > 1) frame_watch().thinned("row labels every " + std::to_string(stride) + "th");
    // A label centred on a cell smaller than the text reaches past the grid: kept in the panel.
    const float y_max = cv.origin.y + cv.room.avail.y - label_h;
    std::vector<float> placed;
    for (const RowLabel& l : wanted) {
        const float y = std::min(l.y, y_max);
        bool clear = true;
        for (float p : placed) clear &= std::fabs(p - y) >= label_h - 0.5f;
        if (!clear) {
            frame_watch().thinned("row label \"" + l.text + "\" left out: it would overlap another");
            continue;
        }
        placed.push_back(y);
        cv.label_sized({cv.label_x, y}, l.colour, l.text, size, cv.room.label_w - 6, l.token);
    }
}

void draw_cells(AppState& st, const Canvas& cv, const Motion& m) {
    const Step& s = cv.s;
    const float cell = cv.cell;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    ImDrawList* dl = cv.dl;
    std::size_t flat = 0;
    for (std::size_t ti = 0; ti < cv.L.tensors.size(); ++ti) {
        const TensorLayout& tl = cv.L.tensors[ti];
        const TensorRecord& rec = s.tensors[ti];
        const std::vector<float>& values = rec.values();
        const float scale_max = tl.colour_scale;
        // A gradient's numbers times 10^k (gradient_exponent), filled on a diverging scale.
        const bool gradient = is_gradient(s, rec);
        const float factor = std::pow(10.0f, static_cast<float>(gradient_exponent(s, rec)));
        // One number format for every cell of the tensor on screen, or none.
        std::vector<float> shown_values;
        float most = 0;
        for (const Cell& c : tl.cells)
            if (static_cast<std::size_t>(c.index) < values.size()) {
                shown_values.push_back(values[c.index] * factor);
                most = std::max(most, std::fabs(shown_values.back()));
            }
        CellText text = cell_text(shown_values, cell - 2, cell - 2, rec.name, cv.number_max, cv.number_min,
                                  ti < cv.decimals.size() ? cv.decimals[ti] : 2);
        const std::string values_of = rec.name + " at step " + std::to_string(s.index);
        // A gradient's numbers are scaled (no panel beside shows them): their own format.
        if (text.shown && !gradient && shared_decimals(st, 0, values_of, text.decimals) < text.decimals)
            text = cell_text(shown_values, cell - 2, cell - 2, rec.name, cv.number_max, cv.number_min, 1);
        if (frame_watch().watching()) text.values_of = values_of;
        for (const Cell& cell_at : tl.cells) {
            const auto i = static_cast<std::size_t>(cell_at.index);
            if (i >= values.size()) break;
            float x = cell_at.x, y = cell_at.y, alpha = 1.0f;
            if (m.match) {
                const std::size_t at = flat + i;
                const int j = at < m.match->size() ? (*m.match)[at] : -1;
                const Cell* from = j >= 0 ? m.from_cell(j) : nullptr;
                if (from) {
                    x = from->x + (x - from->x) * m.k;
                    y = from->y + (y - from->y) * m.k;
                } else {
                    alpha = m.k;  // new values fade in
                }
            }
            const ImVec2 p0(cv.grid0.x + x * cell + 1, cv.grid0.y + y * cell + 1);
            const ImVec2 p1(p0.x + cell - 2, p0.y + cell - 2);
            const float v = values[i] * factor;
            ImU32 fill;
            if (std::isinf(v)) fill = IM_COL32(40, 40, 40, static_cast<int>(255 * alpha));
            else if (gradient) fill = gradient_fill(v, most);
            else if (s.op == Op::Softmax || s.op == Op::Dropout) fill = sequential_color(v);
            else if (is_grid_op(s.op)) fill = diverging_color(scale_max > 0 ? v / scale_max : 0);
            else if (cell_at.head >= 0) fill = head_color(cell_at.head, 0.55f + 0.45f * std::min(1.0f, std::fabs(v)));
            else fill = neutral_color(st.dark);
            if (alpha < 1.0f) {
                ImVec4 f = ImGui::ColorConvertU32ToFloat4(fill);
                f.w *= alpha;
                fill = ImGui::ColorConvertFloat4ToU32(f);
            }
            dl->AddRectFilled(p0, p1, fill, 3.0f);
            if ((is_grid_op(s.op) && tl.axes.size() == 4) || gradient)
                if (cell_at.head >= 0) dl->AddRect(p0, p1, head_color(cell_at.head, 0.9f * alpha), 3.0f, 0, 2.0f);
            std::vector<long long> index;  // for the audit only: no allocation a cell a frame otherwise
            if (frame_watch().watching()) {
                const Shape at = unravel(rec.shape, static_cast<std::int64_t>(i));
                index.assign(at.begin(), at.end());
            }
            cell_value(dl, p0, p1, text_on(fill), v, text, false, cell_at.head, std::move(index));
            if (mouse.x >= p0.x && mouse.x < p1.x && mouse.y >= p0.y && mouse.y < p1.y && ImGui::IsWindowHovered()) {
                st.hover = Hover{true, st.step, static_cast<int>(ti), static_cast<std::int64_t>(i)};
                dl->AddRect({p0.x - 2, p0.y - 2}, {p1.x + 2, p1.y + 2}, IM_COL32(255, 255, 255, 255), 3.0f, 0, 3.0f);
            }
        }
        flat += static_cast<std::size_t>(numel(rec.shape));
    }
}

bool draw_strip_brackets(Canvas& cv, const TensorRecord& rec, const TensorLayout& tl, const std::vector<int>& at,
                         std::int64_t a0, std::int64_t a1, float x0, float cell, float y_cells) {
    // A bracket under each run of one token's elements (or, strip_names_heads, one head's),
    // named where it fits.
    const bool by_head = strip_names_heads(cv.room, rec);
    const int run_dim = by_head ? std::max(rec.dim_of(Axis::Head), rec.dim_of(Axis::KvHead))
                                : rec.dim_of(rec.key_rows() ? Axis::Key : Axis::Token);
    const float label_h = ImGui::GetTextLineHeight();
    Shape ix;
    const float y_marks = y_cells + cell + 2;
    const bool stagger = !by_head && names_staggered(cv.room, token_run(rec));
    const bool batched = rec.axes.front() == Axis::Batch;
    int brackets = 0;
    if (run_dim >= 0)
        for (std::int64_t a = a0; a < a1;) {
            const int i = at[static_cast<std::size_t>(a)];
            std::int64_t b = a + 1;
            std::int64_t of = -1, batch = 0;  // the run's token (or head) and sentence
            if (i >= 0) {
                unravel(rec.shape, i, ix);
                of = ix[static_cast<std::size_t>(run_dim)], batch = batched ? ix[0] : 0;
            }
            for (; b < a1; ++b) {
                const int j = at[static_cast<std::size_t>(b)];
                if ((i < 0) != (j < 0)) break;
                if (j >= 0) {
                    unravel(rec.shape, j, ix);
                    if (ix[static_cast<std::size_t>(run_dim)] != of || (batched && ix[0] != batch)) break;
                }
            }
            if (i >= 0) {
                const float bx0 = x0 + static_cast<float>(a - a0) * cell + 2, bx1 = x0 + static_cast<float>(b - a0) * cell - 3;
                const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
                cv.dl->AddLine({bx0, y_marks}, {bx1, y_marks}, ink, 2.0f);
                cv.dl->AddLine({bx0, y_marks - 4}, {bx0, y_marks}, ink, 2.0f);
                cv.dl->AddLine({bx1, y_marks - 4}, {bx1, y_marks}, ink, 2.0f);
                // As large as the bracket allows down to kSmallestLabel of the text, then in the width of
                // two (every other name a line lower), cut only beyond that. A head's name is in
                // its colour, as its cells.
                const std::string word = by_head ? head_name(tl, of - tl.head0) : token_label(cv.c, tl, batch, of);
                const int colour = by_head ? tl.colours.of_element(i) : -1;
                const float font = cv.room.font, word_w = ImGui::CalcTextSize(word.c_str()).x;
                const bool lower = stagger && (brackets++ % 2 == 1);
                // Centred on its bracket, within the panel: a name at an edge is not pushed onto
                // its neighbour.
                const float mid = (bx0 + bx1) * 0.5f;
                const float edge = 2.0f * std::min(mid - cv.origin.x, cv.origin.x + cv.room.avail.x - mid);
                const float room_w = std::max(std::min(stagger ? 2.0f * (bx1 - bx0 + 2) - 6 : bx1 - bx0 + 2, edge), bx1 - bx0 + 2);
                const float size = std::clamp(font * room_w / std::max(word_w, 1.0f), kSmallestLabel * font, font);
                const std::string name = by_head ? fit_text(word, room_w, size) : fit_token(word, room_w, size);
                const float name_w = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0, name.c_str()).x;
                const float x = std::clamp(mid - name_w * 0.5f, cv.origin.x, std::max(cv.origin.x, cv.origin.x + cv.room.avail.x - name_w));
                if (by_head && name.empty())
                    frame_watch().thinned("the strip's head \"" + word + "\" unnamed");
                else if (by_head)
                    cv.label_sized({x, y_marks + 1}, colour >= 0 ? head_color(colour, 1.0f) : ink, word, size, room_w, "");
                else if (name.empty())
                    frame_watch().thinned("the strip's token \"" + word + "\" unnamed");
                else
                    cv.label_sized({x, y_marks + 1 + (lower ? label_h : 0.0f)}, ink, name, size, room_w,
                                   row_name(cv.c, tl, batch, of));
            }
            a = b;
        }
    return stagger;
}

float draw_memory_strip(const AppState& st, Canvas& cv, float y_mem) {
    const Step& s = cv.s;
    const float line = cv.room.line, label_w = cv.room.strip_label_w;
    const TensorRecord& rec = s.tensors.front();
    const TensorLayout& tl = cv.L.tensors.front();
    const std::int64_t n = numel(rec.shape);
    if (!memory_strip_drawn(cv.room, s) || n == 0) return y_mem;
    std::int64_t lo = INT64_MAX, hi = 0;
    std::vector<std::int64_t> offs(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        offs[i] = rec.address(i);
        lo = std::min(lo, offs[i]);
        hi = std::max(hi, offs[i]);
    }
    const std::int64_t span = hi - lo + 1;
    const StripShape k = strip_shape(cv.room, span, cv.cell, strip_unit(cv.room, rec));
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const bool copied = s.op == Op::Merge || rec.storage == Storage::Copy;
    const bool by_head = head_run(rec) > 0;  // a copy laid out head by head (repeat_kv's)
    const std::string buffer = "buffer " + std::to_string(rec.buffer), from = std::to_string(lo), to = std::to_string(hi);
    const std::string order = by_head ? "head by head" : "in token order", short_order = by_head ? "by head" : "by token";
    const std::string title = first_fitting(
        {"memory: " + buffer + " of " + rec.name + ", addresses " + from + " to " + to + (copied ? ", copied " + order : ""),
         buffer + " of " + rec.name + ", addresses " + from + "-" + to + (copied ? ", copied " + short_order : ""),
         buffer + ", addresses " + from + "-" + to + (copied ? ", copied" : ""), buffer + ": " + from + "-" + to},
        cv.room.avail.x);
    cv.label({cv.origin.x, y_mem}, dim, title);
    y_mem += line;
    std::vector<int> at(static_cast<std::size_t>(span), -1);
    for (std::int64_t i = 0; i < n; ++i) at[offs[i] - lo] = static_cast<int>(i);
    const float x0 = cv.origin.x + label_w;
    const float label_h = ImGui::GetTextLineHeight();
    const std::vector<float>& values = rec.values();
    // A gradient's cells filled as on the stage: diverging over its largest magnitude.
    const bool gradient = is_gradient(cv.s, rec);
    float most = 0;
    for (float v : values) most = std::max(most, std::fabs(v));
    for (std::int64_t row = 0; row < k.rows; ++row) {
        const std::int64_t a0 = row * k.per_row, a1 = std::min(span, a0 + k.per_row);
        // Address ticks over the first row, every k-th address so that no two overlap (the
        // rows under it share their columns: each starts k.per_row further, told on its left).
        if (row == 0) {
            const float tick_w = ImGui::CalcTextSize(std::to_string(hi).c_str()).x + 0.4f * cv.room.font;
            const int every = label_stride(k.cell, tick_w);
            // (Its name where the left column holds it: beside the grid, the title names them.)
            if (ImGui::CalcTextSize("address").x + 6 <= label_w) cv.label({cv.origin.x, y_mem}, dim, "address");
            const float right = cv.origin.x + cv.room.avail.x;
            for (std::int64_t a = a0; a < a1; a += every) {
                const std::string tick = std::to_string(lo + a);
                const float x = x0 + static_cast<float>(a - a0) * k.cell;
                if (x + ImGui::CalcTextSize(tick.c_str()).x <= right) cv.label({x, y_mem}, dim, tick);
            }
            y_mem += line;
        } else {
            cv.label({cv.origin.x, y_mem}, dim, fit_text("+" + std::to_string(a0), label_w - 6));
        }
        const float y_cells = y_mem;
        Shape ix;
        for (std::int64_t a = a0; a < a1; ++a) {
            const ImVec2 p0(x0 + static_cast<float>(a - a0) * k.cell, y_cells);
            const ImVec2 p1(p0.x + k.cell - 1, p0.y + k.cell - 1);
            const int i = at[static_cast<std::size_t>(a)];
            // Shaded by its value as the stage's cell of the same element is: the same pattern
            // in the strip and on the stage, and a copy's repeated blocks alike.
            const int head = i < 0 ? -1 : tl.colours.of_element(i);
            const float v = i >= 0 && static_cast<std::size_t>(i) < values.size() ? values[static_cast<std::size_t>(i)] : 0.0f;
            const ImU32 fill = i < 0          ? IM_COL32(90, 90, 90, 80)
                               : std::isinf(v) ? IM_COL32(40, 40, 40, 255)
                               : gradient      ? gradient_fill(v, most)
                               : head >= 0     ? head_color(head, 0.55f + 0.45f * std::min(1.0f, std::fabs(v)))
                                               : neutral_color(st.dark);
            cv.dl->AddRectFilled(p0, p1, fill, 2.0f);
            if (gradient && i >= 0 && head >= 0) cv.dl->AddRect(p0, p1, head_color(head, 0.9f), 2.0f, 0, 2.0f);
            if (st.hover.valid && st.hover.tensor == 0 && i == st.hover.index)
                cv.dl->AddRect({p0.x - 2, p0.y - 2}, {p1.x + 2, p1.y + 2}, IM_COL32(255, 255, 255, 255), 2.0f, 0, 3.0f);
            if (frame_watch().watching()) {
                std::vector<long long> index;
                if (i >= 0) {
                    unravel(rec.shape, i, ix);
                    index.assign(ix.begin(), ix.end());
                }
                frame_watch().memory(p0.x, p0.y, k.cell - 1, k.cell - 1, rec.name, head, std::move(index));
            }
        }
        const bool stagger = draw_strip_brackets(cv, rec, tl, at, a0, a1, x0, k.cell, y_cells);
        const float y_marks = y_cells + k.cell + 2;
        y_mem = y_marks + (stagger ? 2.0f : 1.0f) * label_h + 2;
    }
    return y_mem;
}

float draw_strip_placed(const AppState& st, Canvas& cv, float y_under) {
    if (cv.room.strip_beside <= 0) return draw_memory_strip(st, cv, y_under);
    const Room column = strip_column(cv.room, cv.s.tensors.front());  // right of the grid, from its top
    const ImVec2 at(cv.origin.x + cv.room.avail.x + cv.room.font, cv.origin.y);
    Canvas side{cv.s, cv.c, cv.L, column, cv.variant, cv.document, cv.number_max, cv.number_min, cv.cell, cv.dl, at, cv.grid0,
                at.x, at.x, at.y, cv.decimals};
    const float y = draw_memory_strip(st, side, at.y);
    cv.right = std::max(cv.right, side.right), cv.bottom = std::max(cv.bottom, side.bottom);
    return std::max(y_under, y);
}

}  // namespace headsplit::gui::stage
