#pragma once
// Storage of one hopscotch bucket: the bucket's hop word beside its slot, so a lookup's first
// read brings both. With 4-byte keys and values the key and value form one 8-byte word updated
// and read atomically (a record of 16 bytes, two per 32-byte sector); wider entries keep key and
// value in separate words and rely on the hop word's version for consistent reads.
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/packed_pair.hpp"

namespace warpkv::detail {

template <class KeyBits, class ValueBits, bool Packed = (sizeof(KeyBits) == 4 && sizeof(ValueBits) == 4)>
struct slot_layout;

/// 4-byte key and value: pair = key | value << 32, one atomic word.
template <class KeyBits, class ValueBits>
struct slot_layout<KeyBits, ValueBits, true> {
  static constexpr bool packed = true;
  struct alignas(16) slot {
    std::uint64_t meta;
    std::uint64_t pair;
  };
  using entry = entry_bits<KeyBits, ValueBits>;

  WARPKV_HD static std::uint64_t pack(KeyBits k, ValueBits v) { return packed_pair<KeyBits, ValueBits>::pack(k, v); }
  WARPKV_HD static entry unpack(std::uint64_t p) { return packed_pair<KeyBits, ValueBits>::unpack(p); }
  WARPKV_HD static KeyBits key_of(const slot& s) { return unpack(s.pair).key; }
  WARPKV_HD static ValueBits value_of(const slot& s) { return unpack(s.pair).value; }
  WARPKV_HD static void init(slot& s, KeyBits empty) {
    s.meta = 0;
    s.pair = pack(empty, 0);
  }
  WARPKV_HD static entry load(slot& s, memory_order o) { return unpack(atomic_ref<std::uint64_t>(s.pair).load(o)); }
  /// empty -> (state, tag): the tag (the claiming insert's key) lets other inserts of that key wait.
  WARPKV_HD static bool claim(slot& s, KeyBits empty, KeyBits state, KeyBits tag) {
    std::uint64_t expected = pack(empty, 0);
    return atomic_ref<std::uint64_t>(s.pair).compare_exchange(expected, pack(state, tag), memory_order::relaxed);
  }
  WARPKV_HD static void store(slot& s, KeyBits k, ValueBits v, memory_order o) {
    atomic_ref<std::uint64_t>(s.pair).store(pack(k, v), o);
  }
  /// Marks a slot with a state key (empty: value 0, claimed: value = tag).
  WARPKV_HD static void mark(slot& s, KeyBits state, KeyBits tag, memory_order o) { store(s, state, tag, o); }
  WARPKV_HD static bool holds_claim_of(const entry& e, KeyBits claimed, KeyBits kb) {
    return e.key == claimed && e.value == kb;
  }
};

/// Wider entries: key and value words side by side.
template <class KeyBits, class ValueBits>
struct slot_layout<KeyBits, ValueBits, false> {
  static constexpr bool packed = false;
  struct slot {
    std::uint64_t meta;
    KeyBits key;
    ValueBits value;
  };
  using entry = entry_bits<KeyBits, ValueBits>;

  WARPKV_HD static KeyBits key_of(const slot& s) { return s.key; }
  WARPKV_HD static ValueBits value_of(const slot& s) { return s.value; }
  WARPKV_HD static void init(slot& s, KeyBits empty) {
    s.meta = 0;
    s.key = empty;
    s.value = 0;
  }
  /// Key then value; callers validate the pair through the hop word's version.
  WARPKV_HD static entry load(slot& s, memory_order o) {
    const KeyBits k = atomic_ref<KeyBits>(s.key).load(o);
    return entry{k, atomic_ref<ValueBits>(s.value).load(memory_order::relaxed)};
  }
  WARPKV_HD static bool claim(slot& s, KeyBits empty, KeyBits state, KeyBits) {
    KeyBits expected = empty;
    return atomic_ref<KeyBits>(s.key).compare_exchange(expected, state, memory_order::relaxed);
  }
  /// Value first, then the key with order o: a reader that sees the key sees the value.
  WARPKV_HD static void store(slot& s, KeyBits k, ValueBits v, memory_order o) {
    atomic_ref<ValueBits>(s.value).store(v, memory_order::relaxed);
    atomic_ref<KeyBits>(s.key).store(k, o);
  }
  WARPKV_HD static void mark(slot& s, KeyBits state, KeyBits, memory_order o) { atomic_ref<KeyBits>(s.key).store(state, o); }
  WARPKV_HD static bool holds_claim_of(const entry&, KeyBits, KeyBits) { return false; }  // no room for a tag
};

}  // namespace warpkv::detail
