#pragma once
// The lane group a transaction runs on. A per-tile transaction uses the caller's tile
// (cuda_tile / host_tile); a per-thread transaction uses `single_lane`, a one-lane group whose
// collectives are identities, so both variants are one algorithm (basic_transaction).
#include <cstdint>

#include "warpkv/core/config.hpp"

namespace warpkv::stm::detail {

struct single_lane {
  WARPKV_HD static constexpr unsigned size() { return 1; }
  WARPKV_HD unsigned thread_rank() const { return 0; }
  WARPKV_HD void sync() const {}
  WARPKV_HD std::uint32_t ballot(bool p) const { return p ? 1u : 0u; }
  WARPKV_HD bool any(bool p) const { return p; }
  WARPKV_HD bool all(bool p) const { return p; }
  template <class V>
  WARPKV_HD V shfl(V v, unsigned) const {
    return v;
  }
};

/// Minimum of v over the group's lanes (butterfly over shfl; every lane gets the result).
template <class G>
WARPKV_HD std::uint64_t group_min(const G& g, std::uint64_t v) {
  for (unsigned m = 1; m < G::size(); m <<= 1) {
    const std::uint64_t o = g.shfl(v, g.thread_rank() ^ m);
    v = o < v ? o : v;
  }
  return v;
}

}  // namespace warpkv::stm::detail
