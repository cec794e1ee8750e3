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
        using fn = detail::partition_ops_fn<32>;
        launch<32>(ex, (n + fn::ops_per_tile - 1) / fn::ops_per_tile,
                   simple_body<fn>{{dops.data(), n, a.data(), b.data(), counts.data()}});
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

}  // namespace
}  // namespace warpkv::testing
