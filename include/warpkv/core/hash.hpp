#pragma once
// Murmur3 finalizers and a seedable hash over a key's bits.
#include <cstdint>
#include <type_traits>

#include "warpkv/core/config.hpp"

namespace warpkv {

WARPKV_HD constexpr std::uint32_t fmix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

WARPKV_HD constexpr std::uint64_t fmix64(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

/// Seeded hash of an unsigned key's bits. Seed 0 is plain Murmur3 fmix; other
/// seeds give independent-looking functions (used to re-hash adversarial input
/// and as the second hash of cuckoo schemes).
template <class Bits>
WARPKV_HD constexpr std::uint64_t hash_bits(Bits k, std::uint64_t seed) {
  static_assert(std::is_unsigned_v<Bits>);
  if constexpr (sizeof(Bits) <= 4) {
    const std::uint32_t s = static_cast<std::uint32_t>(fmix64(seed));
    return fmix32(static_cast<std::uint32_t>(k) ^ s);
  } else {
    return fmix64(static_cast<std::uint64_t>(k) ^ fmix64(seed * 0x9e3779b97f4a7c15ull));
  }
}

}  // namespace warpkv
