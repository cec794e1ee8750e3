#pragma once
// warpkv::kmeans: Lloyd's k-means on the GPU (and on host threads), with the assignment step's
// shared memory laid out free of bank conflicts (design and measurements:
// docs/design/kmeans.md).
//
// What it guarantees:
//  - fit() runs Lloyd iterations until the squared centroid shift, summed over all centroids,
//    is <= tol x (mean per-dimension variance of the data) (scikit-learn's convention), or
//    max_iter iterations. The reported labels and inertia belong to the returned centroids
//    (one final assignment step after the last update), so predict(points, centroids) gives
//    the same labels.
//  - Deterministic: the same input, k and params give bit-identical centroids, labels and
//    inertia on every run, whatever the thread interleaving (per-cluster sums are fixed-point
//    integers, every other total is summed in a fixed order; random choices are counter-based).
//    This is the only mode: it costs little, so there is no faster non-deterministic one.
//  - Restarts (scikit-learn's n_init): params.n_init > 1 runs the whole initialisation + Lloyd
//    n_init times, run r seeded by restart_seed(params.seed, r) (run 0 by params.seed itself, so
//    n_init = 1 is the plain fit), and returns the run with the lowest final inertia (ties: the
//    earliest run); everything in the result (centroids, labels, inertia, iterations, converged,
//    inertia_history, reseeded) is that run's. Only the best run so far is kept. init = user runs
//    once whatever n_init (every restart would be identical).
//  - Empty clusters are re-seeded with the points farthest from their centroids (farthest
//    first, ties to the lower index; one point per empty cluster), never left as NaN.
//  - Distances are float32 and exact by default; ties between centroids go to the lower index.
//    params.precision = tf32 (opt-in) picks each label by ||c||^2 - 2 x.c with x.c from TF32
//    operands (tensor cores on sm_80+, an exact emulation of their operand rounding on the
//    host): faster, and a point whose two nearest centroids are nearly equidistant may get
//    the other one (agreement with fp32 measured in docs/design/kmeans.md); tf32x3 splits
//    every operand into two TF32 parts for float32-class accuracy. Either way the inertia and
//    distances reported are exact float32 distances to the chosen centroids, every run gives
//    the same labels, and the initialisation (always fp32) is the same as with fp32.
//  - The assignment step (fit and predict) runs one of two ways, params.distance (predict: its
//    `distance` argument): fused, one kernel for distances, argmin and sums (assign.hpp,
//    assign_mma.hpp); or gemm, cuBLAS SGEMM for the dot products in chunks of about 32 MiB of
//    scores (never the n x k matrix), then an argmin kernel and the same fixed-point
//    accumulation (assign_gemm.hpp), fp32 or tf32 (cuBLAS TF32 tensor-op math). automatic (the
//    default) takes gemm on the GPU when k x d >= 2^16 (gemm_min_kd: d=128 k=1024 measured 4x
//    faster through cuBLAS, d=32 k=256 1.1-1.3x slower) for fp32 and tf32, and the fused kernel
//    otherwise: for tf32x3 (cuBLAS has no 3xTF32 SGEMM), on the host backend, and when libcublas
//    cannot be loaded (it is opened at run time: WARPKV_CUBLAS=/path names it); asking for gemm
//    then throws naming params.distance. result.distance says which ran. gemm labels minimise
//    ||c - mu||^2 + 2 mu.(c - mu) - 2 x.(c - mu) (mu the mean of the centroids): they may differ
//    from fused fp32 labels where a point's two nearest centroids are within that form's float32
//    rounding; inertia and distances are still exact float32 distances to the chosen centroids.
//    Deterministic as above for one GPU model and cuBLAS version (cuBLAS SGEMM is bitwise
//    reproducible for a fixed configuration). On the host backend gemm runs the same chunks,
//    argmin and accumulation with a plain loop for the product (the path's tests run in CI).
//  - The per-cluster sums are 64-bit fixed-point integers either way (params.accumulation):
//    atomics adds each point's coordinates with atomics (into a per-block shared copy when
//    k x d + k + 1 words fit in 48 KiB); segments (automatic's choice when they do not fit, and
//    on the gemm path) groups the points by cluster after the assignment and sums each segment in
//    registers, one atomic per dimension per segment (detail/segment_sums.hpp); owners (opt-in,
//    small k x d on the fused fp32 kernel: k (d + 1) <= 128, d <= 64) gives each thread of a
//    block one cluster's coordinate sum or count to keep in a register, so no point issues an
//    atomic (measured slower than atomics at d = 4, k = 16, so automatic does not take it).
//    Bit-identical results; result.accumulation says which ran.
//  - Bad input throws warpkv::error(invalid_argument) naming the argument: n, d or k = 0,
//    k > n, n >= 2^31, NaN or infinite coordinates ("points"), coordinates so large that squared
//    distances overflow float32, initial centroids of the wrong shape or not finite,
//    params.n_init = 0.
//  - Device overloads take execution memory (device memory on the cuda backend, host memory on
//    the host backend), queue their work on params.exec.stream and return after a final
//    stream synchronisation (every iteration reads a few sums back to decide convergence).
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/kmeans/detail/assign_gemm.hpp"
#include "warpkv/kmeans/detail/layout.hpp"
#include "warpkv/kmeans/detail/random.hpp"
#include "warpkv/kmeans/detail/segment_sums.hpp"
#include "warpkv/kmeans/detail/steps.hpp"
#include "warpkv/kmeans/detail/tf32.hpp"

namespace warpkv::kmeans {

enum class init_method : std::uint8_t {
  automatic,         ///< k-means++ unless n*d*k > 2^30 (then k-means||, whose cost does not grow with k passes)
  kmeans_plus_plus,  ///< D^2 sampling, one centre per pass over the data
  kmeans_parallel,   ///< k-means|| (scalable k-means++): a few oversampling rounds, then k-means++ on the candidates
  random,            ///< k distinct points chosen uniformly
  user               ///< params.initial_centroids (k x d, row-major)
};

/// How an iteration adds the points' coordinates into their clusters' sums (params.accumulation).
/// Both give bit-identical results (fixed-point integer sums); they differ in cost only.
enum class accumulation_method : std::uint8_t {
  automatic,  ///< segments where the per-block shared accumulators do not fit (k x d + k + 1 words > 6144) or the gemm path runs; else atomics
  atomics,    ///< every coordinate of every point added with a fixed-point atomic: into the block's shared copy when it fits, else global memory
  segments,   ///< labels first, then the points grouped by cluster and summed per segment (detail/segment_sums.hpp)
  owners      ///< small k x d (k (d + 1) <= 128, d <= 64, fused fp32 kernel): each thread of a block owns one cluster's coordinate sum (or count) in a register, filled from per-warp lane masks; no atomic per point (detail/assign.hpp)
};

struct params {
  init_method init = init_method::automatic;
  std::vector<float> initial_centroids;  ///< k x d when init == user
  unsigned max_iter = 300;
  double tol = 1e-4;  ///< relative to the mean per-dimension variance, as scikit-learn
  std::uint64_t seed = 0;  ///< run r of n_init draws from restart_seed(seed, r); run 0 from seed itself
  /// Restarts, as scikit-learn's n_init: the whole initialisation + Lloyd runs n_init times
  /// (run r seeded by restart_seed(seed, r)) and fit returns the run with the lowest final
  /// inertia (ties: the earliest run). 1 (the default) is a single run from `seed`; must be
  /// >= 1. Ignored with init == user, which runs once (its restarts would all be identical).
  unsigned n_init = 1;
  unsigned parallel_rounds = 5;  ///< k-means|| rounds
  double oversampling = 2.0;     ///< k-means|| draws about oversampling x k points per round
  smem_layout layout = smem_layout::padded_odd;  ///< natural: the bank-conflicting layout, for benchmarks
  distance_precision precision = distance_precision::fp32;  ///< tf32 / tf32x3: tensor-core distances (opt-in)
  distance_method distance = distance_method::automatic;    ///< fused kernel or cuBLAS GEMM (see the header comment)
  accumulation_method accumulation = accumulation_method::automatic;  ///< per-point atomics or per-cluster segments
  execution exec = execution::automatic();
};

/// fit() on execution memory: centroids and labels stay there.
struct result {
  buffer<float> centroids;       ///< k x d
  buffer<std::int32_t> labels;   ///< n
  double inertia = 0;            ///< sum of squared distances of points to their centroid
  unsigned iterations = 0;       ///< Lloyd iterations run
  bool converged = false;        ///< the shift fell to tol before max_iter
  std::vector<double> inertia_history;  ///< inertia of each iteration's assignment (before its update)
  distance_method distance = distance_method::fused;  ///< the assignment path used: fused or gemm
  unsigned reseeded = 0;  ///< empty clusters re-seeded, summed over the iterations
  accumulation_method accumulation = accumulation_method::atomics;  ///< how the sums were added: atomics, segments or owners
};

/// fit() on host ranges.
struct host_result {
  std::vector<float> centroids;
  std::vector<std::int32_t> labels;
  double inertia = 0;
  unsigned iterations = 0;
  bool converged = false;
  std::vector<double> inertia_history;
  distance_method distance = distance_method::fused;
  unsigned reseeded = 0;
  accumulation_method accumulation = accumulation_method::atomics;
};

/// The seed of restart `run` (0-based) of a fit with params.seed = `seed` and n_init > run:
/// `seed` itself for run 0 (so n_init = 1 is the plain fit), else a fixed 64-bit mix of
/// (seed, run) (the counter RNG's Murmur3 fmix64 on a stream of its own). Host only; exposed so
/// that a single restart can be reproduced (params.seed = restart_seed(seed, r), n_init = 1).
inline std::uint64_t restart_seed(std::uint64_t seed, unsigned run) {
  constexpr std::uint64_t restart_stream = 0x5245535441525453ull;  // "RESTARTS": no sampling stream uses it
  return run == 0 ? seed : warpkv::detail::random_bits(seed, restart_stream, run);
}

namespace impl {

inline void check_shape(std::size_t n, std::size_t d, std::size_t k) {
  require(n > 0, "n", "k-means needs at least one point");
  require(n < (std::size_t{1} << 31), "n", "at most 2^31 - 1 points (labels are int32)");
  require(d > 0, "d", "points need at least one dimension");
  require(d < (std::size_t{1} << 24), "d", "at most 2^24 - 1 dimensions");
  require(k > 0, "k", "k-means needs at least one cluster");
  require(k <= n, "k", "more clusters than points");
}

inline void check_precision(distance_precision prec, const char* name) {
  require(prec == distance_precision::fp32 || prec == distance_precision::tf32 || prec == distance_precision::tf32x3,
          name, "must be fp32, tf32 or tf32x3 (got " + std::to_string(static_cast<unsigned>(prec)) + ")");
}

/// tf32 paths: the centre of the current centroids (host copy `centroids`) into `centre`
/// (execution memory; `host` stays alive until the stream has copied it).
inline void set_centre(const execution& ex, const float* centroids, std::size_t k, std::size_t d,
                       std::vector<float>& host, float* centre) {
  host = warpkv::detail::centroid_mean(centroids, k, d);
  warpkv::detail::from_host(ex, centre, host.data(), d);
}

/// Whether the assignment step runs as a GEMM (assign_gemm.hpp); throws naming `name` when
/// gemm is asked for and cannot run. On the host backend gemm runs the GEMM path's host loop
/// (the same chunks, argmin and accumulation, for tests); automatic picks it on the GPU only.
inline bool use_gemm(distance_method m, const execution& ex, std::size_t d, std::size_t k, distance_precision prec,
                     const char* name) {
  require(m == distance_method::automatic || m == distance_method::fused || m == distance_method::gemm, name,
          "must be automatic, fused or gemm (got " + std::to_string(static_cast<unsigned>(m)) + ")");
  if (m == distance_method::fused) return false;
  if (m == distance_method::gemm) {
    require(prec != distance_precision::tf32x3, name,
            "gemm has no tf32x3 mode (cuBLAS SGEMM offers no 3xTF32 split): use fused for tf32x3");
    if (ex.where == backend::cuda) {
      const std::string why = warpkv::detail::cublas_unavailable();
      require(why.empty(), name, "gemm needs cuBLAS: " + why);
    }
    return true;
  }
  return ex.where == backend::cuda && k * d >= gemm_min_kd && prec != distance_precision::tf32x3 &&
         warpkv::detail::cublas_unavailable().empty();
}

/// Whether a shape can sum by owners: the fused fp32 kernel with one staged chunk of dimensions
/// and one owner thread per (cluster, coordinate) and per cluster count.
inline bool owners_fit(bool gemm, distance_precision prec, std::size_t d, std::size_t k) {
  using body = warpkv::detail::assign_body<smem_layout::padded_odd>;
  return !gemm && prec == distance_precision::fp32 && d <= body::max_chunk && k * (d + 1) <= body::block_threads;
}

/// How the sums are added (never automatic); throws naming `name` for a value that is not a
/// method, or for owners on a shape that cannot use them.
inline accumulation_method pick_accumulation(accumulation_method m, bool gemm, distance_precision prec, std::size_t d,
                                             std::size_t k, const char* name) {
  require(m == accumulation_method::automatic || m == accumulation_method::atomics ||
              m == accumulation_method::segments || m == accumulation_method::owners,
          name, "must be automatic, atomics, segments or owners (got " + std::to_string(static_cast<unsigned>(m)) + ")");
  const bool owners = owners_fit(gemm, prec, d, k);
  if (m == accumulation_method::owners)
    require(owners, name,
            "owners needs the fused fp32 kernel, d <= 64 and k (d + 1) <= 128 (d = " + std::to_string(d) +
                ", k = " + std::to_string(k) + ")");
  if (m != accumulation_method::automatic) return m;
  // Not owners: measured slower than the per-block shared atomics at d = 4, k = 16 (0.81 vs
  // 0.60 ms per assignment at n = 2^24 on an H200, docs/perf.md session 7).
  return gemm || (k * d + k + 1) * sizeof(std::uint64_t) > warpkv::detail::block_accumulators::max_bytes
             ? accumulation_method::segments
             : accumulation_method::atomics;
}

inline void check_params(const params& p, std::size_t d, std::size_t k) {
  require(p.max_iter > 0, "params.max_iter", "must be at least 1");
  require(p.tol >= 0 && p.tol == p.tol, "params.tol", "must be >= 0");
  require(p.n_init > 0, "params.n_init", "must be at least 1");
  check_precision(p.precision, "params.precision");
  // Rejects a bad choice before any work (automatic never takes gemm where owners fit: k x d < 2^16).
  (void)pick_accumulation(p.accumulation, p.distance == distance_method::gemm, p.precision, d, k, "params.accumulation");
  if (p.init == init_method::user)
    require(p.initial_centroids.size() == k * d, "params.initial_centroids",
            "must hold k x d = " + std::to_string(k * d) + " values, holds " +
                std::to_string(p.initial_centroids.size()));
  if (p.init == init_method::kmeans_parallel || p.init == init_method::automatic) {
    require(p.parallel_rounds > 0, "params.parallel_rounds", "must be at least 1");
    require(p.oversampling > 0, "params.oversampling", "must be > 0");
  }
}

/// Writes the initial centroids drawn from `seed` (not p.seed: a restart's seed); returns their
/// largest |coordinate| for user centroids (which may lie outside the data), 0 otherwise
/// (seeded centroids are data points).
inline double initialise(const float* points, std::size_t n, std::size_t d, std::size_t k, const params& p,
                         std::uint64_t seed, float* centroids) {
  const execution& ex = p.exec;
  init_method how = p.init;
  if (how == init_method::automatic)
    how = static_cast<double>(n) * static_cast<double>(d) * static_cast<double>(k) > 0x1p30
              ? init_method::kmeans_parallel
              : init_method::kmeans_plus_plus;
  switch (how) {
    case init_method::user: {
      warpkv::detail::from_host(ex, centroids, p.initial_centroids.data(), k * d);
      return warpkv::detail::check_finite(ex, centroids, k * d, d, "params.initial_centroids");
    }
    case init_method::random:
      warpkv::detail::gather_rows(ex, points, d, warpkv::detail::random_rows(n, k, seed), centroids);
      return 0;
    case init_method::kmeans_parallel:
      if (warpkv::detail::kmeans_parallel(ex, p.layout, points, n, d, k, seed, p.parallel_rounds, p.oversampling,
                                          centroids))
        return 0;
      [[fallthrough]];  // fewer candidates than k (few distinct points): plain k-means++
    default:
      warpkv::detail::gather_rows(ex, points, d, warpkv::detail::kmeanspp_rows(ex, points, n, d, nullptr, {}, k, seed, 2),
                                  centroids);
      return 0;
  }
}

/// One fit (initialisation from `seed`, Lloyd, final assignment) on checked input: `gemm` from
/// use_gemm, `scales` from measure() on the points (copied: user centroids may widen them).
inline result fit_once(const float* points, std::size_t n, std::size_t d, std::size_t k, const params& p,
                       std::uint64_t seed, bool gemm, warpkv::detail::data_scales scales) {
  namespace wd = warpkv::detail;
  const execution& ex = p.exec;
  const double tol = p.tol * scales.mean_variance;

  result r;
  r.centroids = buffer<float>(k * d, ex);
  r.labels = buffer<std::int32_t>(n, ex);
  const double centroid_max = initialise(points, n, d, k, p, seed, r.centroids.data());
  if (centroid_max > scales.max_abs) {
    // User centroids outside the data: distances are bounded by d (max|x| + max|c|)^2 instead.
    const double span = scales.max_abs + centroid_max;
    require(static_cast<double>(d) * span * span < static_cast<double>(FLT_MAX) / 4, "params.initial_centroids",
            "coordinates too large: squared distances to them would overflow float32");
    scales.dist_scale = wd::fixed_scale(static_cast<double>(d) * span * span * 1.01, n);
  }

  buffer<float> dist(n, ex);
  buffer<std::uint64_t> acc(k * d + k + 1, ex);  // sums | counts | inertia
  wd::assign_args a;
  a.points = points;
  a.n = n;
  a.d = static_cast<unsigned>(d);
  a.centroids = r.centroids.data();
  a.k = static_cast<unsigned>(k);
  a.labels = r.labels.data();
  a.dist = dist.data();
  a.dist_mode = wd::dist_output::write;
  a.sums = acc.data();
  a.counts = acc.data() + k * d;
  a.inertia = acc.data() + k * d + k;
  a.sum_scale = scales.sum_scale;
  a.dist_scale = scales.dist_scale;
  // The tf32 kernels and the GEMM path measure coordinates from the centroids' mean.
  const bool centred = gemm || p.precision != distance_precision::fp32;
  buffer<float> centre(centred ? d : 0, ex);
  std::vector<float> host_centre;
  a.centre = centre.data();
  std::optional<wd::gemm_assigner> by_gemm;
  if (gemm) by_gemm.emplace(ex, n, a.d, a.k, p.precision == distance_precision::tf32);
  r.distance = gemm ? distance_method::gemm : distance_method::fused;
  r.accumulation = pick_accumulation(p.accumulation, gemm, p.precision, d, k, "params.accumulation");
  a.by_owners = r.accumulation == accumulation_method::owners;
  std::optional<wd::segment_summer> by_segments;
  if (r.accumulation == accumulation_method::segments) by_segments.emplace(ex, n, k);
  const auto assign_step = [&] {
    wd::assign_args step = a;
    if (by_segments) step.sums = nullptr;  // added afterwards, segment by segment
    if (by_gemm) by_gemm->run(step);
    else wd::assign(ex, p.layout, step, p.precision);
    if (by_segments && a.sums != nullptr) by_segments->run(a);
  };

  std::vector<float> old(k * d), next(k * d);
  std::vector<std::uint64_t> host_acc(k * d + k + 1);
  std::vector<float> row(d);
  wd::to_host(ex, old.data(), r.centroids.data(), k * d);
  for (unsigned it = 1; it <= p.max_iter; ++it) {
    wd::fill_zero(ex, acc.data(), acc.size());
    if (centred) set_centre(ex, old.data(), k, d, host_centre, centre.data());
    assign_step();
    wd::to_host(ex, host_acc.data(), acc.data(), acc.size());  // (also: host_centre copied)
    r.inertia_history.push_back(wd::from_fixed(host_acc[k * d + k], scales.dist_scale));
    std::vector<std::size_t> empty;
    for (std::size_t c = 0; c < k; ++c) {
      const std::uint64_t count = host_acc[k * d + c];
      if (count == 0) {
        empty.push_back(c);
        continue;
      }
      for (std::size_t j = 0; j < d; ++j)
        next[c * d + j] = static_cast<float>(wd::from_fixed(host_acc[c * d + j], scales.sum_scale) /
                                             static_cast<double>(count));
    }
    if (!empty.empty()) {
      // On the GPU, a device pass per empty cluster (up to 64): only the picked rows come back
      // (copying and sorting the n distances on the host: an estimated 50-150 ms per such
      // iteration at n = 2^24). On the host backend the distances are host memory already and a
      // launch costs more than the partial sort, so it sorts (same order; both paths are tested).
      const std::vector<std::uint32_t> order = wd::farthest_points(
          ex, dist.data(), n, empty.size(), ex.where == backend::cuda ? wd::farthest_max_passes : 0);
      r.reseeded += static_cast<unsigned>(empty.size());
      for (std::size_t e = 0; e < empty.size(); ++e) {
        wd::to_host(ex, row.data(), points + std::size_t{order[e]} * d, d);
        std::copy(row.begin(), row.end(), next.begin() + static_cast<std::ptrdiff_t>(empty[e] * d));
      }
    }
    double shift = 0;
    for (std::size_t e = 0; e < k * d; ++e) {
      const double delta = static_cast<double>(next[e]) - old[e];
      shift += delta * delta;
    }
    wd::from_host(ex, r.centroids.data(), next.data(), k * d);
    old.swap(next);
    r.iterations = it;
    if (shift <= tol) {
      r.converged = true;
      break;
    }
  }
  // Labels and inertia of the returned centroids.
  wd::fill_zero(ex, acc.data(), acc.size());
  a.sums = nullptr;
  a.counts = nullptr;
  a.dist_mode = wd::dist_output::none;
  if (centred) set_centre(ex, old.data(), k, d, host_centre, centre.data());
  assign_step();
  std::uint64_t inertia_bits = 0;
  wd::to_host(ex, &inertia_bits, a.inertia, 1);  // also waits for the centroid upload (`old` alive)
  r.inertia = wd::from_fixed(inertia_bits, scales.dist_scale);
  return r;
}

}  // namespace impl

/// Clusters n points of d float32 coordinates (row-major, execution memory) into k clusters;
/// with params.n_init > 1, the best of n_init restarts (lowest inertia, earliest on ties).
inline result fit(const float* points, std::size_t n, std::size_t d, std::size_t k, const params& p = {}) {
  impl::check_shape(n, d, k);
  require(points != nullptr, "points", "null pointer");
  impl::check_params(p, d, k);
  const bool gemm = impl::use_gemm(p.distance, p.exec, d, k, p.precision, "params.distance");
  const warpkv::detail::data_scales scales = warpkv::detail::measure(p.exec, points, n, d);
  const unsigned runs = p.init == init_method::user ? 1 : p.n_init;
  result best = impl::fit_once(points, n, d, k, p, p.seed, gemm, scales);
  for (unsigned run = 1; run < runs; ++run) {
    // Every seeded run shares `scales` (its inertia has the same fixed-point scale), so the
    // comparison is between exactly computed values; strict < keeps the earliest on ties.
    result next = impl::fit_once(points, n, d, k, p, restart_seed(p.seed, run), gemm, scales);
    if (next.inertia < best.inertia) best = std::move(next);
  }
  return best;
}

/// fit() on host ranges: copies the points to params.exec's memory and the results back.
inline host_result fit(std::span<const float> points, std::size_t n, std::size_t d, std::size_t k,
                       const params& p = {}) {
  impl::check_shape(n, d, k);
  require(points.size() == n * d, "points", "must hold n x d = " + std::to_string(n * d) + " values, holds " +
                                                std::to_string(points.size()));
  buffer<float> dev = buffer<float>::from_host(points, p.exec);
  result r = fit(dev.data(), n, d, k, p);
  host_result h;
  h.centroids = r.centroids.to_vector();
  h.labels = r.labels.to_vector();
  h.inertia = r.inertia;
  h.iterations = r.iterations;
  h.converged = r.converged;
  h.inertia_history = std::move(r.inertia_history);
  h.distance = r.distance;
  h.reseeded = r.reseeded;
  h.accumulation = r.accumulation;
  return h;
}

/// Nearest centroid (lowest index on ties) of each of n points; all pointers in execution
/// memory. Stream-ordered: labels are complete once ex's stream reaches this point. With
/// tf32 / tf32x3 or the gemm path it reads the centroids back to centre them (a
/// synchronisation). It gives the labels fit() gives for the same centroids with the same
/// precision and distance path (automatic resolves alike in both: it depends on k x d).
inline void predict(const float* points, std::size_t n, std::size_t d, const float* centroids, std::size_t k,
                    std::int32_t* labels, const execution& ex = execution::automatic(),
                    smem_layout layout = smem_layout::padded_odd,
                    distance_precision precision = distance_precision::fp32,
                    distance_method distance = distance_method::automatic) {
  require(n < (std::size_t{1} << 31), "n", "at most 2^31 - 1 points (labels are int32)");
  require(d > 0, "d", "points need at least one dimension");
  require(k > 0, "k", "needs at least one centroid");
  require(k < (std::size_t{1} << 31), "k", "at most 2^31 - 1 centroids");
  impl::check_precision(precision, "precision");
  const bool gemm = impl::use_gemm(distance, ex, d, k, precision, "distance");
  if (n == 0) return;
  require(points != nullptr, "points", "null pointer");
  require(centroids != nullptr, "centroids", "null pointer");
  require(labels != nullptr, "labels", "null pointer");
  warpkv::detail::check_finite(ex, points, n * d, d, "points");
  warpkv::detail::check_finite(ex, centroids, k * d, d, "centroids");
  warpkv::detail::assign_args a;
  a.points = points;
  a.n = n;
  a.d = static_cast<unsigned>(d);
  a.centroids = centroids;
  a.k = static_cast<unsigned>(k);
  a.labels = labels;
  if (precision == distance_precision::fp32 && !gemm) {
    warpkv::detail::assign(ex, layout, a);
    return;
  }
  std::vector<float> host_centroids(k * d), host_centre;
  warpkv::detail::to_host(ex, host_centroids.data(), centroids, k * d);
  buffer<float> centre(d, ex);
  impl::set_centre(ex, host_centroids.data(), k, d, host_centre, centre.data());
  a.centre = centre.data();
  if (gemm) warpkv::detail::gemm_assigner(ex, n, a.d, a.k, precision == distance_precision::tf32).run(a);
  else warpkv::detail::assign(ex, layout, a, precision);
  synchronize(ex);  // `host_centre` and `centre` die here
}

/// predict() on host ranges.
inline std::vector<std::int32_t> predict(std::span<const float> points, std::size_t n, std::size_t d,
                                         std::span<const float> centroids, std::size_t k,
                                         const execution& ex = execution::automatic(),
                                         distance_precision precision = distance_precision::fp32,
                                         distance_method distance = distance_method::automatic) {
  require(points.size() == n * d, "points", "must hold n x d values");
  require(centroids.size() == k * d, "centroids", "must hold k x d values");
  std::vector<std::int32_t> out(n);
  if (n == 0) return out;
  buffer<float> p = buffer<float>::from_host(points, ex);
  buffer<float> c = buffer<float>::from_host(centroids, ex);
  buffer<std::int32_t> l(n, ex);
  predict(p.data(), n, d, c.data(), k, l.data(), ex, smem_layout::padded_odd, precision, distance);
  l.copy_to_host(out.data(), n);
  return out;
}

}  // namespace warpkv::kmeans
