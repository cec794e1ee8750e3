#pragma once
// Whole-table passes of chained_map: walk every bucket list to collect the live entries, check
// the lists, or free device-allocated nodes. They run between batches, never concurrently
// with operations on the same table; one index per bucket (and per retired stack).
#include <cstddef>
#include <cstdint>

#include "warpkv/chained/detail/node.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/key_value.hpp"

namespace warpkv::detail {

/// Index b: appends the live (unmarked) entries of bucket b's list. Counts every live entry but
/// writes only the first `room`: lists that hold more than the map's size (a bug) make the caller
/// fail with the count instead of writing past its buffers.
template <class Node, class Key, class Value>
struct collect_list_fn {
  const std::uint64_t* heads;
  Key* keys_out;
  Value* values_out;
  unsigned long long* count;
  std::size_t room;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t b) const {
    for (Node* n = link::ptr<Node>(heads[b]); n != nullptr; n = link::ptr<Node>(n->next)) {
      if ((n->next & link::marked) != 0) continue;
      const auto at = atomic_ref<unsigned long long>(*count).fetch_add(1, memory_order::relaxed);
      if (at >= room) continue;
      keys_out[at] = from_bits<Key>(n->key);
      values_out[at] = from_bits<Value>(n->value);
    }
  }
};

/// Index b: checks bucket b's list (every key hashes to b, keys in increasing order, live keys
/// unique, no busy bit left) and counts its live and its marked-but-linked nodes.
/// counters: [0] live, [1] marked, [2] violations, [3] first violating bucket + 1 (smallest wins).
template <class Node>
struct check_list_fn {
  const std::uint64_t* heads;
  std::size_t mask;
  std::uint64_t seed;
  unsigned long long* counters;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t b) const {
    unsigned long long live = 0, dead = 0;
    bool bad = (heads[b] & link::flags) != 0;
    bool have_last = false;
    decltype(Node::key) last = 0;
    for (Node* n = link::ptr<Node>(heads[b]); n != nullptr && !bad; n = link::ptr<Node>(n->next)) {
      if ((n->next & link::busy) != 0) bad = true;
      if ((static_cast<std::size_t>(hash_bits(n->key, seed)) & mask) != b) bad = true;
      if (have_last && n->key < last) bad = true;
      const bool is_live = (n->next & link::marked) == 0;
      if (is_live && have_last && n->key == last) bad = true;  // a live key equal to its predecessor's
      is_live ? ++live : ++dead;
      last = n->key;
      have_last = true;
    }
    atomic_ref<unsigned long long>(counters[0]).fetch_add(live, memory_order::relaxed);
    atomic_ref<unsigned long long>(counters[1]).fetch_add(dead, memory_order::relaxed);
    if (bad) {
      atomic_ref<unsigned long long>(counters[2]).fetch_add(1, memory_order::relaxed);
      auto first = atomic_ref<unsigned long long>(counters[3]);
      unsigned long long cur = first.load(memory_order::relaxed);
      while ((cur == 0 || cur > b + 1) && !first.compare_exchange(cur, b + 1, memory_order::relaxed)) {
      }
    }
  }
};

/// Index 0: copies the first `room` nodes of bucket b's list as (key bits, link flags, whether the
/// key hashes to b) triples into out, and the list's length into *length (validate()'s report of a
/// broken list: what is broken, not only where).
template <class Node>
struct describe_list_fn {
  const std::uint64_t* heads;
  std::size_t b;
  std::size_t mask;
  std::uint64_t seed;
  std::uint64_t* out;
  std::size_t room;
  unsigned long long* length;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t) const {
    unsigned long long n = 0;
    for (Node* node = link::ptr<Node>(heads[b]); node != nullptr && n < (1u << 20); node = link::ptr<Node>(node->next), ++n) {
      if (n >= room) continue;
      out[3 * n] = static_cast<std::uint64_t>(node->key);
      out[3 * n + 1] = node->next & link::flags;
      out[3 * n + 2] = (static_cast<std::size_t>(hash_bits(node->key, seed)) & mask) == b ? 1 : 0;
    }
    *length = n;
  }
};

/// Device allocation: index b < buckets frees bucket b's list; index buckets + s frees retired
/// stack s (nodes unlinked during batches). The sets are disjoint: a node is unlinked once.
template <class Node>
struct free_lists_fn {
  const std::uint64_t* heads;
  std::size_t buckets;
  const std::uint64_t* retired;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t b) const {
    if (b < buckets) {
      for (Node* n = link::ptr<Node>(heads[b]); n != nullptr;) {
        Node* next = link::ptr<Node>(n->next);
        heap_delete(n);
        n = next;
      }
    } else {
      for (Node* n = link::ptr<Node>(retired[b - buckets]); n != nullptr;) {
        Node* next = link::ptr<Node>(n->retired);
        heap_delete(n);
        n = next;
      }
    }
  }
};

}  // namespace warpkv::detail
