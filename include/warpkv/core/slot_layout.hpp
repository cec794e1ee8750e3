#pragma once
// The slot layouts of the maps that keep a key and its value in one slot record (hopscotch,
// cuckoo): one layout, parametrised by what sits in front of the pair.
//
// With 4-byte keys and values the pair is one 8-byte word (core/packed_pair.hpp: key in the low
// half, value in the high half) read and written atomically, so a slot read as holding k proves k
// present with that value. Wider entries keep key and value in separate words; readers then
// validate what they read through a version the map keeps (hopscotch: the hop word's; cuckoo:
// the bucket's), and writers store the value before the key.
//
//   slot_header::none       the record is the pair alone (cuckoo: 8 slots of 8 bytes, one bucket,
//                           fill a 64-byte line)
//   slot_header::meta_word  a 64-bit word (hopscotch: the bucket's hop word) before the pair, so
//                           a lookup's first read brings both (16-byte records when packed, two
//                           per 32-byte sector)
//
// Every operation is the same code for both headers: the header only adds `meta` to the record
// (and init clears it first).
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/packed_pair.hpp"

namespace warpkv::detail {

enum class slot_header { none, meta_word };

/// Whether a pair of these key and value bits packs into one 8-byte word.
template <class KeyBits, class ValueBits>
inline constexpr bool packs_into_word = sizeof(KeyBits) == 4 && sizeof(ValueBits) == 4;

/// The slot record: the header (if any), then the pair (one word when packed).
template <class KeyBits, class ValueBits, slot_header Header, bool Packed>
struct slot_record;
template <class KeyBits, class ValueBits>
struct slot_record<KeyBits, ValueBits, slot_header::none, true> {
  struct alignas(8) type {
    std::uint64_t pair;
  };
};
template <class KeyBits, class ValueBits>
struct slot_record<KeyBits, ValueBits, slot_header::meta_word, true> {
  struct alignas(16) type {
    std::uint64_t meta;
    std::uint64_t pair;
  };
};
template <class KeyBits, class ValueBits>
struct slot_record<KeyBits, ValueBits, slot_header::none, false> {
  struct type {
    KeyBits key;
    ValueBits value;
  };
};
template <class KeyBits, class ValueBits>
struct slot_record<KeyBits, ValueBits, slot_header::meta_word, false> {
  struct type {
    std::uint64_t meta;
    KeyBits key;
    ValueBits value;
  };
};

template <class KeyBits, class ValueBits, slot_header Header, bool Packed = packs_into_word<KeyBits, ValueBits>>
struct pair_slot_layout;

/// 4-byte key and value: pair = key | value << 32, one atomic word.
template <class KeyBits, class ValueBits, slot_header Header>
struct pair_slot_layout<KeyBits, ValueBits, Header, true> {
  static constexpr bool packed = true;
  using slot = typename slot_record<KeyBits, ValueBits, Header, true>::type;
  using entry = entry_bits<KeyBits, ValueBits>;

  WARPKV_HD static std::uint64_t pack(KeyBits k, ValueBits v) { return packed_pair<KeyBits, ValueBits>::pack(k, v); }
  WARPKV_HD static entry unpack(std::uint64_t p) { return packed_pair<KeyBits, ValueBits>::unpack(p); }
  WARPKV_HD static KeyBits key_of(const slot& s) { return unpack(s.pair).key; }
  WARPKV_HD static ValueBits value_of(const slot& s) { return unpack(s.pair).value; }
  WARPKV_HD static void init(slot& s, KeyBits empty) {
    if constexpr (Header == slot_header::meta_word) s.meta = 0;
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
  /// A new value for the key the slot holds: the whole pair, one store.
  WARPKV_HD static void store_value(slot& s, KeyBits k, ValueBits v, memory_order o) { store(s, k, v, o); }
  /// Marks a slot with a state key (empty: value 0, claimed: value = tag).
  WARPKV_HD static void mark(slot& s, KeyBits state, KeyBits tag, memory_order o) { store(s, state, tag, o); }
  WARPKV_HD static bool holds_claim_of(const entry& e, KeyBits claimed, KeyBits kb) {
    return e.key == claimed && e.value == kb;
  }
};

/// Wider entries: key and value words side by side.
template <class KeyBits, class ValueBits, slot_header Header>
struct pair_slot_layout<KeyBits, ValueBits, Header, false> {
  static constexpr bool packed = false;
  using slot = typename slot_record<KeyBits, ValueBits, Header, false>::type;
  using entry = entry_bits<KeyBits, ValueBits>;

  WARPKV_HD static KeyBits key_of(const slot& s) { return s.key; }
  WARPKV_HD static ValueBits value_of(const slot& s) { return s.value; }
  WARPKV_HD static void init(slot& s, KeyBits empty) {
    if constexpr (Header == slot_header::meta_word) s.meta = 0;
    s.key = empty;
    s.value = 0;
  }
  /// Key then value; callers validate the pair through their version word.
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
  /// A new value for the key the slot holds: the value word alone.
  WARPKV_HD static void store_value(slot& s, KeyBits, ValueBits v, memory_order o) {
    atomic_ref<ValueBits>(s.value).store(v, o);
  }
  WARPKV_HD static void mark(slot& s, KeyBits state, KeyBits, memory_order o) { atomic_ref<KeyBits>(s.key).store(state, o); }
  WARPKV_HD static bool holds_claim_of(const entry&, KeyBits, KeyBits) { return false; }  // no room for a tag
};

}  // namespace warpkv::detail
