/* The page only (sgemm_eigen.cpp): Eigen 3.4's SSE code includes <mmintrin.h> (MMX) before
 * <emmintrin.h> and <xmmintrin.h>, and uses nothing from it. Emscripten 3.1.6 translates the
 * SSE headers to wasm SIMD but ships no MMX header, and clang's own is x86-only; this empty
 * one stands in for it. */
#pragma once
