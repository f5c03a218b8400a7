#pragma once
// `headsplit kernels`: times one matmul, C[M, N] = A[M, K] @ W[N, K]^T (a projection in
// nn.Linear layout), on OpenBLAS and on each GL kernel, side by side in one run.
#include <string>

#include <CLI/CLI.hpp>

namespace headsplit::app {

struct KernelsCommand {
    std::string m = "512", k = "768", n = "2304", repeat = "7";

    void add_to(CLI::App& parent);
    int run() const;
};

}  // namespace headsplit::app
