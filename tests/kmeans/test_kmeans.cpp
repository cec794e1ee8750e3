// warpkv::kmeans on the chosen backend: against a sequential double-precision Lloyd from the
// same initial centroids (random blobs, many seeds, both shared-memory layouts and both
// accumulation paths), separated blobs recovered from every init (random with n_init restarts),
// n_init keeping the lowest-inertia restart, determinism,
// empty-cluster re-seeding, predict() agreeing with fit(), edge shapes and every bad input;
// and the opt-in tf32 / tf32x3 distances (KmeansTf32.*: rounding, agreement with fp32).
// On the host backend the assignment blocks race on the global sums from several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../common/backend.hpp"
#include "../common/expect_invalid.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/block_launcher.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/kmeans/kmeans.hpp"

namespace warpkv::testing {
namespace {

using kmeans::init_method;

// ---- core/block_launcher.hpp (added for this module; tested here to keep one TU) ------------

/// Each work item: threads write their index into shared memory, meet at a barrier, read their
/// neighbour's slot, and add it to a global total; per-block shared state is set up in start()
/// and flushed in finish().
struct neighbour_body {
  static constexpr unsigned block_threads = 64;
  struct thread_state {
    std::uint64_t seen;
  };
  std::uint64_t* total;   // sum of what the threads read
  std::uint64_t* works;   // work items done, flushed per block
  std::uint64_t* blocks;  // blocks started
  template <class Block>
  WARPKV_HD std::uint64_t* done(const Block& b) const {
    return reinterpret_cast<std::uint64_t*>(b.smem() + block_threads * sizeof(std::uint64_t));
  }
  template <class Block>
  WARPKV_HD void start(Block& b) const {
    b.for_each_thread([&](unsigned t, thread_state&) {
      if (t == 0) {
        *done(b) = 0;
        atomic_ref<std::uint64_t>(*blocks).fetch_add(1);
      }
    });
    b.sync();
  }
  template <class Block>
  WARPKV_HD void operator()(Block& b, std::size_t w) const {
    auto* slots = reinterpret_cast<std::uint64_t*>(b.smem());
    b.sync();  // the previous item's readers are done with the slots
    b.for_each_thread([&](unsigned t, thread_state&) { slots[t] = w * block_threads + t; });
    b.sync();
    b.for_each_thread([&](unsigned t, thread_state& s) { s.seen = slots[(t + 1) % block_threads]; });
    b.for_each_thread([&](unsigned t, thread_state& s) {
      atomic_ref<std::uint64_t>(*total).fetch_add(s.seen);
      if (t == 0) *done(b) += 1;
    });
  }
  template <class Block>
  WARPKV_HD void finish(Block& b) const {
    b.sync();
    b.for_each_thread([&](unsigned t, thread_state&) {
      if (t == 0) atomic_ref<std::uint64_t>(*works).fetch_add(*done(b));
    });
  }
};

TEST(BlockLauncher, PhasesBarriersAndPerBlockState) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = ex0.where == backend::host ? execution::host(3) : ex0;
  for (std::size_t items : {1u, 5u, 1000u}) {
    buffer<std::uint64_t> counters(3, ex);
    const std::vector<std::uint64_t> zero(3, 0);
    counters.copy_from_host(zero.data(), 3);
    launch_blocks(ex, items, 2 * neighbour_body::block_threads * sizeof(std::uint64_t),
                  neighbour_body{counters.data(), counters.data() + 1, counters.data() + 2});
    const auto c = counters.to_vector();
    const std::uint64_t all = items * neighbour_body::block_threads;
    EXPECT_EQ(c[0], all * (all - 1) / 2) << items;  // every slot read exactly once
    EXPECT_EQ(c[1], items);
    EXPECT_GE(c[2], 1u);
    EXPECT_LE(c[2], items);
  }
}

// ---- k-means --------------------------------------------------------------------------------

/// Few concurrent host blocks: enough to race, cheap under ThreadSanitizer.
execution small_pool(execution ex) {
  if (ex.where == backend::host) ex.host_tiles = 3;
  return ex;
}

int scaled(int count, int at_least = 1) { return std::max(at_least, static_cast<int>(count * test_scale())); }

struct blobs {
  std::vector<float> points;
  std::vector<int> truth;
  std::vector<float> centers;
};

/// k Gaussian blobs with centres in [-spread, spread]^d and unit standard deviation.
blobs make_blobs(std::size_t n, std::size_t d, std::size_t k, double spread, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-spread, spread);
  std::normal_distribution<double> g(0.0, 1.0);
  blobs b;
  b.centers.resize(k * d);
  for (auto& c : b.centers) c = static_cast<float>(u(rng));
  b.points.resize(n * d);
  b.truth.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = i % k;
    b.truth[i] = static_cast<int>(c);
    for (std::size_t j = 0; j < d; ++j) b.points[i * d + j] = static_cast<float>(b.centers[c * d + j] + g(rng));
  }
  return b;
}

std::vector<float> rows_of(const std::vector<float>& points, std::size_t d, const std::vector<std::size_t>& rows) {
  std::vector<float> out;
  for (std::size_t r : rows) out.insert(out.end(), points.begin() + r * d, points.begin() + (r + 1) * d);
  return out;
}

double sq_dist(const float* x, const double* c, std::size_t d) {
  double s = 0;
  for (std::size_t j = 0; j < d; ++j) s += (x[j] - c[j]) * (x[j] - c[j]);
  return s;
}

/// Sequential Lloyd in double precision, with the library's stopping and re-seeding rules.
struct reference_result {
  std::vector<double> centroids;
  std::vector<int> labels;
  unsigned iterations = 0;
};
reference_result reference_lloyd(const std::vector<float>& x, std::size_t n, std::size_t d, std::size_t k,
                                 const std::vector<float>& init, unsigned max_iter) {
  reference_result r;
  r.centroids.assign(init.begin(), init.end());
  r.labels.assign(n, 0);
  std::vector<double> dist(n);
  for (unsigned it = 1; it <= max_iter; ++it) {
    std::vector<double> sums(k * d, 0.0);
    std::vector<std::size_t> counts(k, 0);
    for (std::size_t i = 0; i < n; ++i) {
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t c = 0; c < k; ++c) {
        const double dd = sq_dist(&x[i * d], &r.centroids[c * d], d);
        if (dd < best) {
          best = dd;
          r.labels[i] = static_cast<int>(c);
        }
      }
      dist[i] = best;
      ++counts[static_cast<std::size_t>(r.labels[i])];
      for (std::size_t j = 0; j < d; ++j) sums[static_cast<std::size_t>(r.labels[i]) * d + j] += x[i * d + j];
    }
    std::vector<double> next(k * d);
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return dist[a] > dist[b]; });
    std::size_t reseeded = 0;
    double shift = 0;
    for (std::size_t c = 0; c < k; ++c) {
      for (std::size_t j = 0; j < d; ++j)
        next[c * d + j] = counts[c] > 0 ? sums[c * d + j] / static_cast<double>(counts[c])
                                        : x[order[reseeded] * d + j];
      if (counts[c] == 0) ++reseeded;
      for (std::size_t j = 0; j < d; ++j) shift += (next[c * d + j] - r.centroids[c * d + j]) * (next[c * d + j] - r.centroids[c * d + j]);
    }
    r.centroids = next;
    r.iterations = it;
    if (shift == 0) break;
  }
  // final labels of the final centroids
  for (std::size_t i = 0; i < n; ++i) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < k; ++c) {
      const double dd = sq_dist(&x[i * d], &r.centroids[c * d], d);
      if (dd < best) {
        best = dd;
        r.labels[i] = static_cast<int>(c);
      }
    }
  }
  return r;
}

/// True when point i's two nearest centroids are within float32 rounding of each other.
bool near_tie(const std::vector<float>& x, std::size_t i, std::size_t d, const std::vector<double>& c, std::size_t k) {
  double best = std::numeric_limits<double>::infinity(), second = best;
  for (std::size_t q = 0; q < k; ++q) {
    const double dd = sq_dist(&x[i * d], &c[q * d], d);
    if (dd < best) {
      second = best;
      best = dd;
    } else if (dd < second) {
      second = dd;
    }
  }
  return second - best <= 1e-4 * (1.0 + best);
}

/// Labels equal up to renaming the clusters.
bool same_partition(const std::vector<std::int32_t>& a, const std::vector<int>& b) {
  std::map<int, int> ab, ba;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto [it1, new1] = ab.emplace(a[i], b[i]);
    const auto [it2, new2] = ba.emplace(b[i], a[i]);
    if (it1->second != b[i] || it2->second != a[i]) return false;
  }
  return true;
}

void expect_matches_reference(const execution& ex, std::size_t n, std::size_t d, std::size_t k, double spread,
                              std::uint64_t seed, smem_layout layout,
                              kmeans::distance_method distance = kmeans::distance_method::fused) {
  SCOPED_TRACE("n=" + std::to_string(n) + " d=" + std::to_string(d) + " k=" + std::to_string(k) +
               " seed=" + std::to_string(seed) + " distance=" + std::to_string(static_cast<int>(distance)));
  const blobs b = make_blobs(n, d, k, spread, seed);
  std::vector<std::size_t> init_rows;
  for (std::size_t c = 0; c < k; ++c) init_rows.push_back((c * 7919 + seed) % n);
  std::sort(init_rows.begin(), init_rows.end());
  init_rows.erase(std::unique(init_rows.begin(), init_rows.end()), init_rows.end());
  for (std::size_t r = 0; init_rows.size() < k; ++r)
    if (!std::binary_search(init_rows.begin(), init_rows.end(), r)) init_rows.push_back(r);
  kmeans::params p;
  p.exec = ex;
  p.layout = layout;
  p.init = init_method::user;
  p.initial_centroids = rows_of(b.points, d, init_rows);
  p.max_iter = 8;
  p.tol = 0;
  p.distance = distance;
  const auto got = kmeans::fit(b.points, n, d, k, p);
  const auto want = reference_lloyd(b.points, n, d, k, p.initial_centroids, p.max_iter);
  EXPECT_EQ(got.distance, distance);  // what was asked for is what ran
  ASSERT_EQ(got.labels.size(), n);
  ASSERT_EQ(got.centroids.size(), k * d);
  EXPECT_EQ(got.iterations, want.iterations);
  double scale = 1;
  for (float v : b.points) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  for (std::size_t e = 0; e < k * d; ++e)
    ASSERT_NEAR(got.centroids[e], want.centroids[e], 1e-4 * scale) << "centroid value " << e;
  std::size_t differing = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (got.labels[i] == want.labels[i]) continue;
    ++differing;
    EXPECT_TRUE(near_tie(b.points, i, d, want.centroids, k)) << "point " << i << " label " << got.labels[i]
                                                              << " vs " << want.labels[i];
  }
  EXPECT_LE(differing, n / 100);
  ASSERT_EQ(got.inertia_history.size(), got.iterations);
  for (std::size_t it = 1; it < got.inertia_history.size(); ++it)
    EXPECT_LE(got.inertia_history[it], got.inertia_history[it - 1] * (1 + 1e-6) + 1e-9) << "iteration " << it;
  // The reported inertia belongs to the returned labels and centroids.
  double inertia = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> c(got.centroids.begin() + got.labels[i] * static_cast<std::ptrdiff_t>(d),
                          got.centroids.begin() + (got.labels[i] + 1) * static_cast<std::ptrdiff_t>(d));
    inertia += sq_dist(&b.points[i * d], c.data(), d);
  }
  EXPECT_NEAR(got.inertia, inertia, 1e-5 * inertia + 1e-9);
}

TEST(Kmeans, MatchesSequentialLloydOnRandomBlobs) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  const int seeds = scaled(12, 3);
  for (int s = 0; s < seeds; ++s) {
    const auto seed = static_cast<std::uint64_t>(s) + 1;
    // Shapes cycle through: small d (one staged chunk), d not a multiple of 4 or 32, and d > 64 (chunked).
    static constexpr std::size_t shapes[][3] = {{1000, 2, 5}, {777, 37, 12}, {600, 100, 9}, {1300, 8, 40}};
    const auto& sh = shapes[s % 4];
    expect_matches_reference(ex, sh[0], sh[1], sh[2], 6.0, seed,
                             s % 2 == 0 ? smem_layout::padded_odd : smem_layout::natural);
  }
}

TEST(Kmeans, GlobalAccumulationPathMatchesReference) {
  // k x d too large for per-block shared accumulators: automatic sums by segments
  // (SegmentSumsEqualPerPointAtomicsBitForBit checks the global atomics give the same bits).
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  for (int s = 0; s < scaled(2, 1); ++s)
    expect_matches_reference(ex, 900, 48, 150, 8.0, 100 + static_cast<std::uint64_t>(s), smem_layout::padded_odd);
}

TEST(Kmeans, SegmentSumsEqualPerPointAtomicsBitForBit) {
  // The ways of adding the sums (params.accumulation) give the same fixed-point integers, hence
  // bit-identical fits: per-(cluster, coordinate) owners (k (d + 1) <= 128), per-block shared
  // copies (small k x d), global atomics (large), the GEMM path, tf32, d > 128 (two sweeps of the
  // segment pass), n not a multiple of its 256-slot pieces, and empty clusters (k = 60 on 12
  // distinct points).
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  using kmeans::accumulation_method;
  struct shape {
    std::size_t n, d, k;
    kmeans::distance_method distance;
    kmeans::distance_precision precision;
    accumulation_method automatic_picks;
    bool owners_fit;  ///< params.accumulation = owners may run on this shape
  };
  constexpr auto fused = kmeans::distance_method::fused;
  constexpr auto fp32 = kmeans::distance_precision::fp32;
  const shape shapes[] = {
      {1000, 5, 7, fused, fp32, accumulation_method::atomics, true},
      // the benchmark's d = 4, k = 16, and the largest owners shape, k (d + 1) = 128
      {2000, 4, 16, fused, fp32, accumulation_method::atomics, true},
      {1500, 7, 16, fused, fp32, accumulation_method::atomics, true},
      {1500, 7, 17, fused, fp32, accumulation_method::atomics, false},  // k (d + 1) = 136: one owner per thread is not enough
      {1000, 5, 7, fused, kmeans::distance_precision::tf32, accumulation_method::atomics, false},  // owners: fp32 only
      {900, 48, 150, fused, fp32, accumulation_method::segments, false},
      {700, 130, 20, fused, fp32, accumulation_method::atomics, false},
      {900, 48, 150, fused, kmeans::distance_precision::tf32, accumulation_method::segments, false},
      {600, 37, 12, kmeans::distance_method::gemm, fp32, accumulation_method::segments, false},
  };
  for (const shape& sh : shapes) {
    SCOPED_TRACE("n=" + std::to_string(sh.n) + " d=" + std::to_string(sh.d) + " k=" + std::to_string(sh.k));
    const blobs b = make_blobs(sh.n, sh.d, sh.k, 5.0, sh.d + sh.k);
    kmeans::params p;
    p.exec = ex;
    p.seed = 8;
    p.init = init_method::random;  // k-means++ would take k passes; the init is not what is tested
    p.max_iter = 3;
    p.tol = 0;
    p.distance = sh.distance;
    p.precision = sh.precision;
    const auto automatic = kmeans::fit(b.points, sh.n, sh.d, sh.k, p);
    EXPECT_EQ(automatic.accumulation, sh.automatic_picks);
    for (const accumulation_method m :
         {accumulation_method::atomics, accumulation_method::segments, accumulation_method::owners}) {
      SCOPED_TRACE("accumulation " + std::to_string(static_cast<int>(m)));
      p.accumulation = m;
      if (m == accumulation_method::owners && !sh.owners_fit) {
        // Asked for where it cannot run: refused, naming the parameter.
        expect_invalid([&] { (void)kmeans::fit(b.points, sh.n, sh.d, sh.k, p); }, "params.accumulation");
        continue;
      }
      const auto other = kmeans::fit(b.points, sh.n, sh.d, sh.k, p);
      EXPECT_EQ(other.accumulation, m);
      EXPECT_EQ(other.centroids, automatic.centroids);
      EXPECT_EQ(other.labels, automatic.labels);
      EXPECT_EQ(other.inertia_history, automatic.inertia_history);
      EXPECT_EQ(other.iterations, automatic.iterations);
    }
  }
  std::vector<float> x;  // 12 distinct points, 60 clusters: most clusters stay empty
  for (int i = 0; i < 300; ++i) x.insert(x.end(), {static_cast<float>(i % 12), static_cast<float>(i % 12 / 4)});
  kmeans::params p;
  p.exec = ex;
  p.init = init_method::random;
  p.max_iter = 5;
  p.accumulation = accumulation_method::atomics;
  const auto atomics = kmeans::fit(x, 300, 2, 60, p);
  p.accumulation = accumulation_method::segments;
  const auto segments = kmeans::fit(x, 300, 2, 60, p);
  EXPECT_EQ(segments.centroids, atomics.centroids);
  EXPECT_EQ(segments.labels, atomics.labels);
  for (float v : segments.centroids) EXPECT_TRUE(std::isfinite(v));
}

TEST(Kmeans, SegmentPassSumsEveryClusterExactly) {
  // detail::segment_summer alone, against the fixed-point sums computed here: one cluster
  // spanning many 256-slot pieces, one point alone, clusters with no point, d = 70 (lanes with
  // three dimensions and lanes with two).
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  const std::size_t n = 1500, d = 70, k = 6;
  const blobs b = make_blobs(n, d, 3, 4.0, 21);
  std::vector<std::int32_t> labels(n, 3);
  labels[778] = 0;  // alone in cluster 0 (778 is not a multiple of 7)
  for (std::size_t i = 0; i < n; i += 7) labels[i] = 5;
  std::vector<std::uint64_t> counts(k, 0), want(k * d, 0);
  const double scale = detail::fixed_scale(20.0, n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::size_t>(labels[i]);
    ++counts[c];
    for (std::size_t j = 0; j < d; ++j) want[c * d + j] += detail::to_fixed(static_cast<double>(b.points[i * d + j]) * scale);
  }
  buffer<float> pts = buffer<float>::from_host(std::span<const float>(b.points), ex);
  buffer<std::int32_t> lab = buffer<std::int32_t>::from_host(std::span<const std::int32_t>(labels), ex);
  buffer<std::uint64_t> cnt = buffer<std::uint64_t>::from_host(std::span<const std::uint64_t>(counts), ex);
  buffer<std::uint64_t> sums(k * d, ex);
  detail::fill_zero(ex, sums.data(), k * d);
  detail::assign_args a;
  a.points = pts.data();
  a.n = n;
  a.d = d;
  a.k = k;
  a.labels = lab.data();
  a.counts = cnt.data();
  a.sums = sums.data();
  a.sum_scale = scale;
  detail::segment_summer summer(ex, n, k);
  summer.run(a);
  EXPECT_EQ(sums.to_vector(), want);
  summer.run(a);  // a second run adds the same sums again (the cursors start from zero again)
  for (auto& v : want) v *= 2;
  EXPECT_EQ(sums.to_vector(), want);
  counts[0] = 0;  // counts that do not add up to n are refused, not trusted
  buffer<std::uint64_t> bad = buffer<std::uint64_t>::from_host(std::span<const std::uint64_t>(counts), ex);
  a.counts = bad.data();
  expect_invalid([&] { summer.run(a); }, "counts");
}

TEST(Kmeans, BothLayoutsGiveIdenticalResults) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  for (std::size_t d : {4u, 32u, 64u, 70u}) {
    const blobs b = make_blobs(700, d, 6, 5.0, d);
    kmeans::params p;
    p.exec = ex;
    p.seed = 3;
    p.init = init_method::kmeans_plus_plus;
    const auto padded = kmeans::fit(b.points, 700, d, 6, p);
    p.layout = smem_layout::natural;
    const auto natural = kmeans::fit(b.points, 700, d, 6, p);
    EXPECT_EQ(padded.labels, natural.labels) << "d=" << d;
    EXPECT_EQ(padded.centroids, natural.centroids) << "d=" << d;
    EXPECT_EQ(padded.inertia, natural.inertia) << "d=" << d;
  }
}

/// k unit-variance blobs pushed far apart: blob c sits near 100 * c on every axis.
blobs separated_blobs(std::size_t n, std::size_t d, std::size_t k, std::uint64_t seed) {
  blobs b = make_blobs(n, d, k, 1.0, seed);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) b.points[i * d + j] += 100.0f * static_cast<float>(b.truth[i]);
  return b;
}

TEST(Kmeans, RecoversSeparatedBlobsFromEveryInit) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  for (int s = 0; s < scaled(6, 2); ++s) {
    const std::size_t d = 2 + static_cast<std::size_t>(s) * 5, k = 3 + static_cast<std::size_t>(s) % 5, n = 800;
    const auto seed = static_cast<std::uint64_t>(s);
    const blobs b = separated_blobs(n, d, k, 77 + seed);
    for (init_method how : {init_method::kmeans_plus_plus, init_method::kmeans_parallel, init_method::user}) {
      kmeans::params p;
      p.exec = ex;
      p.seed = seed;
      p.init = how;
      if (how == init_method::user) {
        // One randomly chosen row of each blob (blob c holds the rows i with i % k == c), in a
        // shuffled order; n_init is ignored for user centroids.
        std::mt19937_64 rng(1000 + seed);
        std::vector<std::size_t> rows;
        for (std::size_t c = 0; c < k; ++c)
          rows.push_back(c + k * std::uniform_int_distribution<std::size_t>(0, (n - 1 - c) / k)(rng));
        std::shuffle(rows.begin(), rows.end(), rng);
        p.initial_centroids = rows_of(b.points, d, rows);
        p.n_init = 4;
      }
      const auto r = kmeans::fit(b.points, n, d, k, p);
      EXPECT_TRUE(same_partition(r.labels, b.truth)) << "seed " << s << " init " << static_cast<int>(how);
      EXPECT_TRUE(r.converged) << "seed " << s << " init " << static_cast<int>(how);
    }
    // Random init: one restart recovers the blobs when its k rows fall one in each blob, with
    // probability at least k!/k^k (k rows drawn without replacement from blobs of n/k rows);
    // otherwise Lloyd may keep two centres in one blob, whose inertia is far higher. All restarts
    // miss with probability at most (1 - k!/k^k)^n_init: k = 3, n_init = 28: (7/9)^28 = 8.8e-4;
    // k = 4, n_init = 71: (1 - 24/256)^71 = 9.2e-4. Seeds are not tuned: a failure is a finding.
    const std::size_t kr = 3 + static_cast<std::size_t>(s) % 2;
    const unsigned n_init = kr == 3 ? 28 : 71;
    double all_hit = 1;  // k!/k^k
    for (std::size_t c = 1; c <= kr; ++c) all_hit *= static_cast<double>(c) / static_cast<double>(kr);
    ASSERT_LT(std::pow(1 - all_hit, n_init), 1e-3);
    const blobs br = separated_blobs(n, d, kr, 177 + seed);
    kmeans::params p;
    p.exec = ex;
    p.seed = seed;
    p.init = init_method::random;
    p.n_init = n_init;
    const auto r = kmeans::fit(br.points, n, d, kr, p);
    EXPECT_TRUE(same_partition(r.labels, br.truth)) << "seed " << s << " random, k " << kr << " n_init " << n_init;
    EXPECT_TRUE(r.converged) << "seed " << s << " random";
  }
}

TEST(Kmeans, NInitKeepsTheLowestInertiaRun) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  const std::size_t n = static_cast<std::size_t>(scaled(2000, 500)), d = 4, k = 12;
  const blobs b = make_blobs(n, d, k, 3.0, 31);  // overlapping blobs: random inits end in different minima
  kmeans::params p;
  p.exec = ex;
  p.init = init_method::random;
  p.seed = 2024;
  const auto plain = kmeans::fit(b.points, n, d, k, p);
  EXPECT_EQ(kmeans::restart_seed(p.seed, 0), p.seed);
  // The five restarts of n_init = 5, reproduced one by one.
  std::vector<kmeans::host_result> runs;
  for (unsigned r = 0; r < 5; ++r) {
    kmeans::params one = p;
    one.seed = kmeans::restart_seed(p.seed, r);
    runs.push_back(kmeans::fit(b.points, n, d, k, one));
  }
  std::size_t best = 0;
  for (std::size_t r = 1; r < runs.size(); ++r)
    if (runs[r].inertia < runs[best].inertia) best = r;  // the earliest on ties
  std::size_t distinct = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) distinct += runs[r].inertia != runs[best].inertia ? 1 : 0;
  EXPECT_GT(distinct, 0u) << "all five restarts ended alike: the test shows nothing";
  kmeans::params five = p;
  five.n_init = 5;
  const auto got = kmeans::fit(b.points, n, d, k, five);
  EXPECT_EQ(got.inertia, runs[best].inertia) << "best run " << best;
  EXPECT_EQ(got.labels, runs[best].labels);
  EXPECT_EQ(got.centroids, runs[best].centroids);
  EXPECT_EQ(got.iterations, runs[best].iterations);
  EXPECT_EQ(got.converged, runs[best].converged);
  EXPECT_EQ(got.inertia_history, runs[best].inertia_history);
  EXPECT_EQ(got.reseeded, runs[best].reseeded);
  const auto again = kmeans::fit(b.points, n, d, k, five);  // deterministic with restarts too
  EXPECT_EQ(again.labels, got.labels);
  EXPECT_EQ(again.centroids, got.centroids);
  EXPECT_EQ(again.inertia, got.inertia);
  // n_init = 1 (the default) is the plain call, which is restart 0.
  kmeans::params single = p;
  single.n_init = 1;
  const auto one = kmeans::fit(b.points, n, d, k, single);
  const kmeans::host_result& first = runs[0];
  for (const kmeans::host_result* r : {&one, &first}) {
    EXPECT_EQ(r->labels, plain.labels);
    EXPECT_EQ(r->centroids, plain.centroids);
    EXPECT_EQ(r->inertia, plain.inertia);
    EXPECT_EQ(r->iterations, plain.iterations);
    EXPECT_EQ(r->inertia_history, plain.inertia_history);
  }
}

TEST(Kmeans, SameSeedSameResult) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  const std::size_t n = static_cast<std::size_t>(scaled(3000, 600));
  const blobs b = make_blobs(n, 5, 20, 3.0, 9);  // overlapping blobs: many near ties
  for (init_method how : {init_method::random, init_method::kmeans_plus_plus, init_method::kmeans_parallel}) {
    kmeans::params p;
    p.exec = ex;
    p.seed = 1234;
    p.init = how;
    const auto a = kmeans::fit(b.points, n, 5, 20, p);
    const auto c = kmeans::fit(b.points, n, 5, 20, p);
    EXPECT_EQ(a.labels, c.labels);
    EXPECT_EQ(a.centroids, c.centroids);
    EXPECT_EQ(a.inertia, c.inertia);
    EXPECT_EQ(a.iterations, c.iterations);
    p.seed = 4321;
    const auto other = kmeans::fit(b.points, n, 5, 20, p);
    EXPECT_NE(a.centroids, other.centroids) << "the seed should matter for init " << static_cast<int>(how);
  }
}

TEST(Kmeans, EmptyClusterIsReseededWithTheFarthestPoint) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  // Two tight groups on a line and one lonely far point; the third centroid starts where no
  // point is nearest to it, so it must be moved to the farthest point (the lonely one).
  std::vector<float> x;
  for (int i = 0; i < 50; ++i) x.push_back(static_cast<float>(i % 5) * 0.01f);
  for (int i = 0; i < 50; ++i) x.push_back(10.0f + static_cast<float>(i % 5) * 0.01f);
  x.push_back(40.0f);
  kmeans::params p;
  p.exec = ex;
  p.init = init_method::user;
  p.initial_centroids = {0.0f, 20.0f, -1000.0f};
  const auto r = kmeans::fit(x, x.size(), 1, 3, p);
  std::vector<float> c = r.centroids;
  for (float v : c) EXPECT_TRUE(std::isfinite(v));
  std::sort(c.begin(), c.end());
  EXPECT_NEAR(c[0], 0.02f, 1e-5);
  EXPECT_NEAR(c[1], 10.02f, 1e-4);
  EXPECT_EQ(c[2], 40.0f);
  EXPECT_GE(r.reseeded, 1u);  // the -1000 centroid had no point in the first assignment
  EXPECT_NE(r.labels[100], r.labels[0]);
  EXPECT_NE(r.labels[100], r.labels[50]);
}

TEST(Kmeans, FarthestPointsOnDeviceAndHostAgreeWithASort) {
  // The empty-cluster donors: farthest first, ties to the lower index. Few picks run one device
  // pass each, many copy the distances to the host; force each path and compare both with a
  // full sort. Distances come from a small set (many ties) and n is not a multiple of the
  // pass's 1024-point chunk; -0 must count as +0.
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  const std::size_t n = 5000;
  std::vector<float> dist(n);
  for (std::size_t i = 0; i < n; ++i) dist[i] = static_cast<float>((i * 2654435761u >> 7) % 37) * 0.25f;
  dist[4321] = 100.0f;  // the farthest, in the last chunk
  dist[17] = 100.0f;    // ... tied with a lower index, which must come first
  dist[3] = -0.0f;
  dist[2] = 0.0f;
  std::vector<std::uint32_t> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(want.begin(), want.end(), [&](std::uint32_t x, std::uint32_t y) { return dist[x] > dist[y]; });
  ASSERT_EQ(want[0], 17u);
  ASSERT_EQ(want[1], 4321u);
  buffer<float> d = buffer<float>::from_host(std::span<const float>(dist), ex);
  for (std::size_t take : {std::size_t{1}, std::size_t{7}, std::size_t{20}, n}) {
    for (std::size_t max_passes : {std::size_t{0}, n}) {  // host sort / device passes
      if (max_passes == n && take > 200) continue;          // n device passes: correct but slow under TSan
      const auto got = detail::farthest_points(ex, d.data(), n, take, max_passes);
      ASSERT_EQ(got.size(), take);
      for (std::size_t e = 0; e < take; ++e)
        ASSERT_EQ(got[e], want[e]) << "take " << take << " max_passes " << max_passes << " pick " << e;
    }
  }
  // The tail: +0 and -0 tie, so the lower index (2) comes before 3.
  const auto all = detail::farthest_points(ex, d.data(), n, n, 0);
  const auto pos = [&](std::uint32_t i) { return std::find(all.begin(), all.end(), i) - all.begin(); };
  EXPECT_LT(pos(2), pos(3));
  EXPECT_EQ(detail::farthest_points(ex, d.data(), n, n + 5).size(), n);  // never more picks than points
}

TEST(Kmeans, UserCentroidsOutsideTheDataKeepExactInertia) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  const blobs b = make_blobs(500, 2, 2, 3.0, 11);
  kmeans::params p;
  p.exec = ex;
  p.init = init_method::user;
  p.initial_centroids = {1e6f, 1e6f, -1e6f, -1e6f};  // far outside the data (|x| ~ 10)
  p.max_iter = 1;
  const auto r = kmeans::fit(b.points, 500, 2, 2, p);
  // The first assignment's inertia is measured against the far centroids.
  double want = 0;
  for (std::size_t i = 0; i < 500; ++i) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < 2; ++c) {
      const std::vector<double> cc(p.initial_centroids.begin() + static_cast<std::ptrdiff_t>(c * 2),
                                   p.initial_centroids.begin() + static_cast<std::ptrdiff_t>(c * 2 + 2));
      best = std::min(best, sq_dist(&b.points[i * 2], cc.data(), 2));
    }
    want += best;
  }
  ASSERT_EQ(r.inertia_history.size(), 1u);
  EXPECT_NEAR(r.inertia_history[0], want, 1e-6 * want);
}

TEST(Kmeans, MoreClustersThanDistinctPointsStaysFinite) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  std::vector<float> x;
  for (int i = 0; i < 40; ++i) {
    x.push_back(static_cast<float>(i % 3));
    x.push_back(1.0f);
  }
  for (init_method how : {init_method::random, init_method::kmeans_plus_plus, init_method::kmeans_parallel}) {
    kmeans::params p;
    p.exec = ex;
    p.init = how;
    const auto r = kmeans::fit(x, 40, 2, 6, p);
    for (float v : r.centroids) EXPECT_TRUE(std::isfinite(v));
    EXPECT_NEAR(r.inertia, 0.0, 1e-9);
    for (std::int32_t l : r.labels) EXPECT_TRUE(l >= 0 && l < 6);
  }
}

TEST(Kmeans, PredictAgreesWithFit) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  const blobs b = make_blobs(1500, 33, 17, 4.0, 5);
  kmeans::params p;
  p.exec = ex;
  const auto r = kmeans::fit(b.points, 1500, 33, 17, p);
  EXPECT_EQ(kmeans::predict(b.points, 1500, 33, r.centroids, 17, ex), r.labels);
  // predict on new points: nearest centroid by brute force (float32, lowest index on ties).
  const blobs fresh = make_blobs(300, 33, 17, 4.0, 6);
  const auto labels = kmeans::predict(fresh.points, 300, 33, r.centroids, 17, ex);
  for (std::size_t i = 0; i < 300; ++i) {
    float best = std::numeric_limits<float>::infinity();
    int arg = 0;
    for (int c = 0; c < 17; ++c) {
      float dd = 0;
      for (std::size_t j = 0; j < 33; ++j) {
        const float diff = fresh.points[i * 33 + j] - r.centroids[static_cast<std::size_t>(c) * 33 + j];
        dd = std::fma(diff, diff, dd);
      }
      if (dd < best) {
        best = dd;
        arg = c;
      }
    }
    EXPECT_EQ(labels[i], arg) << "point " << i;
  }
}

TEST(Kmeans, TiesGoToTheLowerCentroidIndex) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  // Points equidistant from several centroids, across register tiles (32) and staged tiles (128),
  // in one staged chunk (d = 3) and in several (d = 70); fused and through the GEMM path (k is
  // even, so the centroids' mean has x_0 = 0 and its scores tie exactly too: with an odd k
  // they would tie only up to rounding).
  for (const auto how : {kmeans::distance_method::fused, kmeans::distance_method::gemm}) {
    for (std::size_t d : {3u, 70u}) {
      for (std::size_t k : {2u, 34u, 200u}) {
        std::vector<float> centroids(k * d, 5.0f);
        for (std::size_t c = 0; c < k; ++c) centroids[c * d] = c % 2 == 0 ? 1.0f : -1.0f;  // |x - c| equal for x_0 = 0
        std::vector<float> points(300 * d, 5.0f);
        for (std::size_t i = 0; i < 300; ++i) points[i * d] = 0.0f;
        const auto fp32 = kmeans::distance_precision::fp32;
        const auto labels = kmeans::predict(points, 300, d, centroids, k, ex, fp32, how);
        for (std::size_t i = 0; i < 300; ++i)
          ASSERT_EQ(labels[i], 0) << "d=" << d << " k=" << k << " point " << i << " distance " << static_cast<int>(how);
        // Move the last centroid onto the points: it alone is nearest.
        centroids[(k - 1) * d] = 0.0f;
        const auto last = kmeans::predict(points, 300, d, centroids, k, ex, fp32, how);
        for (std::size_t i = 0; i < 300; ++i) ASSERT_EQ(last[i], static_cast<std::int32_t>(k - 1));
      }
    }
  }
}

TEST(Kmeans, EdgeShapes) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  kmeans::params p;
  p.exec = ex;
  {  // k = 1: the mean
    const blobs b = make_blobs(129, 3, 1, 2.0, 1);
    const auto r = kmeans::fit(b.points, 129, 3, 1, p);
    for (std::size_t j = 0; j < 3; ++j) {
      double mean = 0;
      for (std::size_t i = 0; i < 129; ++i) mean += b.points[i * 3 + j];
      EXPECT_NEAR(r.centroids[j], mean / 129, 1e-5);
    }
    for (auto l : r.labels) EXPECT_EQ(l, 0);
  }
  {  // k = n: every point its own cluster, inertia 0
    const blobs b = make_blobs(50, 7, 50, 10.0, 2);
    const auto r = kmeans::fit(b.points, 50, 7, 50, p);
    EXPECT_NEAR(r.inertia, 0.0, 1e-9);
    std::vector<std::int32_t> sorted = r.labels;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::unique(sorted.begin(), sorted.end()) - sorted.begin(), 50);
  }
  {  // d = 1, n = 1
    const auto r = kmeans::fit(std::vector<float>{3.5f}, 1, 1, 1, p);
    EXPECT_EQ(r.centroids, std::vector<float>{3.5f});
    EXPECT_EQ(r.inertia, 0.0);
  }
  for (float magnitude : {1e15f, 1e-15f}) {  // very large and very small coordinates
    blobs b = make_blobs(400, 3, 4, 1.0, 3);
    for (std::size_t i = 0; i < 400; ++i)
      for (std::size_t j = 0; j < 3; ++j) b.points[i * 3 + j] = (b.points[i * 3 + j] + 50.0f * b.truth[i]) * magnitude;
    p.init = init_method::kmeans_plus_plus;
    const auto r = kmeans::fit(b.points, 400, 3, 4, p);
    EXPECT_TRUE(same_partition(r.labels, b.truth)) << magnitude;
    for (float v : r.centroids) EXPECT_TRUE(std::isfinite(v));
    EXPECT_GT(r.inertia, 0.0);
  }
}

// ---- tf32 / tf32x3 distances (detail/assign_mma.hpp) -------------------------------------------

using kmeans::distance_precision;

float bits_float(std::uint32_t b) {
  float f = 0;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(KmeansTf32, RoundingIsToNearestTiesAwayFromZero) {
  using detail::round_tf32;
  const float one = 1.0f, ulp = std::ldexp(1.0f, -10);  // TF32 spacing at 1
  EXPECT_EQ(round_tf32(one), one);
  EXPECT_EQ(round_tf32(one + ulp), one + ulp);
  EXPECT_EQ(round_tf32(one + ulp / 2), one + ulp);  // tie: away from zero (ties-to-even would give 1)
  EXPECT_EQ(round_tf32(-(one + ulp / 2)), -(one + ulp));
  EXPECT_EQ(round_tf32(std::nextafter(one + ulp / 2, 0.0f)), one);  // just below the tie
  EXPECT_EQ(round_tf32(one + 1.5f * ulp), one + 2 * ulp);              // tie, odd lower neighbour
  EXPECT_EQ(round_tf32(std::nextafter(2.0f, 0.0f)), 2.0f);             // carries into the exponent
  EXPECT_EQ(round_tf32(0.0f), 0.0f);
  EXPECT_TRUE(std::isinf(round_tf32(std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(round_tf32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(round_tf32(bits_float(0x00001fffu)), bits_float(0x00002000u));  // subnormals round the same way
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1e6f, 1e6f);
  for (int i = 0; i < 10000; ++i) {
    const float v = u(rng), big = round_tf32(v), small = round_tf32(v - big);
    std::uint32_t b = 0;
    std::memcpy(&b, &big, sizeof b);
    ASSERT_EQ(b & 0x1fffu, 0u) << v;                                            // 10 mantissa bits left
    ASSERT_LE(std::fabs(big - v), std::ldexp(std::fabs(v), -11) * 1.0000001) << v;  // half a TF32 ulp
    ASSERT_LE(std::fabs(static_cast<double>(big) + small - v), std::ldexp(std::fabs(v), -21)) << v;  // 3xTF32 split
  }
}

/// Labels of `points` against `centroids` with each precision, and a bound on how far apart
/// (in exact squared distance) the nearest centroid and a centroid chosen by `prec` may be:
/// TF32 operand rounding (2^-11 each, 2^-21 for the split) plus float32 summation, on the
/// centred coordinates the kernel uses (the score is ||c||^2 - 2 x.c: twice the dot error).
struct agreement {
  std::size_t n = 0, same = 0, beyond_bound = 0;
  double fraction() const { return static_cast<double>(same) / static_cast<double>(n); }
};
agreement measure_agreement(const std::vector<float>& x, std::size_t n, std::size_t d, const std::vector<float>& cent,
                            std::size_t k, const std::vector<std::int32_t>& fp32, const std::vector<std::int32_t>& other,
                            distance_precision prec) {
  const std::vector<float> mu = detail::centroid_mean(cent.data(), k, d);
  const double operand = prec == distance_precision::tf32 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -20);
  agreement r;
  r.n = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (fp32[i] == other[i]) {
      ++r.same;
      continue;
    }
    double worst_dot = 0;  // sum_j |x'_j c'_j| over the two centroids involved
    for (const std::int32_t c : {fp32[i], other[i]}) {
      double s = 0;
      for (std::size_t j = 0; j < d; ++j)
        s += std::fabs((x[i * d + j] - mu[j]) * (cent[static_cast<std::size_t>(c) * d + j] - mu[j]));
      worst_dot = std::max(worst_dot, s);
    }
    auto dist = [&](std::int32_t c) {
      double s = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const double diff = static_cast<double>(x[i * d + j]) - cent[static_cast<std::size_t>(c) * d + j];
        s += diff * diff;
      }
      return s;
    };
    const double bound = 2 * 2 * (operand + 2.0 * static_cast<double>(d + 2) * std::ldexp(1.0, -24)) * worst_dot +
                         1e-6 * dist(fp32[i]);
    if (std::fabs(dist(other[i]) - dist(fp32[i])) > bound) ++r.beyond_bound;
  }
  return r;
}

std::vector<float> uniform_points(std::size_t count, float offset, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& e : v) e = offset + u(rng);
  return v;
}

TEST(KmeansTf32, OperandsAreRoundedBeforeMultiplying) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  // Centroids (-1, -3) and (1, 3) (centre 0, equal norms); x = (-3 + 2^-12, 1) is nearer the
  // second by 2^-10 in squared distance, but TF32 rounds x_0 to -3 (spacing 2^-9 there), which
  // makes x.c exactly 0 for both: a tie, so tf32 must pick centroid 0. Every product is exact
  // and sums to exactly 0 in any order, so the GPU must agree. 3xTF32 keeps 2^-12 in the
  // small part and picks centroid 1, as fp32 does.
  const std::vector<float> cent = {-1.0f, -3.0f, 1.0f, 3.0f};
  std::vector<float> x;
  for (int i = 0; i < 200; ++i) x.insert(x.end(), {-3.0f + std::ldexp(1.0f, -12), 1.0f});
  const auto fp32 = kmeans::predict(x, 200, 2, cent, 2, ex);
  const auto tf32 = kmeans::predict(x, 200, 2, cent, 2, ex, distance_precision::tf32);
  const auto tf32x3 = kmeans::predict(x, 200, 2, cent, 2, ex, distance_precision::tf32x3);
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(fp32[i], 1);
    ASSERT_EQ(tf32[i], 0);
    ASSERT_EQ(tf32x3[i], 1);
  }
}

TEST(KmeansTf32, RecoversSeparatedBlobsExactlyLikeFp32) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  // Shapes: one staged chunk with d not a multiple of 8; d > 32 (chunks of 32, point tile
  // resident) with k > 64 (several centroid tiles) and n not a multiple of 128; k x d too big
  // for shared accumulators; d > 136 (point chunks re-staged per centroid tile).
  static constexpr std::size_t shapes[][3] = {{1000, 5, 7}, {1333, 45, 70}, {900, 48, 150}, {700, 150, 70}};
  int run = 0;
  for (const auto& sh : shapes) {
    const std::size_t n = sh[0], d = sh[1], k = sh[2];
    blobs b = make_blobs(n, d, k, 40.0, 11 + d);
    for (auto& v : b.points) v += 500.0f;  // far from the origin: the kernel's centring matters
    std::vector<float> init;
    for (std::size_t c = 0; c < k; ++c)  // one point of every true cluster (points i % k == c)
      init.insert(init.end(), b.points.begin() + static_cast<std::ptrdiff_t>(c * d),
                  b.points.begin() + static_cast<std::ptrdiff_t>((c + 1) * d));
    kmeans::params p;
    p.exec = ex;
    p.init = init_method::user;
    p.initial_centroids = init;
    p.max_iter = 20;
    const auto want = kmeans::fit(b.points, n, d, k, p);
    ASSERT_TRUE(same_partition(want.labels, b.truth));
    // The fused tf32 / tf32x3 kernels, and tf32 through the GEMM path (assign_gemm.hpp).
    using kmeans::distance_method;
    static constexpr std::pair<distance_precision, distance_method> paths[] = {
        {distance_precision::tf32, distance_method::fused},
        {distance_precision::tf32x3, distance_method::fused},
        {distance_precision::tf32, distance_method::gemm}};
    for (const auto& [prec, how] : paths) {
      SCOPED_TRACE("n=" + std::to_string(n) + " d=" + std::to_string(d) + " k=" + std::to_string(k) +
                   " precision=" + std::to_string(static_cast<int>(prec)) +
                   " distance=" + std::to_string(static_cast<int>(how)));
      p.precision = prec;
      p.distance = how;
      p.layout = ++run % 2 == 0 ? smem_layout::natural : smem_layout::padded_odd;
      const auto got = kmeans::fit(b.points, n, d, k, p);
      EXPECT_EQ(got.distance, how);
      EXPECT_EQ(got.labels, want.labels);  // 100%: every label of every iteration, so the same centroids
      EXPECT_EQ(got.centroids, want.centroids);
      EXPECT_EQ(got.iterations, want.iterations);
      EXPECT_EQ(got.inertia, want.inertia);  // reported distances are exact float32 ones
      EXPECT_EQ(kmeans::predict(b.points, n, d, got.centroids, k, ex, prec, how), got.labels);
    }
    p.precision = distance_precision::fp32;
    p.distance = kmeans::distance_method::automatic;
    p.layout = smem_layout::padded_odd;
  }
}

TEST(KmeansTf32, LabelAgreementWithFp32OnRandomData) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  // Uniform points (no cluster structure: many near-ties) against centroids drawn from them.
  static constexpr std::size_t shapes[][3] = {{4000, 16, 40}, {3000, 37, 100}, {2000, 128, 20}, {1000, 150, 70}};
  for (const auto& sh : shapes) {
    const std::size_t n = static_cast<std::size_t>(scaled(static_cast<int>(sh[0]), 500)), d = sh[1], k = sh[2];
    const std::vector<float> x = uniform_points(n * d, 100.0f, d);
    std::vector<float> cent(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(k * d));
    for (auto& v : cent) v += 0.01f;  // not exactly on a point
    const auto fp32 = kmeans::predict(x, n, d, cent, k, ex);
    for (const distance_precision prec : {distance_precision::tf32, distance_precision::tf32x3}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " d=" + std::to_string(d) + " k=" + std::to_string(k) +
                   " precision=" + std::to_string(static_cast<int>(prec)));
      const auto got = kmeans::predict(x, n, d, cent, k, ex, prec);
      const agreement ag = measure_agreement(x, n, d, cent, k, fp32, got, prec);
      EXPECT_EQ(ag.beyond_bound, 0u) << "labels that are not near-ties of the precision";
      EXPECT_GE(ag.fraction(), prec == distance_precision::tf32 ? 0.99 : 0.999) << ag.same << " of " << ag.n;
      std::printf("[ agreement ] predict n=%zu d=%zu k=%zu %s: %.5f\n", n, d, k,
                  prec == distance_precision::tf32 ? "tf32" : "tf32x3", ag.fraction());
    }
  }
}

/// `init` from `seed`, at most `iterations` Lloyd iterations (tol = 0: only a fixed point stops earlier).
kmeans::params seeded_params(const execution& ex, init_method init, std::uint64_t seed, unsigned iterations) {
  kmeans::params p;
  p.exec = ex;
  p.init = init;
  p.seed = seed;
  p.max_iter = iterations;
  p.tol = 0;
  return p;
}

TEST(KmeansTf32, FitOnRandomDataStaysCloseToFp32) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  const std::size_t n = static_cast<std::size_t>(scaled(3000, 600)), d = 24, k = 30;
  const std::vector<float> x = uniform_points(n * d, -3.0f, 5);
  kmeans::params p = seeded_params(ex, init_method::kmeans_plus_plus, 3, 5);
  const auto want = kmeans::fit(x, n, d, k, p);
  for (const distance_precision prec : {distance_precision::tf32, distance_precision::tf32x3}) {
    SCOPED_TRACE(static_cast<int>(prec));
    p.precision = prec;
    const auto got = kmeans::fit(x, n, d, k, p);
    const auto again = kmeans::fit(x, n, d, k, p);
    EXPECT_EQ(got.labels, again.labels);  // deterministic
    EXPECT_EQ(got.inertia, again.inertia);
    // One assignment step from the same centroids (fp32's final ones): the precision's own effect.
    const auto step = kmeans::predict(x, n, d, want.centroids, k, ex, prec);
    const agreement ag = measure_agreement(x, n, d, want.centroids, k, want.labels, step, prec);
    EXPECT_EQ(ag.beyond_bound, 0u);
    EXPECT_GE(ag.fraction(), prec == distance_precision::tf32 ? 0.99 : 0.999);
    // Whole fits from the same init: on data without clusters every flipped near-tie moves two
    // centroids and the trajectories drift apart (tf32: about 99.4% after 1 iteration, 95% after
    // 5, 83% after 30 on this data), so tf32 is held to the same quality of clustering
    // (inertia). tf32x3's labels are held to fp32's where the emulation fixes every sum (the
    // host backend); on a GPU the tensor core's summation order may flip one near-tie, which
    // then cascades the same way, so there the per-step agreement above is the check.
    std::size_t same = 0;
    for (std::size_t i = 0; i < n; ++i) same += got.labels[i] == want.labels[i] ? 1 : 0;
    if (prec == distance_precision::tf32x3 && ex.where == backend::host) {
      EXPECT_GE(static_cast<double>(same) / static_cast<double>(n), 0.999);
    }
    EXPECT_NEAR(got.inertia, want.inertia, 1e-3 * want.inertia);
    // The reported inertia is the exact one of the returned labels and centroids.
    double inertia = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::vector<double> c(got.centroids.begin() + got.labels[i] * static_cast<std::ptrdiff_t>(d),
                                  got.centroids.begin() + (got.labels[i] + 1) * static_cast<std::ptrdiff_t>(d));
      inertia += sq_dist(&x[i * d], c.data(), d);
    }
    EXPECT_NEAR(got.inertia, inertia, 1e-5 * inertia);
    std::printf("[ agreement ] fit n=%zu d=%zu k=%zu %s: step %.5f, fit %.5f, inertia ratio %.7f\n", n, d, k,
                prec == distance_precision::tf32 ? "tf32" : "tf32x3", ag.fraction(),
                static_cast<double>(same) / static_cast<double>(n), got.inertia / want.inertia);
  }
}

TEST(KmeansTf32, TiesGoToTheLowerCentroidIndex) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  for (const distance_precision prec : {distance_precision::tf32, distance_precision::tf32x3}) {
    for (std::size_t d : {3u, 70u}) {
      for (std::size_t k : {2u, 65u, 200u}) {  // across centroid tiles of 64
        std::vector<float> centroids(k * d, 5.0f);
        for (std::size_t c = 0; c < k; ++c) centroids[c * d] = c % 2 == 0 ? 1.0f : -1.0f;
        std::vector<float> points(300 * d, 5.0f);
        for (std::size_t i = 0; i < 300; ++i) points[i * d] = 0.0f;
        // The centre is not 0 along x_0 when k is odd: the two candidates' scores differ only by
        // rounding then, so check the label is one of the equidistant ones, the lower on exact ties.
        const auto labels = kmeans::predict(points, 300, d, centroids, k, ex, prec);
        for (std::size_t i = 0; i < 300; ++i) {
          if (k % 2 == 0) {
            ASSERT_EQ(labels[i], 0) << "d=" << d << " k=" << k;
          } else {
            ASSERT_LE(labels[i], 1) << "d=" << d << " k=" << k;
          }
        }
        centroids[(k - 1) * d] = 0.0f;
        const auto last = kmeans::predict(points, 300, d, centroids, k, ex, prec);
        for (std::size_t i = 0; i < 300; ++i) ASSERT_EQ(last[i], static_cast<std::int32_t>(k - 1));
      }
    }
  }
}

TEST(KmeansTf32, EdgeShapesAndEmptyClusters) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  for (const distance_precision prec : {distance_precision::tf32, distance_precision::tf32x3}) {
    SCOPED_TRACE(static_cast<int>(prec));
    kmeans::params p;
    p.exec = ex;
    p.precision = prec;
    {  // k = 1: the mean, everything labelled 0
      const blobs b = make_blobs(129, 3, 1, 2.0, 1);
      const auto r = kmeans::fit(b.points, 129, 3, 1, p);
      for (std::size_t j = 0; j < 3; ++j) {
        double mean = 0;
        for (std::size_t i = 0; i < 129; ++i) mean += b.points[i * 3 + j];
        EXPECT_NEAR(r.centroids[j], mean / 129, 1e-5);
      }
      for (auto l : r.labels) EXPECT_EQ(l, 0);
    }
    {  // k = n on a grid (points >= 1 apart, d = 9 not a multiple of 8): every point its own cluster
      std::vector<float> x;
      for (int i = 0; i < 70; ++i)
        for (int j = 0; j < 9; ++j) x.push_back(static_cast<float>((i >> (j % 7)) & 1) + 3.0f * static_cast<float>(i % 5 == j % 5));
      // rows must be distinct: checked, then k-means++ seeds every point
      const auto r = kmeans::fit(x, 70, 9, 70, p);
      std::vector<std::int32_t> sorted = r.labels;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(std::unique(sorted.begin(), sorted.end()) - sorted.begin(), 70);
      EXPECT_EQ(r.inertia, 0.0);
    }
    {  // n = d = k = 1
      const auto r = kmeans::fit(std::vector<float>{3.5f}, 1, 1, 1, p);
      EXPECT_EQ(r.centroids, std::vector<float>{3.5f});
      EXPECT_EQ(r.inertia, 0.0);
    }
    {  // more clusters than distinct points: empty clusters re-seeded, never NaN
      std::vector<float> x;
      for (int i = 0; i < 40; ++i) x.insert(x.end(), {static_cast<float>(i % 3), 1.0f});
      for (init_method how : {init_method::random, init_method::kmeans_plus_plus}) {
        p.init = how;
        const auto r = kmeans::fit(x, 40, 2, 6, p);
        for (float v : r.centroids) EXPECT_TRUE(std::isfinite(v));
        EXPECT_NEAR(r.inertia, 0.0, 1e-9);
        for (std::int32_t l : r.labels) EXPECT_TRUE(l >= 0 && l < 6);
      }
      p.init = init_method::automatic;
    }
    for (float magnitude : {1e15f, 1e-15f}) {  // very large and very small coordinates
      blobs b = make_blobs(400, 3, 4, 1.0, 3);
      for (std::size_t i = 0; i < 400; ++i)
        for (std::size_t j = 0; j < 3; ++j) b.points[i * 3 + j] = (b.points[i * 3 + j] + 50.0f * b.truth[i]) * magnitude;
      p.init = init_method::kmeans_plus_plus;
      const auto r = kmeans::fit(b.points, 400, 3, 4, p);
      EXPECT_TRUE(same_partition(r.labels, b.truth)) << magnitude;
      for (float v : r.centroids) EXPECT_TRUE(std::isfinite(v));
      EXPECT_GT(r.inertia, 0.0);
    }
  }
}

// ---- the GEMM distance path (detail/assign_gemm.hpp) ------------------------------------------
// On the cuda backend distance = gemm runs cuBLAS (these tests then need libcublas); on the host
// backend the same chunks, argmin and accumulation with a host loop for the product.

using kmeans::distance_method;

/// Whether automatic should pick gemm for k x d on `ex` (fp32 / tf32).
bool expect_automatic_gemm(const execution& ex, std::size_t kd) {
  return ex.where == backend::cuda && kd >= kmeans::gemm_min_kd && detail::cublas_unavailable().empty();
}

TEST(KmeansGemm, MatchesSequentialLloyd) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  // Small d; d not a multiple of 4 with n not a multiple of 32; k x d past the shared
  // accumulators; k x d >= 2^16 (where automatic picks gemm on the GPU).
  static constexpr std::size_t shapes[][3] = {{1000, 2, 5}, {777, 37, 12}, {900, 48, 150}, {560, 130, 510}};
  for (std::size_t s = 0; s < 4; ++s) {
    const auto& sh = shapes[s];
    expect_matches_reference(ex, sh[0], sh[1], sh[2], 6.0, 40 + s, smem_layout::padded_odd, distance_method::gemm);
  }
}

TEST(KmeansGemm, FitAndPredictAgreeWithFused) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  // Blobs far from the origin (the centring keeps the GEMM form's near-ties few); gemm forced
  // below the automatic threshold (on the GPU: cuBLAS at a shape that stays cheap on the host).
  const std::size_t n = static_cast<std::size_t>(scaled(2000, 300)), d = 64, k = 64;
  blobs b = make_blobs(n, d, k, 3.0, 77);
  for (auto& v : b.points) v += 100.0f;
  kmeans::params p = seeded_params(ex, init_method::random, 5, 3);  // (k-means++ is slow under TSan)
  p.distance = distance_method::fused;
  const auto fused = kmeans::fit(b.points, n, d, k, p);
  p.distance = distance_method::gemm;
  const auto gemm = kmeans::fit(b.points, n, d, k, p);
  ASSERT_EQ(fused.distance, distance_method::fused);
  ASSERT_EQ(gemm.distance, distance_method::gemm);
  EXPECT_EQ(gemm.iterations, fused.iterations);
  for (std::size_t e = 0; e < k * d; ++e)
    ASSERT_NEAR(gemm.centroids[e], fused.centroids[e], 1e-4 * std::fabs(fused.centroids[e])) << "centroid value " << e;
  std::vector<double> cent(fused.centroids.begin(), fused.centroids.end());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (gemm.labels[i] == fused.labels[i]) continue;
    ++differing;
    EXPECT_TRUE(near_tie(b.points, i, d, cent, k)) << "point " << i;
  }
  EXPECT_LE(differing, n / 100);
  EXPECT_NEAR(gemm.inertia, fused.inertia, 1e-5 * fused.inertia);
  // Deterministic: a second gemm fit is bit for bit the first.
  const auto again = kmeans::fit(b.points, n, d, k, p);
  EXPECT_EQ(again.labels, gemm.labels);
  EXPECT_EQ(again.centroids, gemm.centroids);
  EXPECT_EQ(again.inertia, gemm.inertia);
  // predict through gemm gives fit's labels (same centroids, same path); fused predict gives
  // the same except near-ties.
  const auto by_gemm =
      kmeans::predict(b.points, n, d, gemm.centroids, k, ex, distance_precision::fp32, distance_method::gemm);
  EXPECT_EQ(by_gemm, gemm.labels);
  const auto by_fused =
      kmeans::predict(b.points, n, d, gemm.centroids, k, ex, distance_precision::fp32, distance_method::fused);
  std::vector<double> gcent(gemm.centroids.begin(), gemm.centroids.end());
  for (std::size_t i = 0; i < n; ++i)
    if (by_fused[i] != by_gemm[i]) {
      EXPECT_TRUE(near_tie(b.points, i, d, gcent, k)) << "point " << i;
    }
}

TEST(KmeansGemm, Tf32LabelAgreementWithFp32) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  // Uniform points near the origin (many near-ties) against centroids drawn from them.
  const std::size_t n = static_cast<std::size_t>(scaled(3000, 500)), d = 64, k = 100;
  const std::vector<float> x = uniform_points(n * d, -0.5f, 21);
  std::vector<float> cent(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(k * d));
  for (auto& v : cent) v += 0.01f;
  const auto fp32 = kmeans::predict(x, n, d, cent, k, ex, distance_precision::fp32, distance_method::fused);
  const auto got = kmeans::predict(x, n, d, cent, k, ex, distance_precision::tf32, distance_method::gemm);
  std::size_t same = 0;
  for (std::size_t i = 0; i < n; ++i) same += got[i] == fp32[i] ? 1 : 0;
  EXPECT_GE(static_cast<double>(same) / static_cast<double>(n), 0.98) << same << " of " << n;
  std::printf("[ agreement ] gemm tf32 predict n=%zu d=%zu k=%zu: %.5f\n", n, d, k,
              static_cast<double>(same) / static_cast<double>(n));
}

TEST(KmeansGemm, ChunkSizeDoesNotChangeTheResult) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  const std::size_t n = 1000, d = 19, k = 37;  // n not a multiple of 32: a short last chunk and tile
  const blobs b = make_blobs(n, d, k, 3.0, 8);
  const std::vector<float> host_centroids(b.points.begin(), b.points.begin() + static_cast<std::ptrdiff_t>(k * d));
  const buffer<float> pts = buffer<float>::from_host(std::span<const float>(b.points), ex);
  const buffer<float> cents = buffer<float>::from_host(std::span<const float>(host_centroids), ex);
  const std::vector<float> mu = detail::centroid_mean(host_centroids.data(), k, d);
  const buffer<float> centre = buffer<float>::from_host(std::span<const float>(mu), ex);
  std::vector<std::vector<std::uint64_t>> sums;
  std::vector<std::vector<std::int32_t>> labels;
  std::vector<std::vector<float>> dists;
  for (std::size_t chunk : {std::size_t{0}, std::size_t{32}, std::size_t{100}}) {
    buffer<std::int32_t> l(n, ex);
    buffer<float> dist(n, ex);
    buffer<std::uint64_t> acc(k * d + k + 1, ex);
    detail::fill_zero(ex, acc.data(), acc.size());
    detail::assign_args a;
    a.points = pts.data();
    a.n = n;
    a.d = d;
    a.centroids = cents.data();
    a.k = k;
    a.labels = l.data();
    a.dist = dist.data();
    a.dist_mode = detail::dist_output::write;
    a.sums = acc.data();
    a.counts = acc.data() + k * d;
    a.inertia = acc.data() + k * d + k;
    a.sum_scale = detail::fixed_scale(20.0, n);
    a.dist_scale = detail::fixed_scale(d * 4.0 * 400, n);
    a.centre = centre.data();
    detail::gemm_assigner g(ex, n, d, k, false, chunk);
    EXPECT_EQ(g.chunk_rows(), chunk == 0 ? 1024u : chunk == 100 ? 128u : 32u);
    g.run(a);
    sums.push_back(acc.to_vector());
    labels.push_back(l.to_vector());
    dists.push_back(dist.to_vector());
  }
  for (std::size_t r = 1; r < sums.size(); ++r) {
    EXPECT_EQ(sums[r], sums[0]);
    EXPECT_EQ(labels[r], labels[0]);
    EXPECT_EQ(dists[r], dists[0]);
  }
  // Distances are the exact float32 ones of the chosen centroid; counts add up to n.
  std::uint64_t total = 0;
  for (std::size_t c = 0; c < k; ++c) total += sums[0][k * d + c];
  EXPECT_EQ(total, n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::size_t>(labels[0][i]);
    ASSERT_LT(c, k);
    EXPECT_EQ(dists[0][i], detail::exact_sq_dist(&b.points[i * d], &host_centroids[c * d], d)) << i;
  }
}

TEST(KmeansGemm, AutomaticPicksByShapeAndPrecision) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  struct shape {
    std::size_t n, d, k;
  };
  for (const shape sh : {shape{300, 8, 16}, shape{256, 256, 256}}) {  // k x d = 2^7, 2^16
    const blobs b = make_blobs(sh.n, sh.d, sh.k, 5.0, 3);
    for (const distance_precision prec : {distance_precision::fp32, distance_precision::tf32, distance_precision::tf32x3}) {
      kmeans::params p;
      p.exec = ex;
      p.init = init_method::random;
      p.max_iter = 1;
      p.precision = prec;
      const auto r = kmeans::fit(b.points, sh.n, sh.d, sh.k, p);
      const bool gemm = prec != distance_precision::tf32x3 && expect_automatic_gemm(ex, sh.d * sh.k);
      EXPECT_EQ(r.distance, gemm ? distance_method::gemm : distance_method::fused)
          << "d=" << sh.d << " k=" << sh.k << " precision=" << static_cast<int>(prec);
    }
  }
  if (ex.where == backend::cuda) {  // GPU runs must exercise cuBLAS, not fall back silently
    EXPECT_EQ(detail::cublas_unavailable(), "");
  }
}

TEST(Kmeans, BadInputNamesTheArgument) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = small_pool(ex0);
  kmeans::params p;
  p.exec = ex;
  std::vector<float> x(20, 1.0f);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  expect_invalid([&] { kmeans::fit(std::vector<float>{}, 0, 2, 1, p); }, "n");
  expect_invalid([&] { kmeans::fit(x, 10, 0, 1, p); }, "d");
  expect_invalid([&] { kmeans::fit(x, 10, 2, 0, p); }, "k");
  expect_invalid([&] { kmeans::fit(x, 10, 2, 11, p); }, "k");
  expect_invalid([&] { kmeans::fit(x, 10, 3, 2, p); }, "points");  // 20 values, not 30
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    std::vector<float> y = x;
    y[13] = bad;
    expect_invalid([&] { kmeans::fit(y, 10, 2, 2, p); }, "points");
    expect_invalid([&] { kmeans::predict(y, 10, 2, std::vector<float>{0, 0}, 1, ex); }, "points");
    expect_invalid([&] { kmeans::predict(x, 10, 2, std::vector<float>{0, bad}, 1, ex); }, "centroids");
  }
  {
    std::vector<float> huge = x;
    huge[0] = 1e30f;
    expect_invalid([&] { kmeans::fit(huge, 10, 2, 2, p); }, "points");
  }
  kmeans::params u = p;
  u.init = init_method::user;
  u.initial_centroids = {1, 2, 3};  // k x d = 4
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, u); }, "params.initial_centroids");
  u.initial_centroids = {1, 2, 3, std::numeric_limits<float>::quiet_NaN()};
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, u); }, "params.initial_centroids");
  u.initial_centroids = {1, 2, 3, 4e19f};  // finite, but squared distances to it overflow float32
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, u); }, "params.initial_centroids");
  kmeans::params m = p;
  m.max_iter = 0;
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, m); }, "params.max_iter");
  m = p;
  m.tol = -1;
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, m); }, "params.tol");
  m = p;
  m.n_init = 0;
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, m); }, "params.n_init");
  m.init = init_method::user;  // checked even where n_init is otherwise ignored
  m.initial_centroids = {0, 0, 1, 1};
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, m); }, "params.n_init");
  expect_invalid([&] { kmeans::predict(x, 10, 2, std::vector<float>{0, 0, 1}, 1, ex); }, "centroids");
  expect_invalid([&] { kmeans::predict(x, 10, 2, std::vector<float>{}, 0, ex); }, "k");
  m = p;
  m.precision = static_cast<kmeans::distance_precision>(7);
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, m); }, "params.precision");
  expect_invalid([&] { kmeans::predict(x, 10, 2, std::vector<float>{0, 0}, 1, ex, m.precision); }, "precision");
  m = p;
  m.accumulation = static_cast<kmeans::accumulation_method>(5);
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, m); }, "params.accumulation");
  m = p;
  m.distance = static_cast<kmeans::distance_method>(9);
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, m); }, "params.distance");
  expect_invalid([&] { kmeans::predict(x, 10, 2, std::vector<float>{0, 0}, 1, ex, distance_precision::fp32, m.distance); },
                 "distance");
  m.distance = kmeans::distance_method::gemm;  // cuBLAS has no 3xTF32 SGEMM
  m.precision = distance_precision::tf32x3;
  expect_invalid([&] { kmeans::fit(x, 10, 2, 2, m); }, "params.distance");
  expect_invalid([&] { kmeans::predict(x, 10, 2, std::vector<float>{0, 0}, 1, ex, m.precision, m.distance); }, "distance");
}

}  // namespace
}  // namespace warpkv::testing
