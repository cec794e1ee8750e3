#pragma once
// Storage of one cuckoo slot. With 4-byte keys and values the pair is one 8-byte word (four
// slots, one bucket, fill a 32-byte sector) read and written atomically, so a slot read as
// holding k proves k present with that value. Wider entries keep key and value in separate
// words; readers then validate what they read through the bucket's version (cuckoo_ref).
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/packed_pair.hpp"

namespace warpkv::detail {

template <class KeyBits, class ValueBits, bool Packed = (sizeof(KeyBits) == 4 && sizeof(ValueBits) == 4)>
struct cuckoo_slot_layout;

/// 4-byte key and value: word = key | value << 32.
template <class KeyBits, class ValueBits>
struct cuckoo_slot_layout<KeyBits, ValueBits, true> {
  static constexpr bool packed = true;
  struct alignas(8) slot {
    std::uint64_t pair;
  };
  using entry = entry_bits<KeyBits, ValueBits>;
  WARPKV_HD static std::uint64_t pack(KeyBits k, ValueBits v) { return packed_pair<KeyBits, ValueBits>::pack(k, v); }
  WARPKV_HD static KeyBits key_of(const slot& s) { return packed_pair<KeyBits, ValueBits>::unpack(s.pair).key; }
  WARPKV_HD static ValueBits value_of(const slot& s) { return packed_pair<KeyBits, ValueBits>::unpack(s.pair).value; }
  WARPKV_HD static void init(slot& s, KeyBits empty) { s.pair = pack(empty, 0); }
  WARPKV_HD static entry load(slot& s, memory_order o) {
    return packed_pair<KeyBits, ValueBits>::unpack(atomic_ref<std::uint64_t>(s.pair).load(o));
  }
  WARPKV_HD static void store(slot& s, KeyBits k, ValueBits v, memory_order o) {
    atomic_ref<std::uint64_t>(s.pair).store(pack(k, v), o);
  }
  WARPKV_HD static void store_value(slot& s, KeyBits k, ValueBits v, memory_order o) { store(s, k, v, o); }
};

/// Wider entries: key and value words side by side.
template <class KeyBits, class ValueBits>
struct cuckoo_slot_layout<KeyBits, ValueBits, false> {
  static constexpr bool packed = false;
  struct slot {
    KeyBits key;
    ValueBits value;
  };
  using entry = entry_bits<KeyBits, ValueBits>;
  WARPKV_HD static KeyBits key_of(const slot& s) { return s.key; }
  WARPKV_HD static ValueBits value_of(const slot& s) { return s.value; }
  WARPKV_HD static void init(slot& s, KeyBits empty) {
    s.key = empty;
    s.value = 0;
  }
  WARPKV_HD static entry load(slot& s, memory_order o) {
    const KeyBits k = atomic_ref<KeyBits>(s.key).load(o);
    return entry{k, atomic_ref<ValueBits>(s.value).load(memory_order::relaxed)};
  }
  /// Value first, then the key (writers hold the bucket's lock; readers validate by version).
  WARPKV_HD static void store(slot& s, KeyBits k, ValueBits v, memory_order o) {
    atomic_ref<ValueBits>(s.value).store(v, memory_order::relaxed);
    atomic_ref<KeyBits>(s.key).store(k, o);
  }
  WARPKV_HD static void store_value(slot& s, KeyBits, ValueBits v, memory_order o) {
    atomic_ref<ValueBits>(s.value).store(v, o);
  }
};

}  // namespace warpkv::detail
