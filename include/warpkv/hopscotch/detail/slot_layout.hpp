#pragma once
// Storage of one hopscotch bucket: the bucket's hop word beside its slot, so a lookup's first
// read brings both. With 4-byte keys and values the key and value form one 8-byte word updated
// and read atomically (a record of 16 bytes, two per 32-byte sector); wider entries keep key and
// value in separate words and rely on the hop word's version for consistent reads.
// The layout is core's (core/slot_layout.hpp), shared with cuckoo; this is its hopscotch name.
#include "warpkv/core/slot_layout.hpp"

namespace warpkv::detail {

template <class KeyBits, class ValueBits, bool Packed = packs_into_word<KeyBits, ValueBits>>
using slot_layout = pair_slot_layout<KeyBits, ValueBits, slot_header::meta_word, Packed>;

}  // namespace warpkv::detail
