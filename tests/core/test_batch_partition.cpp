// The partition pass of a phased mixed batch (core/batch_partition.hpp): every operation index
// lands in exactly one list, the list of its kind, whatever the batch's length and mix.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "../common/backend.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/batch_partition.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/launcher.hpp"

namespace warpkv::testing {
namespace {

TEST(MixedBatchPartition, EveryOpLandsOnceInTheListOfItsKind) {
  WARPKV_TEST_EXECUTION(ex);
  std::mt19937_64 rng(7);
  // lengths around the pass's 256-op tiles, one op, and a batch of one kind only
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{255}, std::size_t{256}, std::size_t{257},
                        std::size_t{1000}, std::size_t{5003}}) {
    for (int mix = 0; mix < 6; ++mix) {
      const bool wide = mix >= 3;
      std::vector<op> ops(n);
      for (auto& o : ops) {
        const unsigned r = static_cast<unsigned>(rng() % 6);  // 5: an op code outside warpkv::op
        o = mix % 3 == 2 ? op::erase : r == 5 ? static_cast<op>(200) : static_cast<op>(r);
      }
      auto dops = buffer<op>::from_host(ops, ex);
      buffer<std::uint32_t> a(n, ex), b(n, ex);
      batch_counters counts(ex);
      counts.zero();
      // the backend's own pass, and (wide) the GPU's 32-lane tiles on whatever backend this is
      if (wide) {
        using fn = detail::sort_into_lists_fn<32, detail::op_kind_sorter>;
        launch<32>(ex, (n + fn::ops_per_tile - 1) / fn::ops_per_tile,
                   simple_body<fn>{{{dops.data(), n, a.data(), b.data()}, n, counts.data()}});
      } else {
        detail::partition_ops(ex, dops.data(), n, a.data(), b.data(), counts.data());
      }
      const batch_summary c = counts.read();
      const std::size_t reads = c.count[0], writes = c.count[1], erases = c.count[2];
      ASSERT_EQ(reads + writes + erases, n) << "n " << n;
      const auto av = a.to_vector();
      const auto bv = b.to_vector();
      std::vector<int> seen(n, 0);
      auto take = [&](std::uint32_t i, unsigned want) {
        ASSERT_LT(i, n);
        ++seen[i];
        EXPECT_EQ(detail::list_of(ops[i]), want) << "op " << i << " in the wrong list";
      };
      for (std::size_t j = 0; j < reads; ++j) take(av[j], 0);
      for (std::size_t j = 0; j < writes; ++j) take(bv[j], 1);
      for (std::size_t j = 0; j < erases; ++j) take(av[n - 1 - j], 2);
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; })) << "n " << n << " mix " << mix;
      if (mix % 3 == 2) {
        EXPECT_EQ(erases, n);
      }
    }
  }
}

// The second pass's list (full_sorter): every operation left `full` is listed once, nothing else
// is, and a list shorter than the count is never written past its room.
TEST(SecondPassList, ListsEveryFullOperationOnceAndNothingElse) {
  WARPKV_TEST_EXECUTION(ex);
  std::mt19937_64 rng(11);
  for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{1023}, std::size_t{1024}, std::size_t{1025},
                        std::size_t{7000}}) {
    for (int share : {0, 1, 50, 100}) {  // percent of operations left full
      for (const bool wide : {false, true}) {
        std::vector<status> st(n);
        std::size_t want = 0;
        for (auto& s : st) {
          const bool full = static_cast<int>(rng() % 100) < share;
          s = full ? status::full : static_cast<status>(rng() % 5);
          want += full ? 1u : 0u;
        }
        auto dst = buffer<status>::from_host(st, ex);
        const std::size_t room = want > 3 ? want - 3 : want;  // short by 3 once there are more than 3
        std::vector<std::uint32_t> guard_init(room + 8, 0xdeadbeefu);
        auto list = buffer<std::uint32_t>::from_host(guard_init, ex);
        batch_counters counts(ex);
        counts.zero();
        const detail::full_sorter sorter{dst.data(), list.data(), room};
        if (wide) {
          using fn = detail::sort_into_lists_fn<32, detail::full_sorter>;
          launch<32>(ex, (n + fn::ops_per_tile - 1) / fn::ops_per_tile, simple_body<fn>{{sorter, n, counts.data()}});
        } else {
          detail::sort_into_lists(ex, sorter, n, counts.data());
        }
        ASSERT_EQ(counts.read().count[0], want) << "n " << n << " share " << share;
        const auto lv = list.to_vector();
        std::vector<int> seen(n, 0);
        for (std::size_t j = 0; j < room; ++j) {
          ASSERT_LT(lv[j], n);
          EXPECT_EQ(st[lv[j]], status::full) << "listed " << lv[j] << " is not full";
          ++seen[lv[j]];
        }
        for (std::size_t j = room; j < lv.size(); ++j) EXPECT_EQ(lv[j], 0xdeadbeefu) << "written past the room at " << j;
        std::size_t listed = 0;
        for (std::size_t i = 0; i < n; ++i) {
          EXPECT_LE(seen[i], 1) << "op " << i << " listed twice";
          listed += static_cast<std::size_t>(seen[i]);
        }
        EXPECT_EQ(listed, room);
      }
    }
  }
}


// An op whose status comes from a table, counting how often it ran (lane 0 of its tile).
struct table_op {
  const status* st;
  unsigned* runs;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    if (t.thread_rank() == 0) atomic_ref<unsigned>(runs[i]).fetch_add(1u, memory_order::relaxed);
    return st[i];
  }
};

std::vector<status> random_statuses(std::mt19937_64& rng, std::size_t n, int share, std::size_t& full) {
  std::vector<status> st(n);
  full = 0;
  for (auto& s : st) {
    const bool f = static_cast<int>(rng() % 100) < share;
    s = f ? status::full : static_cast<status>(rng() % 5);
    full += f ? 1u : 0u;
  }
  return st;
}

// The first pass's handback list (core/batch.hpp, handback_list) and the marked passes over it
// (marked_op): the list holds every operation that ended `full`, once and marked, and nothing
// past its length is written; a marked pass runs and counts only the marked entries, unmarks
// those that end otherwise and leaves the rest marked for the next pass; with a device-side
// length it ignores everything past it.
template <int T>
void check_handback_and_marked_passes(const execution& ex) {
  std::mt19937_64 rng(13 + T);
  for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{1025}, std::size_t{7000}}) {
    for (int share : {0, 3, 50, 100}) {
      std::size_t want = 0;
      const std::vector<status> st = random_statuses(rng, n, share, want);
      auto dst = buffer<status>::from_host(st, ex);
      auto runs = buffer<unsigned>::from_host(std::vector<unsigned>(n, 0u), ex);
      auto list = buffer<std::uint32_t>::from_host(std::vector<std::uint32_t>(n, 0xdeadbeefu), ex);
      batch_counters c(ex, 2);
      using handing_t = detail::handing_back_op<table_op>;
      const batch_summary first = launch_batch<T, handing_t, batch_shape::op_per_tile>(
          ex, n, handing_t{table_op{dst.data(), runs.data()}, handback_list{list.data(), c.data(1)}}, nullptr, c);
      ASSERT_EQ(first[status::full], want) << "n " << n << " share " << share;
      ASSERT_EQ(c.read_groups(2)[1].count[0], want) << "the list's length";
      auto lv = list.to_vector();
      std::vector<int> seen(n, 0);
      for (std::size_t j = 0; j < want; ++j) {
        ASSERT_NE(lv[j] & list_mark, 0u) << "entry " << j << " is not marked";
        const std::uint32_t i = lv[j] & ~list_mark;
        ASSERT_LT(i, n);
        EXPECT_EQ(st[i], status::full) << "listed " << i << " is not full";
        ++seen[i];
      }
      for (std::size_t j = want; j < n; ++j) EXPECT_EQ(lv[j], 0xdeadbeefu) << "written past the length at " << j;
      for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], st[i] == status::full ? 1 : 0) << "op " << i;

      // the second pass: listed operations get new statuses, some `full` again
      std::size_t again = 0;
      std::vector<status> st2 = random_statuses(rng, n, 40, again);
      again = 0;
      for (std::size_t i = 0; i < n; ++i) again += st[i] == status::full && st2[i] == status::full ? 1u : 0u;
      auto dst2 = buffer<status>::from_host(st2, ex);
      auto runs2 = buffer<unsigned>::from_host(std::vector<unsigned>(n, 0u), ex);
      auto out = buffer<status>::from_host(std::vector<status>(n, static_cast<status>(99)), ex);
      using marked_t = detail::marked_op<table_op>;
      const batch_summary second = launch_batch<T, marked_t, batch_shape::op_per_tile>(
          ex, want, marked_t{table_op{dst2.data(), runs2.data()}, list.data(), out.data()}, nullptr, c);
      std::uint64_t ran = 0;
      for (const auto k : second.count) ran += k;
      EXPECT_EQ(ran, want) << "the second pass counts every listed operation once";
      EXPECT_EQ(second[status::full], again);
      const auto r2 = runs2.to_vector();
      const auto ov = out.to_vector();
      lv = list.to_vector();
      for (std::size_t i = 0; i < n; ++i) {
        const bool listed = st[i] == status::full;
        EXPECT_EQ(r2[i], listed ? 1u : 0u) << "op " << i << " ran " << r2[i] << " times";
        EXPECT_EQ(ov[i], listed ? st2[i] : static_cast<status>(99)) << "op " << i << "'s status";
      }
      for (std::size_t j = 0; j < want; ++j) {
        const std::uint32_t i = lv[j] & ~list_mark;
        EXPECT_EQ((lv[j] & list_mark) != 0u, st2[i] == status::full) << "entry " << j << "'s mark";
      }

      // a third pass queued over all n with the length on the device: only the still-marked run
      auto length = buffer<unsigned long long>::from_host(std::vector<unsigned long long>{want}, ex);
      auto runs3 = buffer<unsigned>::from_host(std::vector<unsigned>(n, 0u), ex);
      const batch_summary third = launch_batch<T, marked_t, batch_shape::op_per_tile>(
          ex, n, marked_t{table_op{dst.data(), runs3.data()}, list.data(), nullptr, length.data()}, nullptr, c);
      ran = 0;
      for (const auto k : third.count) ran += k;
      EXPECT_EQ(ran, again);
      const auto r3 = runs3.to_vector();
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_EQ(r3[i], st[i] == status::full && st2[i] == status::full ? 1u : 0u) << "op " << i;
    }
  }
}

TEST(HandbackList, ListsEveryFullOperationAndMarkedPassesRunOnlyMarkedOnes) {
  WARPKV_TEST_EXECUTION(ex);
  check_handback_and_marked_passes<1>(ex);
  check_handback_and_marked_passes<4>(ex);
}

}  // namespace
}  // namespace warpkv::testing
