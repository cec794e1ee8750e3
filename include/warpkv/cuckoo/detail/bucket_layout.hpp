#pragma once
// Storage of one cuckoo slot. With 4-byte keys and values the pair is one 8-byte word (eight
// slots, one bucket, fill a 64-byte line) read and written atomically, so a slot read as holding
// k proves k present with that value. Wider entries keep key and value in separate words; readers
// then validate what they read through the bucket's version (cuckoo_ref).
// The layout is core's (core/slot_layout.hpp), shared with hopscotch; this is its cuckoo name.
#include "warpkv/core/slot_layout.hpp"

namespace warpkv::detail {

template <class KeyBits, class ValueBits, bool Packed = packs_into_word<KeyBits, ValueBits>>
using cuckoo_slot_layout = pair_slot_layout<KeyBits, ValueBits, slot_header::none, Packed>;

}  // namespace warpkv::detail
