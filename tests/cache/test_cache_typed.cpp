// vector_cache (issue 25, item 3): values as vectors of `dim` float or half elements under
// HierarchicalKV's names, against a sequential model; warpkv::half's conversions and the half
// accumulation's rounding; racing host threads accumulating into hot keys; bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "../common/backend.hpp"
#include "../common/backend_arrays.hpp"
#include "../common/expect_invalid.hpp"
#include "warpkv/cache/vector_cache.hpp"
#include "warpkv/core/half.hpp"

namespace warpkv::testing {
namespace {

std::uint64_t key_of(std::uint64_t id) { return id * 0x9e3779b97f4a7c15ull % 0xfffffffffffull + 1; }

template <class V>
V elem(float f) {
  if constexpr (std::is_same_v<V, half>) return to_half(f);
  else return f;
}
template <class V>
float value(V v) {
  if constexpr (std::is_same_v<V, half>) return to_float(v);
  else return v;
}
template <class V>
const char* name_of() {
  return std::is_same_v<V, half> ? "half" : "float";
}
/// The model's a + b in V: the exact sum (double holds it) rounded to V. For half through float:
/// rounding the exact sum to float and then to half is rounding it to half (24 >= 2 x 11 + 2).
template <class V>
float model_add(float a, float b) {
  return value(elem<V>(static_cast<float>(static_cast<double>(a) + static_cast<double>(b))));
}
/// A random element exactly representable in V: a multiple of 1/8 in [-16, 16].
template <class V>
float random_elem(std::mt19937_64& rng) {
  return static_cast<float>(static_cast<int>(rng() % 257) - 128) / 8.0f;
}

// ---- warpkv::half: binary16 conversions ---------------------------------------------------------

/// The value of binary16 bits h, computed from the format's definition (NaN: NaN).
double binary16_value(std::uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 31) v = man != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0) v = std::ldexp(static_cast<double>(man), -24);
  else v = std::ldexp(static_cast<double>(1024 + man), exp - 25);
  return sign != 0 ? -v : v;
}

TEST(CacheTypedHalf, SoftHalfConvertsEveryBinary16AndRoundsToNearestEven) {
  // every bit pattern to float and back
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const double want = binary16_value(static_cast<std::uint16_t>(h));
    const float got = detail::half_bits_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
      ASSERT_TRUE(std::isnan(detail::half_bits_to_float(detail::float_to_half_bits(got)))) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), want) << h;
    ASSERT_EQ(detail::float_to_half_bits(got), h) << "round trip of " << h;
  }
  // between two adjacent positive halves: below the midpoint the lower, above it the upper, at
  // it the even one (the largest finite half's upper neighbour is inf: 65520 overflows)
  for (std::uint32_t h = 0; h < 0x7c00u; ++h) {
    const double lo = binary16_value(static_cast<std::uint16_t>(h)), hi = h + 1 == 0x7c00u ? 65536.0 : binary16_value(static_cast<std::uint16_t>(h + 1));
    const float mid = static_cast<float>((lo + hi) / 2);  // exact: 12 significant bits
    const std::uint16_t even = static_cast<std::uint16_t>(h % 2 == 0 ? h : h + 1);
    ASSERT_EQ(detail::float_to_half_bits(mid), even) << h;
    ASSERT_EQ(detail::float_to_half_bits(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(detail::float_to_half_bits(std::nextafter(mid, 1e9f)), h + 1) << h;
    ASSERT_EQ(detail::float_to_half_bits(-mid), even | 0x8000u) << h;
  }
  EXPECT_EQ(detail::float_to_half_bits(1e30f), 0x7c00u);
  EXPECT_EQ(detail::float_to_half_bits(-std::numeric_limits<float>::infinity()), 0xfc00u);
  EXPECT_EQ(detail::float_to_half_bits(1e-30f), 0u);  // below half the smallest subnormal: zero
#if WARPKV_HALF_IS_CUDA
  // soft_half is __half's bits: CUDA's conversions agree on every half and on random floats
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    __half_raw r;
    r.x = static_cast<unsigned short>(h);
    const float c = __half2float(__half(r)), s = detail::half_bits_to_float(static_cast<std::uint16_t>(h));
    ASSERT_TRUE(std::isnan(c) ? std::isnan(s) : c == s) << h;
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng());
    float f;
    std::memcpy(&f, &bits, 4);
    f = std::ldexp(f, -static_cast<int>(rng() % 120));  // many in half's range
    if (std::isnan(f)) continue;
    const __half_raw c = __half_raw(__float2half_rn(f));
    ASSERT_EQ(c.x, detail::float_to_half_bits(f)) << f;
  }
#endif
}

TEST(CacheTypedHalf, AccumulateRoundsTheExactSumOnce) {
  // detail::accumulate<half>(a, b) is the half nearest a + b (ties to even), for random halves
  // of every magnitude (a + b is exact in double)
  std::mt19937_64 rng(11);
  for (int i = 0; i < 300000; ++i) {
    auto pick = [&] {
      std::uint16_t h;
      do h = static_cast<std::uint16_t>(rng()); while (((h >> 10) & 0x1f) == 31);  // finite
      if (i % 2 == 0) h = static_cast<std::uint16_t>((h & 0x83ff) | ((10 + rng() % 10) << 10));  // near each other
      return h;
    };
    const std::uint16_t a = pick(), b = pick();
    const double exact = binary16_value(a) + binary16_value(b);
    const half r = detail::accumulate(to_half(detail::half_bits_to_float(a)), to_half(detail::half_bits_to_float(b)));
    const std::uint16_t rb = detail::float_to_half_bits(to_float(r));
    const double got = binary16_value(rb);
    if (std::isinf(got)) {
      ASSERT_GE(std::fabs(exact), 65520.0) << a << " + " << b;
      continue;
    }
    // no other half is nearer; at a tie the chosen one is even
    for (const int step : {-1, 1}) {
      const std::uint16_t nb = static_cast<std::uint16_t>(rb + step);
      if (((nb >> 10) & 0x1f) == 31 || (rb & 0x7fff) == 0) continue;  // past inf, or a zero's neighbours by sign
      const double other = binary16_value(nb);
      ASSERT_LE(std::fabs(got - exact), std::fabs(other - exact)) << a << " + " << b;
      if (std::fabs(got - exact) == std::fabs(other - exact)) {
        ASSERT_EQ(rb % 2, 0) << "tie to even: " << a << " + " << b;
      }
    }
  }
}

// ---- vector_cache against a sequential model ---------------------------------------------------

/// Rows of a model as the typed array of a batch.
template <class V>
std::vector<V> rows_of(const std::vector<std::vector<float>>& r) {
  std::vector<V> out;
  for (const auto& row : r)
    for (float f : row) out.push_back(elem<V>(f));
  return out;
}

/// Random batches of distinct keys (a batch's result does not depend on the order it runs in)
/// of every typed call, against std::map; no eviction (the cache is loaded to a quarter).
template <class V>
void typed_calls_match_the_model(const execution& ex, std::size_t dim, int seed) {
  SCOPED_TRACE(std::string(name_of<V>()) + " dim " + std::to_string(dim) + " seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  vector_cache<V> cache(dim, cache_config{1024}, ex);
  ASSERT_EQ(cache.value_bytes(), dim * sizeof(V));
  std::map<std::uint64_t, std::vector<float>> model;
  const auto random_row = [&] {
    std::vector<float> r(dim);
    for (float& f : r) f = random_elem<V>(rng);
    return r;
  };
  const int batches = std::max(15, static_cast<int>(60 * test_scale()));
  for (int b = 0; b < batches; ++b) {
    const std::size_t n = 1 + rng() % 40;
    std::set<std::uint64_t> pick;
    while (pick.size() < n) pick.insert(key_of(1 + rng() % 250));
    const std::vector<std::uint64_t> keys(pick.begin(), pick.end());
    std::vector<std::vector<float>> in(n);
    for (auto& r : in) r = random_row();
    const auto d_keys = on(ex, keys);
    auto d_in = on(ex, rows_of<V>(in));
    buffer<status> d_st(n, ex);
    const int op = static_cast<int>(rng() % 6);
    std::vector<status> want(n);
    switch (op) {
      case 0: {  // insert_or_assign
        cache.insert_or_assign(n, d_keys.data(), d_in.data(), nullptr, d_st.data());
        for (std::size_t i = 0; i < n; ++i) {
          want[i] = model.count(keys[i]) ? status::assigned : status::inserted;
          model[keys[i]] = in[i];
        }
        break;
      }
      case 1: {  // find: hits get the stored row, misses keep the output's row
        auto d_bool = buffer<bool>(n, ex);
        cache.find(n, d_keys.data(), d_in.data(), d_bool.data(), d_st.data());
        const auto out = back(d_in);
        for (std::size_t i = 0; i < n; ++i) {
          const auto it = model.find(keys[i]);
          want[i] = it != model.end() ? status::found : status::not_found;
          const std::vector<float>& row = it != model.end() ? it->second : in[i];
          for (std::size_t j = 0; j < dim; ++j) ASSERT_EQ(value(out[i * dim + j]), row[j]) << "find, key " << i << " element " << j;
        }
        break;
      }
      case 2: {  // find_or_insert: every row is the stored value afterwards
        cache.find_or_insert(n, d_keys.data(), d_in.data(), nullptr, nullptr, d_st.data());
        const auto out = back(d_in);
        for (std::size_t i = 0; i < n; ++i) {
          const bool had = model.count(keys[i]) != 0;
          want[i] = had ? status::found : status::inserted;
          if (!had) model[keys[i]] = in[i];
          for (std::size_t j = 0; j < dim; ++j) ASSERT_EQ(value(out[i * dim + j]), model[keys[i]][j]) << "find_or_insert " << i;
        }
        break;
      }
      case 3: {  // assign: present keys only
        cache.assign(n, d_keys.data(), d_in.data(), nullptr, d_st.data());
        for (std::size_t i = 0; i < n; ++i) {
          const bool had = model.count(keys[i]) != 0;
          want[i] = had ? status::assigned : status::not_found;
          if (had) model[keys[i]] = in[i];
        }
        break;
      }
      case 4: {  // accum_or_assign: element-wise sums in V, or inserts
        cache.accum_or_assign(n, d_keys.data(), d_in.data(), d_st.data());
        for (std::size_t i = 0; i < n; ++i) {
          auto it = model.find(keys[i]);
          want[i] = it != model.end() ? status::assigned : status::inserted;
          if (it == model.end()) model[keys[i]] = in[i];
          else
            for (std::size_t j = 0; j < dim; ++j) it->second[j] = model_add<V>(it->second[j], in[i][j]);
        }
        break;
      }
      default: {  // erase
        cache.erase(n, d_keys.data(), d_st.data());
        for (std::size_t i = 0; i < n; ++i) want[i] = model.erase(keys[i]) != 0 ? status::erased : status::not_found;
      }
    }
    const auto st = back(d_st);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(st[i], want[i]) << "op " << op << " key " << i;
    ASSERT_EQ(cache.size(), model.size());
  }
  // the whole content, through typed export pages of an odd size
  const std::size_t page = 37;
  buffer<std::uint64_t> d_k(page, ex);
  buffer<V> d_v(page * dim, ex);
  std::size_t seen = 0;
  for (std::size_t offset = 0; offset < cache.capacity(); offset += page) {
    const std::size_t got = cache.export_batch(page, offset, d_k.data(), d_v.data());
    const auto k = back(d_k);
    const auto v = back(d_v);
    for (std::size_t e = 0; e < got; ++e) {
      const auto it = model.find(k[e]);
      ASSERT_NE(it, model.end()) << "exported a key the model does not hold";
      for (std::size_t j = 0; j < dim; ++j) ASSERT_EQ(value(v[e * dim + j]), it->second[j]) << "export " << e;
    }
    seen += got;
  }
  EXPECT_EQ(seen, model.size());
}

TEST(CacheTyped, FloatValuesMatchTheModel) {
  WARPKV_TEST_EXECUTION(ex);
  // dims 1 and 3: rows of 4 and 12 bytes, staged; 2 and 8: the cache's stride, in place
  for (const std::size_t dim : {1, 2, 3, 8}) typed_calls_match_the_model<float>(ex, dim, static_cast<int>(dim) + 1);
}

TEST(CacheTyped, HalfValuesMatchTheModel) {
  WARPKV_TEST_EXECUTION(ex);
  // dims 1, 3, 6: staged; 4 and 8: in place
  for (const std::size_t dim : {1, 3, 4, 6, 8}) typed_calls_match_the_model<half>(ex, dim, static_cast<int>(dim) + 20);
}

TEST(CacheTyped, WordApiSeesTheTypedValues) {
  WARPKV_TEST_EXECUTION(ex);
  vector_cache<half> cache(3, cache_config{64}, ex);  // 6 bytes in a stride of 8
  ASSERT_EQ(cache.words().value_stride(), 8u);
  const std::vector<std::uint64_t> keys{key_of(1)};
  const std::vector<half> row{to_half(1.5f), to_half(-2.0f), to_half(0.125f)};
  const auto d_keys = on(ex, keys);
  const auto d_row = on(ex, row);
  cache.insert_or_assign(1, d_keys.data(), d_row.data());
  std::vector<std::byte> got(8);
  std::vector<status> st(1);
  cache.words().get(keys, got, st);
  ASSERT_EQ(st[0], status::found);
  EXPECT_EQ(std::memcmp(got.data(), row.data(), 6), 0) << "the value's bytes are the three halves";
  std::uint16_t pad;
  std::memcpy(&pad, got.data() + 6, 2);
  EXPECT_EQ(pad, 0u) << "a staged row's padding is zeroed";
}

// ---- accumulation ----------------------------------------------------------------------------

TEST(CacheTyped, HalfAccumulationRoundsOncePerAddWithinTheBound) {
  WARPKV_TEST_EXECUTION(ex);
  // One key accumulates K deltas, one call each (a sequential run). Each addition rounds the
  // exact sum t_k = s_{k-1} + d_k to half once: s_k = t_k (1 + e_k), |e_k| <= u = 2^-11 (half's
  // unit roundoff, round to nearest). So the stored value is exactly the model's per-step
  // rounding, and it differs from the exact (double) sum of the deltas by at most u x sum |t_k|.
  constexpr std::size_t dim = 5, K = 300;
  const double u = std::ldexp(1.0, -11);
  vector_cache<half> cache(dim, cache_config{64}, ex);
  std::mt19937_64 rng(5);
  const std::vector<std::uint64_t> key{key_of(9)};
  const auto d_key = on(ex, key);
  std::vector<float> model(dim, 0.0f);
  std::vector<double> exact(dim, 0.0), bound(dim, 0.0);
  for (std::size_t k = 0; k < K; ++k) {
    std::vector<half> d(dim);
    for (std::size_t j = 0; j < dim; ++j) {
      // non-integer deltas of several magnitudes (element j: about 2^(2j - 4))
      const float f = std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 900) / 1000.0f, 2 * static_cast<int>(j) - 4);
      d[j] = to_half(f);
      const double dj = static_cast<double>(to_float(d[j]));
      const double t = static_cast<double>(model[j]) + dj;
      bound[j] += u * std::fabs(t);
      model[j] = k == 0 ? to_float(d[j]) : model_add<half>(model[j], to_float(d[j]));
      exact[j] += dj;
    }
    const auto d_d = on(ex, d);
    buffer<status> st(1, ex);
    cache.accum_or_assign(1, d_key.data(), d_d.data(), st.data());
    ASSERT_EQ(back(st)[0], k == 0 ? status::inserted : status::assigned);
  }
  buffer<half> out(dim, ex);
  ASSERT_EQ(cache.find(1, d_key.data(), out.data())[status::found], 1u);
  const auto got = back(out);
  for (std::size_t j = 0; j < dim; ++j) {
    EXPECT_EQ(to_float(got[j]), model[j]) << "element " << j << ": the model's per-step rounding";
    EXPECT_LE(std::fabs(static_cast<double>(to_float(got[j])) - exact[j]), bound[j]) << "element " << j;
    EXPECT_GT(bound[j], 0.0);
  }
}

TEST(CacheTyped, RacingThreadsAccumulatingIntoHotKeysLoseNoDelta) {
  WARPKV_TEST_EXECUTION(ex);
  // Four threads accumulate small integers into 16 hot keys that start absent (the first adds
  // race as inserts): every sum stays an integer below 2048, exact in half and float in any
  // order, so a lost or doubled delta shows as a wrong sum.
  constexpr int threads = 4;
  constexpr std::size_t keys_n = 16, batch = 64;
  const std::size_t batches = std::min<std::size_t>(
      50, std::max<std::size_t>(4, static_cast<std::size_t>(40 * test_scale())));  // sums: 40 x batches < 2048
  auto race = [&](auto& cache, auto tag) {
    using V = decltype(tag);
    const std::size_t dim = cache.dim();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        std::vector<std::uint64_t> keys(batch);
        std::vector<V> d(batch * dim);
        for (std::size_t i = 0; i < batch; ++i) {
          keys[i] = key_of(100 + i % keys_n);
          for (std::size_t j = 0; j < dim; ++j) d[i * dim + j] = elem<V>(j == 0 ? 1.0f : static_cast<float>(t + 1));
        }
        const auto d_keys = on(ex, keys);
        const auto d_d = on(ex, d);
        for (std::size_t b = 0; b < batches; ++b) cache.accum_or_assign(batch, d_keys.data(), d_d.data());
      });
    for (auto& th : pool) th.join();
    std::vector<std::uint64_t> keys;
    for (std::size_t i = 0; i < keys_n; ++i) keys.push_back(key_of(100 + i));
    const auto d_keys = on(ex, keys);
    buffer<V> out(keys_n * dim, ex);
    ASSERT_EQ(cache.find(keys_n, d_keys.data(), out.data())[status::found], keys_n);
    const auto got = back(out);
    const float per_key = static_cast<float>(batch / keys_n * batches);
    for (std::size_t i = 0; i < keys_n; ++i)
      for (std::size_t j = 0; j < dim; ++j)
        EXPECT_EQ(value(got[i * dim + j]), per_key * (j == 0 ? threads : 1 + 2 + 3 + 4)) << "key " << i << " element " << j;
  };
  {
    SCOPED_TRACE("half, dim 4 (in place), the seed's design: slot locks, inline values");
    vector_cache<half, std::uint64_t, 4, 4, cache_designs::ccht> cache(4, cache_config{256}, ex);
    race(cache, half{});
  }
  {
    SCOPED_TRACE("float, dim 3 (staged), the default design");
    vector_cache<float> cache(3, cache_config{256}, ex);
    race(cache, float{});
  }
}

// ---- eviction reports with typed rows ---------------------------------------------------------

TEST(CacheTyped, InsertAndEvictReportsTypedRows) {
  WARPKV_TEST_EXECUTION(ex);
  // two buckets of 4: the 40 keys overflow them; the cache and the reports together hold every
  // key once, each with its value
  constexpr std::size_t dim = 3;
  vector_cache<half> cache(dim, cache_config{8}, ex);
  std::map<std::uint64_t, std::vector<float>> given;
  std::map<std::uint64_t, std::vector<float>> evicted;
  // the first n keys and rows of a report or export page into `evicted`, each key once
  const auto take = [&](const buffer<std::uint64_t>& d_k, const buffer<half>& d_v, std::size_t n, const char* what) {
    const auto k = back(d_k);
    const auto v = back(d_v);
    for (std::size_t e = 0; e < n; ++e) {
      std::vector<float> row;
      for (std::size_t j = 0; j < dim; ++j) row.push_back(to_float(v[e * dim + j]));
      ASSERT_TRUE(evicted.emplace(k[e], row).second) << what;
    }
  };
  for (std::uint64_t b = 0; b < 5; ++b) {
    std::vector<std::uint64_t> keys;
    std::vector<half> rows;
    for (std::uint64_t i = 0; i < 8; ++i) {
      keys.push_back(key_of(1 + b * 8 + i));
      for (std::size_t j = 0; j < dim; ++j) {
        const float f = static_cast<float>(b * 8 + i) + static_cast<float>(j) / 4.0f;
        rows.push_back(to_half(f));
        given[keys.back()].push_back(f);
      }
    }
    const auto d_keys = on(ex, keys);
    const auto d_rows = on(ex, rows);
    buffer<std::uint64_t> ev_keys(keys.size(), ex);
    buffer<half> ev_rows(keys.size() * dim, ex);
    take(ev_keys, ev_rows, cache.insert_and_evict(keys.size(), d_keys.data(), d_rows.data(), ev_keys.data(), ev_rows.data()),
         "evicted twice");
  }
  buffer<std::uint64_t> d_k(cache.capacity(), ex);
  buffer<half> d_v(cache.capacity() * dim, ex);
  const std::size_t live = cache.export_batch(cache.capacity(), 0, d_k.data(), d_v.data());
  EXPECT_EQ(live, cache.capacity());
  take(d_k, d_v, live, "a key both cached and evicted");
  EXPECT_EQ(evicted, given) << "every key once, with its value";
}

// ---- bad arguments -----------------------------------------------------------------------------

TEST(CacheTyped, BadArguments) {
  WARPKV_TEST_EXECUTION(ex);
  expect_invalid([&] { vector_cache<float> c(0, cache_config{64}, ex); }, "dim");
  expect_invalid([&] { vector_cache<half> c(max_value_bytes / 2 + 1, cache_config{64}, ex); }, "dim");
  expect_invalid([&] { vector_cache<float> c(4, cache_config{64, 12}, ex); }, "dim");  // 16 bytes, not 12
  vector_cache<float>(4, cache_config{64, 16}, ex);                                     // matching: fine
  vector_cache<float> c(3, cache_config{64}, ex);
  const auto keys = on(ex, std::vector<std::uint64_t>{key_of(1)});
  auto rows = on(ex, std::vector<float>{1, 2, 3});
  std::uint64_t ek[1];
  expect_invalid([&] { c.insert_or_assign(1, keys.data(), nullptr); }, "values");
  expect_invalid([&] { c.insert_or_assign(1, nullptr, rows.data()); }, "keys");
  expect_invalid([&] { c.find(1, keys.data(), nullptr); }, "values_out");
  expect_invalid([&] { c.find_or_insert(1, keys.data(), nullptr); }, "values");
  expect_invalid([&] { c.accum_or_assign(1, keys.data(), nullptr); }, "deltas");
  expect_invalid([&] { c.accum_or_assign(1, nullptr, rows.data()); }, "keys");
  expect_invalid([&] { c.assign(1, keys.data(), nullptr, nullptr); }, "values");
  expect_invalid([&] { c.insert_and_evict(1, keys.data(), nullptr, ek); }, "values");
  expect_invalid([&] { c.insert_and_evict(1, keys.data(), rows.data(), nullptr); }, "evicted_keys");
  EXPECT_EQ(c.size(), 0u) << "a refused call changes nothing";
  c.insert_or_assign(0, nullptr, nullptr);  // n = 0: nothing needed
  c.accum_or_assign(0, nullptr, nullptr);
  // a file saved with another dim is refused by size, the cache unchanged
  c.insert_or_assign(1, keys.data(), rows.data());
  const std::string path = ::testing::TempDir() + "warpkv_typed_" + std::to_string(::getpid());
  vector_cache<float>(4, cache_config{64}, ex).save(path);
  expect_invalid([&] { c.load(path); }, "path");
  EXPECT_EQ(c.size(), 1u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace warpkv::testing
