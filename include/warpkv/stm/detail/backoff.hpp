#pragma once
// Back-off helpers of the STM: the shared pause (core/backoff.hpp) and a cheap generator that
// decorrelates the back-off of transactions that conflicted with each other.
#include <cstdint>

#include "warpkv/core/backoff.hpp"
#include "warpkv/core/config.hpp"

namespace warpkv::stm::detail {

using warpkv::pause;  // the shared pause of core/backoff.hpp

/// xorshift64*: decorrelates the back-off of transactions that conflicted with each other.
struct xorshift {
  std::uint64_t s;
  WARPKV_HD explicit xorshift(std::uint64_t seed) : s(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull) {
    if (s == 0) s = 1;
  }
  WARPKV_HD std::uint32_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return static_cast<std::uint32_t>((s * 0x2545f4914f6cdd1dull) >> 32);
  }
};

}  // namespace warpkv::stm::detail
