// Number formatting and medians: one place for the engine's sentences, the CLI, the bench
// and the window. Expectations worked by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "headsplit/base/numbers.hpp"

using namespace headsplit;

TEST_CASE("numbers read the same everywhere", "[numbers]") {
    CHECK(format_number(std::sqrt(3.0)) == "1.732");
    CHECK(format_number(8.0) == "8");
    CHECK(format_number(-std::numeric_limits<double>::infinity()) == "-inf");
    CHECK(format_number(std::nan("")) == "nan");
    CHECK(format_fixed(0.73, 4) == "0.7300");
    CHECK(format_fixed(2.0 / 3.0) == "0.67");
    CHECK(format_cell(-0.52) == "-.52");
    CHECK(format_cell(0.5) == ".50");
    CHECK(format_cell(-0.001) == ".00");  // no "-.00"
    CHECK(format_cell(154.3) == "154");
    CHECK(format_cell(-0.41, 1) == "-.4");  // one decimal: the narrower format of a whole tensor
    CHECK(format_cell(0.999, 1) == "1.0");
    CHECK(format_cell(-0.04, 1) == ".0");  // no "-.0"
    CHECK(format_cell(154.3, 1) == "154");
    CHECK(format_cell(-std::numeric_limits<double>::infinity()) == "-inf");
}

TEST_CASE("spread: median, min, max, p99", "[numbers]") {
    const Spread odd = spread({3, 1, 2});
    CHECK(odd.median == 2);
    CHECK(odd.min == 1);
    CHECK(odd.max == 3);
    CHECK(spread({4, 1, 3, 2}).median == 3);  // the upper middle one
    std::vector<double> hundred;
    for (int i = 100; i >= 1; --i) hundred.push_back(i);
    CHECK(spread(hundred).p99 == 100);
    CHECK(spread({}).median == 0);
}

TEST_CASE("the widest cell of a tensor is among its extremes' texts", "[numbers]") {
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> v{0.3f, -0.41f, 0.07f, -inf, 0.996f};
    const ValueRange r = value_range(v.data(), v.size());
    CHECK(widest_cell_texts(r, 2) == std::vector<std::string>{"-.41", "1.00", "-inf"});
    CHECK(widest_cell_texts(r, 1) == std::vector<std::string>{"-.4", "1.0", "-inf"});
    CHECK(widest_cell_texts(value_range(v.data(), 0), 2).empty());
}

TEST_CASE("a value range: finite extremes, the non-finite kinds, joined piece by piece", "[numbers]") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> v{0.3f, -inf, -1.25f, 0.07f, nan, 0.996f, -0.5f};
    const ValueRange r = value_range(v.data(), v.size());
    CHECK(r.any);
    CHECK(r.lo == -1.25f);
    CHECK(r.hi == 0.996f);
    CHECK(r.neg_inf);
    CHECK_FALSE(r.pos_inf);
    CHECK(r.nan);
    CHECK(r.magnitude() == 1.25f);  // the largest finite |value|: -inf is not one
    // Joined from pieces (a grid's heads), the same as read whole; an empty piece adds nothing.
    ValueRange joined = value_range(v.data() + 5, 2);
    joined.add(value_range(v.data(), 0));
    joined.add(value_range(v.data(), 3));
    joined.add(value_range(v.data() + 3, 2));
    CHECK(joined.lo == r.lo);
    CHECK(joined.hi == r.hi);
    CHECK(joined.neg_inf == r.neg_inf);
    CHECK(joined.nan == r.nan);
    CHECK(widest_cell_texts(joined, 2) == std::vector<std::string>{"-1.25", "1.00", "-inf", "nan"});
    // Only non-finite values: no magnitude, and their texts alone.
    const std::vector<float> odd{inf, nan};
    const ValueRange o = value_range(odd.data(), odd.size());
    CHECK_FALSE(o.any);
    CHECK(o.magnitude() == 0.0f);
    CHECK(widest_cell_texts(o, 1) == std::vector<std::string>{"inf", "nan"});
    CHECK(value_range(v.data(), 0).magnitude() == 0.0f);
    CHECK(value_range(v.data(), 0).empty());
    CHECK_FALSE(o.empty());  // non-finite values are values: their cells print them
}
