#pragma once
// chained_ref: the device-side view of a chained_map (after Misra and Chaudhuri's lock-free
// chained hash table on the GPU): an array of bucket heads, each a lock-free sorted linked list
// in the style of Harris and Michael (logical deletion by a mark bit in the node's link word,
// physical unlinking by any later traversal). Usable inside user kernels with a tile of any size:
// lane 0 walks the list (pointer chasing does not parallelize), the other lanes receive the
// result; every lane calls the same method with the same arguments and gets the same result.
//
// Guarantees (argument and linearization points: docs/design/chained.md):
//  - every operation is linearizable; a key is stored in at most one live node;
//  - find/contains never write and never wait (wait-free in the list's length);
//  - insert and erase are lock-free (one CAS each to take effect, retried only when another
//    operation changed the same link); insert_or_assign of a present key holds the node's busy
//    bit for two steps (value store, release), during which inserts next to that node and its
//    erase wait;
//  - status::full means no node could be had: the pool is used up (chained_alloc::pool) or the
//    device heap is (chained_alloc::device, see cudaLimitMallocHeapSize). The list was not
//    changed for this key; the bulk API rebuilds into a fresh pool (reclaiming erased nodes)
//    and retries; a device caller decides;
//  - erased nodes are never freed or reused while operations run (readers may still hold
//    them); they are reclaimed by the map's clear and rebuilds, between batches.
#include <cstddef>
#include <cstdint>

#include "warpkv/chained/detail/node.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"

namespace warpkv {

template <hash_key Key, map_value Value, chained_alloc Alloc>
class chained_ref {
 public:
  using key_type = Key;
  using mapped_type = Value;
  using key_bits = storage_bits_t<sizeof(Key)>;
  using value_bits = storage_bits_t<sizeof(Value)>;
  using node_type = detail::chain_node<key_bits, value_bits>;
  using slot_type = node_type;  // bulk_map_base's slot array stays empty: the nodes live in lists
  static constexpr chained_alloc allocation = Alloc;
  /// Device allocation: unlinked nodes wait on one of this many retired stacks (chosen by the
  /// node's address) until the map frees them between batches. Many stacks, so that neither
  /// the pushes of racing erases nor the freeing pass (one thread per stack) serialize: with a
  /// single stack, freeing 10^5 nodes took one GPU thread 10-25 s.
  static constexpr std::size_t retired_stacks = 4096;

  chained_ref() = default;
  /// `heads`: `buckets` link words (a power of two). Pool allocation: `pool` holds `pool_size`
  /// nodes and `*pool_used` counts those handed out. Device allocation: `retired` holds the tops of
  /// the retired_stacks stacks of unlinked nodes, freed by the map between batches.
  chained_ref(std::uint64_t* heads, std::size_t buckets, Key empty_key, std::uint64_t seed, node_type* pool,
              std::size_t pool_size, unsigned long long* pool_used, std::uint64_t* retired)
      : heads_(heads),
        mask_(buckets - 1),
        empty_(to_bits(empty_key)),
        seed_(seed),
        pool_(pool),
        pool_size_(pool_size),
        pool_used_(pool_used),
        retired_(retired) {}

  WARPKV_HD std::size_t buckets() const { return mask_ + 1; }
  WARPKV_HD Key empty_key() const { return from_bits<Key>(empty_); }
  WARPKV_HD std::size_t bucket(Key k) const { return bucket_bits(to_bits(k)); }

  /// Inserts (k, v) if k is absent: inserted, found (k present, unchanged), full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert(const Tile& t, Key k, Value v) const {
    return on_lane0(t, to_bits(k), [&](key_bits kb) { return upsert(kb, to_bits(v), false); });
  }
  /// Inserts (k, v) or replaces k's value: inserted, assigned, full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert_or_assign(const Tile& t, Key k, Value v) const {
    return on_lane0(t, to_bits(k), [&](key_bits kb) { return upsert(kb, to_bits(v), true); });
  }
  /// erased, not_found, invalid_key.
  template <class Tile>
  WARPKV_HD status erase(const Tile& t, Key k) const {
    return on_lane0(t, to_bits(k), [&](key_bits kb) { return remove(kb); });
  }
  /// found (value written to *out on every lane when out != nullptr), not_found, invalid_key.
  template <class Tile>
  WARPKV_HD status find(const Tile& t, Key k, Value* out = nullptr) const {
    const key_bits kb = to_bits(k);
    if (kb == empty_) return status::invalid_key;
    int s = 0;
    value_bits vb = 0;
    if (t.thread_rank() == 0) s = static_cast<int>(lookup(kb, &vb));
    s = t.shfl(s, 0);
    vb = t.shfl(vb, 0);
    if (static_cast<status>(s) == status::found && out != nullptr) *out = from_bits<Value>(vb);
    return static_cast<status>(s);
  }
  template <class Tile>
  WARPKV_HD status contains(const Tile& t, Key k) const {
    return find(t, k, nullptr);
  }

 private:
  struct window {
    std::uint64_t* prev;  // the link word that pointed to cur (a head or a live node's next)
    node_type* cur;       // first node with key >= kb, or null
    std::uint64_t next;   // cur's link word as read (unmarked)
  };

  template <class Tile, class F>
  WARPKV_HD status on_lane0(const Tile& t, key_bits kb, F&& f) const {
    if (kb == empty_) return status::invalid_key;
    int s = 0;
    if (t.thread_rank() == 0) s = static_cast<int>(f(kb));
    return static_cast<status>(t.shfl(s, 0));
  }

  WARPKV_HD std::size_t bucket_bits(key_bits kb) const { return static_cast<std::size_t>(hash_bits(kb, seed_)) & mask_; }
  WARPKV_HD static atomic_ref<std::uint64_t> word(std::uint64_t* w) { return atomic_ref<std::uint64_t>(*w); }
  WARPKV_HD static atomic_ref<value_bits> value_ref(node_type* n) { return atomic_ref<value_bits>(n->value); }
  WARPKV_HD static node_type* ptr(std::uint64_t w) { return detail::link::ptr<node_type>(w); }
  WARPKV_HD static std::uint64_t bits(const node_type* n) { return detail::link::bits(n); }

  /// Wait-free lookup (the lazy list's contains): walk by key, ignoring marks, to the first node
  /// with key >= kb; kb is present iff that node holds kb and its link is unmarked when read
  /// after its value.
  WARPKV_HD status lookup(key_bits kb, value_bits* out) const {
    node_type* cur = ptr(word(&heads_[bucket_bits(kb)]).load(memory_order::acquire));
    while (cur != nullptr && cur->key < kb) cur = ptr(word(&cur->next).load(memory_order::acquire));
    if (cur == nullptr || cur->key != kb) return status::not_found;
    *out = value_ref(cur).load(memory_order::acquire);  // then the mark: a later read
    if ((word(&cur->next).load(memory_order::acquire) & detail::link::marked) != 0) return status::not_found;
    return status::found;
  }

  /// Michael's search: the window (prev, cur) around kb, unlinking marked nodes on the way.
  /// On return prev held exactly cur (no mark) after cur's link was read unmarked, so at that
  /// moment prev's node (or the head) was live, cur was its successor and cur was live.
  WARPKV_HD window search(key_bits kb) const {
    std::uint64_t* head = &heads_[bucket_bits(kb)];
    for (int attempt = 0;; ++attempt) {
      std::uint64_t* prev = head;
      std::uint64_t link = word(prev).load(memory_order::acquire);  // as read from prev
      node_type* cur = ptr(link);
      bool restart = false;
      while (!restart) {
        if (cur == nullptr) {
          // prev's link read null and unmarked: prev was live and last at that moment.
          if ((link & detail::link::marked) == 0) return window{prev, nullptr, 0};
          restart = true;
          continue;
        }
        const std::uint64_t next = word(&cur->next).load(memory_order::acquire);
        // prev must still name cur (unmarked; a busy bit on prev is an assign and harmless).
        if ((word(prev).load(memory_order::acquire) & ~detail::link::busy) != bits(cur)) {
          restart = true;
        } else if ((next & detail::link::marked) != 0) {
          std::uint64_t expected = bits(cur);
          const std::uint64_t succ = next & ~detail::link::flags;
          if (word(prev).compare_exchange(expected, succ, memory_order::acq_rel)) {
            retire(cur);  // the one CAS that unlinked cur
            link = succ;
            cur = ptr(succ);
          } else {
            restart = true;
          }
        } else if (cur->key >= kb) {
          return window{prev, cur, next};
        } else {
          prev = &cur->next;
          link = next;
          cur = ptr(next);
        }
      }
      backoff(attempt);
    }
  }

  WARPKV_HD status upsert(key_bits kb, value_bits vb, bool or_assign) const {
    node_type* fresh = nullptr;
    for (int attempt = 0;; ++attempt) {
      const window w = search(kb);
      if (w.cur != nullptr && w.cur->key == kb) {
        if (!or_assign) {
          drop(fresh);
          return status::found;  // linearization point: cur's link read unmarked in search
        }
        if ((w.next & detail::link::busy) == 0) {
          std::uint64_t expected = w.next;
          if (word(&w.cur->next).compare_exchange(expected, w.next | detail::link::busy, memory_order::acq_rel)) {
            // While busy nothing else changes cur's link (every CAS on it expects no flag), so
            // cur stays live: this store is the assign's linearization point.
            value_ref(w.cur).store(vb, memory_order::release);
            word(&w.cur->next).store(w.next, memory_order::release);
            drop(fresh);
            return status::assigned;
          }
        }
        backoff(attempt);  // another assign holds it, or it was erased / got a successor
        continue;
      }
      if (fresh == nullptr) {
        fresh = allocate();
        if (fresh == nullptr) return status::full;
        fresh->key = kb;
        fresh->retired = 0;
      }
      value_ref(fresh).store(vb, memory_order::relaxed);
      word(&fresh->next).store(bits(w.cur), memory_order::relaxed);
      std::uint64_t expected = bits(w.cur);
      // Linearization point of the insert: fresh becomes reachable between two live neighbours.
      if (word(w.prev).compare_exchange(expected, bits(fresh), memory_order::acq_rel)) return status::inserted;
      backoff(attempt);
    }
  }

  WARPKV_HD status remove(key_bits kb) const {
    for (int attempt = 0;; ++attempt) {
      const window w = search(kb);
      if (w.cur == nullptr || w.cur->key != kb) return status::not_found;  // linearized in search
      if ((w.next & detail::link::busy) == 0) {
        std::uint64_t expected = w.next;
        // Linearization point: the mark. The unlink after it is an optimization any later
        // traversal would make.
        if (word(&w.cur->next).compare_exchange(expected, w.next | detail::link::marked, memory_order::acq_rel)) {
          std::uint64_t at = bits(w.cur);
          if (word(w.prev).compare_exchange(at, w.next, memory_order::acq_rel)) retire(w.cur);
          return status::erased;
        }
      }
      backoff(attempt);
    }
  }

  WARPKV_HD node_type* allocate() const {
    if constexpr (Alloc == chained_alloc::pool) {
      // fetch_add_exact: a node must go to one insert only (see its comment: the merged fetch_add
      // nvcc emits handed the same node to two threads on an H100).
      const auto i = atomic_ref<unsigned long long>(*pool_used_).fetch_add_exact(1);
      return i < pool_size_ ? &pool_[i] : nullptr;
    } else {
      return detail::heap_new<node_type>();
    }
  }
  /// A node this operation allocated but never linked: nobody else has seen it.
  WARPKV_HD void drop(node_type* n) const {
    if constexpr (Alloc == chained_alloc::device) {
      if (n != nullptr) detail::heap_delete(n);
    } else {
      (void)n;  // a pool node stays unused until the next rebuild
    }
  }
  /// Called once per node, by the CAS that unlinked it. Device allocation keeps it on the
  /// retired stack until the map frees it between batches; pool nodes need no record.
  WARPKV_HD void retire(node_type* n) const {
    if constexpr (Alloc == chained_alloc::device) {
      std::uint64_t* stack = &retired_[retired_stack_of(n)];
      std::uint64_t top = word(stack).load(memory_order::relaxed);
      do {
        atomic_ref<std::uint64_t>(n->retired).store(top, memory_order::relaxed);
      } while (!word(stack).compare_exchange(top, bits(n), memory_order::release));
    } else {
      (void)n;
    }
  }

  WARPKV_HD static std::size_t retired_stack_of(const node_type* n) {
    return static_cast<std::size_t>(fmix64(reinterpret_cast<std::uintptr_t>(n))) & (retired_stacks - 1);
  }

  std::uint64_t* heads_ = nullptr;
  std::size_t mask_ = 0;
  key_bits empty_ = 0;
  std::uint64_t seed_ = 0;
  node_type* pool_ = nullptr;
  std::size_t pool_size_ = 0;
  unsigned long long* pool_used_ = nullptr;
  std::uint64_t* retired_ = nullptr;
};

}  // namespace warpkv
