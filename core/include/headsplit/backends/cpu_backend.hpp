#pragma once
// The CPU backend: matmuls are BLAS sgemm calls (OpenBLAS through xtensor-blas's cxxblas),
// reading transposed and strided operands in place through leading dimensions; the rest
// is xtensor on adapted buffers. It is the oracle for the GL backend.
#include <memory>

#include "headsplit/backends/backend.hpp"

namespace headsplit {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace headsplit
