// The growth policy every growable map shares (core/growth.hpp): the sizing rule, a rebuild's
// attempts and the batch's grow-and-re-run loop with its error. Plain C++ translation unit.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "warpkv/core/error.hpp"
#include "warpkv/core/growth.hpp"

namespace warpkv::testing {
namespace {

// ---- the growth policy's sizing rule -----------------------------------------------------------
TEST(GrowthPolicy, SizingRule) {
  const detail::growth_policy g{0.5};
  EXPECT_EQ(g.capacity_for(0), 64u);
  EXPECT_EQ(g.capacity_for(100), 256u);
  EXPECT_TRUE(g.over_load(33, 64));
  EXPECT_FALSE(g.over_load(32, 64));
  // Loaded (at least half the maximum load factor): doubled; otherwise the same (a new seed).
  EXPECT_EQ(g.grow_to(1024, 256, 1), 2048u);
  EXPECT_EQ(g.grow_to(1024, 255, 1), 1024u);
  // Never less than the keys need.
  EXPECT_EQ(g.grow_to(1024, 100, 5000), 16384u);
  EXPECT_THROW((void)detail::round_capacity(std::size_t{1} << 32, std::size_t{1} << 31, "warpkv::vulkan"), error);
  EXPECT_EQ(detail::round_capacity(std::size_t{1} << 31, std::size_t{1} << 31, "warpkv::vulkan"), std::size_t{1} << 31);
}

TEST(GrowthPolicy, RerunLoopGivesUpAfter64RoundsNamingTheMap) {
  batch_summary first;
  first.count[static_cast<int>(status::full)] = 3;
  int grows = 0, runs = 0;
  try {
    (void)detail::rerun_until_placed(
        first, first, detail::map_label{"warpkv: ", "some_map"},
        [&](std::uint64_t) {
          ++runs;
          return first;
        },
        [&](std::uint64_t pending) {
          EXPECT_EQ(pending, 3u);
          ++grows;
        },
        [](const batch_summary&) {});
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::capacity);
    EXPECT_STREQ(e.what(), "warpkv: some_map could not place 3 keys after 64 growth rounds");
  }
  EXPECT_EQ(grows, 64);
  EXPECT_EQ(runs, 64);
}

TEST(GrowthPolicy, RebuildDoublesEverySecondAttempt) {
  std::vector<std::pair<std::size_t, std::uint64_t>> tries;
  detail::rebuild_until_placed(64, 7, "never", [&](std::size_t c, std::uint64_t s) {
    tries.emplace_back(c, s);
    return tries.size() == 5;
  });
  ASSERT_EQ(tries.size(), 5u);
  EXPECT_EQ(tries[0].first, 64u);
  EXPECT_EQ(tries[1].first, 64u);
  EXPECT_EQ(tries[2].first, 128u);
  EXPECT_EQ(tries[3].first, 128u);
  EXPECT_EQ(tries[4].first, 256u);
  EXPECT_EQ(tries[0].second, detail::next_seed(7));
  EXPECT_EQ(tries[1].second, detail::next_seed(detail::next_seed(7)));
  EXPECT_THROW(detail::rebuild_until_placed(64, 7, "gave up", [](std::size_t, std::uint64_t) { return false; }), error);
}

}  // namespace
}  // namespace warpkv::testing
