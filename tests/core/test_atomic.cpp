// Racing atomics through warpkv::atomic_ref on the chosen backend, plus the hash and the
// error/buffer helpers every structure relies on.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "../common/backend.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/launcher.hpp"

namespace warpkv::testing {
namespace {

struct race_fn {
  unsigned long long* counters;  // [0] fetch_add, [1] CAS increments, [2] fetch_or bits, [3] exchange count
  unsigned* and_word;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    atomic_ref<unsigned long long>(counters[0]).fetch_add(1 + t.thread_rank(), memory_order::relaxed);
    atomic_ref<unsigned long long> c(counters[1]);
    unsigned long long seen = c.load(memory_order::relaxed);
    while (!c.compare_exchange(seen, seen + 1, memory_order::acq_rel)) {
    }
    atomic_ref<unsigned long long>(counters[2]).fetch_or(1ull << (i % 64), memory_order::relaxed);
    if (t.thread_rank() == 0) {
      atomic_ref<unsigned>(*and_word).fetch_and(~(1u << (i % 32)), memory_order::relaxed);
      atomic_ref<unsigned long long>(counters[3]).exchange(i, memory_order::relaxed);
    }
    atomic_thread_fence(memory_order::seq_cst);
  }
};

TEST(AtomicRef, RacingUpdatesAreExact) {
  WARPKV_TEST_EXECUTION(ex);
  constexpr int N = 4;
  const std::size_t tiles = 3000;
  buffer<unsigned long long> counters(4, ex);
  buffer<unsigned> word(1, ex);
  const unsigned long long zeros[4] = {0, 0, 0, 0};
  const unsigned ones = 0xffffffffu;
  counters.copy_from_host(zeros, 4);
  word.copy_from_host(&ones, 1);
  launch<N>(ex, tiles, simple_body<race_fn>{{counters.data(), word.data()}});
  const auto c = counters.to_vector();
  EXPECT_EQ(c[0], tiles * (1 + 2 + 3 + 4));
  EXPECT_EQ(c[1], tiles * N);
  EXPECT_EQ(c[2], ~0ull);
  EXPECT_LT(c[3], tiles);
  EXPECT_EQ(word.to_vector()[0], 0u);
}

/// Index i claims a ticket after a divergent, index-dependent number of spins (threads of one
/// warp reach the claim at different times, as in the maps' retry loops) and records it.
struct claim_fn {
  unsigned long long* next;
  unsigned long long* tickets;
  unsigned* next32;
  unsigned* tickets32;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    for (std::size_t spin = fmix64(i) % 7; spin > 0; --spin) atomic_ref<unsigned long long>(*next).load(memory_order::acquire);
    if (fmix64(i) % 3 != 0) tickets[i] = atomic_ref<unsigned long long>(*next).fetch_add_exact(1);
    else tickets[i] = atomic_ref<unsigned long long>(*next).fetch_add_exact(1);  // a second call site
    tickets32[i] = atomic_ref<unsigned>(*next32).fetch_add_exact(1u);
  }
};

// fetch_add_exact hands every caller its own value, also when the threads of a warp arrive at
// different times and from different call sites (the merged fetch_add nvcc emits did not, in
// chained_map's pool on an H100).
TEST(AtomicRef, FetchAddExactHandsOutDistinctValues) {
  WARPKV_TEST_EXECUTION(ex);
  const std::size_t n = 1 << 18;
  buffer<unsigned long long> next(1, ex), tickets(n, ex);
  buffer<unsigned> next32(1, ex), tickets32(n, ex);
  const unsigned long long zero = 0;
  const unsigned zero32 = 0;
  next.copy_from_host(&zero, 1);
  next32.copy_from_host(&zero32, 1);
  launch<1>(ex, n, simple_body<claim_fn>{{next.data(), tickets.data(), next32.data(), tickets32.data()}});
  auto t = tickets.to_vector();
  auto t32 = tickets32.to_vector();
  std::sort(t.begin(), t.end());
  std::sort(t32.begin(), t32.end());
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(t[i], i) << "64-bit tickets are not 0..n-1 exactly once";
    ASSERT_EQ(t32[i], i) << "32-bit tickets are not 0..n-1 exactly once";
  }
  EXPECT_EQ(next.to_vector()[0], n);
}

struct parity_op {
  template <class Tile>
  WARPKV_HD status operator()(const Tile&, std::size_t i) const {
    return i % 3 == 0 ? status::inserted : (i % 3 == 1 ? status::found : status::full);
  }
};

TEST(Batch, CountsEveryStatusAndRecordsEachOperation) {
  WARPKV_TEST_EXECUTION(ex);
  const std::size_t n = 10001;
  buffer<status> st(n, ex);
  const auto summary = launch_batch<8>(ex, n, parity_op{}, st.data());
  EXPECT_EQ(summary[status::inserted], 3334u);
  EXPECT_EQ(summary[status::found], 3334u);
  EXPECT_EQ(summary[status::full], 3333u);
  const auto v = st.to_vector();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(v[i], parity_op{}(0, i));
  const auto again = launch_batch<8>(ex, n, parity_op{}, st.data(), /*only_full=*/true);
  EXPECT_EQ(again[status::full], 3333u);
  EXPECT_EQ(again[status::inserted], 0u);
}

TEST(Hash, FinalizersAreBijectiveSamplesAndSeedsDiffer) {
  EXPECT_EQ(fmix32(0), 0u);
  EXPECT_EQ(fmix64(0), 0u);
  std::set<std::uint32_t> seen;
  for (std::uint32_t i = 0; i < 100000; ++i) seen.insert(fmix32(i));
  EXPECT_EQ(seen.size(), 100000u);
  int same = 0;
  for (std::uint32_t i = 0; i < 1000; ++i) same += hash_bits(i, 0) == hash_bits(i, 1);
  EXPECT_LT(same, 5);
  EXPECT_NE(hash_bits(std::uint64_t{42}, 0), hash_bits(std::uint64_t{42}, 7));
}

TEST(Errors, NameTheBadArgument) {
  try {
    require(false, "max_load_factor", "must be in (0, 1]");
    FAIL();
  } catch (const warpkv::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("max_load_factor"), std::string::npos);
  }
  EXPECT_THROW(buffer<std::uint64_t>(~std::size_t{0} / 4, execution::host()), warpkv::error);
  buffer<int> b(4, execution::host());
  const std::vector<int> src(8, 1);
  volatile std::size_t too_many = src.size();  // opaque to the optimizer: the check must catch it at run time
  EXPECT_THROW(b.copy_from_host(src.data(), too_many), warpkv::error);
  if (!cuda_available()) {
    EXPECT_THROW(execution::gpu(), warpkv::error);
  }
}

}  // namespace
}  // namespace warpkv::testing
