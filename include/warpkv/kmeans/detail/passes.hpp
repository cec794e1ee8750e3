#pragma once
// The small passes of k-means around the assignment step, written against the tile layer
// (launcher.hpp) so they run on the GPU and on host threads alike:
//   scan_body     non-finite check and largest magnitude (fixes the fixed-point scales)
//   moments_body  per-dimension sums of x and x^2 (the variance that scales `tol`)
//   seeding_body  k-means++ / k-means||: distance to a new centre, min-update, chunk totals
//   sample_body   k-means||: keep each point with probability min(1, l * D(x)^2 / phi)
//   gather_body   copy chosen rows into a centroid matrix
//   farthest_body empty clusters: the largest (distance, lower index) key below a bound
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/kmeans/detail/fixed_point.hpp"
#include "warpkv/kmeans/detail/random.hpp"

namespace warpkv::detail {

constexpr std::size_t pass_chunk = 1024;  ///< points (or rows) per tile of a pass

WARPKV_HD inline bool finite_float(float v) {
  std::uint32_t bits = 0;
  static_assert(sizeof(bits) == sizeof(v));
#if WARPKV_DEVICE_PASS
  bits = __float_as_uint(v);
#else
  __builtin_memcpy(&bits, &v, sizeof(v));
#endif
  return (bits & 0x7f800000u) != 0x7f800000u;
}

WARPKV_HD inline std::uint32_t abs_bits(float v) {
  return to_bits(v) & 0x7fffffffu;  // non-negative floats order like their bit patterns
}

/// Largest |x| (as float bits) and a non-finite flag over n x d values.
struct scan_body {
  const float* values;
  std::size_t count;
  std::uint32_t* max_abs_bits;
  std::uint32_t* non_finite;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t chunk) const {
    const std::size_t begin = chunk * pass_chunk * 8, end = begin + pass_chunk * 8 < count ? begin + pass_chunk * 8 : count;
    std::uint32_t m = 0;
    bool bad = false;
    for (std::size_t e = begin + t.thread_rank(); e < end; e += t.size()) {
      const float v = values[e];
      if (!finite_float(v)) bad = true;
      else if (abs_bits(v) > m) m = abs_bits(v);
    }
    if (bad) atomic_ref<std::uint32_t>(*non_finite).fetch_or(1u, memory_order::relaxed);
    atomic_ref<std::uint32_t> ref(*max_abs_bits);
    std::uint32_t cur = ref.load(memory_order::relaxed);
    while (m > cur && !ref.compare_exchange(cur, m, memory_order::relaxed)) {
    }
  }
};

/// Fixed-point sums of x and x^2 per dimension (lane j walks column j of the chunk's rows).
struct moments_body {
  const float* points;
  std::size_t n;
  unsigned d;
  double scale, square_scale;
  std::uint64_t* sum;     ///< d
  std::uint64_t* sum_sq;  ///< d
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t chunk) const {
    const std::size_t begin = chunk * pass_chunk, end = begin + pass_chunk < n ? begin + pass_chunk : n;
    for (unsigned j = t.thread_rank(); j < d; j += t.size()) {
      std::uint64_t s = 0, q = 0;
      for (std::size_t i = begin; i < end; ++i) {
        const double x = points[i * d + j];
        s += to_fixed(x * scale);
        q += to_fixed(x * x * square_scale);
      }
      add_fixed(sum + j, s);
      add_fixed(sum_sq + j, q);
    }
  }
};

/// One k-means++ step over a chunk of points: with `center`, D(x)^2 = min(D(x)^2, |x - center|^2)
/// (or = on the first centre); then the chunk's total of weight * D(x)^2 in double, summed in a
/// fixed order (lane-strided, then a butterfly), so the sampling is the same on every run.
struct seeding_body {
  const float* points;
  std::size_t n;
  unsigned d;
  const float* center;   ///< a row of `points`, or nullptr: only total the chunk
  const float* weights;  ///< n, or nullptr for weight 1
  float* min_dist;       ///< n
  bool first;
  double* chunk_totals;  ///< ceil(n / pass_chunk)
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t chunk) const {
    const std::size_t begin = chunk * pass_chunk, end = begin + pass_chunk < n ? begin + pass_chunk : n;
    double total = 0;
    for (std::size_t i = begin + t.thread_rank(); i < end; i += t.size()) {
      float m = min_dist[i];
      if (center != nullptr) {
        float dd = 0;
        for (unsigned j = 0; j < d; ++j) {
          const float diff = points[i * d + j] - center[j];
          dd = fmaf(diff, diff, dd);
        }
        m = first || dd < m ? dd : m;
        min_dist[i] = m;
      }
      total += (weights != nullptr ? static_cast<double>(weights[i]) : 1.0) * m;
    }
    for (unsigned off = t.size() / 2; off > 0; off /= 2) total += t.shfl(total, t.thread_rank() ^ off);
    if (t.thread_rank() == 0) chunk_totals[chunk] = total;
  }
};

/// k-means|| oversampling: point i is kept with probability min(1, factor * w_i * D(x_i)^2),
/// factor = l / phi, the coin a counter-based random number of (seed, round, i).
struct sample_body {
  const float* min_dist;
  const float* weights;
  std::size_t n;
  double factor;
  std::uint64_t seed, round;
  std::uint32_t* picked;  ///< capacity entries
  std::uint64_t* picked_count;
  std::size_t capacity;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t chunk) const {
    const std::size_t begin = chunk * pass_chunk, end = begin + pass_chunk < n ? begin + pass_chunk : n;
    for (std::size_t i = begin + t.thread_rank(); i < end; i += t.size()) {
      const double w = weights != nullptr ? static_cast<double>(weights[i]) : 1.0;
      const double p = factor * w * static_cast<double>(min_dist[i]);
      if (random_unit(seed, round, i) < p) {
        const std::uint64_t slot = atomic_ref<std::uint64_t>(*picked_count).fetch_add(1, memory_order::relaxed);
        if (slot < capacity) picked[slot] = static_cast<std::uint32_t>(i);
      }
    }
  }
};

/// out row r = points row rows[r].
struct gather_body {
  const float* points;
  unsigned d;
  const std::uint32_t* rows;
  float* out;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t r) const {
    const std::size_t src = rows[r];
    for (unsigned j = t.thread_rank(); j < d; j += t.size()) out[r * d + j] = points[src * d + j];
  }
};

/// Order of the empty-cluster donors as one integer: larger distance first, then lower index
/// (distances are >= 0, and non-negative floats order like their bits; + 0 folds -0 into +0).
/// n < 2^31, so the low word 2^32 - 1 - i is never 0 and a real key is never 0.
WARPKV_HD inline std::uint64_t farthest_key(float dist, std::size_t i) {
  return (std::uint64_t{to_bits(dist + 0.0f)} << 32) | (0xffffffffu - static_cast<std::uint32_t>(i));
}

/// One pass of the empty-cluster selection: *best = max(*best, largest farthest_key below
/// `bound` in the chunk). A maximum is order-independent, so the pick is the same whatever
/// order the tiles' atomics land in.
struct farthest_body {
  const float* dist;
  std::size_t n;
  std::uint64_t bound;
  std::uint64_t* best;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t chunk) const {
    const std::size_t begin = chunk * pass_chunk, end = begin + pass_chunk < n ? begin + pass_chunk : n;
    std::uint64_t m = 0;
    for (std::size_t i = begin + t.thread_rank(); i < end; i += t.size()) {
      const std::uint64_t key = farthest_key(dist[i], i);
      m = key < bound && key > m ? key : m;
    }
    for (unsigned off = t.size() / 2; off > 0; off /= 2) {
      const std::uint64_t other = t.shfl(m, t.thread_rank() ^ off);
      m = other > m ? other : m;
    }
    if (t.thread_rank() == 0 && m != 0) atomic_ref<std::uint64_t>(*best).fetch_max(m, memory_order::relaxed);
  }
};

}  // namespace warpkv::detail
