// The partition pass of a phased mixed batch (core/batch_partition.hpp): every operation index
// lands in exactly one list, the list of its kind, whatever the batch's length and mix.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "../common/backend.hpp"
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

}  // namespace
}  // namespace warpkv::testing
