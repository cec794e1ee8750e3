#pragma once
// A key and its value as the bits the slot arrays store, and the packed form of 4-byte keys and
// values: one 8-byte word (key in the low half, value in the high half), so one atomic load or
// store reads or writes the pair and a slot seen holding a key proves that key's value. Shared
// by the slot layouts of the maps that pack (hopscotch, cuckoo).
#include <cstdint>

#include "warpkv/core/config.hpp"

namespace warpkv::detail {

template <class KeyBits, class ValueBits>
struct entry_bits {
  KeyBits key;
  ValueBits value;
};

template <class KeyBits, class ValueBits>
struct packed_pair {
  static_assert(sizeof(KeyBits) == 4 && sizeof(ValueBits) == 4, "only 4-byte keys and values pack into one word");
  using entry = entry_bits<KeyBits, ValueBits>;
  WARPKV_HD static std::uint64_t pack(KeyBits k, ValueBits v) {
    return static_cast<std::uint64_t>(k) | (static_cast<std::uint64_t>(v) << 32);
  }
  WARPKV_HD static entry unpack(std::uint64_t p) { return entry{static_cast<KeyBits>(p), static_cast<ValueBits>(p >> 32)}; }
};

}  // namespace warpkv::detail
