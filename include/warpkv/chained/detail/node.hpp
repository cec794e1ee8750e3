#pragma once
// A node of a chained_map bucket list, its link words, and its two allocators.
//
// A link word (a bucket head, or a node's `next`) is the successor's address with two flag bits:
//   bit 0 (marked): this node is logically deleted; its `next` never changes again;
//   bit 1 (busy):   an insert_or_assign is replacing this node's value (for two steps).
// Heads never carry flags. Nodes are at least 8-byte aligned, so the low bits are free.
#include <cstdint>
#include <new>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"

#if WARPKV_DEVICE_PASS
#include <cstdlib>
#endif

namespace warpkv {

/// Where a chained_map's nodes come from.
enum class chained_alloc {
  pool,   ///< a node array allocated up front by the host; an insert takes the next node (atomic bump)
  device  ///< one allocation per insert: device malloc on the GPU, operator new on the host backend
};

namespace detail {

template <class KeyBits, class ValueBits>
struct alignas(8) chain_node {
  KeyBits key;            // written before the node is linked, never changed afterwards
  ValueBits value;        // atomic: insert_or_assign replaces it under the busy bit
  std::uint64_t next;     // link word
  std::uint64_t retired;  // device allocation: the next node on the retired stack
};

namespace link {
inline constexpr std::uint64_t marked = 1;
inline constexpr std::uint64_t busy = 2;
inline constexpr std::uint64_t flags = 3;
template <class Node>
WARPKV_HD inline Node* ptr(std::uint64_t w) {
  return reinterpret_cast<Node*>(static_cast<std::uintptr_t>(w & ~flags));
}
template <class Node>
WARPKV_HD inline std::uint64_t bits(const Node* n) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(n));
}
}  // namespace link

/// One node from the heap of the backend the code runs on (device malloc or operator new), or null.
template <class Node>
WARPKV_HD inline Node* heap_new() {
#if WARPKV_DEVICE_PASS
  return static_cast<Node*>(malloc(sizeof(Node)));
#else
  return new (std::nothrow) Node{};
#endif
}
template <class Node>
WARPKV_HD inline void heap_delete(Node* n) {
#if WARPKV_DEVICE_PASS
  free(n);
#else
  delete n;
#endif
}

}  // namespace detail
}  // namespace warpkv
