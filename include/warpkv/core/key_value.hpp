#pragma once
// How keys and values are stored in slots: as unsigned bit patterns of 4 or 8
// bytes, so the same atomics serve int32/uint32/int64/uint64 keys and any
// trivially copyable value of up to 8 bytes (integers, float, double).
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "warpkv/core/config.hpp"

namespace warpkv {

template <class K>
concept hash_key = std::is_integral_v<K> && (sizeof(K) == 4 || sizeof(K) == 8) && !std::is_same_v<K, bool>;

template <class V>
concept map_value = std::is_trivially_copyable_v<V> && sizeof(V) <= 8 && !std::is_const_v<V>;

template <std::size_t Bytes>
using storage_bits_t = std::conditional_t<(Bytes <= 4), std::uint32_t, std::uint64_t>;

template <class T>
WARPKV_HD inline storage_bits_t<sizeof(T)> to_bits(const T& v) {
  storage_bits_t<sizeof(T)> b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

template <class T>
WARPKV_HD inline T from_bits(storage_bits_t<sizeof(T)> b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

/// Default empty-key sentinel: the largest key value. Inserting it is refused with status::invalid_key.
template <class K>
constexpr K default_empty_key = std::numeric_limits<K>::max();

/// A key and its value side by side. For 32-bit keys and values a slot is one
/// 8-byte word, so one 32-byte sector holds four slots.
template <class KeyBits, class ValueBits>
struct alignas(sizeof(KeyBits) > sizeof(ValueBits) ? sizeof(KeyBits) : sizeof(ValueBits)) slot {
  KeyBits key;
  ValueBits value;
};

/// A slot of a 4-byte key and a 4-byte value aligned as one 8-byte word (key in the low half on
/// the little-endian targets warpkv runs on), so one 8-byte atomic reads, claims or replaces the
/// pair (core/packed_pair.hpp).
template <class KeyBits, class ValueBits>
struct alignas(8) packed_slot {
  static_assert(sizeof(KeyBits) == 4 && sizeof(ValueBits) == 4, "only 4-byte keys and values pack");
  KeyBits key;
  ValueBits value;
};

}  // namespace warpkv
