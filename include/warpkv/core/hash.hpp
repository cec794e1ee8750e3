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

/// The part of hash_bits that depends on the seed alone: a structure that hashes many keys with a
/// few fixed seeds computes it once (cuckoo_ref keeps one per hash function) and calls
/// hash_premixed, which returns exactly hash_bits(k, seed).
template <class Bits>
WARPKV_HD constexpr std::uint64_t premix_seed(std::uint64_t seed) {
  static_assert(std::is_unsigned_v<Bits>);
  if constexpr (sizeof(Bits) <= 4) return static_cast<std::uint32_t>(fmix64(seed));
  else return fmix64(seed * 0x9e3779b97f4a7c15ull);
}
template <class Bits>
WARPKV_HD constexpr std::uint64_t hash_premixed(Bits k, std::uint64_t premixed) {
  static_assert(std::is_unsigned_v<Bits>);
  if constexpr (sizeof(Bits) <= 4) return fmix32(static_cast<std::uint32_t>(k) ^ static_cast<std::uint32_t>(premixed));
  else return fmix64(static_cast<std::uint64_t>(k) ^ premixed);
}

/// Seeded hash of an unsigned key's bits. Seed 0 is plain Murmur3 fmix; other
/// seeds give independent-looking functions (used to re-hash adversarial input
/// and as the second hash of cuckoo schemes).
template <class Bits>
WARPKV_HD constexpr std::uint64_t hash_bits(Bits k, std::uint64_t seed) {
  return hash_premixed(k, premix_seed<Bits>(seed));
}

}  // namespace warpkv
