#pragma once
// Counter-based random numbers for k-means initialisation: the value depends only on
// (seed, stream, index), so every backend, thread count and interleaving draws the same
// numbers (std::uniform_*_distribution is not specified bit-for-bit across libraries).
#include <cstdint>

#include "warpkv/core/config.hpp"
#include "warpkv/core/hash.hpp"

namespace warpkv::detail {

WARPKV_HD constexpr std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return fmix64(fmix64(seed ^ 0x9e3779b97f4a7c15ull) ^ fmix64(stream * 0xbf58476d1ce4e5b9ull + 1) ^
                (index * 0x94d049bb133111ebull));
}

/// Uniform double in [0, 1).
WARPKV_HD constexpr double random_unit(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return static_cast<double>(random_bits(seed, stream, index) >> 11) * 0x1.0p-53;
}

}  // namespace warpkv::detail
