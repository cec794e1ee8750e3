#pragma once
// Whole-table passes of the bucketized hopscotch layout (hopscotch_buckets): initialise the
// buckets, collect the live entries, and the host-side structural check. core/table_passes.hpp's
// init_storage / reinsert_op / collect_fn assume one key per slot record, so the map runs these
// instead (through core's for_each_index). They run between batches, never concurrently with
// operations on the same table.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/table_passes.hpp"
#include "warpkv/hopscotch/detail/bucket_layout.hpp"

namespace warpkv::detail {

/// Index i: bucket i becomes empty (header 0: no hop bit, no digest, unlocked, version 0).
struct init_bucket_fn {
  hop_bucket* buckets;
  std::uint64_t empty_word;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    buckets[i].word[0] = 0;
    for (unsigned w = 1; w < h64::words; ++w) buckets[i].word[w] = empty_word;
  }
};

/// Index i: the live entries of bucket i (keys that are not reserved) go to keys_out/values_out.
template <class Key, class Value>
struct collect_bucket_fn {
  const hop_bucket* buckets;
  std::uint32_t empty, tomb, claimed;
  Key* keys_out;
  Value* values_out;
  unsigned long long* count;
  std::size_t room;  // entries keys_out/values_out hold; a broken table cannot write past them
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    for (unsigned w = 1; w < h64::words; ++w) {
      const auto e = h64::pair::unpack(buckets[i].word[w]);
      if (e.key == empty || e.key == tomb || e.key == claimed) continue;
      const auto at = atomic_ref<unsigned long long>(*count).fetch_add(1, memory_order::relaxed);
      if (at >= room) continue;
      keys_out[at] = from_bits<Key>(e.key);
      values_out[at] = from_bits<Value>(e.value);
    }
  }
};

/// Host-side check of a quiescent bucket table and its stash: no lock held, no claim left, hop
/// bit 0 clear; every key is a home resident or sits in bucket home + j (1 <= j <= 15) with hop
/// bit j set, or in a stash bucket of its stash window with its home's overflow bit set; every
/// hop bit names a bucket holding at least one member; every digest equals the OR of its external
/// members' digest bits; stash headers (unused) are 0; no key is stored twice; the table holds
/// `size` keys and at most `max_tombs` tombstones.
/// Returns the first violation, or an empty string.
template <class Ref>
std::string validate_buckets(const Ref& ref, const std::vector<hop_bucket>& buckets, std::size_t size,
                             std::size_t max_tombs) {
  const std::size_t n = ref.buckets();
  if (buckets.size() != n + ref.stash_buckets())
    return "storage holds " + std::to_string(buckets.size()) + " buckets, expected " + std::to_string(n + ref.stash_buckets());
  using K = typename Ref::key_type;
  const std::uint32_t empty = to_bits(ref.empty_key()), tomb = to_bits(ref.tomb_key()), claimed = to_bits(ref.claimed_key());
  std::vector<std::uint32_t> hop(n, 0), dig(n, 0);
  std::vector<std::uint32_t> seen;
  std::size_t tombs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = buckets[i].word[0];
    const std::string where = "bucket " + std::to_string(i);
    if (hop::locked(h)) return where + " is locked";
    if ((h64::hop_bits(h) & 1u) != 0) return where + " has hop bit 0 set";
    for (unsigned w = 1; w < h64::words; ++w) {
      const auto e = h64::pair::unpack(buckets[i].word[w]);
      if (e.key == empty) {
        if (e.value != 0) return where + " word " + std::to_string(w) + " is empty with a nonzero value";
        continue;
      }
      if (e.key == tomb) {
        ++tombs;
        continue;
      }
      if (e.key == claimed) return where + " word " + std::to_string(w) + " is still claimed between batches";
      const K k = from_bits<K>(e.key);
      const std::size_t home = ref.home(k);
      const std::size_t j = (i - home) & (n - 1);
      if (j > h64::reach)
        return where + " holds a key homed at bucket " + std::to_string(home) + ", " + std::to_string(j) + " buckets away";
      if (j > 0) {
        if (((h64::hop_bits(buckets[home].word[0]) >> j) & 1u) == 0)
          return where + " holds an external member of bucket " + std::to_string(home) + " that its hop bits do not name";
        hop[home] |= 1u << j;
        dig[home] |= 1u << ref.digest_index(k);
      }
      seen.push_back(e.key);
    }
  }
  for (std::size_t s = 0; s < ref.stash_buckets(); ++s) {
    const hop_bucket& sb = buckets[n + s];
    const std::string where = "stash bucket " + std::to_string(s);
    if (sb.word[0] != 0) return where + " has a nonzero header";
    for (unsigned w = 1; w < h64::words; ++w) {
      const auto e = h64::pair::unpack(sb.word[w]);
      if (e.key == empty) {
        if (e.value != 0) return where + " word " + std::to_string(w) + " is empty with a nonzero value";
        continue;
      }
      if (e.key == tomb || e.key == claimed) return where + " word " + std::to_string(w) + " holds a tomb or a claim";
      const K k = from_bits<K>(e.key);
      const std::size_t home = ref.home(k);
      if (!hop::overflowed(buckets[home].word[0]))
        return where + " holds a key homed at bucket " + std::to_string(home) + ", which has no overflow bit";
      if (((s - ref.stash_home(k)) & (ref.stash_buckets() - 1)) >= h64::stash_window)
        return where + " holds a key outside its stash window";
      seen.push_back(e.key);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = buckets[i].word[0];
    if (h64::hop_bits(h) != hop[i])
      return "bucket " + std::to_string(i) + " has hop bits " + std::to_string(h64::hop_bits(h)) + " but its members need " +
             std::to_string(hop[i]);
    if (h64::digest(h) != dig[i])
      return "bucket " + std::to_string(i) + " has digest " + std::to_string(h64::digest(h)) + " but its members give " +
             std::to_string(dig[i]);
  }
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return "a key is stored twice";
  if (seen.size() != size) return "table holds " + std::to_string(seen.size()) + " keys but size() is " + std::to_string(size);
  if (tombs > max_tombs) return "table holds " + std::to_string(tombs) + " tombs, more than the " + std::to_string(max_tombs) + " erases since the last rebuild";
  return {};
}

}  // namespace warpkv::detail
