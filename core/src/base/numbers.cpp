#include "headsplit/base/numbers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace headsplit {

namespace {

const char* non_finite(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    return nullptr;
}

}  // namespace

std::string format_number(double v, int significant) {
    if (const char* s = non_finite(v)) return s;
    char b[48];
    std::snprintf(b, sizeof b, "%.*g", std::clamp(significant, 1, 17), v);
    return b;
}

std::string exact_number(double v, bool as_float) {
    if (const char* s = non_finite(v)) return s;
    char buf[40];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        const double back = std::strtod(buf, nullptr);
        if (as_float ? static_cast<float>(back) == static_cast<float>(v) : back == v) break;
    }
    return buf;
}

std::string format_fixed(double v, int decimals) {
    if (const char* s = non_finite(v)) return s;
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", std::clamp(decimals, 0, 12), v);
    return b;
}

std::string format_cell(double v, int decimals) {
    if (const char* s = non_finite(v)) return s;
    std::string s = std::fabs(v) >= 100.0 ? format_fixed(v, 0) : format_fixed(v, decimals);
    if (s.rfind("0.", 0) == 0) s.erase(0, 1);
    else if (s.rfind("-0.", 0) == 0) s.erase(1, 1);
    if (s == "-." + std::string(static_cast<std::size_t>(decimals), '0')) s.erase(0, 1);  // "-.00" is ".00"
    return s;
}

void ValueRange::add(const ValueRange& o) {
    if (o.any) {
        lo = any ? std::min(lo, o.lo) : o.lo;
        hi = any ? std::max(hi, o.hi) : o.hi;
        any = true;
    }
    neg_inf = neg_inf || o.neg_inf;
    pos_inf = pos_inf || o.pos_inf;
    nan = nan || o.nan;
}

float ValueRange::magnitude() const { return any ? std::max(std::fabs(lo), std::fabs(hi)) : 0.0f; }

ValueRange value_range(const float* values, std::size_t n) {
    ValueRange r;
    for (std::size_t i = 0; i < n; ++i) {
        const float v = values[i];
        if (std::isnan(v)) r.nan = true;
        else if (std::isinf(v)) (v < 0 ? r.neg_inf : r.pos_inf) = true;
        else if (!r.any) r.lo = r.hi = v, r.any = true;
        else r.lo = std::min(r.lo, v), r.hi = std::max(r.hi, v);
    }
    return r;
}

std::vector<std::string> widest_cell_texts(const ValueRange& r, int decimals) {
    std::vector<std::string> out;
    if (r.any) out = {format_cell(r.lo, decimals), format_cell(r.hi, decimals)};
    if (r.neg_inf) out.push_back(format_cell(-INFINITY, decimals));
    if (r.pos_inf) out.push_back(format_cell(INFINITY, decimals));
    if (r.nan) out.push_back(format_cell(NAN, decimals));
    return out;
}

Spread spread(std::vector<double> values) {
    Spread s;
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    s.median = values[values.size() / 2];
    s.min = values.front();
    s.max = values.back();
    s.p99 = values[std::min(values.size() - 1, values.size() * 99 / 100)];
    return s;
}

std::string quote_name(const std::string& name, std::size_t max_chars) {
    std::string s = name.size() > max_chars ? name.substr(0, max_chars) + "..." : name;
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20) c = '?';
    return "\"" + s + "\"";
}

}  // namespace headsplit
