#pragma once
// Set absorption (cache_config::absorb_sets; argument: docs/design/cache.md, "Set absorption"):
// before a batch runs, the sets of one key in the batch are gathered into a group whose winner
// is the largest operation index; in the batch only the winner writes the table, the others
// report `assigned` without touching it (linearized just before the winner's write, so nothing
// can observe their values), and a fix-up pass hands one of them the `inserted` when the winner
// inserted. A zipfian head's updates then cost one locked write per key per batch instead of a
// convoy on the key's bucket locks.
//
// The groups live in an open-addressing table of `slots` (a power of two >= 2n) entries of three
// 32-bit words, in the backend's memory, zeroed before the batch:
//   rep   the first operation of the group to claim the entry, plus one (0: the entry is free);
//   win   the largest operation index of the group, plus one (fetch_max);
//   other some operation of the group other than rep, plus one (0: rep is alone).
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/cache_keys.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv::detail {

template <class Key>
struct set_groups {
  using layout = cache_key_layout<Key>;
  static constexpr std::size_t npos = ~std::size_t{0};
  std::uint32_t* rep = nullptr;
  std::uint32_t* win = nullptr;
  std::uint32_t* other = nullptr;
  std::size_t slots = 0;  ///< a power of two; 0: no absorption
  std::uint64_t seed = 0;

  WARPKV_HD static bool same_key(const Key& a, const Key& b) {
    std::uint64_t x[layout::words], y[layout::words];
    layout::to_words(a, x);
    layout::to_words(b, y);
    bool same = true;
    for (int j = 0; j < layout::words; ++j) same = same && x[j] == y[j];
    return same;
  }
  WARPKV_HD std::size_t home(const Key& k) const {
    std::uint64_t w[layout::words];
    layout::to_words(k, w);
    return static_cast<std::size_t>(layout::hash(w, seed ^ 0x9e3779b97f4a7c15ull)) & (slots - 1);
  }

  /// Joins set operation i to its key's group (keys: the batch's keys, unchanged during it).
  WARPKV_HD void join(const Key* keys, std::size_t i) const {
    const Key& k = keys[i];
    if (!layout::valid(k)) return;  // the batch reports invalid_key; nothing to group
    const auto me = static_cast<std::uint32_t>(i + 1);
    for (std::size_t s = home(k);; s = (s + 1) & (slots - 1)) {
      std::uint32_t r = atomic_ref<std::uint32_t>(rep[s]).load(memory_order::relaxed);
      if (r == 0) {
        if (atomic_ref<std::uint32_t>(rep[s]).compare_exchange(r, me, memory_order::relaxed)) {
          atomic_ref<std::uint32_t>(win[s]).fetch_max(me, memory_order::relaxed);
          return;
        }
        // r now holds the operation that claimed the entry first
      }
      if (same_key(keys[r - 1], k)) {
        atomic_ref<std::uint32_t>(win[s]).fetch_max(me, memory_order::relaxed);
        atomic_ref<std::uint32_t>(other[s]).store(me, memory_order::relaxed);
        return;
      }
    }
  }

  /// The entry of key k's group (npos: k has no set in the batch). After the join pass.
  WARPKV_HD std::size_t find(const Key* keys, const Key& k) const {
    for (std::size_t s = home(k);; s = (s + 1) & (slots - 1)) {
      const std::uint32_t r = atomic_ref<std::uint32_t>(rep[s]).load(memory_order::relaxed);
      if (r == 0) return npos;
      if (same_key(keys[r - 1], k)) return s;
    }
  }

  /// True when set operation i is absorbed: its key has a set of a larger index in the batch.
  WARPKV_HD bool absorbed(const Key* keys, std::size_t i) const {
    if (slots == 0 || !layout::valid(keys[i])) return false;
    const std::size_t s = find(keys, keys[i]);
    return s != npos && atomic_ref<std::uint32_t>(win[s]).load(memory_order::relaxed) != static_cast<std::uint32_t>(i + 1);
  }

  /// After the batch, for set operation i: when i won a group with other members and inserted,
  /// one absorbed member (linearized first) reports the insert and i the assignment. The status
  /// counts of the batch do not change (one `inserted` and one `assigned` trade places).
  WARPKV_HD void fix_up(const Key* keys, std::size_t i, status* statuses) const {
    if (slots == 0 || !layout::valid(keys[i]) || statuses[i] != status::inserted) return;
    const std::size_t s = find(keys, keys[i]);
    const auto me = static_cast<std::uint32_t>(i + 1);
    if (s == npos || atomic_ref<std::uint32_t>(win[s]).load(memory_order::relaxed) != me) return;
    const std::uint32_t r = atomic_ref<std::uint32_t>(rep[s]).load(memory_order::relaxed);
    const std::uint32_t o = atomic_ref<std::uint32_t>(other[s]).load(memory_order::relaxed);
    const std::uint32_t first = r != me ? r : o;  // rep never stores `other`, so o != me when r == me
    if (first == 0) return;  // i is alone in its group
    statuses[i] = status::assigned;
    statuses[first - 1] = status::inserted;
  }
};

}  // namespace warpkv::detail
