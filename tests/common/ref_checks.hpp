#pragma once
// Helpers of the maps' own tests: keys chosen to collide, and inserts through a map's device ref
// (no growth there) checked against what the bulk API then finds.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "warpkv/core/batch.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/map_ops.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv::testing {

/// The first `count` keys k = 1, 2, ... for which pred(k) holds (keys made to collide).
template <class Pred>
std::vector<std::uint32_t> keys_where(Pred pred, std::size_t count) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t k = 1; out.size() < count; ++k)
    if (pred(k)) out.push_back(k);
  return out;
}

/// Inserts keys[i] -> keys[i] through the map's device ref in one batch (a ref never grows the
/// table): the batch's counts and each key's status.
/// P = pass::fast: the ref's fast insert instead (a ref with fast_bulk_inserts).
template <detail::pass P = detail::pass::complete, class Map>
std::pair<batch_summary, std::vector<status>> insert_through_ref(const Map& map, const std::vector<std::uint32_t>& keys,
                                                                  const execution& ex) {
  auto k = buffer<std::uint32_t>::from_host(keys, ex);
  buffer<status> st(keys.size(), ex);
  const auto summary = launch_batch<Map::tile_size>(
      ex, keys.size(),
      detail::insert_op<typename Map::ref_type, std::uint32_t, std::uint32_t, P>{map.ref(), k.data(), k.data(), false},
      st.data());
  return {summary, st.to_vector()};
}

/// Exactly the keys whose status is `inserted` are found, each with its own value (key = value).
template <class Map>
void expect_found_exactly_inserted(Map& map, const std::vector<std::uint32_t>& keys, const std::vector<status>& statuses) {
  std::vector<std::uint32_t> out;
  const auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(fs[i], statuses[i] == status::inserted ? status::found : status::not_found) << "key " << keys[i];
    if (fs[i] == status::found) {
      ASSERT_EQ(out[i], keys[i]);
    }
  }
}

}  // namespace warpkv::testing
