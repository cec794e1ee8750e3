#pragma once
// The host-side bulk API every slot-array map shares (a CRTP base): the pointer and host-span
// overloads of insert / insert_or_assign / find / contains / erase / execute, the batch runner
// that grows the table and re-runs exactly the operations that came back `full`, capacity
// rounding, reserve / rehash / clear / retrieve_all, and the counters.
//
// The contract below is also C++20 concepts (core/map_concepts.hpp: device_map_ref,
// slot_array_ref, bulk_map), which this base static_asserts for every map.
// A map derives from bulk_map_base<Map, Ref, Config, TileSize> (and befriends it). Ref is its
// device ref type (key_type, mapped_type, key_bits, slot_type, insert/insert_or_assign/find/erase
// with a tile, and the slot layout statics of core/table_passes.hpp). Config has at least
// max_load_factor, seed and throw_on_invalid_key. The map supplies
//   static constexpr const char* map_name;    // for messages
//   ref_type ref() const;                      // the device view of the current table
//   void reset_table(bool reallocate);         // (re)allocate its side arrays for capacity_ when
//                                              // asked, and initialise slots_ and them to empty
// and may replace these hooks (defaults below):
//   void prepare_inserts(std::size_t n);       // before a batch of n inserts: reserve(size_ + n)
//   void on_batch(const batch_summary&);       // after each launch of a mutating batch: nothing
//   void maintain();                           // after a mutating call: keep the load factor
//   std::size_t occupied_bound() const;        // slots that may be occupied: size_ (+ tombstones)
//   void check_async_room(std::size_t more) const;  // an async call's room check (throws capacity)
// A Ref may declare `static std::size_t storage_slots(std::size_t capacity)` when its slot array
// holds more than `capacity` slots (hopscotch's stash after the table); allocation, rehash and
// retrieve_all then cover them all.
// A map whose storage is not one slot array (chained_map: bucket heads and nodes) also replaces
//   void rehash_to(std::size_t capacity);      // rebuild into `capacity` (reserve, rehash, growth)
//   std::size_t retrieve_all(key_type*, mapped_type*) const;  // collect the live entries
// (the base calls both through the derived type).
//
// Guarantees of the bulk calls (each map's header adds its own):
//  - every operation of a batch runs concurrently with the others;
//  - no insert is lost: a batch that reports `full` makes the map rehash into a new table (new
//    seed, more capacity when loaded) and re-run exactly the `full` operations; 64 rounds without
//    success throw errc::capacity;
//  - a sentinel key gets status::invalid_key; with config.throw_on_invalid_key every call
//    (find and contains too) throws errc::invalid_key after the batch ran;
//  - mutating calls wait for their batch; find/contains are stream-ordered (no wait) on cuda,
//    except with throw_on_invalid_key, where they count the statuses and wait;
//  - a synchronous mixed batch (execute) runs in phases by kind, reads, then writes, then erases,
//    each with its uniform batch's kernel (core/batch_partition.hpp): one valid linearization of
//    the concurrent batch (so a find never sees an insert of the same batch; per key, its inserts
//    precede its erases); execute_async runs the batch as one launch, in no fixed order;
//  - a mixed batch (execute) is sized up front as insert() is: when it could pass the maximum
//    load factor, a counting pass learns how many ops may insert and the table grows first;
//  - nothing is lost on failure: reserve, rehash, cleanup and growth allocate the new table
//    beside the old one and put the old one back when anything fails (strong guarantee). A
//    batch allocates before it runs; a growth failure in the middle of a batch (placement
//    failed in a table already sized for the batch) throws with the map consistent: the ops whose
//    status is `full` did not run, all others did and are counted in size();
//  - scratch: an insert batch with a fast pass lists the operations it hands back in a list the
//    map keeps for later batches (4 bytes per operation of the largest such batch;
//    scratch_bytes(), release_scratch()); when there is no memory for it the batch runs on a
//    status array instead, and statuses are written only to a caller's array;
//  - one map must not be used by two host threads at once.
// Streams: every pointer overload takes an optional stream (`stream_arg`, a cudaStream_t; empty =
// the map's own stream, execution::stream). The map's kernels always run on its own stream, where
// its table, growth and scratch memory live, ordered after the work queued on the given stream,
// and the given stream is left ordered after them (event waits, core/stream_order.hpp).
// The `_async` forms (insert_async, insert_or_assign_async, erase_async, execute_async,
// find_async, contains_async) never wait for the GPU:
//  - they never grow the table: a call that could take the table past its maximum load factor
//    (counting every op of it as an insert, and the inserts of async calls not yet synchronized)
//    throws errc::capacity before anything runs; reserve() first (chained_map's pool also needs
//    a node for each such op: its count of nodes handed out is copied back, 8 bytes, at the
//    first async call after a synchronization, when none of the map's work is queued; erased
//    keys keep their nodes until rehash());
//  - their counts are gathered on the device: synchronize() (and every synchronous call, and
//    size()) waits for them, adds them to size() and returns them; an op the table could not
//    place (cuckoo: its eviction chains failed) gets status::full in `out` and in those counts
//    and is not stored: nothing is lost silently;
//  - throw_on_invalid_key is checked by synchronize(), not by the async call;
//  - on the host backend they run at once, like the synchronous forms.
// Pointers point to memory of the map's backend; the std::span overloads take host data.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "warpkv/core/batch.hpp"
#include "warpkv/core/batch_partition.hpp"
#include "warpkv/core/batch_phases.hpp"
#include "warpkv/core/batch_sizing.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/growth.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/map_concepts.hpp"
#include "warpkv/core/map_ops.hpp"
#include "warpkv/core/stream_order.hpp"
#include "warpkv/core/table_passes.hpp"

namespace warpkv::detail {

template <class Derived, class Ref, class Config, int TileSize>
class bulk_map_base {
  static_assert(valid_tile_size<TileSize>, "TileSize must be 1, 2, 4, 8, 16 or 32");
  static_assert(device_map_ref<Ref>, "Ref must satisfy warpkv::device_map_ref (core/map_concepts.hpp)");

 public:
  using key_type = typename Ref::key_type;
  using mapped_type = typename Ref::mapped_type;
  using config_type = Config;
  using ref_type = Ref;
  using slot_type = typename Ref::slot_type;
  static constexpr int tile_size = TileSize;

  // ---- bulk API over backend memory -------------------------------------------------
  batch_summary insert(const key_type* keys, const mapped_type* values, std::size_t n, status* out = nullptr,
                       stream_arg stream = {}) {
    detail::stream_join join(ex_, stream);
    return insert_batch(keys, values, n, out, false);
  }
  batch_summary insert_or_assign(const key_type* keys, const mapped_type* values, std::size_t n,
                                 status* out = nullptr, stream_arg stream = {}) {
    detail::stream_join join(ex_, stream);
    return insert_batch(keys, values, n, out, true);
  }
  /// values_out[i] = value of keys[i], or mapped_type{} when absent. Stream-ordered (no wait) on cuda.
  void find(const key_type* keys, std::size_t n, mapped_type* values_out, status* out = nullptr,
            stream_arg stream = {}) {
    check_inputs(n, keys, "keys");
    detail::stream_join join(ex_, stream);
    run_readonly(n, out, find_op<Ref, key_type, mapped_type>{self().ref(), keys, values_out, nullptr});
  }
  void contains(const key_type* keys, std::size_t n, bool* found_out, stream_arg stream = {}) {
    check_inputs(n, keys, "keys");
    check_inputs(n, found_out, "found_out");
    detail::stream_join join(ex_, stream);
    run_readonly(n, nullptr, find_op<Ref, key_type, mapped_type>{self().ref(), keys, nullptr, found_out});
  }
  batch_summary erase(const key_type* keys, std::size_t n, status* out = nullptr, stream_arg stream = {}) {
    check_inputs(n, keys, "keys");
    detail::stream_join join(ex_, stream);
    settle();
    return run<batch_shape::op_per_tile>(n, out, [=](const Ref& r) { return erase_op<Ref, key_type>{r, keys}; });
  }
  /// A mixed batch; all operations run concurrently. values_out (may be null) receives
  /// find results; an op code outside warpkv::op gets status::invalid_key.
  batch_summary execute(const op* ops, const key_type* keys, const mapped_type* values, std::size_t n, status* out,
                        mapped_type* values_out = nullptr, stream_arg stream = {}) {
    check_inputs(n, ops, "ops");
    check_inputs(n, keys, "keys");
    check_inputs(n, values, "values");
    detail::stream_join join(ex_, stream);
    settle();
    if (n >= std::size_t{list_mark}) {  // the phases' index lists hold 31-bit indices and a mark
      presize_mixed(ops, keys, n);
      return run(n, out, [=](const Ref& r) {
        return execute_op<Ref, key_type, mapped_type>{r, ops, keys, values, values_out};
      });
    }
    const batch_summary total = run_mixed_phased(ops, keys, values, n, out, values_out);
    self().maintain();
    throw_if_invalid(total);
    return total;
  }

  // ---- stream-ordered forms that never wait (see the header) ---------------------------------
  void insert_async(const key_type* keys, const mapped_type* values, std::size_t n, status* out = nullptr,
                    stream_arg stream = {}) {
    insert_batch_async(keys, values, n, out, false, stream);
  }
  void insert_or_assign_async(const key_type* keys, const mapped_type* values, std::size_t n, status* out = nullptr,
                              stream_arg stream = {}) {
    insert_batch_async(keys, values, n, out, true, stream);
  }
  void erase_async(const key_type* keys, std::size_t n, status* out = nullptr, stream_arg stream = {}) {
    check_inputs(n, keys, "keys");
    run_async<batch_shape::op_per_tile>(n, 0, out, stream, [=](const Ref& r) { return erase_op<Ref, key_type>{r, keys}; });
  }
  void execute_async(const op* ops, const key_type* keys, const mapped_type* values, std::size_t n, status* out,
                     mapped_type* values_out = nullptr, stream_arg stream = {}) {
    check_inputs(n, ops, "ops");
    check_inputs(n, keys, "keys");
    check_inputs(n, values, "values");
    run_async<batch_shape::serve_loop>(n, n, out, stream, [=](const Ref& r) {
      return execute_op<Ref, key_type, mapped_type>{r, ops, keys, values, values_out};
    });
  }
  void find_async(const key_type* keys, std::size_t n, mapped_type* values_out, status* out = nullptr,
                  stream_arg stream = {}) {
    check_inputs(n, keys, "keys");
    detail::stream_join join(ex_, stream);
    launch_uncounted<TileSize, find_op<Ref, key_type, mapped_type>, batch_shape::op_per_tile>(
        ex_, n, find_op<Ref, key_type, mapped_type>{self().ref(), keys, values_out, nullptr}, out);
  }
  void contains_async(const key_type* keys, std::size_t n, bool* found_out, stream_arg stream = {}) {
    check_inputs(n, keys, "keys");
    check_inputs(n, found_out, "found_out");
    detail::stream_join join(ex_, stream);
    launch_uncounted<TileSize, find_op<Ref, key_type, mapped_type>, batch_shape::op_per_tile>(
        ex_, n, find_op<Ref, key_type, mapped_type>{self().ref(), keys, nullptr, found_out}, nullptr);
  }
  /// Waits for the map's async calls, adds their counts to size() (and keeps the load factor, as
  /// a synchronous call does) and returns their counts since the last synchronization. Throws
  /// errc::invalid_key afterwards when config.throw_on_invalid_key and an op held a sentinel.
  batch_summary synchronize() {
    const batch_summary s = settle();
    warpkv::synchronize(ex_);
    throw_if_invalid(s);
    return s;
  }

  // ---- convenience overloads over host data ---------------------------------------------
  std::vector<status> insert(std::span<const key_type> keys, std::span<const mapped_type> values) {
    return insert_host(keys, values, false);
  }
  std::vector<status> insert_or_assign(std::span<const key_type> keys, std::span<const mapped_type> values) {
    return insert_host(keys, values, true);
  }
  /// Returns each key's status (found / not_found / invalid_key) and fills values (mapped_type{} if absent).
  std::vector<status> find(std::span<const key_type> keys, std::vector<mapped_type>& values) {
    auto k = buffer<key_type>::from_host(keys, ex_);
    buffer<mapped_type> v(keys.size(), ex_);
    auto st = with_statuses(keys.size(), [&](status* s) { find(k.data(), keys.size(), v.data(), s); });
    values = v.to_vector();
    return st;
  }
  std::vector<status> erase(std::span<const key_type> keys) {
    auto k = buffer<key_type>::from_host(keys, ex_);
    return with_statuses(keys.size(), [&](status* s) { erase(k.data(), keys.size(), s); });
  }
  std::vector<status> execute(std::span<const op> ops, std::span<const key_type> keys,
                              std::span<const mapped_type> values, std::vector<mapped_type>& values_out) {
    require(ops.size() == keys.size(), "keys", "must have as many elements as ops");
    require(values.size() == keys.size(), "values", "must have as many elements as ops");
    auto o = buffer<op>::from_host(ops, ex_);
    auto k = buffer<key_type>::from_host(keys, ex_);
    auto v = buffer<mapped_type>::from_host(values, ex_);
    buffer<mapped_type> r(keys.size(), ex_);
    auto st = with_statuses(keys.size(),
                            [&](status* s) { execute(o.data(), k.data(), v.data(), keys.size(), s, r.data()); });
    values_out = r.to_vector();
    return st;
  }

  // ---- whole-table operations -----------------------------------------------------------
  /// Waits for the map's async calls first, if any.
  [[nodiscard]] std::size_t size() const {
    settle_counts();
    return size_;
  }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] double load_factor() const { return static_cast<double>(size()) / static_cast<double>(capacity_); }
  [[nodiscard]] const Config& config() const { return cfg_; }
  [[nodiscard]] const execution& exec() const { return ex_; }
  [[nodiscard]] key_type empty_key() const { return empty_; }
  [[nodiscard]] std::uint64_t seed() const { return seed_; }
  /// Number of rehashes this map has done (growth, reserve, rehash, and any rebuild of the table).
  [[nodiscard]] std::size_t rehash_count() const { return rehashes_; }

  void clear() {
    settle();
    self().reset_table(false);
    size_ = 0;
  }
  /// Frees the scratch memory the map keeps between batches: the insert batches' list of the
  /// operations a fast pass hands back (4 bytes per operation of the largest insert batch so far;
  /// the next insert batch allocates it again). For a caller close to the memory limit.
  void release_scratch() {
    settle();
    handback_ = {};
  }
  /// Bytes of scratch memory the map keeps between batches (see release_scratch).
  [[nodiscard]] std::size_t scratch_bytes() const { return handback_.size() * sizeof(std::uint32_t); }
  /// Makes room for n keys without passing the maximum load factor.
  void reserve(std::size_t n) {
    settle();
    const std::size_t need = self().capacity_for(n);
    if (need > capacity_) self().rehash_to(need);
  }
  /// Rebuilds the table with at least `capacity` slots (never fewer than the keys need).
  void rehash(std::size_t capacity) {
    settle();
    self().rehash_to(std::max(self().capacity_for(size_), self().slots_for(capacity)));
  }

  /// Writes all entries to keys_out/values_out (backend memory, room for size()); returns the count.
  std::size_t retrieve_all(key_type* keys_out, mapped_type* values_out) const {
    return collect_entries<Ref>(ex_, slots_.data(), storage_for(capacity_), to_bits(empty_), to_bits(erased_), keys_out,
                                values_out);
  }
  std::pair<std::vector<key_type>, std::vector<mapped_type>> retrieve_all() const {
    settle_counts();
    buffer<key_type> k(std::max<std::size_t>(size_, 1), ex_);
    buffer<mapped_type> v(std::max<std::size_t>(size_, 1), ex_);
    const std::size_t n = self().retrieve_all(k.data(), v.data());
    if (n > size_)
      throw error(errc::capacity, std::string("warpkv: ") + Derived::map_name + " holds " + std::to_string(n) +
                                      " live entries but size() is " + std::to_string(size_));
    std::vector<key_type> keys(n);
    std::vector<mapped_type> values(n);
    k.copy_to_host(keys.data(), n);
    v.copy_to_host(values.data(), n);
    return {std::move(keys), std::move(values)};
  }

 protected:
  /// `erased`: the tombstone key of maps that have one; maps without tombstones pass `empty`.
  bulk_map_base(const Config& cfg, const execution& ex, key_type empty, key_type erased)
      : cfg_(cfg), ex_(ex), empty_(empty), erased_(erased), seed_(cfg.seed) {
    static_assert(bulk_map<Derived>, "the map must satisfy warpkv::bulk_map (core/map_concepts.hpp)");
    require(cfg.max_load_factor > 0.0 && cfg.max_load_factor <= 1.0, "max_load_factor", "must be in (0, 1]");
  }

  // ---- the contract --------------------------------------------------------------------------
 public:
  /// Whether Derived provides the hooks this base calls (core/map_concepts.hpp, bulk_map).
  /// Checked here, where the map's private hooks are visible (a map befriends its base).
  template <class D = Derived>
  static consteval bool provides_bulk_hooks() {
    constexpr bool hooks = requires(D& d, const D& cd, std::size_t n, const batch_summary& s) {
      d.reset_table(true);
      d.restore_side(d.take_side());  // replaced together, or neither
      d.prepare_inserts(n);
      d.on_batch(s);
      d.maintain();
      { cd.occupied_bound() } -> std::convertible_to<std::size_t>;
      cd.check_async_room(n);
    };
    // A table that is not one slot array (chained_map) rebuilds itself.
    if constexpr (slot_array_ref<Ref>) return hooks;
    else return hooks && std::is_same_v<decltype(&D::rehash_to), void (D::*)(std::size_t)>;
  }

 protected:
  // ---- default hooks ---------------------------------------------------------------------
  void prepare_inserts(std::size_t n) { reserve(size_ + n); }
  /// Slots that may be occupied (an async call's room check): the keys; maps with tombstones add them.
  std::size_t occupied_bound() const { return size_; }
  /// An async call's room check (run_async, before anything is queued): throws errc::capacity when
  /// `more` inserts, beside those of the async calls still pending, could pass the maximum load
  /// factor. A map with another limit (chained_map's node pool) adds its own check to this one.
  void check_async_room(std::size_t more) const {
    const double limit = cfg_.max_load_factor * static_cast<double>(capacity_);
    if (static_cast<double>(self().occupied_bound() + pending_inserts_ + more) > limit)
      throw error(errc::capacity, std::string("warpkv: ") + Derived::map_name + ": an async call does not grow the table, and " +
                                      std::to_string(more) + " more inserts could pass its maximum load factor (" +
                                      std::to_string(capacity_) + " slots, " + std::to_string(size_) + " keys, " +
                                      std::to_string(pending_inserts_) + " inserts pending): reserve() room first");
  }
  /// Whether async calls are queued and not yet synchronized (their counts not yet in size()).
  [[nodiscard]] bool async_in_flight() const { return async_pending_; }
  /// Inserts of the async calls still pending (each may insert one key).
  [[nodiscard]] std::size_t async_pending_inserts() const { return pending_inserts_; }
  void on_batch(const batch_summary&) {}
  void maintain() {
    if (growth().over_load(size_, capacity_)) reserve(size_);
  }

  /// The map's sizing rule (core/growth.hpp) over its maximum load factor. reserve() and rehash()
  /// size through the derived map's capacity_for: a map whose tables are not a power of two of
  /// slots (hopscotch's bucket layout: 7 x 2^k) replaces it.
  [[nodiscard]] growth_policy growth() const { return growth_policy{cfg_.max_load_factor}; }
  std::size_t capacity_for(std::size_t keys) const { return growth().capacity_for(keys); }
  /// The capacity of the smallest table with at least `slots` slots, which rehash(n) builds: a
  /// power of two here; a map with tables of another shape replaces it (hopscotch's buckets:
  /// 7 x 2^k, so that rehash(capacity()) keeps the table's size instead of growing it).
  std::size_t slots_for(std::size_t slots) const { return round_capacity(slots); }

  /// Slots in the array of a table of `capacity` buckets.
  static std::size_t storage_for(std::size_t capacity) {
    if constexpr (requires { Ref::storage_slots(std::size_t{}); })
      return Ref::storage_slots(capacity);
    else
      return capacity;
  }

  /// Allocates a table of `capacity` slots hashed with `seed` and initialises it.
  void allocate(std::size_t capacity, std::uint64_t seed) {
    slots_ = buffer<slot_type>(storage_for(capacity), ex_);
    capacity_ = capacity;
    seed_ = seed;
    self().reset_table(true);
  }

  /// Re-inserts every live entry into a new table of `capacity` slots with a new seed
  /// (alternately a new seed, then a new seed with twice the room, until every entry fits).
  /// Strong guarantee: when anything fails (an allocation, a launch, 64 attempts), the old table,
  /// its side arrays, capacity and seed are put back as they were and the error propagates.
  void rehash_to(std::size_t capacity) {
    buffer<slot_type> old_slots = std::move(slots_);
    auto old_side = self().take_side();
    const std::size_t old_capacity = capacity_;
    const std::uint64_t old_seed = seed_;
    try {
      const std::size_t old_slot_count = storage_for(old_capacity);
      buffer<status> statuses(old_slot_count, ex_);
      rebuild_until_placed(capacity, seed_, "warpkv: rehash could not place every key",
                           [&](std::size_t slots, std::uint64_t seed) {
        allocate(slots, seed);
        // A ref with a fast insert places the entries lock-free first and only the ones it hands
        // back (all candidate buckets full) with the complete protocol.
        const reinsert_op<Ref> complete{self().ref(), old_slots.data(), to_bits(empty_), to_bits(erased_)};
        batch_summary s;
        if constexpr (has_fast_bulk_inserts<Ref>) {
          s = launch_batch<TileSize>(ex_, old_slot_count,
                                     reinsert_op<Ref, pass::fast>{complete.ref, complete.old_slots, complete.empty, complete.erased},
                                     statuses.data(), counters());
          if (s[status::full] > 0)
            s = launch_full<batch_shape::serve_loop>(old_slot_count, s[status::full], complete, statuses.data());
        } else {
          s = launch_batch<TileSize>(ex_, old_slot_count, complete, statuses.data(), counters());
        }
        return s[status::full] == 0;
      });
    } catch (...) {
      slots_ = std::move(old_slots);
      capacity_ = old_capacity;
      seed_ = old_seed;
      self().restore_side(std::move(old_side));
      throw;
    }
    ++rehashes_;
  }

  /// A rebuild's input for a map whose table is not one slot array (chained_map, hopscotch's bucket
  /// layout: they replace rehash_to): the live entries, collected by the map's retrieve_all into
  /// two backend buffers of size() entries (at least one). Throws errc::capacity when the table
  /// holds another number of entries than size() (a broken table is not rebuilt).
  std::pair<buffer<key_type>, buffer<mapped_type>> entries_for_rebuild() const {
    buffer<key_type> keys(std::max<std::size_t>(size_, 1), ex_);
    buffer<mapped_type> values(std::max<std::size_t>(size_, 1), ex_);
    const std::size_t got = self().retrieve_all(keys.data(), values.data());
    if (got != size_)
      throw error(errc::capacity, std::string("warpkv: ") + Derived::map_name + " found " + std::to_string(got) +
                                      " live keys while rebuilding, expected " + std::to_string(size_));
    return {std::move(keys), std::move(values)};
  }

  /// Side arrays of the table (none by default): a map with some replaces both hooks, so that a
  /// failed rehash can put them back with the slots.
  struct no_side {};
  no_side take_side() { return {}; }
  void restore_side(no_side) {}

  Config cfg_;
  execution ex_;
  key_type empty_;
  key_type erased_;
  std::uint64_t seed_;
  buffer<slot_type> slots_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
  std::size_t rehashes_ = 0;

  /// Runs `op` again on the operations of [0, n) whose status is `full` (`full` of them, as the
  /// launch that left them counted), writing their new statuses: a sorting pass lists them
  /// (core/batch_partition.hpp, full_sorter) and the launch runs only the list, densely. A launch
  /// over all n in which each thread first read its status (only_full) kept a warp waiting for
  /// its one slow operation while its other lanes idled: docs/perf.md, session 17. Batches of
  /// 2^32 operations or more (the list holds 32-bit indices) keep that launch, and so does a
  /// second pass whose list cannot be allocated: it runs after the first launch has changed the
  /// table, so it must not fail (a batch fails, if at all, before it changes anything).
  template <batch_shape Shape, class Op>
  batch_summary launch_full(std::size_t n, std::uint64_t full, const Op& op, status* statuses) {
    if (full == 0) return {};
    const auto m = static_cast<std::size_t>(full);
    buffer<std::uint32_t> list;
    buffer<status> entry_status;  // the serve loop's body also stores the status of list entry j
    if (n <= std::size_t{0xffffffffu}) {
      list = try_buffer<std::uint32_t>(m);
      if constexpr (Shape == batch_shape::serve_loop) {
        if (list.size() == m) entry_status = try_buffer<status>(m);
        if (entry_status.size() != m) list = {};
      }
    }
    if (list.size() != m)
      return launch_batch<TileSize, Op, Shape>(ex_, n, op, statuses, counters(), /*only_full=*/true);
    batch_counters& c = counters();
    c.zero();
    sort_into_lists(ex_, full_sorter{statuses, list.data(), m}, n, c.data());
    // listed_op writes statuses[i] (the operation's own status)
    return launch_batch<TileSize, listed_op<Op>, Shape>(ex_, m, listed_op<Op>{op, list.data(), m, statuses},
                                                        Shape == batch_shape::serve_loop ? entry_status.data() : nullptr, c);
  }

 private:
  /// Device-side counts of the async calls since the last synchronization: `first` of every
  /// first launch, `second` of the second passes (whose ops the first counted as full).
  struct async_counts {
    async_counts() = default;
    explicit async_counts(const execution& ex) : first(ex), second(ex), cursor(ex) {
      first.zero();
      second.zero();
    }
    [[nodiscard]] bool ready() const { return first.ready(); }
    batch_counters first, second;
    batch_counters cursor;  // a call's handback list length (zeroed before each call's first launch)
  };

  /// Reused by every batch (made on first use): group 0 for one launch, groups 1-4 for the
  /// phases of a mixed batch (reads, fast writes, complete writes, erases), group 5's first
  /// counter for a handback list's length (run_listed).
  batch_counters counters_;
  buffer<std::uint32_t> handback_;  // the insert batches' handback list (handback_for), kept between batches
  static constexpr std::size_t counter_groups = 6;
  static constexpr std::size_t handback_group = 5;
  /// Past the counter groups, a mixed batch's sizing sketch (run_mixed_phased): its 1024 4-byte
  /// registers in the same memory, so the memset that zeroes the counts zeroes them and the copy
  /// that reads the partition's counts reads them (no kernel, copy or wait of their own).
  static constexpr std::size_t sketch_group = counter_groups;
  static constexpr std::size_t sketch_groups =
      (sketch_registers * sizeof(std::uint32_t) + num_status_kinds * sizeof(unsigned long long) - 1) /
      (num_status_kinds * sizeof(unsigned long long));
  mutable async_counts pending_;          // counts of async calls not yet synchronized
  mutable bool async_pending_ = false;
  mutable std::size_t pending_inserts_ = 0;  // ops of those calls that may insert
  batch_counters& counters() {
    if (!counters_.ready()) counters_ = batch_counters(ex_, counter_groups + sketch_groups);
    return counters_;
  }

  Derived& self() { return static_cast<Derived&>(*this); }
  const Derived& self() const { return static_cast<const Derived&>(*this); }

  /// A buffer of n elements, or an empty one when the backend has no memory for it (a caller
  /// with a way to do without one; any other error propagates).
  template <class T>
  buffer<T> try_buffer(std::size_t n) {
    try {
      return buffer<T>(n, ex_);
    } catch (const error& e) {
      if (e.code() != errc::out_of_memory) throw;
      return {};
    }
  }

  template <class P>
  static void check_inputs(std::size_t n, const P* p, const char* name) {
    require(n == 0 || p != nullptr, name, "is null but n > 0");
  }

  /// The ops of an insert batch: the complete insert, and the first launch's op (the fast insert
  /// where the ref has one: run() re-runs what it hands back with the complete one).
  static auto complete_insert(const key_type* keys, const mapped_type* values, bool or_assign) {
    return [=](const Ref& r) { return insert_op<Ref, key_type, mapped_type>{r, keys, values, or_assign}; };
  }
  static auto first_insert(const key_type* keys, const mapped_type* values, bool or_assign) {
    constexpr pass P = has_fast_bulk_inserts<Ref> ? pass::fast : pass::complete;
    return [=](const Ref& r) { return insert_op<Ref, key_type, mapped_type, P>{r, keys, values, or_assign}; };
  }

  batch_summary insert_batch(const key_type* keys, const mapped_type* values, std::size_t n, status* out,
                             bool or_assign) {
    check_inputs(n, keys, "keys");
    check_inputs(n, values, "values");
    settle();
    self().prepare_inserts(n);
    return run<batch_shape::op_per_tile>(n, out, complete_insert(keys, values, or_assign),
                                         first_insert(keys, values, or_assign));
  }
  void insert_batch_async(const key_type* keys, const mapped_type* values, std::size_t n, status* out, bool or_assign,
                          stream_arg stream) {
    check_inputs(n, keys, "keys");
    check_inputs(n, values, "values");
    run_async<batch_shape::op_per_tile>(n, n, out, stream, complete_insert(keys, values, or_assign),
                                        first_insert(keys, values, or_assign));
  }

  /// An async mutating batch: checks room (nothing runs when it throws), then queues the launch
  /// (and the second pass of a fast first op) with counts gathered on the device.
  template <batch_shape Shape, class MakeOp>
  void run_async(std::size_t n, std::size_t may_insert, status* out, stream_arg stream, const MakeOp& make) {
    run_async<Shape>(n, may_insert, out, stream, make, make);
  }
  template <batch_shape Shape, class MakeOp, class MakeFirst>
  void run_async(std::size_t n, std::size_t may_insert, status* out, stream_arg stream, const MakeOp& make,
                 const MakeFirst& make_first) {
    if (n == 0) return;
    self().check_async_room(may_insert);
    if (!pending_.ready()) pending_ = async_counts(ex_);  // the first async call allocates them
    detail::stream_join join(ex_, stream);
    using op_t = decltype(make(self().ref()));
    using first_t = decltype(make_first(self().ref()));
    constexpr bool two_passes = !std::is_same_v<first_t, op_t>;
    // Everything that may fail first (nothing is booked or queued when it throws).
    std::uint32_t* list = nullptr;
    if constexpr (two_passes && Shape == batch_shape::op_per_tile) list = handback_for(n);
    buffer<status> tmp;  // stream-ordered allocation and release
    if (list == nullptr && out == nullptr && (two_passes || Shape == batch_shape::serve_loop)) {
      tmp = buffer<status>(n, ex_);
      out = tmp.data();
    }
    pending_inserts_ += may_insert;
    async_pending_ = true;
    if (list != nullptr) {
      // The first launch lists what it hands back (run_listed's list, the map's, reused: a later
      // call's launches are ordered after this one's on the stream); the second runs over the
      // whole batch's length, skipping every entry past the list's length (read on the device)
      // and every unmarked one.
      pending_.cursor.zero();
      const unsigned long long* length = pending_.cursor.data();
      using handing_t = handing_back_op<first_t>;
      launch_uncounted<TileSize, handing_t, Shape>(ex_, n, handing_t{make_first(self().ref()), {list, pending_.cursor.data()}},
                                                   out, pending_.first.data());
      using queued_t = queued_marked_op<op_t>;
      launch_uncounted<TileSize, queued_t, Shape>(ex_, n, queued_t{{make(self().ref()), list, out, length}}, nullptr,
                                                  pending_.second.data());
      return;
    }
    const first_t first = make_first(self().ref());
    const op_t second = make(self().ref());  // the same op as `first` when there is one pass
    launch_phased<TileSize, Shape>(ex_, n, &first, two_passes ? &second : nullptr, out, pending_.first.data(),
                                   pending_.second.data());
  }

  /// Folds the async calls' counts into size() (waits for them); returns them.
  batch_summary settle_counts() const {
    if (!async_pending_) return {};
    batch_summary s = pending_.first.read();
    const batch_summary again = pending_.second.read();
    std::uint64_t rerun = 0;
    for (const auto c : again.count) rerun += c;
    replace_full(s, rerun, again);
    pending_.first.zero();
    pending_.second.zero();
    async_pending_ = false;
    pending_inserts_ = 0;
    // size() is const: the counts belong to calls made through a non-const map, so the map is
    // not a const object while any are pending.
    const_cast<bulk_map_base*>(this)->account(s);
    return s;
  }
  /// The same, then the map keeps its load factor as after a synchronous call.
  batch_summary settle() {
    if (!async_pending_) return {};
    const batch_summary s = settle_counts();
    self().maintain();
    return s;
  }

  std::vector<status> insert_host(std::span<const key_type> keys, std::span<const mapped_type> values, bool or_assign) {
    require(keys.size() == values.size(), "values", "must have as many elements as keys");
    auto k = buffer<key_type>::from_host(keys, ex_);
    auto v = buffer<mapped_type>::from_host(values, ex_);
    return with_statuses(keys.size(), [&](status* s) { insert_batch(k.data(), v.data(), keys.size(), s, or_assign); });
  }

  /// Sizes the table for a mixed batch before it runs, as insert() does: when the batch could
  /// pass the maximum load factor even if all its ops inserted, one pass (a launch and a wait,
  /// core/batch_sizing.hpp) counts the ops that may insert and estimates how many distinct keys
  /// they carry, and the table makes room for the smaller number first. A batch of fresh keys into
  /// a far-too-small table then costs what it costs in a table sized for it (it used to fill the
  /// small table, fail, grow and re-run round after round), and hot keys do not inflate the table.
  /// (A batch short enough for the phased run sketches its keys in the partition pass instead:
  /// run_mixed_phased, with the same rule.)
  void presize_mixed(const op* ops, const key_type* keys, std::size_t n) {
    if (!may_overfill(n)) return;
    presize_for(estimate_inserts(ex_, ops, keys, n, counters()));
  }
  /// Whether n inserts could pass the maximum load factor (then a mixed batch is sized first).
  [[nodiscard]] bool may_overfill(std::size_t n) const {
    return n != 0 && static_cast<double>(size_ + n) > cfg_.max_load_factor * static_cast<double>(capacity_);
  }
  void presize_for(const insert_estimate& e) {
    // A small overshoot (or the sketch's few percent of error) is left to the growth path,
    // which handles it cheaply; only a table that would be overwhelmed grows first.
    const double room = cfg_.max_load_factor * static_cast<double>(capacity_);
    if (static_cast<double>(size_ + e.distinct) > 1.25 * room) self().prepare_inserts(static_cast<std::size_t>(e.distinct));
  }

  template <class F>
  std::vector<status> with_statuses(std::size_t n, F&& f) {
    buffer<status> s(n, ex_);
    f(s.data());
    return s.to_vector();
  }

  /// A read-only batch: one launch, stream-ordered (no wait) and uncounted, unless
  /// config.throw_on_invalid_key asks for a check, which counts the statuses and waits.
  /// One operation per tile; statuses stored only when `out` is given.
  template <class Op>
  void run_readonly(std::size_t n, status* out, const Op& op) {
    if (n == 0) return;
    if (!cfg_.throw_on_invalid_key) {
      launch_uncounted<TileSize, Op, batch_shape::op_per_tile>(ex_, n, op, out);
      return;
    }
    throw_if_invalid(launch_batch<TileSize, Op, batch_shape::op_per_tile>(ex_, n, op, out, counters()));
  }
  void throw_if_invalid(const batch_summary& s) const {
    if (cfg_.throw_on_invalid_key && s[status::invalid_key] > 0)
      throw error(errc::invalid_key, "warpkv: " + std::to_string(s[status::invalid_key]) +
                                         " keys equal a sentinel key (or op codes were invalid)");
  }

  /// A mixed batch in phases by kind (core/batch_partition.hpp): the partition pass (one wait,
  /// for the lists' lengths), then, queued without a wait between them, the reads with the find
  /// kernel, the writes with the fast insert and the complete insert over what it left `full`,
  /// the erases with the erase kernel; then one wait for all their counts. Writes still `full`
  /// after that (the table needs to grow: rare, as in an insert batch) are re-run after growth,
  /// i.e. after the erases: still one valid order of the concurrent batch. The caller keeps the
  /// load factor and checks invalid keys afterwards.
  batch_summary run_mixed_phased(const op* ops, const key_type* keys, const mapped_type* values, std::size_t n,
                                 status* out, mapped_type* values_out) {
    if (n == 0) return {};
    // The two index lists, allocated per batch. (Kept in the map's scratch instead, d89c2aa, they
    // gained nothing measurable on the H100 at 1e5 or 1e7 operations: session 21, calls C and E.)
    buffer<std::uint32_t> reads_and_erases(n, ex_), writes(n, ex_);
    batch_counters& c = counters();
    c.zero();
    // A batch whose inserts could pass the maximum load factor is sized before its phases run
    // (presize_mixed's rule), from a sketch of its writes' keys made by the partition pass itself.
    const bool sizing = may_overfill(n);
    if (sizing)  // the sketch's registers live in c's last groups: zeroed with the counts, read with them
      partition_and_sketch_ops(ex_, ops, keys, n, reads_and_erases.data(), writes.data(), c.data(),
                               reinterpret_cast<std::uint32_t*>(c.data(sketch_group)));
    else
      partition_ops(ex_, ops, n, reads_and_erases.data(), writes.data(), c.data());
    const std::vector<batch_summary> read = c.read_groups(sizing ? counter_groups + sketch_groups : 1);  // one wait
    const batch_summary& lists = read[0];
    const std::size_t n_reads = lists.count[static_cast<unsigned>(op_list::reads)];
    const std::size_t n_writes = lists.count[static_cast<unsigned>(op_list::writes)];
    const std::size_t n_erases = lists.count[static_cast<unsigned>(op_list::erases)];
    if (n_reads + n_writes + n_erases != n)
      throw error(errc::capacity, "warpkv: a mixed batch's partition pass counted " +
                                      std::to_string(n_reads + n_writes + n_erases) + " of " + std::to_string(n) + " ops");
    if (sizing) {  // the lists hold op indices: a rebuild here leaves them valid
      std::array<std::uint64_t, sketch_groups * num_status_kinds> words{};
      for (std::size_t g = 0; g < sketch_groups; ++g)
        for (int k = 0; k < num_status_kinds; ++k) words[g * num_status_kinds + static_cast<std::size_t>(k)] = read[sketch_group + g].count[k];
      std::array<std::uint32_t, sketch_registers> h{};
      std::memcpy(h.data(), words.data(), sizeof(h));  // the registers as the device wrote them
      presize_for(estimate_from_sketch(h.data(), n_writes));
    }
    std::uint32_t* ra = reads_and_erases.data();
    std::uint32_t* wr = writes.data();  // the first write pass marks what it leaves `full` in it
    constexpr pass first_pass = has_fast_bulk_inserts<Ref> ? pass::fast : pass::complete;
    constexpr bool two_passes = first_pass == pass::fast;
    using read_t = listed_op<mixed_read_op<Ref, key_type, mapped_type>>;
    using first_t = listed_op<mixed_insert_op<Ref, key_type, mapped_type, first_pass>, false, /*MarkFull=*/true>;
    using complete_t = marked_op<mixed_insert_op<Ref, key_type, mapped_type, pass::complete>>;
    using erase_t = listed_op<erase_op<Ref, key_type>, /*FromBack=*/true>;
    const auto complete = [&] { return complete_t{{self().ref(), ops, keys, values}, wr, out}; };
    batch_counters& pc = counters();
    pc.zero();
    launch_uncounted<TileSize, read_t, batch_shape::op_per_tile>(
        ex_, n_reads, read_t{{find_op<Ref, key_type, mapped_type>{self().ref(), keys, values_out, nullptr}, ops}, ra, n, out},
        nullptr, pc.data(1));
    launch_uncounted<TileSize, first_t, batch_shape::op_per_tile>(ex_, n_writes, first_t{{self().ref(), ops, keys, values}, wr, n, out},
                                                                  nullptr, pc.data(2));
    if constexpr (two_passes)
      launch_uncounted<TileSize, complete_t, batch_shape::op_per_tile>(ex_, n_writes, complete(), nullptr, pc.data(3));
    launch_uncounted<TileSize, erase_t, batch_shape::op_per_tile>(ex_, n_erases, erase_t{{self().ref(), keys}, ra, n, out},
                                                                  nullptr, pc.data(4));
    const std::vector<batch_summary> phases = pc.read_groups(counter_groups);  // the one wait: every phase has run
    const batch_summary& reads = phases[1];
    batch_summary written = phases[2];
    batch_summary part = written;
    if constexpr (two_passes) {
      part = phases[3];
      replace_full(written, written[status::full], part);
    }
    const batch_summary& erased = phases[4];
    account(written);
    account(erased);
    written = rerun_until_placed(
        written, part, map_label{"warpkv: ", Derived::map_name},
        [&](std::uint64_t) {
          return launch_batch<TileSize, complete_t, batch_shape::op_per_tile>(ex_, n_writes, complete(), nullptr, counters());
        },
        [&](std::uint64_t pending) { grow(pending); }, [&](const batch_summary& s) { account(s); });
    batch_summary total = reads;
    total += written;
    total += erased;
    return total;
  }

  /// Runs a mutating batch; grows and re-runs the operations that came back full until none is.
  /// Uniform batches (insert, erase) run one operation per tile; mixed ones the serve loop.
  /// `make` builds the complete op; `make_first`, when given, a fast op for the first launch (a
  /// hot kernel without rare paths, pass::fast): the ops it hands back as full are re-run with
  /// the complete op in a second launch before anything grows.
  template <batch_shape Shape = batch_shape::serve_loop, class MakeOp>
  batch_summary run(std::size_t n, status* out, const MakeOp& make) {
    return run<Shape>(n, out, make, make);
  }
  template <batch_shape Shape, class MakeOp, class MakeFirst>
  batch_summary run(std::size_t n, status* out, const MakeOp& make, const MakeFirst& make_first) {
    const batch_summary total = run_counted<Shape>(n, out, make, make_first);
    self().maintain();
    throw_if_invalid(total);
    return total;
  }
  /// run() without its end (the load factor kept, invalid keys thrown): one phase of a batch.
  template <batch_shape Shape, class MakeOp, class MakeFirst>
  batch_summary run_counted(std::size_t n, status* out, const MakeOp& make, const MakeFirst& make_first) {
    if (n == 0) return {};
    using op_t = decltype(make(self().ref()));
    using first_t = decltype(make_first(self().ref()));
    if constexpr (Shape == batch_shape::op_per_tile && !std::is_same_v<first_t, op_t>) {
      if (std::uint32_t* list = handback_for(n)) return run_listed(n, out, make, make_first, list);
    }
    return run_on_statuses<Shape>(n, out, make, make_first);
  }
  /// run_counted with a handback list of n entries (core/batch.hpp, handback_list): the fast
  /// first launch lists the operations it hands back (marked) and writes statuses only to `out`,
  /// when given; the complete op then runs over that list (marked_op: only the marked entries,
  /// unmarking those it settles), after growth again over the same list. No status array, no
  /// sorting pass, and nothing allocated once the batch has started to change the table.
  template <class MakeOp, class MakeFirst>
  batch_summary run_listed(std::size_t n, status* out, const MakeOp& make, const MakeFirst& make_first,
                           std::uint32_t* list) {
    using op_t = decltype(make(self().ref()));
    using first_t = decltype(make_first(self().ref()));
    constexpr batch_shape shape = batch_shape::op_per_tile;
    batch_counters& c = counters();
    using handing_t = handing_back_op<first_t>;
    batch_summary part = launch_batch<TileSize, handing_t, shape>(
        ex_, n, handing_t{make_first(self().ref()), {list, c.data(handback_group)}}, out, c);
    batch_summary total = part;
    account(part);
    const auto listed = static_cast<std::size_t>(part[status::full]);  // the list's length
    const auto rerun = [&] {
      return launch_batch<TileSize, marked_op<op_t>, shape>(ex_, listed, marked_op<op_t>{make(self().ref()), list, out},
                                                            nullptr, c);
    };
    if (listed > 0) {  // the slow pass of the same batch
      part = rerun();
      replace_full(total, listed, part);
      account(part);
    }
    return rerun_until_placed(
        total, part, map_label{"warpkv: ", Derived::map_name}, [&](std::uint64_t) { return rerun(); },
        [&](std::uint64_t pending) { grow(pending); }, [&](const batch_summary& s) { account(s); });
  }
  /// The handback list for a batch of n operations (run_listed), or null (n >= list_mark, or no
  /// memory for it: the batch then runs on statuses). The map keeps it for its later batches and
  /// grows it when a batch is larger (4 bytes per operation of the largest batch; release_scratch()
  /// frees it): allocated per batch, from the default stream-ordered pool that returns its memory
  /// at every synchronization, it cost ~0.25 ms for 2^25 operations on an H100, 7-9 % of an
  /// insert batch (session 20, call A).
  std::uint32_t* handback_for(std::size_t n) {
    if (n >= std::size_t{list_mark}) return nullptr;
    if (handback_.size() < n) {
      handback_ = {};  // the old one first: never both at once
      handback_ = try_buffer<std::uint32_t>(n);
    }
    return handback_.size() >= n ? handback_.data() : nullptr;
  }
  /// run_counted with a status per operation (`out`, or a temporary array when it is null): the
  /// form for a batch of list_mark operations or more, for one pass, and when the list cannot
  /// be allocated.
  template <batch_shape Shape, class MakeOp, class MakeFirst>
  batch_summary run_on_statuses(std::size_t n, status* out, const MakeOp& make, const MakeFirst& make_first) {
    buffer<status> tmp;
    if (out == nullptr) {
      tmp = buffer<status>(n, ex_);
      out = tmp.data();
    }
    using op_t = decltype(make(self().ref()));
    using first_t = decltype(make_first(self().ref()));
    batch_summary part = launch_batch<TileSize, first_t, Shape>(ex_, n, make_first(self().ref()), out, counters());
    batch_summary total = part;
    account(part);
    if (!std::is_same_v<first_t, op_t> && part[status::full] > 0) {  // the slow pass of the same batch
      const std::uint64_t deferred = part[status::full];
      part = launch_full<Shape>(n, deferred, make(self().ref()), out);
      replace_full(total, deferred, part);
      account(part);
    }
    total = rerun_until_placed(
        total, part, map_label{"warpkv: ", Derived::map_name},
        [&](std::uint64_t full) { return launch_full<Shape>(n, full, make(self().ref()), out); },
        [&](std::uint64_t pending) { grow(pending); }, [&](const batch_summary& s) { account(s); });
    return total;
  }
  void account(const batch_summary& s) {
    size_ += s[status::inserted];
    size_ -= s[status::erased];
    self().on_batch(s);
  }

  /// Called when `pending` inserts found no room: the growth policy's new capacity (core/growth.hpp).
  void grow(std::uint64_t pending) { self().rehash_to(growth().grow_to(capacity_, size_, pending)); }

};

}  // namespace warpkv::detail
