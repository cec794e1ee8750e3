#pragma once
// Host-side orchestration of the k-means passes: data checks and scales, the assignment step
// with its layout chosen at compile time, and the three seedings (random, k-means++,
// k-means||). Every random choice comes from detail/random.hpp and every sum is either
// fixed-point or totalled in a fixed order, so a seed fixes the result on every backend.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "warpkv/core/block_launcher.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/kmeans/detail/assign.hpp"
#include "warpkv/kmeans/detail/assign_mma.hpp"
#include "warpkv/kmeans/detail/memory.hpp"
#include "warpkv/kmeans/detail/passes.hpp"
#include "warpkv/kmeans/detail/random.hpp"

namespace warpkv::detail {

template <class Body>
void run_tiles(const execution& ex, std::size_t tiles, const Body& body) {
  launch<32>(ex, tiles, simple_body<Body>{body});
}

inline std::size_t chunks_of(std::size_t n, std::size_t per) { return (n + per - 1) / per; }

/// What the passes need to know about the data.
struct data_scales {
  double max_abs = 0;        ///< largest |coordinate|
  double sum_scale = 1;      ///< fixed-point scale of per-cluster coordinate sums
  double dist_scale = 1;     ///< fixed-point scale of the inertia
  double mean_variance = 0;  ///< mean over dimensions of the per-dimension variance
};

/// Throws (naming `what`) on NaN or infinite values, or values whose squared distances would
/// overflow float32; returns the largest magnitude.
inline double check_finite(const execution& ex, const float* values, std::size_t count, std::size_t d,
                           const char* what) {
  buffer<std::uint32_t> flags(2, ex);
  fill_zero(ex, flags.data(), 2);
  run_tiles(ex, chunks_of(count, pass_chunk * 8), scan_body{values, count, flags.data(), flags.data() + 1});
  std::uint32_t host[2] = {0, 0};
  to_host(ex, host, flags.data(), 2);
  require(host[1] == 0, what, "holds NaN or infinite coordinates (k-means needs finite float32 values)");
  const double max_abs = std::bit_cast<float>(host[0]);
  require(static_cast<double>(d) * (2 * max_abs) * (2 * max_abs) < static_cast<double>(FLT_MAX) / 4, what,
          "coordinates too large: squared distances would overflow float32 (largest |x| " + std::to_string(max_abs) +
              ")");
  return max_abs;
}

inline data_scales measure(const execution& ex, const float* points, std::size_t n, std::size_t d) {
  data_scales s;
  s.max_abs = check_finite(ex, points, n * d, d, "points");
  s.sum_scale = fixed_scale(s.max_abs, n);
  s.dist_scale = fixed_scale(static_cast<double>(d) * 4 * s.max_abs * s.max_abs * 1.01, n);
  const double square_scale = fixed_scale(s.max_abs * s.max_abs, n);
  buffer<std::uint64_t> m(2 * d, ex);
  fill_zero(ex, m.data(), 2 * d);
  run_tiles(ex, chunks_of(n, pass_chunk),
            moments_body{points, n, static_cast<unsigned>(d), s.sum_scale, square_scale, m.data(), m.data() + d});
  std::vector<std::uint64_t> h(2 * d);
  to_host(ex, h.data(), m.data(), 2 * d);
  double var = 0;
  for (std::size_t j = 0; j < d; ++j) {
    const double mean = from_fixed(h[j], s.sum_scale) / static_cast<double>(n);
    const double mean_sq = from_fixed(h[d + j], square_scale) / static_cast<double>(n);
    var += std::max(0.0, mean_sq - mean * mean);
  }
  s.mean_variance = var / static_cast<double>(d);
  return s;
}

template <class Body>
void launch_assign(const execution& ex, const assign_args& a) {
  const auto body = Body::make(a);
  launch_blocks(ex, body.num_tiles(), body.smem_bytes(), body);
}

template <smem_layout L>
void assign_with_layout(const execution& ex, const assign_args& a, kmeans::distance_precision precision) {
  switch (precision) {
    case kmeans::distance_precision::tf32:
      return launch_assign<assign_mma_body<L, kmeans::distance_precision::tf32>>(ex, a);
    case kmeans::distance_precision::tf32x3:
      return launch_assign<assign_mma_body<L, kmeans::distance_precision::tf32x3>>(ex, a);
    default:
      return launch_assign<assign_body<L>>(ex, a);
  }
}

/// The assignment step with the shared-memory layout and the distance precision chosen at run
/// time among the compiled ones (tf32 paths need a.centre).
inline void assign(const execution& ex, smem_layout layout, const assign_args& a,
                   kmeans::distance_precision precision = kmeans::distance_precision::fp32) {
  if (a.n == 0) return;
  if (layout == smem_layout::natural) assign_with_layout<smem_layout::natural>(ex, a, precision);
  else assign_with_layout<smem_layout::padded_odd>(ex, a, precision);
}

/// The point the tf32 paths measure coordinates from: the mean of the k x d centroids (host
/// memory), in double, rounded to float. fit() and predict() use the same one, so they agree.
inline std::vector<float> centroid_mean(const float* centroids, std::size_t k, std::size_t d) {
  std::vector<double> sum(d, 0.0);
  for (std::size_t c = 0; c < k; ++c)
    for (std::size_t j = 0; j < d; ++j) sum[j] += centroids[c * d + j];
  std::vector<float> out(d);
  for (std::size_t j = 0; j < d; ++j) out[j] = static_cast<float>(sum[j] / static_cast<double>(k));
  return out;
}

/// Rows `rows` of `points` into `out` (rows.size() x d, execution memory).
inline void gather_rows(const execution& ex, const float* points, std::size_t d, const std::vector<std::uint32_t>& rows,
                        float* out) {
  if (rows.empty()) return;
  buffer<std::uint32_t> idx = buffer<std::uint32_t>::from_host(std::span<const std::uint32_t>(rows), ex);
  run_tiles(ex, rows.size(), gather_body{points, static_cast<unsigned>(d), idx.data(), out});
  synchronize(ex);  // `idx` is freed stream-ordered, but keep the caller's host vector alive too
}

/// Picks above which farthest_points copies the distances to the host instead of running one
/// device pass per pick (a pass reads the n distances once: ~0.03 ms at n = 2^24 on an H100,
/// against an estimated 50-150 ms for the copy and host partial sort of 2^24 distances).
constexpr std::size_t farthest_max_passes = 64;

/// The `take` points farthest from their centroids (`dist`: n, execution memory), farthest
/// first, ties to the lower index: the empty clusters' new centres. Up to `max_passes` picks run
/// on the device, one pass per pick (the largest farthest_key below the previous pick's), and
/// only the picks come back; more picks copy the distances and partially sort them on the host.
/// Both orders are farthest_key's, so they agree.
inline std::vector<std::uint32_t> farthest_points(const execution& ex, const float* dist, std::size_t n,
                                                  std::size_t take, std::size_t max_passes = farthest_max_passes) {
  take = std::min(take, n);
  std::vector<std::uint32_t> out;
  out.reserve(take);
  if (take <= max_passes) {
    buffer<std::uint64_t> best(1, ex);
    std::uint64_t bound = ~std::uint64_t{0};
    for (std::size_t p = 0; p < take; ++p) {
      fill_zero(ex, best.data(), 1);
      run_tiles(ex, chunks_of(n, pass_chunk), farthest_body{dist, n, bound, best.data()});
      to_host(ex, &bound, best.data(), 1);
      out.push_back(0xffffffffu - static_cast<std::uint32_t>(bound & 0xffffffffu));
    }
    return out;
  }
  std::vector<float> host(n);
  to_host(ex, host.data(), dist, n);
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(),
                    [&](std::uint32_t x, std::uint32_t y) { return farthest_key(host[x], x) > farthest_key(host[y], y); });
  out.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take));
  return out;
}

/// k distinct row indices drawn uniformly (Floyd's algorithm; order of drawing kept).
inline std::vector<std::uint32_t> random_rows(std::size_t n, std::size_t k, std::uint64_t seed) {
  std::vector<std::uint32_t> out;
  std::unordered_set<std::uint32_t> taken;
  out.reserve(k);
  for (std::size_t j = n - k; j < n; ++j) {
    const auto t = static_cast<std::uint32_t>(static_cast<double>(j + 1) * random_unit(seed, 1, j));
    const std::uint32_t pick = taken.count(t) != 0 ? static_cast<std::uint32_t>(j) : t;
    taken.insert(pick);
    out.push_back(pick);
  }
  return out;
}

/// k-means++ seeding (D^2 sampling, optionally weighted) over m rows: k row indices.
/// `weights` is execution memory (or nullptr); `host_weights` the same values on the host.
inline std::vector<std::uint32_t> kmeanspp_rows(const execution& ex, const float* pts, std::size_t m, std::size_t d,
                                                const float* weights, const std::vector<float>& host_weights,
                                                std::size_t k, std::uint64_t seed, std::uint64_t stream) {
  std::vector<std::uint32_t> chosen;
  chosen.reserve(k);
  // First centre: uniform (or proportional to weight).
  if (weights == nullptr) {
    chosen.push_back(static_cast<std::uint32_t>(std::min<double>(static_cast<double>(m) - 1,
                                                                 std::floor(random_unit(seed, stream, 0) * m))));
  } else {
    double total = 0;
    for (float w : host_weights) total += w;
    const double target = random_unit(seed, stream, 0) * total;
    double acc = 0;
    std::uint32_t pick = 0;
    for (std::size_t i = 0; i < m; ++i) {
      if (host_weights[i] <= 0) continue;
      pick = static_cast<std::uint32_t>(i);
      acc += host_weights[i];
      if (target < acc) break;
    }
    chosen.push_back(pick);
  }
  if (k == 1) return chosen;
  const std::size_t chunks = chunks_of(m, pass_chunk);
  buffer<float> min_dist(m, ex);
  buffer<double> totals(chunks, ex);
  std::vector<double> host_totals(chunks);
  std::vector<float> chunk_dist(pass_chunk);
  std::unordered_set<std::uint32_t> taken(chosen.begin(), chosen.end());
  for (std::size_t s = 1; s < k; ++s) {
    run_tiles(ex, chunks,
              seeding_body{pts, m, static_cast<unsigned>(d), pts + std::size_t{chosen.back()} * d, weights,
                           min_dist.data(), s == 1, totals.data()});
    to_host(ex, host_totals.data(), totals.data(), chunks);
    double total = 0;
    for (double t : host_totals) total += t;
    std::uint32_t pick = 0;
    if (!(total > 0)) {
      // Every point sits on a centre already (fewer distinct points than k): lowest unused row.
      while (taken.count(pick) != 0) ++pick;
    } else {
      double target = random_unit(seed, stream, s) * total;
      std::size_t c = 0;
      for (; c + 1 < chunks; ++c) {
        if (target < host_totals[c]) break;
        target -= host_totals[c];
      }
      while (!(host_totals[c] > 0)) --c;  // rounding pushed past the last chunk with mass
      const std::size_t begin = c * pass_chunk, len = std::min(pass_chunk, m - begin);
      to_host(ex, chunk_dist.data(), min_dist.data() + begin, len);
      double acc = 0;
      bool found = false;
      for (std::size_t i = 0; i < len; ++i) {
        const double mass = (weights != nullptr ? host_weights[begin + i] : 1.0f) * static_cast<double>(chunk_dist[i]);
        if (!(mass > 0)) continue;
        pick = static_cast<std::uint32_t>(begin + i);
        found = true;
        acc += mass;
        if (target < acc) break;
      }
      if (!found) {
        while (taken.count(pick) != 0) ++pick;
      }
    }
    taken.insert(pick);
    chosen.push_back(pick);
  }
  return chosen;
}

/// Sum of weight * D(x)^2 over all points, in a fixed order.
inline double seeding_total(const execution& ex, const float* pts, std::size_t m, std::size_t d, float* min_dist,
                            const float* center, bool first, buffer<double>& totals) {
  const std::size_t chunks = chunks_of(m, pass_chunk);
  run_tiles(ex, chunks,
            seeding_body{pts, m, static_cast<unsigned>(d), center, nullptr, min_dist, first, totals.data()});
  std::vector<double> h(chunks);
  to_host(ex, h.data(), totals.data(), chunks);
  double total = 0;
  for (double t : h) total += t;
  return total;
}

/// k-means|| (Bahmani et al.): `rounds` rounds keep each point with probability
/// min(1, l D(x)^2 / phi), l = oversampling * k; the candidates, weighted by the points nearest
/// to them, are reduced to k centres by weighted k-means++. Returns false (nothing written)
/// when fewer than k candidates came up, so the caller can fall back to k-means++.
inline bool kmeans_parallel(const execution& ex, smem_layout layout, const float* points, std::size_t n,
                            std::size_t d, std::size_t k, std::uint64_t seed, unsigned rounds, double oversampling,
                            float* centroids) {
  std::vector<std::uint32_t> cand;
  cand.push_back(static_cast<std::uint32_t>(
      std::min<double>(static_cast<double>(n) - 1, std::floor(random_unit(seed, 10, 0) * n))));
  buffer<float> min_dist(n, ex);
  buffer<double> totals(chunks_of(n, pass_chunk), ex);
  double phi = seeding_total(ex, points, n, d, min_dist.data(), points + std::size_t{cand[0]} * d, true, totals);
  const double l = oversampling * static_cast<double>(k);
  buffer<std::uint64_t> count(1, ex);
  for (unsigned r = 0; r < rounds && phi > 0; ++r) {
    std::size_t capacity = std::min<std::size_t>(n, static_cast<std::size_t>(4 * l) + 64);
    std::uint64_t picked_n = 0;
    buffer<std::uint32_t> picked;
    for (;;) {  // the picked set is fixed by the seed; only a too-small buffer makes us re-run
      picked = buffer<std::uint32_t>(capacity, ex);
      fill_zero(ex, count.data(), 1);
      run_tiles(ex, chunks_of(n, pass_chunk),
                sample_body{min_dist.data(), nullptr, n, l / phi, seed, 100 + r, picked.data(), count.data(), capacity});
      to_host(ex, &picked_n, count.data(), 1);
      if (picked_n <= capacity) break;
      capacity = picked_n;
    }
    if (picked_n == 0) continue;
    std::vector<std::uint32_t> rows(picked_n);
    to_host(ex, rows.data(), picked.data(), picked_n);
    std::sort(rows.begin(), rows.end());  // atomics decided the order, not the set
    buffer<float> fresh(rows.size() * d, ex);
    gather_rows(ex, points, d, rows, fresh.data());
    assign_args a;
    a.points = points;
    a.n = n;
    a.d = static_cast<unsigned>(d);
    a.centroids = fresh.data();
    a.k = static_cast<unsigned>(rows.size());
    a.dist = min_dist.data();
    a.dist_mode = dist_output::min;
    assign(ex, layout, a);
    cand.insert(cand.end(), rows.begin(), rows.end());
    phi = seeding_total(ex, points, n, d, min_dist.data(), nullptr, false, totals);
  }
  if (cand.size() < k) return false;
  // Weight of a candidate: the points nearest to it.
  const std::size_t m = cand.size();
  buffer<float> cand_rows(m * d, ex);
  gather_rows(ex, points, d, cand, cand_rows.data());
  buffer<std::uint64_t> counts(m, ex);
  fill_zero(ex, counts.data(), m);
  assign_args a;
  a.points = points;
  a.n = n;
  a.d = static_cast<unsigned>(d);
  a.centroids = cand_rows.data();
  a.k = static_cast<unsigned>(m);
  a.counts = counts.data();
  assign(ex, layout, a);
  std::vector<std::uint64_t> hc(m);
  to_host(ex, hc.data(), counts.data(), m);
  std::vector<float> hw(m);
  for (std::size_t i = 0; i < m; ++i) hw[i] = static_cast<float>(hc[i]);
  buffer<float> weights = buffer<float>::from_host(std::span<const float>(hw), ex);
  const auto rows = kmeanspp_rows(ex, cand_rows.data(), m, d, weights.data(), hw, k, seed, 11);
  gather_rows(ex, cand_rows.data(), d, rows, centroids);
  return true;
}

}  // namespace warpkv::detail
