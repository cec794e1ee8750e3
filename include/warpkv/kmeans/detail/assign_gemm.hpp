#pragma once
// The assignment step as a GEMM (params.distance = gemm, or automatic when k x d >= 2^16 on
// the GPU): cuBLAS computes the dot products, a small kernel takes each point's argmin, and
// the per-point results go through the same record() as the fused kernels (assign.hpp).
//
// Why: the fused kernel wins where the arithmetic is small against reading the points (d=4
// k=16: 4x; d=32 k=256: 1.1-1.3x), but at d=128 k=1024 cuBLAS's SGEMM beat it 3.9-4x on an
// H100 (fp32 574 -> 146 ms, tf32 252 -> 65 ms at n = 2^24; docs/perf.md, Session 4).
//
// Per chunk of R points (R x k scores of about 32 MiB, so a chunk stays in the H100's 50 MB
// L2 and the n x k matrix never exists):
//   prep (once per step)  c' = c - mu (mu = params' centre, the mean of the centroids) and
//                         t_c = ||c'||^2 + 2 mu.c', both float32 in dimension order
//   scores                S = X_chunk C'^T (cuBLAS SGEMM; column-major k x R, so point i's k
//                         scores are contiguous)
//   argmin + record       label = the lowest-index minimum of t_c - 2 S[i, c]; then the exact
//                         float32 distance to it (exact_sq_dist) and record(): label, distance,
//                         fixed-point count, inertia and sums, as the fused kernels do.
// ||x - c||^2 = ||x - mu||^2 + t_c - 2 x.c' and ||x - mu||^2 is the same for every c, so the
// score orders centroids like the distance. Centring matters for accuracy: the GEMM's error is
// about 2^-24 |x| |c'| per dimension (2^-11 with TF32 operands) instead of |x| |c| (and t_c
// replaces ||c||^2), so data far from the origin does not lose its near-ties to offset.
// Only labels come from scores; everything reported (inertia, the distances that pick empty-
// cluster seeds) is exact float32, so with fp32 the results differ from the fused kernel's only
// where a point's two nearest centroids are within the GEMM form's rounding of each other.
//
// Determinism: the argmin keys (score, index) as one 64-bit integer and takes the minimum,
// which no reduction order changes; sums are fixed point (fixed_point.hpp); cuBLAS SGEMM is
// deterministic for a fixed configuration (cublas.hpp).
//
// Host backend: the same chunks, prep, argmin and record, with the SGEMM replaced by a loop
// (float32 sums in dimension order; tf32: operands rounded to TF32 first, as cvt.rna does), so
// the GEMM path's logic is tested in CI; automatic never picks it on the host.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "warpkv/core/buffer.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/kmeans/detail/assign.hpp"
#include "warpkv/kmeans/detail/cublas.hpp"
#include "warpkv/kmeans/detail/tf32.hpp"

namespace warpkv::kmeans {

/// How the assignment step computes distances (params.distance).
enum class distance_method : std::uint8_t {
  automatic,  ///< gemm on the GPU when k x d >= gemm_min_kd, precision is fp32 or tf32 and cuBLAS loads; else fused
  fused,      ///< the fused kernel (assign.hpp / assign_mma.hpp): distances, argmin and sums in one pass
  gemm        ///< cuBLAS SGEMM in chunks + argmin (assign_gemm.hpp); fp32 and tf32 only
};

/// k x d from which automatic picks gemm: measured d=128 k=1024 (2^17) gemm 4x faster, d=32 k=256
/// (2^13) fused 1.1-1.3x faster; the threshold sits between, where the fused kernel's register
/// tiles stop hiding the centroid traffic (shapes in between are not measured).
constexpr std::size_t gemm_min_kd = std::size_t{1} << 16;

}  // namespace warpkv::kmeans

namespace warpkv::detail {

/// (score, index) as one integer whose order is the score's, then the index's: the minimum is
/// the lowest-index nearest centroid in whatever order lanes combine. Scores are finite.
WARPKV_HD inline std::uint64_t score_key(float score, unsigned index) {
  score += 0.0f;  // -0 becomes +0: equal scores must tie on the index
  std::uint32_t b = to_bits(score);
  b = (b & 0x80000000u) != 0 ? ~b : (b | 0x80000000u);  // float order as unsigned order
  return (std::uint64_t{b} << 32) | index;
}

/// c' = c - centre and t_c = ||c'||^2 + 2 centre.c' for centroid `c` (one per tile).
struct gemm_prep_body {
  const float* centroids;
  const float* centre;
  unsigned d;
  float* centred;  ///< k x d
  float* terms;    ///< k
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t c) const {
    float norm = 0, cross = 0;
    for (unsigned j = 0; j < d; ++j) {
      const float v = centroids[c * d + j] - centre[j];
      centred[c * d + j] = v;
      norm = fmaf(v, v, norm);
      cross = fmaf(centre[j], v, cross);
    }
    terms[c] = fmaf(2.0f, cross, norm);
  }
};

/// Host stand-in for the SGEMM: scores[r * k + c] = x_r . c'_c (row r of the chunk).
struct host_scores_body {
  const float* points;  ///< the chunk's first point
  const float* centred;
  unsigned d, k;
  bool tf32;
  float* scores;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t r) const {
    const float* x = points + r * d;
    for (unsigned c = 0; c < k; ++c) {
      const float* y = centred + std::size_t{c} * d;
      float s = 0;
      for (unsigned j = 0; j < d; ++j) s = fmaf(tf32 ? to_tf32(x[j]) : x[j], tf32 ? to_tf32(y[j]) : y[j], s);
      scores[r * k + c] = s;
    }
  }
};

/// Argmin over a chunk's scores and record() for one point per tile: its lanes stride the
/// point's row of scores (coalesced on the GPU, 32 lanes; one lane on the host) and its sums
/// (coalesced atomics); lane 0 records label, distance, count and inertia. One point per warp
/// keeps a chunk's 8192+ points on as many warps (32 points per warp left a chunk of 8192 rows
/// 256 warps and made the step 4x slower than the SGEMM it follows: docs/perf.md, session 5).
struct gemm_argmin_body {
  assign_args a;
  const float* scores;  ///< rows x k
  const float* terms;   ///< k
  std::size_t first;    ///< the chunk's first point
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t r) const {
    constexpr unsigned lanes = Tile::size();
    const unsigned lane = t.thread_rank();
    const float* row = scores + r * a.k;
    std::uint64_t best = ~std::uint64_t{0};
    for (unsigned c = lane; c < a.k; c += lanes) {
      const std::uint64_t key = score_key(fmaf(-2.0f, row[c], terms[c]), c);
      best = key < best ? key : best;
    }
    for (unsigned off = lanes / 2; off > 0; off /= 2) {
      const std::uint64_t other = t.shfl(best, lane ^ off);
      best = other < best ? other : best;
    }
    const auto label = static_cast<std::int32_t>(best & 0xffffffffu);
    const std::size_t i = first + r;
    const float* x = a.points + i * a.d;
    if (lane == 0) {
      const bool need_dist = a.dist_mode != dist_output::none || a.inertia != nullptr;
      const float dist = need_dist ? exact_sq_dist(x, a.centroids + static_cast<std::size_t>(label) * a.d, a.d) : 0.0f;
      block_accumulators::record_point(a, nullptr, i, label, dist);
    }
    block_accumulators::record_sums(a, nullptr, label, lane, lanes, [&](unsigned j) { return x[j]; });
  }
};

/// The GEMM assignment step for one shape and precision: owns the cuBLAS handle (GPU) and the
/// buffers (a chunk's scores, the centred centroids, their terms). Stream-ordered.
class gemm_assigner {
 public:
  /// Points per chunk: `asked` rounded up to a multiple of the argmin tile, or (0) about
  /// 32 MiB of scores (2^23 floats); never more than n needs.
  static std::size_t chunk_rows_for(std::size_t n, std::size_t k, std::size_t asked = 0) {
    constexpr std::size_t t = 32;  // a warp's worth: chunks stay whole warps of points
    const std::size_t rows = asked != 0 ? (asked + t - 1) / t * t : std::max(t, (std::size_t{1} << 23) / k / t * t);
    return std::min(rows, (n + t - 1) / t * t);
  }

  /// tf32: TF32 operands (cuBLAS TF32 tensor-op math); chunk_rows: see chunk_rows_for.
  gemm_assigner(const execution& ex, std::size_t n, unsigned d, unsigned k, bool tf32, std::size_t chunk_rows = 0)
      : ex_(ex),
        d_(d),
        k_(k),
        tf32_(tf32),
        chunk_(chunk_rows_for(n, k, chunk_rows)),
        scores_(chunk_ * k, ex),
        centred_(std::size_t{k} * d, ex),
        terms_(k, ex) {
#if WARPKV_HAS_CUDA
    if (ex.where == backend::cuda) handle_.emplace(ex.stream, tf32);
#endif
  }

  [[nodiscard]] std::size_t chunk_rows() const { return chunk_; }
  [[nodiscard]] int cublas_version() const {
#if WARPKV_HAS_CUDA
    if (handle_) return handle_->version();
#endif
    return 0;
  }

  /// The assignment step of assign_args `a` (its shape must be the constructor's; a.centre:
  /// d floats of execution memory, the centre the tf32 paths use too).
  void run(const assign_args& a) {
    launch<1>(ex_, k_, simple_body<gemm_prep_body>{{a.centroids, a.centre, d_, centred_.data(), terms_.data()}});
    for (std::size_t off = 0; off < a.n; off += chunk_) {
      const std::size_t rows = std::min(chunk_, a.n - off);
      const gemm_argmin_body body{a, scores_.data(), terms_.data(), off};
#if WARPKV_HAS_CUDA
      if (handle_) {
        // Column-major: S (k x rows, ld k) = C'^T (k x d; C' stored d x k, ld d) * X (d x rows, ld d).
        const float one = 1.0f, zero = 0.0f;
        cublas_check(handle_->api().sgemm(handle_->get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(k_),
                                          static_cast<int>(rows), static_cast<int>(d_), &one, centred_.data(),
                                          static_cast<int>(d_), a.points + off * d_, static_cast<int>(d_), &zero,
                                          scores_.data(), static_cast<int>(k_)),
                     "cublasSgemm");
        launch_cuda<32>(rows, simple_body<gemm_argmin_body>{body}, ex_.stream);
        continue;
      }
#endif
      const unsigned pool = ex_.concurrent_host_tiles();
      launch_host<1>(rows, simple_body<host_scores_body>{{a.points + off * d_, centred_.data(), d_, k_, tf32_,
                                                           scores_.data()}},
                     pool);
      launch_host<1>(rows, simple_body<gemm_argmin_body>{body}, pool);
    }
  }

 private:
  execution ex_;
  unsigned d_, k_;
  bool tf32_;
  std::size_t chunk_;
  buffer<float> scores_, centred_, terms_;
#if WARPKV_HAS_CUDA
  std::optional<cublas_handle> handle_;  ///< the GPU's; empty on the host backend
#endif
};

}  // namespace warpkv::detail
