// chained_map (both allocation modes): the shared typed suite, plus tests aimed at a lock-free
// chained table's own hazards: long lists in one bucket under concurrent inserts, erases and
// finds (sorted order, unlinking of marked nodes), hot keys, a node pool that runs out inside
// the ref (full) and through the bulk API (rebuild into a fresh pool, no lost insert), and
// erase/insert churn whose erased nodes are reclaimed by rebuilds instead of growing the pool
// without bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "../common/hot_keys.hpp"
#include "../common/map_suite.hpp"
#include "../common/ref_checks.hpp"
#include "warpkv/chained/chained_map.hpp"
#include "warpkv/core/batch.hpp"

namespace warpkv::testing {
namespace {

// cudaLimitMallocHeapSize can only change before the process's first kernel that calls malloc:
// construct one device-allocation map before any test runs, so its constructor raises the limit.
class DeviceHeapEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string why;
    if (const auto ex = test_execution(&why)) {
      chained_map<std::uint32_t, std::uint32_t, chained_alloc::device, 1> first(64, {}, *ex);
    }
  }
};
[[maybe_unused]] ::testing::Environment* const device_heap_environment =
    ::testing::AddGlobalTestEnvironment(new DeviceHeapEnvironment);

using Maps = ::testing::Types<chained_map<std::uint32_t, std::uint32_t, chained_alloc::pool, 1>,
                              chained_map<std::uint32_t, std::uint32_t, chained_alloc::device, 1>,
                              chained_map<std::uint64_t, std::uint64_t, chained_alloc::pool, 2>,
                              chained_map<std::int64_t, double, chained_alloc::device, 1>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Chained, MapSuite, Maps);

using pool32 = chained_map<std::uint32_t, std::uint32_t, chained_alloc::pool, 1>;
using heap32 = chained_map<std::uint32_t, std::uint32_t, chained_alloc::device, 1>;

template <class Map>
class ChainedLists : public ::testing::Test {};
using Both = ::testing::Types<pool32, heap32>;
TYPED_TEST_SUITE(ChainedLists, Both);

/// Keys that all hash to bucket `b` of this map's current table.
template <class Map>
std::vector<std::uint32_t> keys_in_bucket(const Map& m, std::size_t b, std::size_t count) {
  return keys_where([r = m.ref(), b](std::uint32_t k) { return r.bucket(k) == b; }, count);
}

// One bucket holds a list of a few hundred keys; batches insert, erase and find them all at once,
// so inserts land next to nodes being marked and unlinked. Every batch is linearizable per key
// and the list stays sorted with unique live keys.
TYPED_TEST(ChainedLists, OneLongListUnderConcurrentWriters) {
  WARPKV_TEST_EXECUTION(ex);
  chained_config cfg;
  cfg.pool_nodes = 1 << 16;  // no rebuild: the list itself is under test
  TypeParam map(512, cfg, ex);  // more buckets than keys: no growth either
  const std::size_t range = std::max<std::size_t>(40, static_cast<std::size_t>(300 * test_scale()));
  const auto keys = keys_in_bucket(map, 7, range);
  std::mt19937_64 rng(11);
  std::unordered_map<std::uint32_t, std::uint32_t> state;
  std::uint32_t next = 1;
  const std::size_t n = std::max<std::size_t>(400, static_cast<std::size_t>(3000 * test_scale()));
  for (int batch = 0; batch < 6; ++batch) {
    std::vector<op> ops(n);
    std::vector<std::uint32_t> k(n), v(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = rng() % 100;
      ops[i] = r < 35 ? (r % 2 ? op::insert : op::insert_or_assign) : r < 70 ? op::erase : op::find;
      k[i] = keys[rng() % keys.size()];
      v[i] = next++;
    }
    const auto problem = execute_and_check(map, ops, k, v, state);
    ASSERT_FALSE(problem.has_value()) << "batch " << batch << ": " << *problem;
  }
  EXPECT_EQ(map.rehash_count(), 0u);
}

// Many tiles insert, upsert, erase and find three keys at once (tests/common/hot_keys.hpp).
TYPED_TEST(ChainedLists, RacingWritersOnTheSameKeys) {
  WARPKV_TEST_EXECUTION(ex);
  TypeParam map(256, {}, ex);
  race_on_hot_keys(map, 3, std::max<std::size_t>(300, static_cast<std::size_t>(1500 * test_scale())), 6);
}

// An async call does not rebuild, so its room check must count the pool's nodes, not the keys:
// nodes of erased keys stay taken until a rebuild. A pool used up by erased keys must make an
// async insert throw errc::capacity before anything runs (it used to pass the check, which
// looked at size() alone, and report `full`: found on the H100 under compute-sanitizer, session
// 21), and after the rehash that the message names every insert must land.
TYPED_TEST(ChainedLists, AsyncInsertsCountThePoolsNodesNotTheKeys) {
  if constexpr (TypeParam::allocation != chained_alloc::pool) {
    GTEST_SKIP() << "device allocation has no pool";
  } else {
    WARPKV_TEST_EXECUTION(ex);
    using K = typename TypeParam::key_type;
    using V = typename TypeParam::mapped_type;
    TypeParam map(256, {}, ex);
    const std::size_t nodes = map.pool_nodes();
    ASSERT_GE(nodes, map.capacity());
    // Fill and erase 3/4 of the pool's nodes (synchronous calls: no rebuild, the table stays small).
    std::vector<K> churned(nodes * 3 / 4);
    for (std::size_t i = 0; i < churned.size(); ++i) churned[i] = make_key<K>(i + 1);
    const std::vector<V> cv(churned.size(), V{7});
    const auto ins = map.insert(churned, cv);
    ASSERT_EQ(std::count(ins.begin(), ins.end(), status::inserted), static_cast<long>(churned.size()));
    const auto er = map.erase(churned);
    ASSERT_EQ(std::count(er.begin(), er.end(), status::erased), static_cast<long>(churned.size()));
    ASSERT_EQ(map.size(), 0u);
    const std::size_t rehashes = map.rehash_count();
    ASSERT_EQ(map.pool_used(), churned.size());
    // Half the buckets' room in fresh keys: the load factor allows them, the pool does not.
    const std::size_t m = map.capacity() / 2;
    std::vector<K> fresh(m);
    for (std::size_t i = 0; i < m; ++i) fresh[i] = make_key<K>(100000 + i);
    const std::vector<V> fv(m, V{9});
    auto k = buffer<K>::from_host(fresh, ex);
    auto v = buffer<V>::from_host(fv, ex);
    buffer<status> st(m, ex);
    try {
      map.insert_async(k.data(), v.data(), m, st.data());
      map.synchronize();
      const auto got = st.to_vector();
      ADD_FAILURE() << "an async insert of " << m << " keys into a pool with " << nodes - churned.size()
                    << " nodes left was accepted; " << std::count(got.begin(), got.end(), status::full)
                    << " came back full";
    } catch (const warpkv::error& e) {
      EXPECT_EQ(e.code(), errc::capacity) << e.what();
      EXPECT_NE(std::string(e.what()).find("rehash"), std::string::npos) << e.what();
    }
    EXPECT_EQ(map.size(), 0u);
    EXPECT_EQ(map.rehash_count(), rehashes);
    map.rehash(map.capacity());  // reclaims the erased keys' nodes
    EXPECT_EQ(map.pool_used(), 0u);
    map.insert_async(k.data(), v.data(), m, st.data());
    map.synchronize();
    const auto got = st.to_vector();
    EXPECT_EQ(std::count(got.begin(), got.end(), status::inserted), static_cast<long>(m));
    EXPECT_EQ(map.size(), m);
    ASSERT_EQ(map.validate(), "");
  }
}

// Insert/erase churn over few keys: every successful insert takes a node and erased nodes are
// not reused while a batch runs, yet rebuilds reclaim them, so the pool (or the device heap)
// stays bounded by one batch's inserts, never by the history.
TYPED_TEST(ChainedLists, ChurnIsReclaimedByRebuilds) {
  WARPKV_TEST_EXECUTION(ex);
  TypeParam map(64, {}, ex);
  std::mt19937_64 rng(5);
  std::unordered_map<std::uint32_t, std::uint32_t> state;
  const std::size_t n = std::max<std::size_t>(300, static_cast<std::size_t>(2000 * test_scale()));
  std::uint32_t next = 1;
  for (int b = 0; b < 20; ++b) {
    std::vector<op> ops(n);
    std::vector<std::uint32_t> keys(n), values(n);
    for (std::size_t i = 0; i < n; ++i) {
      ops[i] = rng() % 2 ? op::insert : op::erase;
      keys[i] = make_key<std::uint32_t>(1 + rng() % 50);
      values[i] = next++;
    }
    const auto problem = execute_and_check(map, ops, keys, values, state);
    ASSERT_FALSE(problem.has_value()) << "batch " << b << ": " << *problem;
    if constexpr (TypeParam::allocation == chained_alloc::pool) {
      ASSERT_LE(map.pool_nodes(), 4 * n + 256) << "batch " << b;
    }
    ASSERT_LE(map.capacity(), detail::round_capacity(2 * n)) << "batch " << b;
  }
  map.clear();
  EXPECT_EQ(map.size(), 0u);
  ASSERT_EQ(map.validate(), "");
}

/// One batch of the GLHT paper's dynamic experiment: insert/erase/find 40/40/20 (no upserts) on
/// keys drawn from `range`, and a pool config with a node for every insert op (no insert comes
/// back full, so every insert races the others for real).
struct paper_churn {
  std::vector<op> ops;
  std::vector<std::uint32_t> keys, values;
  chained_config cfg;
};
paper_churn paper_churn_batch(std::size_t n, std::size_t range, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  paper_churn b{std::vector<op>(n), std::vector<std::uint32_t>(n), std::vector<std::uint32_t>(n), {}};
  std::size_t inserts = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = rng() % 100;
    b.ops[i] = r < 40 ? op::insert : r < 80 ? op::erase : op::find;
    inserts += b.ops[i] == op::insert;
    b.keys[i] = make_key<std::uint32_t>(1 + rng() % range);
    b.values[i] = static_cast<std::uint32_t>(i + 1);
  }
  b.cfg.max_load_factor = 0.85;
  b.cfg.pool_nodes = inserts;
  return b;
}

// The GLHT paper's dynamic experiment (the case `warpkv-bench paper` failed on the H100 while the
// typed suite passed): one batch of insert/erase/find (40/40/20, no upserts) with a pool that holds
// a node for every insert op, so no insert ever comes back full and every insert races the others
// for real instead of failing fast on an exhausted pool. Checked: no rebuild, lists valid, size()
// equal to the live nodes, and the batch linearizable per key.
TYPED_TEST(ChainedLists, PaperChurnWithANodeForEveryInsert) {
  WARPKV_TEST_EXECUTION(ex);
  const bool gpu = ex.where == backend::cuda;
  const std::size_t n = std::max<std::size_t>(2000, static_cast<std::size_t>((gpu ? 1e7 : 20000) * test_scale()));
  for (const std::size_t range : {gpu ? std::size_t{100000} : std::size_t{2000}, n}) {
    const auto b = paper_churn_batch(n, range, range);
    TypeParam map(range, b.cfg, ex);
    std::unordered_map<std::uint32_t, std::uint32_t> state;
    const auto problem = execute_and_check(map, b.ops, b.keys, b.values, state);
    ASSERT_FALSE(problem.has_value()) << "range " << range << ": " << *problem;
    EXPECT_EQ(map.rehash_count(), 0u) << "range " << range;
  }
}

/// For a failed churn check: the first keys whose inserted/erased statuses do not net to 0 or 1,
/// or net to what the lists do not hold, each with its bucket's nodes (chained_map::describe_bucket).
template <class Map>
std::string disagreeing_keys(const Map& map, const std::vector<op>& ops, const std::vector<std::uint32_t>& keys,
                             const std::vector<status>& st) {
  std::unordered_map<std::uint32_t, long> net;
  for (std::size_t i = 0; i < ops.size(); ++i) net[keys[i]] += (st[i] == status::inserted) - (st[i] == status::erased);
  const auto held = map.retrieve_all();
  std::unordered_map<std::uint32_t, int> present;
  for (const auto k : held.first) ++present[k];
  std::string out;
  int shown = 0;
  for (const auto& [k, n] : net) {
    const int p = present.count(k) != 0 ? present[k] : 0;
    if ((n == 0 || n == 1) && p == n) continue;
    if (++shown > 4) break;
    const auto b = map.ref().bucket(k);
    out += "\n  key " + std::to_string(k) + ": statuses net " + std::to_string(n) + ", lists hold " + std::to_string(p) +
           "; bucket " + std::to_string(b) + ": " + map.describe_bucket(b) + "; its ops:";
    int listed = 0;
    for (std::size_t i = 0; i < ops.size() && listed < 40; ++i)
      if (keys[i] == k && ops[i] != op::find) {
        out += std::string(" ") + (ops[i] == op::insert ? "I" : "E") + (st[i] == status::inserted || st[i] == status::erased ? "+" : "-");
        ++listed;
      }
  }
  return out.empty() ? "none" : out;
}

// The churn above, six batches on fresh maps in a row (as `warpkv-bench paper` runs its warm-ups
// and repeats). On the H100 the T=1 pool map failed it in nearly every run where one batch often
// passed: a warp-merged fetch_add gave one pool node to two inserts (a node linked twice, keys
// lost; docs/perf.md, session 4). On failure it names the keys whose statuses disagree with the
// lists, with their buckets' nodes.
template <class Map>
void paper_churn_repeated() {
  WARPKV_TEST_EXECUTION(ex);
  const bool gpu = ex.where == backend::cuda;
  const std::size_t n = std::max<std::size_t>(2000, static_cast<std::size_t>((gpu ? 1e7 : 20000) * test_scale()));
  const std::size_t range = gpu ? 100000 : 2000;
  const auto b = paper_churn_batch(n, range, 7);
  for (int run = 0; run < 6; ++run) {
    Map map(range, b.cfg, ex);
    std::vector<std::uint32_t> out;
    const auto st = map.execute(b.ops, b.keys, b.values, out);
    ASSERT_EQ(std::count(st.begin(), st.end(), status::full), 0) << "run " << run;
    const std::string broken = map.validate();  // lists sorted, live keys unique, size() live keys
    ASSERT_EQ(broken, "") << "run " << run << "; keys whose statuses disagree with the lists: "
                          << disagreeing_keys(map, b.ops, b.keys, st);
    ASSERT_EQ(map.rehash_count(), 0u) << "run " << run;
  }
}
TEST(ChainedPool, PaperChurnOnRecycledPoolMemory) { paper_churn_repeated<pool32>(); }
TEST(ChainedPool, PaperChurnOnRecycledPoolMemoryTile4) {
  paper_churn_repeated<chained_map<std::uint32_t, std::uint32_t, chained_alloc::pool, 4>>();
}

// describe_bucket (what validate() prints for a broken list) shows a bucket's keys in list order,
// the erased ones that are still linked marked "m", and refuses a bucket past the table.
TEST(ChainedPool, DescribeBucketListsTheKeysInOrder) {
  WARPKV_TEST_EXECUTION(ex);
  pool32 map(512, {}, ex);
  auto keys = keys_in_bucket(map, 7, 3);
  std::vector<std::uint32_t> values(keys.size(), 1);
  map.insert(keys, values);
  std::sort(keys.begin(), keys.end());
  std::string want = "3 nodes:";
  for (const auto k : keys) want += " " + std::to_string(k);
  EXPECT_EQ(map.describe_bucket(7), want);
  EXPECT_THROW((void)map.describe_bucket(map.capacity()), error);
}

// Inside the ref nothing grows: a pool of 64 nodes takes exactly 64 of 100 distinct keys and
// reports the rest full, leaving the lists holding exactly the keys reported inserted.
TEST(ChainedPool, RefReportsFullWhenThePoolIsUsedUp) {
  WARPKV_TEST_EXECUTION(ex);
  pool32 map(64, {}, ex);
  ASSERT_EQ(map.pool_nodes(), 64u);
  const std::size_t n = 100;
  std::vector<std::uint32_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = make_key<std::uint32_t>(i + 1);
  const auto [summary, statuses] = insert_through_ref(map, keys, ex);
  EXPECT_EQ(summary[status::inserted], 64u);
  EXPECT_EQ(summary[status::full], n - 64);
  EXPECT_EQ(map.pool_used(), 64u);
  expect_found_exactly_inserted(map, keys, statuses);
  // Through the bulk API the same inserts all succeed: the map rebuilds into a bigger pool.
  pool32 bulk(64, {}, ex);
  for (auto s : bulk.insert(keys, keys)) ASSERT_EQ(s, status::inserted);
  EXPECT_GT(bulk.rehash_count(), 0u);
  EXPECT_GE(bulk.pool_nodes(), n);
  EXPECT_EQ(bulk.size(), n);
  ASSERT_EQ(bulk.validate(), "");
  // An explicit pool size (and buckets for the keys): no rebuild for the same inserts.
  chained_config cfg;
  cfg.pool_nodes = 4 * n;
  pool32 big(128, cfg, ex);  // enough buckets for the keys: no reserve either
  for (auto s : big.insert(keys, keys)) ASSERT_EQ(s, status::inserted);
  EXPECT_EQ(big.rehash_count(), 0u);
  EXPECT_EQ(big.pool_used(), n);
}

TEST(ChainedPool, BadInputIsRefused) {
  WARPKV_TEST_EXECUTION(ex);
  chained_config cfg;
  cfg.max_load_factor = 0.0;
  EXPECT_THROW(pool32(100, cfg, ex), warpkv::error);
  // A custom empty key: 0 is refused, the maximum becomes an ordinary key.
  heap32 custom(100, {}, ex, 0u);
  const std::vector<std::uint32_t> k{0u, 0xffffffffu};
  const auto st = custom.insert(k, k);
  EXPECT_EQ(st[0], status::invalid_key);
  EXPECT_EQ(st[1], status::inserted);
  ASSERT_EQ(custom.validate(), "");
  EXPECT_THROW(custom.insert(std::vector<std::uint32_t>{1, 2}, std::vector<std::uint32_t>{1}), warpkv::error);
}

}  // namespace
}  // namespace warpkv::testing
