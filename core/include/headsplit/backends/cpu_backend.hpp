#pragma once
// The CPU backend: matmuls are BLAS sgemm calls (OpenBLAS through xtensor-blas's cxxblas),
// reading transposed and strided operands in place through leading dimensions; the rest
// is xtensor on adapted buffers. It is the oracle for the GL backend.
#include <memory>

#include "headsplit/backends/backend.hpp"

namespace headsplit {

std::unique_ptr<Backend> make_cpu_backend();

// The library the CPU backend's products run on: "OpenBLAS" (desktop) or "Eigen, WebAssembly" (the page).
const char* cpu_matmul_library();

}  // namespace headsplit
