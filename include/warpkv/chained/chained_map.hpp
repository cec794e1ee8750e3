#pragma once
// warpkv::chained_map: the Misra-Chaudhuri lock-free chained hash table for the GPU (and host
// threads): Murmur3 into a power-of-two array of bucket heads, each a lock-free sorted list
// (Harris-Michael: logical deletion by a mark bit, physical unlinking by later traversals).
// Two ways to get nodes, as in the GLHT paper's experiments (the Alloc parameter):
//  - chained_alloc::pool: a node array allocated by the host before the batch; an insert takes
//    the next node with one atomic add. When the pool is used up the insert reports full and
//    the bulk API rebuilds the table into a fresh pool big enough for the live keys and the
//    pending inserts (twice that), which also reclaims the nodes of erased keys.
//  - chained_alloc::device: one allocation per insert, device malloc on the GPU (its heap is
//    cudaLimitMallocHeapSize: the constructor raises it to config.device_heap_bytes, which is
//    only possible before the process's first kernel that calls malloc), operator new on the
//    host backend. A null allocation reports full; the bulk API then rebuilds (freeing erased
//    nodes) and retries, and throws errc::capacity when the heap cannot hold the live keys.
// Reclamation rule: a node is freed or reused only between batches (clear, rebuild, the
// destructor), never while operations run, since readers may still hold erased nodes.
//
// What it guarantees (argument and linearization points: docs/design/chained.md):
//  - Every operation of a batch runs concurrently with the others and is linearizable; a key is
//    in at most one live node. Finds are wait-free, inserts and erases lock-free.
//  - No insert is lost (full -> rebuild and re-run of exactly the full operations).
//  - The empty key (default: the largest key) gets status::invalid_key, as in every warpkv map
//    (a chained table needs no sentinel, but the maps share one contract).
//  - capacity() is the number of buckets; max_load_factor bounds keys per bucket (default 1).
// The bulk API, its span overloads and its waiting rules are those of every warpkv map
// (core/bulk_map.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "warpkv/chained/chained_ref.hpp"
#include "warpkv/chained/detail/list_passes.hpp"
#include "warpkv/core/bulk_map.hpp"
#include "warpkv/core/table_passes.hpp"

namespace warpkv {

struct chained_config {
  double max_load_factor = 1.0;       ///< keys per bucket the table grows before passing, (0, 1]
  std::size_t pool_nodes = 0;         ///< chained_alloc::pool: nodes of the first pool; 0 = one per bucket
  std::size_t device_heap_bytes = std::size_t{1} << 30;  ///< chained_alloc::device on cuda: the least
                                      ///< cudaLimitMallocHeapSize wanted (0: leave it as it is)
  std::uint64_t seed = 0;             ///< hash seed
  bool throw_on_invalid_key = false;  ///< throw warpkv::error(invalid_key) after a batch that held the sentinel
};

template <hash_key Key, map_value Value, chained_alloc Alloc = chained_alloc::pool, int TileSize = 1>
class chained_map : public detail::bulk_map_base<chained_map<Key, Value, Alloc, TileSize>,
                                                 chained_ref<Key, Value, Alloc>, chained_config, TileSize> {
  using base = detail::bulk_map_base<chained_map, chained_ref<Key, Value, Alloc>, chained_config, TileSize>;
  friend base;

 public:
  using typename base::ref_type;
  using node_type = typename ref_type::node_type;
  static constexpr chained_alloc allocation = Alloc;
  static constexpr const char* map_name = Alloc == chained_alloc::pool ? "chained_map(pool)" : "chained_map(device)";

  /// A map with room for at least `capacity_hint` keys at the configured maximum load factor.
  explicit chained_map(std::size_t capacity_hint, chained_config cfg = {}, execution ex = execution::automatic(),
                       Key empty_key = default_empty_key<Key>)
      : base(cfg, ex, empty_key, empty_key) {
    if constexpr (Alloc == chained_alloc::device) raise_device_heap(ex, cfg.device_heap_bytes);
    pool_used_ = buffer<unsigned long long>(1, ex);
    retired_ = buffer<std::uint64_t>(Alloc == chained_alloc::device ? ref_type::retired_stacks : 1, ex);
    build(this->capacity_for(capacity_hint), cfg.pool_nodes);
  }
  chained_map(chained_map&&) noexcept = default;
  chained_map& operator=(chained_map&&) = delete;
  chained_map(const chained_map&) = delete;
  chained_map& operator=(const chained_map&) = delete;
  ~chained_map() {
    try {
      free_nodes();
      synchronize(this->ex_);
    } catch (...) {  // destructors must not throw; a CUDA failure surfaces at the next call
    }
  }

  /// The device view, for user kernels. Invalidated by any call that may rebuild the table.
  [[nodiscard]] ref_type ref() const {
    return ref_type(heads_.data(), this->capacity_, this->empty_, this->seed_, pool_.data(), pool_.size(),
                    pool_used_.data(), retired_.data());
  }
  /// Nodes of the current pool (chained_alloc::pool; 0 for device allocation).
  [[nodiscard]] std::size_t pool_nodes() const { return pool_.size(); }
  /// Pool nodes handed out since the last rebuild (live, erased, or taken by an insert that
  /// then found its key). Copies one counter from the backend.
  [[nodiscard]] std::size_t pool_used() const {
    unsigned long long used = 0;
    pool_used_.copy_to_host(&used, 1);
    return static_cast<std::size_t>(std::min<unsigned long long>(used, pool_.size()));
  }

  /// Writes all live entries to keys_out/values_out (backend memory, room for size()); returns the
  /// count (more than size() only if the lists are broken: then only size() entries are written).
  std::size_t retrieve_all(Key* keys_out, Value* values_out) const {
    buffer<unsigned long long> count(1, this->ex_);
    const unsigned long long zero = 0;
    count.copy_from_host(&zero, 1);
    detail::for_each_index(this->ex_, this->capacity_,
                           detail::collect_list_fn<node_type, Key, Value>{heads_.data(), keys_out, values_out, count.data(), this->size_});
    unsigned long long n = 0;
    count.copy_to_host(&n, 1);
    return static_cast<std::size_t>(n);
  }
  using base::retrieve_all;

  /// Debug aid: every list sorted, every key in its bucket, live keys unique, no busy bit left,
  /// size() live keys. Returns the first violation or "". Call between batches only.
  [[nodiscard]] std::string validate() const {
    buffer<unsigned long long> c(4, this->ex_);
    const std::array<unsigned long long, 4> zeros{};
    c.copy_from_host(zeros.data(), zeros.size());
    detail::for_each_index(this->ex_, this->capacity_,
                           detail::check_list_fn<node_type>{heads_.data(), this->capacity_ - 1, this->seed_, c.data()});
    std::array<unsigned long long, 4> h{};
    c.copy_to_host(h.data(), h.size());
    if (h[2] != 0) return "bucket " + std::to_string(h[3] - 1) + "'s list is broken (order, bucket, duplicate or busy bit): " +
                          describe_bucket(h[3] - 1);
    if (h[0] != this->size_)
      return "lists hold " + std::to_string(h[0]) + " live keys but size() is " + std::to_string(this->size_);
    return {};
  }

  /// Debug aid: bucket b's first nodes as "key[m][b][?]" (m: marked, b: busy, ?: hashes elsewhere), for validate().
  std::string describe_bucket(std::size_t b) const {
    require(b < this->capacity_, "b", "bucket index past capacity()");
    constexpr std::size_t room = 24;
    buffer<std::uint64_t> out(3 * room, this->ex_);
    buffer<unsigned long long> length(1, this->ex_);
    detail::for_each_index(this->ex_, 1,
                           detail::describe_list_fn<node_type>{heads_.data(), b, this->capacity_ - 1, this->seed_,
                                                               out.data(), room, length.data()});
    unsigned long long n = 0;
    length.copy_to_host(&n, 1);
    std::vector<std::uint64_t> h(3 * room);
    out.copy_to_host(h.data(), h.size());
    std::string s = std::to_string(n) + " nodes:";
    for (std::size_t i = 0; i < std::min<std::size_t>(n, room); ++i) {
      s += " " + std::to_string(h[3 * i]);
      if ((h[3 * i + 1] & detail::link::marked) != 0) s += "m";
      if ((h[3 * i + 1] & detail::link::busy) != 0) s += "b";
      if (h[3 * i + 2] == 0) s += "?";
    }
    return s;
  }

 private:
  // ---- hooks of bulk_map_base ------------------------------------------------------------
  /// clear(): every node goes (freed or back to the pool); the buckets stay.
  void reset_table(bool) {
    free_nodes();
    detail::fill_words<std::uint64_t>(this->ex_, heads_.data(), heads_.size(), 0);
    reset_counters();
  }
  /// Every counted batch (synchronous, or async ones being settled) comes through here: the
  /// pool's count of nodes handed out may have changed (rehash_to sets it exact again).
  void on_batch(const batch_summary& s) {
    last_full_ = s[status::full];
    nodes_stale_ = true;
  }
  /// An async call does not rebuild, so besides the load factor (the base's check) the pool must
  /// have a node for each insert that may run: nodes go to erased keys and to inserts that lost a
  /// race for their key until the next rebuild, so size() says nothing about them. The count of
  /// nodes handed out is read from the backend at the first async call after a synchronization
  /// (nothing of this map runs then: one 8-byte copy); the async calls still pending may take one
  /// node per insert each (async_pending_inserts()).
  void check_async_room(std::size_t more) const {
    base::check_async_room(more);
    if constexpr (Alloc == chained_alloc::pool) {
      if (nodes_stale_ && !this->async_in_flight()) {
        nodes_used_ = pool_used();
        nodes_stale_ = false;
      }
      const std::size_t pending = this->async_pending_inserts();
      if (nodes_used_ + pending + more > pool_.size())
        throw error(errc::capacity,
                    std::string("warpkv: ") + map_name + ": an async call does not rebuild the table, and " +
                        std::to_string(more) + " more inserts could need a node each while its pool has " +
                        std::to_string(pool_.size() - std::min(pool_.size(), nodes_used_ + pending)) + " of " +
                        std::to_string(pool_.size()) + " left (" + std::to_string(nodes_used_) +
                        " handed out since the last rebuild, kept by erased keys until the next one; " +
                        std::to_string(pending) + " inserts pending): rehash(capacity()) reclaims them, reserve() adds room");
    }
  }
  /// Rebuild into `capacity` buckets: collect the live entries, build a fresh table beside the
  /// old one (bucket heads, and a fresh pool sized for the keys and the pending inserts), re-insert
  /// them, then drop the old table. Strong guarantee: the new table is allocated before anything
  /// changes, and when the re-insertion fails the old table is put back as it was.
  void rehash_to(std::size_t capacity) {
    const std::size_t n = this->size_;
    const auto entries = this->entries_for_rebuild();
    const buffer<Key>& keys = entries.first;
    const buffer<Value>& values = entries.second;
    const std::size_t wanted_pool = 2 * (n + static_cast<std::size_t>(last_full_));
    buffer<std::uint64_t> heads(capacity, this->ex_);
    buffer<node_type> pool;
    if constexpr (Alloc == chained_alloc::pool)
      pool = buffer<node_type>(std::max({capacity, wanted_pool, this->cfg_.pool_nodes}), this->ex_);
    buffer<unsigned long long> used(1, this->ex_);
    buffer<std::uint64_t> retired(retired_.size(), this->ex_);
    buffer<status> st(std::max<std::size_t>(n, 1), this->ex_);
    // Everything is allocated: the new table goes in, the old one waits aside.
    const std::size_t old_capacity = this->capacity_;
    auto swap_tables = [&] {
      std::swap(heads_, heads);
      std::swap(pool_, pool);
      std::swap(pool_used_, used);
      std::swap(retired_, retired);
    };
    swap_tables();
    this->capacity_ = capacity;
    bool filled = false;  // the new heads and retired stacks hold lists (empty ones at first)
    try {
      detail::fill_words<std::uint64_t>(this->ex_, heads_.data(), capacity, 0);
      reset_counters();
      filled = true;
      if (n > 0) {
        const auto s = launch_batch<TileSize>(
            this->ex_, n, detail::insert_op<ref_type, Key, Value>{ref(), keys.data(), values.data(), false}, st.data());
        if (s[status::inserted] != n)
          throw error(errc::out_of_memory, std::string("warpkv: ") + map_name + " could re-insert only " +
                                               std::to_string(s[status::inserted]) + " of " + std::to_string(n) +
                                               " keys while rebuilding (device heap too small? see device_heap_bytes)");
      }
    } catch (...) {
      if (filled) free_nodes_of(heads_.data(), this->capacity_, retired_);  // the new table's nodes
      swap_tables();
      this->capacity_ = old_capacity;
      nodes_stale_ = true;  // the old pool's count is back: read it again when needed
      throw;
    }
    free_nodes_of(heads.data(), old_capacity, retired);  // the old table's nodes
    nodes_used_ = n;  // one node per re-inserted key (they are distinct: no insert loses a race)
    nodes_stale_ = Alloc != chained_alloc::pool;
    ++this->rehashes_;
  }

  /// Fresh bucket array of `capacity` heads; pool: a fresh pool of at least `pool_hint` nodes.
  void build(std::size_t capacity, std::size_t pool_hint) {
    heads_ = buffer<std::uint64_t>(capacity, this->ex_);
    this->capacity_ = capacity;
    detail::fill_words<std::uint64_t>(this->ex_, heads_.data(), capacity, 0);
    if constexpr (Alloc == chained_alloc::pool) {
      const std::size_t want = std::max({capacity, pool_hint, this->cfg_.pool_nodes});
      if (want != pool_.size()) pool_ = buffer<node_type>(want, this->ex_);
    }
    reset_counters();
  }
  void reset_counters() {
    const unsigned long long zero = 0;
    pool_used_.copy_from_host(&zero, 1);
    nodes_used_ = 0;
    nodes_stale_ = false;
    detail::fill_words<std::uint64_t>(this->ex_, retired_.data(), retired_.size(), 0);
  }
  /// Device allocation: frees every node, linked or retired. Pool nodes need nothing.
  void free_nodes() {
    if constexpr (Alloc == chained_alloc::device) {
      if (heads_.data() == nullptr) return;  // moved from
      free_nodes_of(heads_.data(), this->capacity_, retired_);
      reset_counters();
    }
  }
  /// Device allocation: frees the nodes of the lists under `heads` and of the retired stacks.
  void free_nodes_of(std::uint64_t* heads, std::size_t capacity, const buffer<std::uint64_t>& retired) {
    if constexpr (Alloc == chained_alloc::device) {
      if (heads == nullptr) return;
      detail::for_each_index(this->ex_, capacity + retired.size(),
                             detail::free_lists_fn<node_type>{heads, capacity, retired.data()});
    } else {
      (void)heads, (void)capacity, (void)retired;
    }
  }

  static void raise_device_heap(const execution& ex, std::size_t bytes) {
#if WARPKV_HAS_CUDA
    if (ex.where != backend::cuda || bytes == 0) return;
    std::size_t now = 0;
    WARPKV_CUDA_CHECK(cudaDeviceGetLimit(&now, cudaLimitMallocHeapSize));
    if (now >= bytes) return;
    const cudaError_t e = cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw error(errc::cuda, "warpkv: chained_map could not raise cudaLimitMallocHeapSize from " + std::to_string(now) +
                                  " to " + std::to_string(bytes) + " bytes (device_heap_bytes): " + cudaGetErrorString(e) +
                                  "; the limit can only change before the first kernel that calls malloc");
    }
#else
    (void)ex;
    (void)bytes;
#endif
  }

  buffer<std::uint64_t> heads_;
  buffer<node_type> pool_;
  buffer<unsigned long long> pool_used_;  // pool nodes handed out since the last rebuild
  buffer<std::uint64_t> retired_;         // device allocation: tops of the retired stacks
  std::uint64_t last_full_ = 0;
  // chained_alloc::pool: pool nodes handed out as of the last synchronization, and whether a
  // mutating call has run since (check_async_room reads the counter again).
  mutable std::size_t nodes_used_ = 0;
  mutable bool nodes_stale_ = false;
};

}  // namespace warpkv
