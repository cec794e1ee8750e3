#pragma once
// Operation groups of one batch (argument: docs/design/cache.md, "Set absorption" and
// "get_or_set combining"). Before a batch runs, the operations of one key and one kind in the
// batch are gathered into a group whose winner is the largest operation index; in the batch only
// the winner touches the table. Two kinds are grouped:
//  - sets (cache_config::absorb_sets): the others report `assigned` without writing (linearized
//    just before the winner's write, so nothing can observe their values), and a fix-up pass
//    hands one of them the `inserted` when the winner inserted;
//  - get_or_set (cache_config::combine_get_or_set): the others report `found` and the fix-up
//    pass copies the winner's result value to them (linearized just after the winner, whose
//    get_or_set leaves the key present with that value).
// A zipfian head's updates or cache-aside reads then cost one table operation per key per batch
// instead of a convoy on the key's bucket locks.
//
// The groups live in an open-addressing table of `slots` (a power of two >= 2n) entries of three
// 32-bit words, in the backend's memory, zeroed before the batch:
//   rep   the first operation of the group to claim the entry, plus one (0: the entry is free);
//   win   the largest operation index of the group, plus one (fetch_max);
//   other some operation of the group other than rep, plus one (0: rep is alone).
// and one 32-bit word per operation, written by the join pass for every operation of the batch:
//   entry the group's entry of operation i, plus one (0: i is not grouped), so that the batch's
//         kernels and the fix-up pass find an operation's winner with two loads (its entry word,
//         coalesced, then the entry's `win`) instead of hashing its key and probing the table.
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/cache_keys.hpp"
#include "warpkv/cache/cache_op.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv::detail {

template <class Key>
struct op_groups {
  using layout = cache_key_layout<Key>;
  static constexpr std::size_t npos = ~std::size_t{0};
  std::uint32_t* rep = nullptr;
  std::uint32_t* win = nullptr;
  std::uint32_t* other = nullptr;
  std::uint32_t* entry = nullptr;  ///< one word per operation of the batch (>= n), written by the join pass
  std::size_t slots = 0;  ///< a power of two; 0: no grouping
  std::uint64_t seed = 0;
  const cache_op* ops = nullptr;  ///< the batch's operation codes, or null: every operation is `uniform`
  cache_op uniform{};
  bool sets = false;         ///< sets are grouped (absorbed)
  bool get_or_sets = false;  ///< get_or_set operations are grouped (combined)

  WARPKV_HD cache_op op_at(std::size_t i) const { return ops != nullptr ? ops[i] : uniform; }

  /// True when operation i belongs to a group (its kind is grouped and its key valid).
  WARPKV_HD bool grouped(const Key* keys, std::size_t i) const {
    if (slots == 0) return false;
    const cache_op o = op_at(i);
    if (!((o == cache_op::set && sets) || (o == cache_op::get_or_set && get_or_sets))) return false;
    return layout::valid(keys[i]);  // an invalid key's operation reports invalid_key alone
  }

  WARPKV_HD static bool same_key(const Key& a, const Key& b) {
    std::uint64_t x[layout::words], y[layout::words];
    layout::to_words(a, x);
    layout::to_words(b, y);
    bool same = true;
    for (int j = 0; j < layout::words; ++j) same = same && x[j] == y[j];
    return same;
  }
  /// Operations j and i are in one group: the same key and the same kind.
  WARPKV_HD bool same_group(const Key* keys, std::size_t j, std::size_t i) const {
    return op_at(j) == op_at(i) && same_key(keys[j], keys[i]);
  }
  WARPKV_HD std::size_t home(const Key* keys, std::size_t i) const {
    std::uint64_t w[layout::words];
    layout::to_words(keys[i], w);
    const std::uint64_t kind = static_cast<std::uint64_t>(op_at(i)) * 0xc2b2ae3d27d4eb4full;
    return static_cast<std::size_t>(layout::hash(w, seed ^ 0x9e3779b97f4a7c15ull ^ kind)) & (slots - 1);
  }

  /// The join pass's step for operation i of the batch (keys: the batch's keys, unchanged
  /// during it): a grouped operation joins its group; every operation records its entry word.
  WARPKV_HD void join(const Key* keys, std::size_t i) const {
    entry[i] = grouped(keys, i) ? static_cast<std::uint32_t>(claim(keys, i) + 1) : 0u;
  }

  /// The entry of operation i's group (npos: i is not grouped). After the join pass.
  WARPKV_HD std::size_t find(std::size_t i) const {
    if (slots == 0) return npos;
    const std::uint32_t e = entry[i];
    return e == 0 ? npos : static_cast<std::size_t>(e - 1);
  }

  /// The winner of operation i's group (i itself when it is not grouped). After the join pass.
  WARPKV_HD std::size_t winner(std::size_t i) const {
    const std::size_t s = find(i);
    return s == npos ? i : static_cast<std::size_t>(atomic_ref<std::uint32_t>(win[s]).load(memory_order::relaxed)) - 1;
  }

  /// True when operation i leaves the table to its group's winner. After the join pass.
  WARPKV_HD bool absorbed(std::size_t i) const { return winner(i) != i; }

  /// After the batch, for operation i (grouped): a set that won a group with other members and
  /// inserted hands `inserted` to one absorbed member (linearized first) and reports the
  /// assignment; a combined get_or_set copies its winner's result value (`values_out` null:
  /// nothing to copy; its status, `found`, was counted in the batch). The status counts of the
  /// batch do not change.
  WARPKV_HD void fix_up(std::size_t i, status* statuses, std::uint64_t* values_out,
                        std::size_t value_words) const {
    if (op_at(i) == cache_op::get_or_set) {
      const std::size_t w = winner(i);
      if (w == i || values_out == nullptr) return;
      for (std::size_t j = 0; j < value_words; ++j) values_out[i * value_words + j] = values_out[w * value_words + j];
      return;
    }
    // Only the group's winner acts, and only it reads its own status: the winner writes the
    // status of an absorbed member, so a member must not read its status here (a data race
    // ThreadSanitizer found once the host lanes ran this pass in parallel).
    const std::size_t s = find(i);
    const auto me = static_cast<std::uint32_t>(i + 1);
    if (s == npos || atomic_ref<std::uint32_t>(win[s]).load(memory_order::relaxed) != me) return;
    if (statuses[i] != status::inserted) return;
    const std::uint32_t r = atomic_ref<std::uint32_t>(rep[s]).load(memory_order::relaxed);
    const std::uint32_t o = atomic_ref<std::uint32_t>(other[s]).load(memory_order::relaxed);
    const std::uint32_t first = r != me ? r : o;  // rep never stores `other`, so o != me when r == me
    if (first == 0) return;  // i is alone in its group
    statuses[i] = status::assigned;
    statuses[first - 1] = status::inserted;
  }

 private:
  /// Joins grouped operation i to its group; returns the group's entry.
  WARPKV_HD std::size_t claim(const Key* keys, std::size_t i) const {
    const auto me = static_cast<std::uint32_t>(i + 1);
    for (std::size_t s = home(keys, i);; s = (s + 1) & (slots - 1)) {
      std::uint32_t r = atomic_ref<std::uint32_t>(rep[s]).load(memory_order::relaxed);
      if (r == 0) {
        if (atomic_ref<std::uint32_t>(rep[s]).compare_exchange(r, me, memory_order::relaxed)) {
          atomic_ref<std::uint32_t>(win[s]).fetch_max(me, memory_order::relaxed);
          return s;
        }
        // r now holds the operation that claimed the entry first
      }
      if (same_group(keys, r - 1, i)) {
        atomic_ref<std::uint32_t>(win[s]).fetch_max(me, memory_order::relaxed);
        atomic_ref<std::uint32_t>(other[s]).store(me, memory_order::relaxed);
        return s;
      }
    }
  }
};

}  // namespace warpkv::detail
