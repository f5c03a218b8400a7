#pragma once
// Standard output, checked. std::cout writes through one buffer of its own to descriptor 1,
// which keeps the first write that failed and why (stdio drops the bytes of a failed flush
// and, by the end, often the errno too), so that the run can say it in one line.
namespace headsplit::app {

// Puts std::cout on the checked buffer (line by line on a terminal, in blocks otherwise).
void check_standard_output();

// Flushes std::cout; the errno of the first write to standard output that failed, else 0.
int standard_output_error();

}  // namespace headsplit::app
