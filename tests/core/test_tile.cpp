// The tile layer has CUDA's semantics on every backend: ballot/any/all/shfl across tile
// sizes, tiles whose lanes only partly hold work, and a launcher that visits each tile once.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "../common/backend.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/fault_injection.hpp"
#include "warpkv/core/launcher.hpp"

namespace warpkv::testing {
namespace {

// Per tile: lanes whose global index is below `active` vote true; results are recorded per lane.
struct collectives_fn {
  std::size_t active;
  std::uint32_t* ballots;
  unsigned* any_all;
  std::uint64_t* shfl_from_last;
  std::uint64_t* shfl_rotate;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index) const {
    const unsigned r = t.thread_rank();
    const std::size_t lane = tile_index * Tile::size() + r;
    const bool vote = lane < active && (lane % 3 != 1);
    ballots[lane] = t.ballot(vote);
    any_all[lane] = (t.any(vote) ? 1u : 0u) | (t.all(lane < active) ? 2u : 0u);
    const std::uint64_t mine = 1000003ull * lane + 17;
    shfl_from_last[lane] = t.shfl(mine, Tile::size() - 1);
    shfl_rotate[lane] = t.shfl(mine, (r + 1) % Tile::size());
  }
};

template <class N>
class TileCollectives : public ::testing::Test {};
using Sizes = ::testing::Types<std::integral_constant<int, 1>, std::integral_constant<int, 2>, std::integral_constant<int, 4>,
                               std::integral_constant<int, 8>, std::integral_constant<int, 16>, std::integral_constant<int, 32>>;
TYPED_TEST_SUITE(TileCollectives, Sizes);

TYPED_TEST(TileCollectives, MatchCudaSemantics) {
  constexpr int N = TypeParam::value;
  WARPKV_TEST_EXECUTION(ex);
  const std::size_t tiles = 37;
  const std::size_t lanes = tiles * N;
  const std::size_t active = lanes - N / 2 - 1;  // the last tile is partly idle
  buffer<std::uint32_t> ballots(lanes, ex);
  buffer<unsigned> any_all(lanes, ex);
  buffer<std::uint64_t> from_last(lanes, ex), rotate(lanes, ex);
  launch<N>(ex, tiles, simple_body<collectives_fn>{{active, ballots.data(), any_all.data(), from_last.data(), rotate.data()}});
  const auto b = ballots.to_vector();
  const auto aa = any_all.to_vector();
  const auto fl = from_last.to_vector();
  const auto ro = rotate.to_vector();
  for (std::size_t t = 0; t < tiles; ++t) {
    std::uint32_t expect = 0;
    bool all_active = true;
    for (int r = 0; r < N; ++r) {
      const std::size_t lane = t * N + r;
      if (lane < active && lane % 3 != 1) expect |= 1u << r;
      all_active = all_active && lane < active;
    }
    for (int r = 0; r < N; ++r) {
      const std::size_t lane = t * N + r;
      ASSERT_EQ(b[lane], expect) << "tile " << t << " lane " << r;
      ASSERT_EQ(aa[lane], (expect != 0 ? 1u : 0u) | (all_active ? 2u : 0u));
      ASSERT_EQ(fl[lane], 1000003ull * (t * N + N - 1) + 17);
      ASSERT_EQ(ro[lane], 1000003ull * (t * N + (r + 1) % N) + 17);
    }
  }
}

struct visit_fn {
  unsigned* visits;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index) const {
    if (t.thread_rank() == 0) atomic_ref<unsigned>(visits[tile_index]).fetch_add(1, memory_order::relaxed);
  }
};

TEST(Launcher, VisitsEveryTileExactlyOnce) {
  WARPKV_TEST_EXECUTION(ex);
  for (std::size_t tiles : {std::size_t{1}, std::size_t{5}, std::size_t{1000}, std::size_t{4099}}) {
    buffer<unsigned> visits(tiles, ex);
    const std::vector<unsigned> zeros(tiles, 0);
    visits.copy_from_host(zeros.data(), tiles);
    launch<8>(ex, tiles, simple_body<visit_fn>{{visits.data()}});
    for (unsigned v : visits.to_vector()) ASSERT_EQ(v, 1u);
  }
  launch<8>(ex, 0, simple_body<visit_fn>{{nullptr}});  // an empty grid runs nothing
}

// A tile-per-item body that shapes its launch (core/launcher.hpp: block_threads, items_per_thread):
// every item is still run exactly once, for counts that leave the last block or thread part-filled.
template <int Block, int Items>
struct shaped_visit_body : simple_body<visit_fn> {
  static constexpr bool thread_per_item = true;
  static constexpr int block_threads = Block;
  static constexpr int items_per_thread = Items;
};

template <int Block, int Items>
void expect_shaped_visits(const execution& ex) {
#if WARPKV_HAS_CUDA
  static_assert(!detail::persistent_grid<shaped_visit_body<Block, Items>>());
  static_assert(detail::block_threads_of<shaped_visit_body<Block, Items>>() == (Block > 0 ? Block : detail::block_threads));
  static_assert(detail::items_per_thread_of<shaped_visit_body<Block, Items>>() == (Items > 1 ? Items : 1));
#endif
  for (std::size_t tiles : {std::size_t{1}, std::size_t{127}, std::size_t{128}, std::size_t{257}, std::size_t{5000},
                            std::size_t{70001}}) {
    buffer<unsigned> visits(tiles, ex);
    const std::vector<unsigned> zeros(tiles, 0);
    visits.copy_from_host(zeros.data(), tiles);
    shaped_visit_body<Block, Items> body;
    body.f = visit_fn{visits.data()};
    launch<1>(ex, tiles, body);
    const std::vector<unsigned> got = visits.to_vector();
    for (std::size_t i = 0; i < tiles; ++i) ASSERT_EQ(got[i], 1u) << "item " << i << " of " << tiles;
  }
}

TEST(Launcher, ShapedThreadPerItemLaunchesVisitEveryItemOnce) {
  WARPKV_TEST_EXECUTION(ex);
  expect_shaped_visits<128, 2>(ex);
  expect_shaped_visits<64, 3>(ex);
  expect_shaped_visits<0, 4>(ex);
  expect_shaped_visits<96, 0>(ex);
}

// Two tiles that can only finish if both run at once: each waits for the other's flag.
struct rendezvous_fn {
  unsigned* flags;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    if (t.thread_rank() != 0) return;
    atomic_ref<unsigned>(flags[i]).store(1);
    while (atomic_ref<unsigned>(flags[1 - i]).load() == 0) {
    }
  }
};

TEST(Launcher, HostBackendRunsTilesConcurrently) {
  std::vector<unsigned> flags(2, 0);
  launch<4>(execution::host(2), 2, simple_body<rendezvous_fn>{{flags.data()}});
  EXPECT_EQ(flags[0] + flags[1], 2u);
}

}  // namespace
}  // namespace warpkv::testing

namespace warpkv::testing {
namespace {

struct count_visits_fn {
  unsigned* hits;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    hits[i * Tile::size() + t.thread_rank()] += 1;
  }
};

// Issue 22: the host backend borrows its lane threads from a persistent pool; when a thread
// cannot be started the launch throws warpkv::error before any lane runs (it used to deadlock:
// the lanes already started waited at a tile barrier for a lane that never came), and the
// pool stays usable.
TEST(HostLanePool, ThreadStartFailureIsAnErrorNotAHang) {
  auto& pool = detail::host_lane_pool::instance();
  const execution ex = execution::host();
  std::vector<unsigned> hits;
  // `tiles` tiles at once over `num_tiles` tiles of 4 lanes; hits counts each lane's visits.
  auto body = [&](unsigned tiles, std::size_t num_tiles = 0) {
    if (num_tiles == 0) num_tiles = tiles;
    hits.assign(num_tiles * 4, 0u);
    unsigned* h = hits.data();
    launch<4>(execution::host(tiles), num_tiles, simple_body<count_visits_fn>{count_visits_fn{h}});
  };
  body(2);
  const std::size_t before = pool.size();
  body(2);
  EXPECT_EQ(pool.size(), before) << "a second launch of the same width started new threads";
  // A launch wider than the pool needs new threads: make the first start fail.
  const unsigned wide = static_cast<unsigned>(pool.size() / 4 + 3);
  warpkv::fault_injection::fail_thread_start(0);
  try {
    body(wide);
    FAIL() << "expected warpkv::error";
  } catch (const warpkv::error& e) {
    EXPECT_EQ(e.code(), errc::unsupported);
    EXPECT_NE(std::string(e.what()).find("lane thread"), std::string::npos) << e.what();
  }
  warpkv::fault_injection::disarm();
  for (unsigned v : hits) EXPECT_EQ(v, 0u) << "a lane ran although the launch failed";
  ASSERT_EQ(hits.size(), std::size_t{wide} * 4);
  body(wide);  // the pool still works, and now has the threads
  for (unsigned v : hits) EXPECT_EQ(v, 1u);
  // The lane count is bounded: more tiles than the limit run in turns, not on more threads.
  body(100000, 600);
  for (unsigned v : hits) EXPECT_EQ(v, 1u);
  EXPECT_LE(pool.size(), detail::max_host_lanes + 64);
  (void)ex;
}

}  // namespace
}  // namespace warpkv::testing
