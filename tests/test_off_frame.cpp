// Work off the frame (base/threads.hpp, base/slices.hpp) as the desktop and the threaded page
// run it: OffFrame on a thread of its own; a SlicedJob, which only the single-threaded page
// pauses, runs whole when resumed. (The page's pauses: tests/web_single_test.sh.)
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "headsplit/base/slices.hpp"
#include "headsplit/base/threads.hpp"

using namespace headsplit;

TEST_CASE("OffFrame gives its work's result once, when it is ready") {
    std::atomic<bool> go{false};
    OffFrame<std::string> job([&] {
        while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return std::string("done");
    });
    CHECK(job.valid());
    CHECK_FALSE(job.ready());  // still waiting for go
    go = true;
    job.wait();
    CHECK(job.ready());
    CHECK(job.get() == "done");
    CHECK_FALSE(job.valid());  // taken
    CHECK_FALSE(OffFrame<int>().valid());
}

TEST_CASE("OffFrame hands on what its work threw") {
    OffFrame<int> job([]() -> int { throw std::runtime_error("out of memory"); });
    job.wait();
    CHECK_THROWS_WITH(job.get(), "out of memory");
}

TEST_CASE("Outside the single-threaded page a slice point never pauses and a sliced job runs whole") {
    STATIC_REQUIRE_FALSE(kSlicedWork);
    int pieces = 0;
    SlicedJob job([&] {
        for (int i = 0; i < 3; ++i) {
            ++pieces;
            slice_point();
        }
        throw std::runtime_error("the last piece failed");
    });
    CHECK_FALSE(job.done());
    CHECK(job.resume(0));  // no time at all, and it still ends
    CHECK(pieces == 3);
    REQUIRE(job.error());
    CHECK_THROWS_WITH(std::rethrow_exception(job.error()), "the last piece failed");
    CHECK_FALSE(in_sliced_job());
    run_sliced_jobs(1.0);  // nothing to resume
}
