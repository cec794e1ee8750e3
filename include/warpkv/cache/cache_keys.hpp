#pragma once
// Keys of warpkv::kv_cache and how a slot stores them: as a few 8-byte words, the last of which
// (the tag word) also says whether the slot is empty.
//  - std::uint64_t: one word; the largest value is the empty sentinel and is refused (invalid_key).
//  - byte_key<N>: a byte string of 1..N bytes (YCSB keys are 24 bytes, "user" + digits), N a
//    multiple of 8 up to 64, stored as N/8 zero-padded words plus a length word (0 = empty slot).
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "warpkv/core/config.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/hash.hpp"

namespace warpkv {

/// A byte-string key of at most MaxBytes bytes. Build it with byte_key<N>::from(text).
template <int MaxBytes>
struct byte_key {
  static_assert(MaxBytes > 0 && MaxBytes % 8 == 0 && MaxBytes <= 64, "byte_key: MaxBytes must be 8..64, a multiple of 8");
  static constexpr int max_bytes = MaxBytes;
  std::uint64_t words[MaxBytes / 8] = {};
  std::uint64_t length = 0;  ///< bytes in use; 0 is the empty key (refused) and lengths above MaxBytes are refused

  /// Throws warpkv::error(invalid_argument) for an empty or too long text.
  static byte_key from(std::string_view text) {
    require(!text.empty(), "key", "a byte-string key may not be empty");
    require(text.size() <= static_cast<std::size_t>(MaxBytes), "key",
            "a byte-string key of " + std::to_string(text.size()) + " bytes exceeds the maximum of " +
                std::to_string(MaxBytes));
    byte_key k;
    std::memcpy(k.words, text.data(), text.size());
    k.length = text.size();
    return k;
  }
  [[nodiscard]] std::string str() const {
    const std::size_t n = length <= static_cast<std::uint64_t>(MaxBytes) ? static_cast<std::size_t>(length) : 0;
    return std::string(reinterpret_cast<const char*>(words), n);
  }
  friend bool operator==(const byte_key&, const byte_key&) = default;
};

/// How a key type lives in a slot: `words` words, the last being the tag word.
template <class Key>
struct cache_key_layout;

template <>
struct cache_key_layout<std::uint64_t> {
  using key_type = std::uint64_t;
  static constexpr int words = 1;
  static constexpr std::uint64_t empty_tag = ~0ull;
  WARPKV_HD static void to_words(const key_type& k, std::uint64_t* w) { w[0] = k; }
  WARPKV_HD static key_type from_words(const std::uint64_t* w) { return w[0]; }
  WARPKV_HD static bool valid(const key_type& k) { return k != empty_tag; }
  WARPKV_HD static std::uint64_t hash(const std::uint64_t* w, std::uint64_t seed) { return hash_bits(w[0], seed); }
};

template <int N>
struct cache_key_layout<byte_key<N>> {
  using key_type = byte_key<N>;
  static constexpr int words = N / 8 + 1;
  static constexpr std::uint64_t empty_tag = 0;  // length 0
  WARPKV_HD static void to_words(const key_type& k, std::uint64_t* w) {
    for (int i = 0; i < N / 8; ++i) w[i] = k.words[i];
    w[N / 8] = k.length;
  }
  WARPKV_HD static key_type from_words(const std::uint64_t* w) {
    key_type k;
    for (int i = 0; i < N / 8; ++i) k.words[i] = w[i];
    k.length = w[N / 8];
    return k;
  }
  WARPKV_HD static bool valid(const key_type& k) {
    if (k.length == 0 || k.length > static_cast<std::uint64_t>(N)) return false;
    // bytes past the length must be zero, or equal strings would compare unequal
    for (int i = 0; i < N / 8; ++i) {
      const std::uint64_t first = static_cast<std::uint64_t>(i) * 8;
      if (k.length >= first + 8) continue;
      const std::uint64_t used = k.length > first ? k.length - first : 0;
      const std::uint64_t mask = used == 0 ? ~0ull : ~0ull << (8 * used);  // little-endian tail bytes
      if ((k.words[i] & mask) != 0) return false;
    }
    return true;
  }
  WARPKV_HD static std::uint64_t hash(const std::uint64_t* w, std::uint64_t seed) {
    std::uint64_t h = hash_bits(w[N / 8], seed);
    for (int i = 0; i < N / 8; ++i) h = hash_bits(w[i] ^ h, seed + static_cast<std::uint64_t>(i) + 1);
    return h;
  }
};

}  // namespace warpkv
