// What the two k-means benchmark translation units share: the card's limits and the cuBLAS rows
// of `warpkv-bench kmeans --distance cublas` (kmeans_cublas.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "bench.hpp"
#include "session.hpp"

namespace warpkv_bench {

/// The card's peaks from its attributes (SM count x clock attribute x per-SM rate); 0 when unknown
/// (host backend, or a compute capability whose tensor-core rate is not in the table).
struct card_peaks {
  double fp32_gflops = 0;  ///< FP32 FMA peak (an FMA = 2 flops): 128 lanes per SM (sm_80+)
  double tf32_gflops = 0;  ///< dense TF32 tensor-core peak (mma/wgmma), same clock
  double dram_gbs = 0;     ///< DRAM bandwidth (double data rate x bus width)
};
card_peaks card_limits(const session& s);

/// One k-means configuration whose assignment step the cuBLAS rows time; all pointers device memory.
struct cublas_row_input {
  const float* points = nullptr;     ///< n x d, row-major
  std::size_t n = 0;
  unsigned d = 0, k = 0;
  const float* centroids = nullptr;  ///< k x d, row-major (the fit's final centroids)
  std::string precision;             ///< fp32 | tf32 (cuBLAS has no 3xTF32 mode for SGEMM)
  std::string layout;                ///< the fused kernel's layout its labels-only time is taken with
  std::string init;
  int repeats = 3;
  std::size_t chunk_rows = 0;        ///< 0: automatic (a score chunk of about 32 MiB)
  card_peaks peaks;
};

/// Times the assignment step through cuBLAS (SGEMM of a chunk of points x centroids^T, then a
/// norm + argmin kernel over the chunk's scores) and the fused kernel in labels-only mode on the
/// same centroids, checks the cuBLAS labels against the fp32 fused kernel's, and emits one
/// `distance: cublas` record. Returns false when a label disagreement is not a near-tie (a bug),
/// true otherwise, also when the row is skipped (no CUDA, host backend, no libcublas).
bool run_cublas_row(session& s, const cublas_row_input& in);

}  // namespace warpkv_bench
