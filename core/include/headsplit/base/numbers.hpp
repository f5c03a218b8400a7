#pragma once
// Numbers as people read them, and the median of repeated timings: one place for both, so
// the engine's sentences, the CLI's tables, the bench and the window print alike.
#include <string>
#include <vector>

namespace headsplit {

// Up to `significant` significant digits, shortest form ("0.5774", "2", "1e+04"); "-inf",
// "inf", "nan" spelled out.
std::string format_number(double v, int significant = 4);

// The shortest decimal that reads back as `v` (text -> double, Python's float or strtod):
// "0.1", not "0.10000000000000001"; with `as_float`, as the float32 it rounds to (what
// torch.tensor and np.array(dtype=float32) keep): at most 9 significant digits, 17 for a
// double. "-inf", "inf", "nan" spelled out.
std::string exact_number(double v, bool as_float = false);

// A name read from a file, for a one-line message: in double quotes, cut to `max_chars`
// bytes with "..." after, control characters shown as '?'.
std::string quote_name(const std::string& name, std::size_t max_chars = 60);

// Exactly `decimals` decimals ("0.7300"); "-inf", "inf", "nan" spelled out.
std::string format_fixed(double v, int decimals = 2);

// Compact enough for a small cell of a grid: `decimals` decimals (2 or 1) without the leading
// zero ("-.52", ".07"; "-.5", "1.0"), whole numbers from 100 ("154"), "-inf" / "inf" / "nan".
std::string format_cell(double v, int decimals = 2);

// What a grid's number format and colour range need of its values, from one pass: the lowest
// and highest finite values, and which non-finite ones occur. add() joins two ranges.
struct ValueRange {
    bool any = false;  // a finite value
    float lo = 0, hi = 0;
    bool neg_inf = false, pos_inf = false, nan = false;
    void add(const ValueRange& o);
    float magnitude() const;  // the largest finite |value|; 0 with none
    bool empty() const { return !any && !neg_inf && !pos_inf && !nan; }  // of no values
};
ValueRange value_range(const float* values, std::size_t n);

// The texts among which the widest cell of a tensor is, at `decimals`: those of its lowest
// and highest finite values (a text grows with the magnitude and a minus sign) and of each
// non-finite value it holds. Empty for no values.
std::vector<std::string> widest_cell_texts(const ValueRange& range, int decimals);

// The median (the upper middle one for an even count), minimum, maximum and 99th
// percentile (the value at rank n * 99 / 100 of the sorted values) of `values`; all zero
// for none.
struct Spread {
    double median = 0, min = 0, max = 0, p99 = 0;
};
Spread spread(std::vector<double> values);

}  // namespace headsplit
