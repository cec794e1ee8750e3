#pragma once
// warpkv::kv_cache: a fixed-size GPU key-value cache after CCHT (bucketed cuckoo hashing with two
// hash functions, bounded cuckoo moves, LRU eviction, batched operations). Design, linearization
// points and the progress argument: docs/design/cache.md.
//
// What it guarantees:
//  - Capacity is fixed at construction: capacity() slots (the requested entries rounded up to
//    whole buckets) of value_bytes() bytes each; nothing is allocated afterwards. size() never
//    exceeds capacity().
//  - It may forget (evict, expire) but never returns a wrong or torn value: a hit returns a
//    value the key held at an instant during the call (the latest one in a sequential run).
//  - An insert into a key's two full buckets first tries cuckoo moves (at most max_kicks steps,
//    default 5000 as in the seed, only while a free slot exists anywhere), then evicts an entry
//    of those two buckets chosen by the design's eviction policy: lru (default; an approximate LRU by
//    per-slot recency stamps, exact LRU when the table has two buckets), random (the seed's
//    "random CHT"), clock (second chance by reference bits), or one of HierarchicalKV's score
//    policies: lfu (access counts), epoch_lru / epoch_lfu (the global epoch, set_global_epoch,
//    in a score's high 32 bits) or custom (the caller's scores). An expired entry is replaced
//    before any live one.
//  - Slots synchronize by optimistic reads (default; validated against the buckets' lock words as
//    versions, writing nothing) or rw_lock (the seed's per-slot reader/writer locks, to measure
//    its design).
//    Values live in their own array (value_slab, default) or inline after their key
//    (inline_values): a layout trial.
//  - The design (slot protocol, eviction policy, value layout, key digests, placement) is the
//    Design template parameter (cache_design.hpp), fixed at compile time so that the cache's
//    kernels carry one design's code: default_cache_design (optimistic, lru, value slab, no
//    digests, two buckets per key with cuckoo moves); cache_designs::one_bucket_lru (one bucket
//    per key, HierarchicalKV's placement: faster writes, a full bucket evicts while others have
//    room; for kv_cache<Key, 32, 4, one_bucket_lru>); cache_designs::ccht, the seed's;
//    cache_designs::by_config, the cache_config fields
//    eviction, sync, layout and key_digests read at run time and dispatched on the host to the
//    matching instantiation for each launch.
//  - Every operation gets a status (core/status.hpp): get/contains -> found | not_found;
//    set -> inserted | assigned; add -> inserted | found; erase -> erased | not_found;
//    get_or_set -> found | inserted; any -> invalid_key for a sentinel key (uint64 max; for
//    byte keys length 0 or above the maximum), which never touches the cache.
//
// Concurrency (host threads, streams):
//  - get, set, add, erase, get_or_set, contains and execute (mixed batches) may be called from
//    several host threads at once; each operation is linearizable on its own, batches interleave.
//    On the GPU they are ordered on the cache's stream (execution::stream): calls from several
//    host threads are safe, and run one after another on the device. enqueue_resident() runs a
//    batch on a stream of the caller's instead, concurrently with the others (cache_submitter's
//    buffers do).
//  - clear(), import_entries() (it is a set batch and may run concurrently, but its result only
//    means something alone), export_entries() and size() are whole-table passes: call them while
//    no other operation runs on this cache (size() then is exact; concurrently it is a
//    snapshot-free estimate, never more than capacity()).
//  - A device ref() is usable in user kernels concurrently with batches; the caller supplies the
//    clock (cache_clock), see cache_ref.hpp.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "warpkv/cache/cache_design.hpp"
#include "warpkv/cache/cache_keys.hpp"
#include "warpkv/cache/cache_ref.hpp"
#include "warpkv/cache/detail/cache_file.hpp"
#include "warpkv/cache/detail/cache_passes.hpp"
#include "warpkv/cache/detail/hkv_passes.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/stream_order.hpp"
#include "warpkv/core/table_passes.hpp"

namespace warpkv {

/// Largest value width the cache accepts.
inline constexpr std::size_t max_value_bytes = 4096;

/// An entry evicted by a set/add/get_or_set batch: the operation's index, the key and its value.
template <class Key>
struct cache_evictions {
  std::vector<std::size_t> op_index;
  std::vector<Key> keys;
  std::vector<std::byte> values;  ///< op_index.size() x value_stride() bytes
};

template <class Key = std::uint64_t, int BucketWidth = 4, int TileSize = (BucketWidth < 8 ? BucketWidth : 8),
          class Design = default_cache_design>
class kv_cache {
  static constexpr bool by_config = std::is_same_v<Design, cache_designs::by_config>;
  static_assert(by_config || is_cache_design<Design>, "Design: a cache_design<...> or cache_designs::by_config");

 public:
  using key_type = Key;
  using design = Design;
  /// The device ref of design D over this cache's key, bucket width and tile.
  template <class D, int Tile = TileSize>
  using ref_of = cache_ref<Key, BucketWidth, Tile, D>;
  /// The fixed design (by_config: the default, standing in where a type is spelled for it).
  using fixed_design = std::conditional_t<by_config, default_cache_design, Design>;
  /// The tile of a batch's read phase (gets, contains, get_or_set's read): 4 lanes where the
  /// cache's tile is 8 with keys of up to five words (u64; byte keys of up to 32 bytes) and
  /// buckets of 8 or one bucket per key, else the cache's own. Each lane then reads four slots
  /// of the pair instead of two: session 26, call A (H200, the --hkv workload) measured u64
  /// finds +16-37 % at tile 4 against 8 (read kernel 63 registers, no local memory), session 31
  /// (V44) YCSB's byte_key<32> reads; the write kernels at tile 4 spill, so only the read phase
  /// takes it (reads and writes are separate launches of one batch, and the slots' layout does
  /// not depend on the tile).
  static constexpr int read_tile_size =
      (TileSize == 8 && cache_key_layout<Key>::words <= 5 &&
       (BucketWidth == 8 || fixed_design::placement::choices == 1))
          ? 4
          : TileSize;
  /// The device ref's type (a fixed design; by_config: void, see with_ref).
  using ref_type = std::conditional_t<by_config, void, ref_of<fixed_design>>;
  /// The read phase's ref (read_tile_size; by_config: void).
  using read_ref_type =
      std::conditional_t<by_config, void, ref_of<fixed_design, read_tile_size>>;
  static constexpr int bucket_width = BucketWidth;
  static constexpr int tile_size = TileSize;

  /// A cache of a fixed design takes cfg's design fields (eviction, sync, layout, key_digests)
  /// only left at their defaults or equal to its design's (else errc::invalid_argument: the
  /// type fixes them; cache_designs::by_config reads them), and config() reports its design's.
  explicit kv_cache(cache_config cfg, execution ex = execution::automatic()) : cfg_(cfg), ex_(ex) {
    require(cfg.capacity > 0, "capacity", "a cache needs room for at least one entry");
    require(cfg.value_bytes > 0 && cfg.value_bytes <= max_value_bytes, "value_bytes",
            "must be 1 .. " + std::to_string(max_value_bytes) + ", got " + std::to_string(cfg.value_bytes));
    require(cfg.capacity <= (std::size_t{1} << 40), "capacity", "above 2^40 entries");
    require(cfg.kick_load_limit >= 0.0 && cfg.kick_load_limit <= 1.0, "kick_load_limit", "must be in [0, 1]");
    require(static_cast<unsigned>(cfg.eviction) <= static_cast<unsigned>(cache_eviction_policy::custom), "eviction",
            "unknown eviction policy");
    if constexpr (by_config)
      require(static_cast<unsigned>(cfg.eviction) <= static_cast<unsigned>(cache_eviction_policy::clock), "eviction",
              "cache_designs::by_config compiles lru, random and clock; the score policies (lfu, epoch_lru, epoch_lfu, "
              "custom) are fixed designs, e.g. kv_cache<Key, W, T, cache_designs::optimistic_lfu>");
    require(cfg.sync == cache_slot_sync::optimistic || cfg.sync == cache_slot_sync::rw_lock, "sync",
            "unknown slot synchronization");
    require(cfg.layout == cache_layout::value_slab || cfg.layout == cache_layout::inline_values, "layout",
            "unknown layout");
    if constexpr (!by_config) {
      require(Design::accepts(cfg), "design",
              "cache_config's eviction/sync/layout/key_digests name another design than this cache type's "
              "(kv_cache<..., cache_designs::by_config> takes them from the config)");
      cfg_ = Design::applied(cfg);
    }
    buckets_ = (cfg.capacity + BucketWidth - 1) / BucketWidth;
    value_words_ = static_cast<std::uint32_t>((cfg.value_bytes + 7) / 8);
    constexpr std::size_t key_words = cache_key_layout<Key>::words;
    const std::size_t slots = buckets_ * BucketWidth;
    if (cfg_.layout == cache_layout::inline_values) {  // one record per slot: key words, then value words
      keys_ = buffer<std::uint64_t>(slots * (key_words + value_words_), ex_);
    } else {
      keys_ = buffer<std::uint64_t>(slots * key_words, ex_);
      values_ = buffer<std::uint64_t>(slots * value_words_, ex_);
    }
    // the per-slot word: the seed's reader/writer locks (rw_lock); optimistic readers validate
    // against the bucket lock words and need none (4 bytes a slot saved)
    if (cfg_.sync == cache_slot_sync::rw_lock) versions_ = buffer<std::uint32_t>(slots, ex_);
    stamps_ = buffer<std::uint64_t>(slots, ex_);
    expires_ = buffer<std::uint64_t>(slots, ex_);
    locks_ = buffer<std::uint32_t>(buckets_, ex_);
    if (cfg_.sync == cache_slot_sync::rw_lock) moves_ = buffer<std::uint32_t>(buckets_, ex_);
    if (cfg_.key_digests) digests_ = buffer<std::uint64_t>((slots + 7) / 8, ex_);
    occupied_ = buffer<unsigned long long>(occupancy_words, ex_);
    clear();
  }

  /// Slots: the most entries the cache can hold.
  [[nodiscard]] std::size_t capacity() const { return buckets_ * BucketWidth; }
  [[nodiscard]] std::size_t value_bytes() const { return cfg_.value_bytes; }
  /// Bytes per value in every value buffer of this API (value_bytes rounded up to 8).
  [[nodiscard]] std::size_t value_stride() const { return std::size_t{value_words_} * 8; }
  [[nodiscard]] const cache_config& config() const { return cfg_; }
  [[nodiscard]] const execution& exec() const { return ex_; }

  /// The expiry clock: an entry whose expiry time is nonzero and <= time() reads as a miss.
  void set_time(std::uint64_t now) { now_.store(now, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t time() const { return now_.load(std::memory_order_relaxed); }
  /// HKV's global epoch: the epoch policies (epoch_lru, epoch_lfu) write (epoch << 32) | ... as
  /// a score (the epoch's low 32 bits), so that an older epoch's entries are evicted first. A
  /// batch takes the epoch set when it is queued (as it takes time()); other designs ignore it.
  void set_global_epoch(std::uint64_t epoch) { epoch_.store(epoch, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t global_epoch() const { return epoch_.load(std::memory_order_relaxed); }

  /// The device view, for user kernels (a cache of a fixed design).
  [[nodiscard]] auto ref() const
    requires(!by_config)
  {
    return ref_as<Design>();
  }
  /// Calls f(ref) with the device view of this cache's design (by_config: the config's), for
  /// code written for any design; returns what f returns (the same type for every design).
  template <class F>
  decltype(auto) with_ref(F&& f) const {
    return visit([&]<class D>(std::type_identity<D>) -> decltype(auto) { return f(ref_as<D>()); });
  }
  /// Recency stamps handed to batches so far; user kernels driving ref() may take theirs from
  /// reserve_stamps(n) so that their operations order with the batches'.
  std::uint64_t reserve_stamps(std::size_t n) { return clock_.fetch_add(n + 1, std::memory_order_relaxed) + 1; }

  // ---- batches (host memory spans; values are value_stride() bytes each) -------------------
  void get(std::span<const Key> keys, std::span<std::byte> values_out, std::span<status> statuses) {
    run(cache_op::get, {}, keys, {}, values_out, statuses, {}, nullptr);
  }
  void contains(std::span<const Key> keys, std::span<status> statuses) {
    run(cache_op::contains, {}, keys, {}, {}, statuses, {}, nullptr);
  }
  /// Insert or assign; `expires_at` empty: never expire. `evicted` (optional) receives what was evicted.
  void set(std::span<const Key> keys, std::span<const std::byte> values, std::span<status> statuses,
           cache_evictions<Key>* evicted = nullptr, std::span<const std::uint64_t> expires_at = {}) {
    run(cache_op::set, {}, keys, values, {}, statuses, expires_at, evicted);
  }
  void add(std::span<const Key> keys, std::span<const std::byte> values, std::span<status> statuses,
           cache_evictions<Key>* evicted = nullptr, std::span<const std::uint64_t> expires_at = {}) {
    run(cache_op::add, {}, keys, values, {}, statuses, expires_at, evicted);
  }
  void erase(std::span<const Key> keys, std::span<status> statuses) {
    run(cache_op::erase, {}, keys, {}, {}, statuses, {}, nullptr);
  }
  void get_or_set(std::span<const Key> keys, std::span<const std::byte> values, std::span<std::byte> values_out,
                  std::span<status> statuses, cache_evictions<Key>* evicted = nullptr,
                  std::span<const std::uint64_t> expires_at = {}) {
    run(cache_op::get_or_set, {}, keys, values, values_out, statuses, expires_at, evicted);
  }
  /// A mixed batch: operation i is ops[i] on keys[i]; values (in: set/add/get_or_set, out:
  /// get/get_or_set) at i x value_stride(); spans not needed by any operation may be empty.
  void execute(std::span<const cache_op> ops, std::span<const Key> keys, std::span<const std::byte> values_in,
               std::span<std::byte> values_out, std::span<status> statuses, cache_evictions<Key>* evicted = nullptr,
               std::span<const std::uint64_t> expires_at = {}) {
    require(ops.size() == keys.size(), "ops", "one operation code per key");
    run(cache_op::get, ops, keys, values_in, values_out, statuses, expires_at, evicted);
  }

  /// A mixed batch whose arrays already live in the backend's memory (device pointers on the
  /// GPU): no copies, stream-ordered launch, waits and returns the status counts. `ops` null:
  /// every operation is `uniform`; values_in/values_out/expires_at may be null when unused.
  /// Per batch: a memset of the status counters, one launch, one 56-byte copy back and the wait;
  /// nothing is allocated (the counters come from a pool kept by the cache). `scores` (n, may
  /// be null): the writes' scores for the score policies that take them, as insert_or_assign's
  /// (docs/design/cache.md, "Score policies"; a null is never refused here, custom included).
  batch_summary execute_resident(std::size_t n, const cache_op* ops, cache_op uniform, const Key* keys,
                                 const std::uint64_t* values_in, std::uint64_t* values_out, status* statuses,
                                 const std::uint64_t* expires_at = nullptr, const std::uint64_t* scores = nullptr) {
    if (n == 0) return {};
    std::unique_ptr<batch_counters> c = take_counters();
    c->zero();
    std::unique_ptr<groups_scratch> g = join_groups(n, ops, uniform, keys);
    const detail::op_groups<Key> groups = g ? g->groups : detail::op_groups<Key>{};
    queue_batch(ex_, n, ops, uniform, keys, values_in, values_out, statuses, expires_at, c->data(), nullptr, nullptr,
                nullptr, groups, nullptr, scores);
    fix_up_groups(groups, n, keys, statuses, values_out);
    batch_summary sum = c->read();  // waits for the batch (and the fix-up)
    // the read phase counted the write phase's operations as `full` (queue_batch); no cache
    // operation ends `full`, so that count is exactly those operations, counted again finally
    sum.count[static_cast<int>(status::full)] = 0;
    return_counters(std::move(c));
    return_groups(std::move(g));
    return sum;
  }
  /// The same batch queued on `on` (this cache's backend with a stream of the caller's, e.g. a
  /// submitter buffer's) without waiting and without status counts: on the GPU it runs
  /// concurrently with work on other streams, this cache's included (batches are concurrent
  /// anyway); the caller synchronizes `on` before reading `statuses`/`values_out`. The host
  /// backend runs it at once.
  void enqueue_resident(const execution& on, std::size_t n, const cache_op* ops, cache_op uniform, const Key* keys,
                        const std::uint64_t* values_in, std::uint64_t* values_out, status* statuses,
                        const std::uint64_t* expires_at = nullptr) {
    require(on.where == ex_.where, "on", "must be this cache's backend");
    queue_batch(on, n, ops, uniform, keys, values_in, values_out, statuses, expires_at, nullptr);
  }

  /// Live (present, unexpired) entries. A whole-table pass.
  [[nodiscard]] std::size_t size() const {
    buffer<unsigned long long> count(1, ex_);
    const unsigned long long zero = 0;
    count.copy_from_host(&zero, 1);
    with_ref([&](const auto& r) {
      detail::for_each_index(ex_, capacity(), detail::cache_collect_fn<std::decay_t<decltype(r)>>{r, time(), count.data()});
    });
    unsigned long long n = 0;
    count.copy_to_host(&n, 1);
    return static_cast<std::size_t>(n);
  }

  /// Empties the cache. Not concurrently with other operations.
  void clear() {
    detail::for_each_index(ex_, capacity(), detail::cache_init_fn<Key>{storage(), static_cast<std::uint32_t>(BucketWidth)});
    synchronize(ex_);
  }

  struct entries {
    std::vector<Key> keys;
    std::vector<std::byte> values;             ///< keys.size() x value_stride()
    std::vector<std::uint64_t> expires_at;     ///< 0 = never
    std::vector<std::uint64_t> scores;         ///< the design's recency words (import_entries ignores them)
  };
  /// Every live entry (for persistence and warm restart). Not concurrently with other operations.
  [[nodiscard]] entries export_entries() const {
    const std::size_t slots = capacity();
    buffer<unsigned long long> count(1, ex_);
    const unsigned long long zero = 0;
    count.copy_from_host(&zero, 1);
    buffer<Key> k(slots, ex_);
    buffer<std::uint64_t> v(slots * value_words_, ex_);
    buffer<std::uint64_t> e(slots, ex_), sc(slots, ex_);
    with_ref([&](const auto& r) {
      detail::for_each_index(ex_, slots, detail::cache_collect_fn<std::decay_t<decltype(r)>>{r, time(), count.data(), k.data(),
                                                                                                v.data(), e.data(), sc.data()});
    });
    unsigned long long n = 0;
    count.copy_to_host(&n, 1);
    entries out;
    out.keys.resize(n);
    out.expires_at.resize(n);
    std::vector<std::uint64_t> words(n * value_words_);
    k.copy_to_host(out.keys.data(), n);
    v.copy_to_host(words.data(), words.size());
    e.copy_to_host(out.expires_at.data(), n);
    out.scores.resize(n);
    sc.copy_to_host(out.scores.data(), n);
    out.values.resize(words.size() * 8);
    if (!words.empty()) std::memcpy(out.values.data(), words.data(), out.values.size());
    return out;
  }
  /// Sets every entry of `in` (a set batch, with their expiry times); returns the statuses.
  std::vector<status> import_entries(const entries& in) {
    std::vector<status> st(in.keys.size());
    set(in.keys, in.values, st, nullptr, in.expires_at);
    return st;
  }

  // ---- HierarchicalKV's names (docs/design/cache.md, "HierarchicalKV's API") ---------------
  // Arrays in the backend's memory (device pointers on the GPU, host pointers on the host
  // backend), HKV's argument order (n first); values are value_words() = value_stride() / 8
  // words each. `stream`: the caller's stream (empty: the cache's own); the batch runs on the
  // cache's stream ordered after the work queued on it, and it is left ordered after the batch
  // (core/stream_order.hpp). Each call waits for its batch and returns its status counts.
  // `statuses` (n, optional) and `founds` (n, optional) receive each operation's result. An
  // array that a call needs may not be null when n > 0 (errc::invalid_argument naming it).

  /// HKV insert_or_assign = set: inserted | assigned (evicting when both buckets are full).
  /// `scores` (n, optional): the score policies' input (docs/design/cache.md, "Score
  /// policies"): lfu / epoch_lfu, the count increments (null: 1); custom, the scores (required);
  /// the recency policies (lru, random, clock, epoch_lru) ignore them, as HKV's kLru does.
  batch_summary insert_or_assign(std::size_t n, const Key* keys, const std::uint64_t* values,
                                 const std::uint64_t* scores = nullptr, status* statuses = nullptr, stream_arg stream = {}) {
    need(keys, n, "keys");
    need(values, n, "values");
    need_scores(scores, n);
    detail::stream_join join(ex_, stream);
    return resident(n, cache_op::set, keys, values, nullptr, statuses, nullptr, nullptr, nullptr, nullptr, nullptr, scores);
  }
  /// HKV find = get: found (value in values_out, recency refreshed) | not_found (values_out
  /// left as it was, unless a writer of the key raced the read: an optimistic read that saw the
  /// key and retried may have copied words out). founds[i] = (statuses[i] == found).
  batch_summary find(std::size_t n, const Key* keys, std::uint64_t* values_out, bool* founds = nullptr,
                     status* statuses = nullptr, stream_arg stream = {}) {
    need(keys, n, "keys");
    need(values_out, n, "values_out");
    detail::stream_join join(ex_, stream);
    return resident(n, cache_op::get, keys, nullptr, values_out, statuses, founds);
  }
  /// HKV find_or_insert = get_or_set with `values` in and out: on entry the values to insert,
  /// on return the stored value of every key (found: the cached one; inserted: the given one).
  /// The inputs are copied first (a read may write values_out before it retries). `scores`
  /// (n, optional; required by custom): the inserts' scores as in insert_or_assign; a found
  /// key's score changes as a hit's does (lfu, epoch_lfu: + 1; custom: not at all).
  batch_summary find_or_insert(std::size_t n, const Key* keys, std::uint64_t* values, const std::uint64_t* scores = nullptr,
                               bool* founds = nullptr, status* statuses = nullptr, stream_arg stream = {}) {
    need(keys, n, "keys");
    need(values, n, "values");
    need_scores(scores, n);
    detail::stream_join join(ex_, stream);
    if (n == 0) return {};
    buffer<std::uint64_t> in(n * value_words_, ex_);
    detail::for_each_index(ex_, in.size(), detail::copy_words_fn{values, in.data()});
    return resident(n, cache_op::get_or_set, keys, in.data(), values, statuses, founds, nullptr, nullptr, nullptr, nullptr,
                    scores);
  }
  /// HKV contains: found | not_found, without refreshing recency.
  batch_summary contains(std::size_t n, const Key* keys, bool* founds, status* statuses = nullptr, stream_arg stream = {}) {
    need(keys, n, "keys");
    need(founds, n, "founds");
    detail::stream_join join(ex_, stream);
    return resident(n, cache_op::contains, keys, nullptr, nullptr, statuses, founds);
  }
  /// HKV erase: erased | not_found.
  batch_summary erase(std::size_t n, const Key* keys, status* statuses = nullptr, stream_arg stream = {}) {
    need(keys, n, "keys");
    detail::stream_join join(ex_, stream);
    return resident(n, cache_op::erase, keys, nullptr, nullptr, statuses, nullptr);
  }
  /// HKV assign: update only, never inserts. A live entry of keys[i] gets values[i] (values
  /// null: its value is kept) and scores[i] as its score (scores null: the recency word a write
  /// stores), its expiry time kept: assigned; an absent or expired key: not_found, nothing
  /// changes. HKV's assign_scores is assign(n, keys, nullptr, scores). A score is the design's
  /// score word (lru, random: a stamp, smaller evicted first; clock: the reference bit; lfu,
  /// epoch_lfu: a count, to which a given score is added, as HKV's kLfu update does; custom and
  /// epoch_lru: stored as given).
  batch_summary assign(std::size_t n, const Key* keys, const std::uint64_t* values, const std::uint64_t* scores = nullptr,
                       status* statuses = nullptr, stream_arg stream = {}) {
    need(keys, n, "keys");
    require(n == 0 || values != nullptr || scores != nullptr, "values", "values and scores both null: nothing to assign");
    detail::stream_join join(ex_, stream);
    return own_kernel(n, statuses, [&]<class R>(const R& r, std::uint64_t stamp_base, std::uint64_t now, std::uint64_t epoch) {
      return detail::cache_assign_op<R>{r, keys, values, scores, stamp_base, now, epoch};
    });
  }
  /// HKV accum_or_assign for values that are vectors of T (float, double or warpkv::half, which
  /// adds through float and rounds once: value_bytes a multiple of sizeof(T); vector_cache.hpp
  /// gives typed arrays): a live entry of keys[i] gets deltas[i] added element-wise:
  /// assigned; an absent key is inserted with deltas[i] as its value (evicting as set does):
  /// inserted. Per key linearizable (the accumulation under the key's bucket locks; an insert
  /// that finds the key inserted meanwhile accumulates instead), so racing calls lose no delta.
  template <class T = float>
  batch_summary accum_or_assign(std::size_t n, const Key* keys, const std::uint64_t* deltas, status* statuses = nullptr,
                                stream_arg stream = {}) {
    need(keys, n, "keys");
    need(deltas, n, "deltas");
    require_accum_elements<T>();
    detail::stream_join join(ex_, stream);
    return own_kernel(n, statuses, [&]<class R>(const R& r, std::uint64_t stamp_base, std::uint64_t now, std::uint64_t epoch) {
      return detail::cache_accum_op<R, T>{r, keys, deltas, stamp_base, now, epoch};
    });
  }

  /// HKV accum_or_assign with its accum_or_assigns flags (n bools in the backend's memory): key i
  /// with flag true gets value_or_deltas[i] added element-wise when it is live (assigned) and is
  /// left absent otherwise (not_found); with flag false it is inserted with value_or_deltas[i] as
  /// its value when absent (inserted, evicting as set does) and left as it is when live (found).
  /// Each operation is linearizable per key under its bucket locks. Elements T as above.
  template <class T = float>
  batch_summary accum_or_assign(std::size_t n, const Key* keys, const std::uint64_t* value_or_deltas,
                                const bool* accum_or_assigns, status* statuses = nullptr, stream_arg stream = {}) {
    need(keys, n, "keys");
    need(value_or_deltas, n, "value_or_deltas");
    need(accum_or_assigns, n, "accum_or_assigns");
    require_accum_elements<T>();
    detail::stream_join join(ex_, stream);
    return own_kernel(n, statuses, [&]<class R>(const R& r, std::uint64_t stamp_base, std::uint64_t now, std::uint64_t epoch) {
      return detail::cache_accum_flagged_op<R, T>{r, keys, value_or_deltas, accum_or_assigns, stamp_base, now, epoch};
    });
  }

  /// HKV save: writes every live entry (key, value, score, expiry time) to `path` in the
  /// versioned format of detail/cache_file.hpp (docs/design/cache.md, "The save file"), through
  /// path + ".tmp" renamed over `path` (a failed save leaves the file that was there). A
  /// whole-table pass: call it while no writer runs. Throws errc::invalid_argument naming the
  /// path when it cannot be written.
  void save(const std::string& path, stream_arg stream = {}) const {
    detail::stream_join join(ex_, stream);
    const entries e = export_entries();
    namespace cf = detail::cache_file;
    cf::header h;
    h.key_bytes = static_cast<std::uint32_t>(cache_key_layout<Key>::words * 8);
    h.value_bytes = static_cast<std::uint32_t>(cfg_.value_bytes);
    h.value_stride = static_cast<std::uint32_t>(value_stride());
    h.eviction = static_cast<std::uint8_t>(cfg_.eviction);
    h.sync = static_cast<std::uint8_t>(cfg_.sync);
    h.layout = static_cast<std::uint8_t>(cfg_.layout);
    h.key_digests = cfg_.key_digests ? 1 : 0;
    h.bucket_width = BucketWidth;
    h.capacity = capacity();
    h.count = e.keys.size();
    std::vector<std::byte> image = cf::begin_image(h);
    for (std::size_t i = 0; i < e.keys.size(); ++i) {
      std::byte* at = cf::entry_at(image, h, i);
      std::uint64_t w[cache_key_layout<Key>::words];
      cache_key_layout<Key>::to_words(e.keys[i], w);
      std::memcpy(at, w, h.key_bytes);
      std::memcpy(at + h.key_bytes, e.values.data() + i * value_stride(), value_stride());
      std::memcpy(at + h.key_bytes + value_stride(), &e.scores[i], 8);
      std::memcpy(at + h.key_bytes + value_stride() + 8, &e.expires_at[i], 8);
    }
    cf::seal(image);
    cf::write_all(path, image);
  }
  /// HKV load: replaces the cache's entries by the file's (a snapshot restore), returns how many
  /// the file held. The file is read and checked whole first: a missing, bad (magic, version,
  /// key or value size), truncated or corrupted (checksum) file throws errc::invalid_argument
  /// naming the path and the problem, and the cache is unchanged; the device arrays are
  /// allocated before the cache is cleared (strong guarantee, also for allocation failures).
  /// Entries are inserted in ascending order of their saved scores, so the recency order is
  /// kept (the scores themselves are the loading cache's own stamps); expiry times are kept. A
  /// cache too small for them keeps the most recent by its eviction policy. A file saved by a
  /// cache of this cache's score policy lfu, epoch_lfu or custom gives its scores to the inserts
  /// (lfu and custom keep them; epoch_lfu keeps the counts under the current epoch). A
  /// whole-table pass: call it while no other operation runs. The design may differ from the saver's.
  std::size_t load(const std::string& path, stream_arg stream = {}) {
    namespace cf = detail::cache_file;
    const std::vector<std::byte> image = cf::read_all(path);
    const cf::header h = cf::decode(image, path, static_cast<std::uint32_t>(cache_key_layout<Key>::words * 8),
                                    static_cast<std::uint32_t>(cfg_.value_bytes));
    const std::size_t n = static_cast<std::size_t>(h.count);
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    auto score_of = [&](std::size_t i) {
      std::uint64_t s = 0;
      std::memcpy(&s, cf::entry_at(image, h, i) + h.key_bytes + h.value_stride, 8);
      return s;
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return score_of(a) < score_of(b); });
    std::vector<Key> keys(n);
    std::vector<std::uint64_t> values(n * value_words_), expires(n), scores(n);
    for (std::size_t j = 0; j < n; ++j) {
      const std::byte* at = cf::entry_at(image, h, order[j]);
      std::uint64_t w[cache_key_layout<Key>::words];
      std::memcpy(w, at, h.key_bytes);
      keys[j] = cache_key_layout<Key>::from_words(w);
      require(cache_key_layout<Key>::valid(keys[j]), "path", "cannot load " + path + ": entry " + std::to_string(order[j]) +
                                                                 " holds an invalid key");
      std::memcpy(values.data() + j * value_words_, at + h.key_bytes, h.value_stride);
      std::memcpy(&expires[j], at + h.key_bytes + h.value_stride + 8, 8);
      scores[j] = score_of(order[j]);
    }
    const bool keeps_scores = h.eviction == static_cast<std::uint8_t>(cfg_.eviction) &&
                              (cfg_.eviction == cache_eviction_policy::lfu || cfg_.eviction == cache_eviction_policy::epoch_lfu ||
                               cfg_.eviction == cache_eviction_policy::custom);
    detail::stream_join join(ex_, stream);
    // everything that can fail is done before the cache changes
    buffer<Key> d_keys(n, ex_);
    buffer<std::uint64_t> d_values(n * value_words_, ex_), d_expires(n, ex_), d_scores(keeps_scores ? n : 0, ex_);
    buffer<status> d_status(n, ex_);
    d_keys.copy_from_host(keys.data(), n);
    d_values.copy_from_host(values.data(), values.size());
    d_expires.copy_from_host(expires.data(), n);
    if (keeps_scores) d_scores.copy_from_host(scores.data(), n);
    clear();
    // a host backend of one tile runs the batch in order (oldest first); concurrent tiles
    // approximate it, as any batch's recency order does
    queue_batch(ex_, n, nullptr, cache_op::set, d_keys.data(), d_values.data(), nullptr, d_status.data(), d_expires.data(),
                nullptr, nullptr, nullptr, nullptr, {}, nullptr, keeps_scores ? d_scores.data() : nullptr);
    synchronize(ex_);
    return n;
  }

  /// HKV export_batch: the live entries among slots [offset, offset + n) (clipped to
  /// capacity()): their keys, values (may be null) and scores (may be null) at the front of the
  /// outputs (room for n each), in no particular order; returns how many. Paging offset = 0, n,
  /// 2n, ... up to capacity() visits every slot once: one kernel of a tile per bucket over the
  /// range, on the device. A whole-table read: while writers run it sees each slot at some
  /// instant of the call (no torn value, no snapshot: an entry moving between buckets may be
  /// seen twice or missed); alone it is exact.
  std::size_t export_batch(std::size_t n, std::size_t offset, Key* keys_out, std::uint64_t* values_out = nullptr,
                           std::uint64_t* scores_out = nullptr, stream_arg stream = {}) const {
    return export_batch_if(cache_all_entries{}, n, offset, keys_out, values_out, scores_out, stream);
  }
  /// HKV export_batch_if: export_batch of the entries for which pred(key, score) holds. `pred`
  /// is a trivially copyable functor callable on the device (WARPKV_HD), e.g.
  /// cache_score_below{t} or cache_score_at_least{t} (detail/hkv_passes.hpp); HKV's pattern and
  /// threshold are its members.
  template <class Pred>
  std::size_t export_batch_if(const Pred& pred, std::size_t n, std::size_t offset, Key* keys_out,
                              std::uint64_t* values_out = nullptr, std::uint64_t* scores_out = nullptr,
                              stream_arg stream = {}) const {
    need(keys_out, n, "keys_out");
    require(offset <= capacity(), "offset",
            std::to_string(offset) + " is past the last slot (capacity " + std::to_string(capacity()) + ")");
    detail::stream_join join(ex_, stream);
    const std::size_t end = n > capacity() - offset ? capacity() : offset + n;
    if (end == offset) return 0;
    buffer<unsigned long long> count(1, ex_);
    detail::fill_words<unsigned long long>(ex_, count.data(), 1, 0);
    const std::size_t tiles = (end + BucketWidth - 1) / BucketWidth - offset / BucketWidth;
    with_ref([&](const auto& r) {
      using F = detail::cache_export_fn<std::decay_t<decltype(r)>, Pred>;
      launch<TileSize>(ex_, tiles, simple_body<F>{F{r, pred, offset, end, time(), count.data(), keys_out, values_out, scores_out}});
    });
    unsigned long long got = 0;
    count.copy_to_host(&got, 1);  // waits
    return static_cast<std::size_t>(got);
  }
  /// HKV erase_if: erases every live entry for which pred(key, score) holds (see
  /// export_batch_if); returns how many. One tile per bucket, under the bucket's lock: safe
  /// beside other batches (an entry written meanwhile may or may not be seen).
  template <class Pred>
  std::size_t erase_if(const Pred& pred, stream_arg stream = {}) {
    detail::stream_join join(ex_, stream);
    buffer<unsigned long long> count(1, ex_);
    detail::fill_words<unsigned long long>(ex_, count.data(), 1, 0);
    with_ref([&](const auto& r) {
      using F = detail::cache_erase_if_fn<std::decay_t<decltype(r)>, Pred>;
      launch<TileSize>(ex_, buckets_, simple_body<F>{F{r, pred, time(), count.data()}});
    });
    unsigned long long got = 0;
    count.copy_to_host(&got, 1);  // waits
    return static_cast<std::size_t>(got);
  }

  /// HKV insert_and_evict: insert_or_assign that reports every live entry its inserts evicted
  /// (an insert into a key's two full buckets, cuckoo moves failing or not allowed): their keys,
  /// values and scores (the design's recency word as it was; values and scores may be null) at
  /// the front of evicted_keys / evicted_values / evicted_scores (room for n each, the most one
  /// batch can evict), in no particular order; returns how many. An entry inserted and evicted
  /// by the same batch is reported too: after the call, the cache's entries and the reported
  /// ones are together every key the cache held before or was given, each once (expired
  /// entries, which read as absent, are replaced without a report). `scores` (n, optional;
  /// required by custom): the inserts' scores as in insert_or_assign. It comes after the
  /// eviction outputs (HKV has it before them): a caller of the older signature gets a compile
  /// error, not its evicted_keys read as scores.
  std::size_t insert_and_evict(std::size_t n, const Key* keys, const std::uint64_t* values, Key* evicted_keys,
                               std::uint64_t* evicted_values = nullptr, std::uint64_t* evicted_scores = nullptr,
                               const std::uint64_t* scores = nullptr, status* statuses = nullptr, stream_arg stream = {}) {
    need(keys, n, "keys");
    need(values, n, "values");
    need(evicted_keys, n, "evicted_keys");
    need_scores(scores, n);
    detail::stream_join join(ex_, stream);
    if (n == 0) return 0;
    buffer<Key> ev_keys(n, ex_);
    buffer<std::uint64_t> ev_values(evicted_values != nullptr ? n * value_words_ : 0, ex_);
    buffer<std::uint8_t> ev_flags(n, ex_);
    buffer<std::uint64_t> ev_scores(n, ex_);
    buffer<unsigned long long> count(1, ex_);
    detail::fill_words<unsigned long long>(ex_, count.data(), 1, 0);
    resident<true>(n, cache_op::set, keys, values, nullptr, statuses, nullptr, ev_keys.data(), ev_values.data(),
                   ev_flags.data(), ev_scores.data(), scores);
    detail::for_each_index(ex_, n,
                           detail::cache_compact_evictions_fn<Key>{ev_flags.data(), ev_keys.data(), ev_values.data(),
                                                                   ev_scores.data(), value_words_, count.data(),
                                                                   evicted_keys, evicted_values, evicted_scores});
    unsigned long long evicted = 0;
    count.copy_to_host(&evicted, 1);  // waits
    return static_cast<std::size_t>(evicted);
  }

 protected:
  /// An array an HKV-named call needs: not null when n > 0 (vector_cache's typed calls too).
  static void need(const void* p, std::size_t n, const char* name) {
    require(n == 0 || p != nullptr, name, "null with n = " + std::to_string(n) + " > 0");
  }

 private:
  /// The inserts' scores: a custom-score design needs them (HKV's kCustomized requires them).
  void need_scores(const std::uint64_t* scores, std::size_t n) const {
    require(n == 0 || scores != nullptr || cfg_.eviction != cache_eviction_policy::custom, "scores",
            "null with n = " + std::to_string(n) + " > 0: a custom-score cache takes every insert's score");
  }
  /// A uniform batch over backend arrays (the HKV-named calls): statuses into `statuses` (or a
  /// scratch array: the write phase's fast pass needs them), found flags into `founds` when not
  /// null, evictions (with scores when ScoresOut) into the ev_ arrays, the caller's scores from
  /// `scores` (may be null); waits, returns the counts.
  template <bool ScoresOut = false>
  batch_summary resident(std::size_t n, cache_op uniform, const Key* keys, const std::uint64_t* in, std::uint64_t* out,
                         status* statuses, bool* founds, Key* ev_keys = nullptr, std::uint64_t* ev_values = nullptr,
                         std::uint8_t* ev_flags = nullptr, std::uint64_t* ev_scores = nullptr,
                         const std::uint64_t* scores = nullptr) {
    if (n == 0) return {};
    buffer<status> own;
    if (statuses == nullptr) {
      own = buffer<status>(n, ex_);
      statuses = own.data();
    }
    std::unique_ptr<batch_counters> c = take_counters();
    c->zero();
    std::unique_ptr<groups_scratch> g = join_groups(n, nullptr, uniform, keys);
    const detail::op_groups<Key> groups = g ? g->groups : detail::op_groups<Key>{};
    queue_batch<ScoresOut>(ex_, n, nullptr, uniform, keys, in, out, statuses, nullptr, c->data(), ev_keys, ev_values,
                           ev_flags, groups, ev_scores, scores);
    fix_up_groups(groups, n, keys, statuses, out);
    if (founds != nullptr) detail::for_each_index(ex_, n, detail::cache_found_flags_fn{statuses, founds});
    batch_summary sum = c->read();  // waits for the batch
    sum.count[static_cast<int>(status::full)] = 0;  // the phases' hand-on marks (execute_resident)
    return_counters(std::move(c));
    return_groups(std::move(g));
    return sum;
  }

  /// accum_or_assign's elements: T is float, double or half and value_bytes holds whole ones.
  template <class T>
  void require_accum_elements() const {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half>,
                  "accum_or_assign: T is float, double or warpkv::half");
    require(cfg_.value_bytes % sizeof(T) == 0, "value_bytes",
            "accum_or_assign adds vectors of " + std::to_string(sizeof(T)) + "-byte elements; value_bytes " +
                std::to_string(cfg_.value_bytes) + " is not a multiple");
  }
  /// A uniform batch of an operation with its own kernel (assign, accum_or_assign): make(ref,
  /// stamp_base, now, epoch) gives the phase op (detail/hkv_passes.hpp) for this cache's design; one
  /// launch over operations [0, n), waits, returns the counts.
  template <class MakeOp>
  batch_summary own_kernel(std::size_t n, status* statuses, const MakeOp& make) {
    if (n == 0) return {};
    std::unique_ptr<batch_counters> c = take_counters();
    c->zero();
    const std::uint64_t stamp_base = reserve_stamps(n);
    const std::uint64_t now = time(), epoch = global_epoch();
    visit([&]<class D>(std::type_identity<D>) {
      detail::launch_cache_phase<TileSize>(ex_, n, make(ref_as<D>(), stamp_base, now, epoch), statuses, c->data(), false);
    });
    batch_summary sum = c->read();  // waits
    return_counters(std::move(c));
    return sum;
  }

  [[nodiscard]] cache_storage storage() const {
    constexpr std::size_t key_words = cache_key_layout<Key>::words;
    const bool in = cfg_.layout == cache_layout::inline_values;
    const std::size_t record = in ? key_words + value_words_ : key_words;
    return cache_storage{keys_.data(),   in ? keys_.data() + key_words : values_.data(),
                         versions_.data(), stamps_.data(), expires_.data(), locks_.data(), occupied_.data(), moves_.data(),
                         record, in ? record : value_words_, digests_.data()};
  }
  template <class D, int Tile = TileSize>
  [[nodiscard]] ref_of<D, Tile> ref_as() const {
    const auto kick_slots = static_cast<std::size_t>(cfg_.kick_load_limit * static_cast<double>(capacity()));
    return ref_of<D, Tile>(storage(), buckets_, value_words_, cfg_.seed, cfg_.max_kicks, kick_slots);
  }
  /// Calls f(std::type_identity<D>{}) with this cache's design D (by_config: the one cfg names).
  template <class F>
  decltype(auto) visit(F&& f) const {
    if constexpr (by_config) return visit_design(cfg_, f);
    else return f(std::type_identity<Design>{});
  }

  /// Status counters for one batch: from the pool, or new when every pooled one is in use (a
  /// batch from another host thread); returned after the batch.
  std::unique_ptr<batch_counters> take_counters() {
    {
      std::lock_guard<std::mutex> g(pool_->m);
      if (!pool_->free.empty()) {
        std::unique_ptr<batch_counters> c = std::move(pool_->free.back());
        pool_->free.pop_back();
        return c;
      }
    }
    return std::make_unique<batch_counters>(ex_);
  }
  void return_counters(std::unique_ptr<batch_counters> c) {
    std::lock_guard<std::mutex> g(pool_->m);
    pool_->free.push_back(std::move(c));
  }

  /// Queues a batch on `on` (counters null: no status counts), reads first: the read phase's
  /// kernel (detail::cache_read_op: no writer code, a fraction of the registers) serves gets,
  /// contains and the get_or_sets that hit; a batch of only gets or contains ends there. The
  /// write phase then runs only the other operations (those the read phase marked `full`: a
  /// lane's skip is one load of its own status, no divergent work in the tile), in two kernels:
  /// the fast pass (the hot write kernel, without cuckoo walks) and the complete pass over the
  /// few inserts the fast pass left `full` (both buckets full while cuckoo moves may run). Every
  /// kernel counts: the earlier ones count the later ones' operations as `full`, which no cache
  /// operation returns (execute_resident drops that count). One stamp range and clock for all.
  /// The kernels are those of this cache's design (by_config: the one cfg names).
  template <bool ScoresOut = false>
  void queue_batch(const execution& on, std::size_t n, const cache_op* ops, cache_op uniform, const Key* keys,
                   const std::uint64_t* values_in, std::uint64_t* values_out, status* statuses,
                   const std::uint64_t* expires_at, unsigned long long* counters, Key* ev_keys = nullptr,
                   std::uint64_t* ev_values = nullptr, std::uint8_t* ev_flags = nullptr,
                   detail::op_groups<Key> groups = {}, std::uint64_t* ev_scores = nullptr,
                   const std::uint64_t* scores = nullptr) {
    if (n == 0) return;
    const std::uint64_t stamp_base = reserve_stamps(n);
    const std::uint64_t now = time(), epoch = global_epoch();
    const bool reads_only = ops == nullptr && (uniform == cache_op::get || uniform == cache_op::contains);
    const bool has_reads = reads_only || ops != nullptr || uniform == cache_op::get_or_set;
    require(statuses != nullptr || !has_reads || reads_only, "statuses", "a batch with reads and writes needs statuses");
    visit([&]<class D>(std::type_identity<D>) {
      using ref_type = ref_of<D>;
      using read_ref_type = ref_of<D, read_tile_size>;
      const detail::cache_batch_fields<Key> fields{.ops = ops,
                                                   .uniform = uniform,
                                                   .keys = keys,
                                                   .values_in = values_in,
                                                   .values_out = values_out,
                                                   .expires = expires_at,
                                                   .stamp_base = stamp_base,
                                                   .now = now,
                                                   .epoch = epoch,
                                                   .scores = scores,
                                                   .evicted_keys = ev_keys,
                                                   .evicted_values = ev_values,
                                                   .evicted_flags = ev_flags,
                                                   .evicted_scores = ev_scores,
                                                   .groups = groups};
      const detail::cache_batch_args<ref_type> a{fields, ref_as<D>()};
      // the read phase, then the write phase's fast pass over what it left, then the complete
      // pass over what the fast pass left (cuckoo walks; without statuses the complete pass alone)
      if (has_reads) {  // the read phase at its own tile (read_tile_size), over the same arguments
        const detail::cache_batch_args<read_ref_type> r = detail::with_ref(a, ref_as<D, read_tile_size>());
        detail::launch_cache_phase<read_tile_size>(on, n, detail::cache_read_op<read_ref_type>{r}, statuses, counters, false);
      }
      if (reads_only) return;
      const bool split = statuses != nullptr;
      // the gate pass: the write phase's cuckoo gate (both passes read it), from the occupancy
      // shards summed once
      if (cfg_.max_kicks != 0 && buckets_ >= 2) launch<1>(on, 1, simple_body<detail::cache_gate_fn<ref_type>>{{a.ref, n}});
      if (split)
        detail::launch_cache_phase<TileSize>(on, n, detail::cache_write_op<ref_type, cache_pass::fast, ScoresOut>{a}, statuses, counters,
                                             has_reads);
      detail::launch_cache_phase<TileSize>(on, n, detail::cache_write_op<ref_type, cache_pass::batch_complete, ScoresOut>{a}, statuses,
                                           counters, split);
    });
  }

  /// The operation groups' scratch (set absorption, get_or_set combining): the group table of
  /// one batch (pooled like the counters; a larger batch than any before allocates a larger one).
  struct groups_scratch {
    buffer<std::uint32_t> words;
    detail::op_groups<Key> groups;
  };
  /// With absorb_sets or combine_get_or_set and a batch that may hold such operations: a zeroed
  /// group table with every such operation of the batch joined (queued on the cache's stream);
  /// else null.
  std::unique_ptr<groups_scratch> join_groups(std::size_t n, const cache_op* ops, cache_op uniform, const Key* keys) {
    const bool sets = cfg_.absorb_sets && (ops != nullptr || uniform == cache_op::set);
    const bool get_or_sets = cfg_.combine_get_or_set && (ops != nullptr || uniform == cache_op::get_or_set);
    if (n == 0 || !(sets || get_or_sets)) return nullptr;
    require(n < (std::size_t{1} << 31), "n", "set absorption and get_or_set combining take batches of fewer than 2^31 operations");
    std::size_t slots = 1;
    while (slots < 2 * n) slots <<= 1;
    std::unique_ptr<groups_scratch> g;
    {
      std::lock_guard<std::mutex> lock(pool_->m);
      for (std::size_t k = 0; k < pool_->groups.size(); ++k)
        if (pool_->groups[k]->groups.slots >= slots) {
          g = std::move(pool_->groups[k]);
          pool_->groups.erase(pool_->groups.begin() + static_cast<std::ptrdiff_t>(k));
          break;
        }
    }
    if (!g) {
      g = std::make_unique<groups_scratch>();
      g->words = buffer<std::uint32_t>(3 * slots + slots / 2, ex_);  // slots / 2 >= n entry words
      g->groups.rep = g->words.data();
      g->groups.win = g->words.data() + slots;
      g->groups.other = g->words.data() + 2 * slots;
      g->groups.entry = g->words.data() + 3 * slots;
      g->groups.slots = slots;
      g->groups.seed = cfg_.seed;
    }
    g->groups.ops = ops;  // this batch's
    g->groups.uniform = uniform;
    g->groups.sets = sets;
    g->groups.get_or_sets = get_or_sets;
    // the table zeroed; the entry words are written by the join pass, one for every operation
    detail::fill_words<std::uint32_t>(ex_, g->words.data(), 3 * g->groups.slots, 0u);
    // concurrent tiles on both backends (the host backend's for_each_index is a plain loop)
    launch<1>(ex_, n, simple_body<detail::op_groups_pass_fn<Key>>{{g->groups, keys, nullptr, nullptr, 0}});
    return g;
  }
  void fix_up_groups(const detail::op_groups<Key>& groups, std::size_t n, const Key* keys, status* statuses,
                     std::uint64_t* values_out) {
    if (groups.slots == 0) return;
    launch<1>(ex_, n, simple_body<detail::op_groups_pass_fn<Key>>{{groups, keys, statuses, values_out, value_words_}});
  }
  void return_groups(std::unique_ptr<groups_scratch> g) {
    if (!g) return;
    std::lock_guard<std::mutex> lock(pool_->m);
    pool_->groups.push_back(std::move(g));
  }


  void run(cache_op uniform, std::span<const cache_op> ops, std::span<const Key> keys, std::span<const std::byte> in,
           std::span<std::byte> out, std::span<status> statuses, std::span<const std::uint64_t> expires_at,
           cache_evictions<Key>* evicted) {
    const std::size_t n = keys.size();
    const std::size_t stride = value_stride();
    require(statuses.size() == n, "statuses", "one status per key");
    bool needs_in = false, needs_out = false;
    if (ops.empty()) {
      needs_in = uniform == cache_op::set || uniform == cache_op::add || uniform == cache_op::get_or_set;
      needs_out = uniform == cache_op::get || uniform == cache_op::get_or_set;
    } else {
      for (const cache_op o : ops) {
        require(static_cast<unsigned>(o) <= static_cast<unsigned>(cache_op::contains), "ops", "unknown operation code");
        needs_in = needs_in || o == cache_op::set || o == cache_op::add || o == cache_op::get_or_set;
        needs_out = needs_out || o == cache_op::get || o == cache_op::get_or_set;
      }
    }
    if (needs_in)
      require(in.size() == n * stride, "values",
              std::to_string(in.size()) + " bytes given, the batch needs " + std::to_string(n) + " x value_stride() = " +
                  std::to_string(n * stride));
    if (needs_out)
      require(out.size() == n * stride, "values_out",
              std::to_string(out.size()) + " bytes given, the batch needs " + std::to_string(n * stride));
    require(expires_at.empty() || expires_at.size() == n, "expires_at", "empty or one expiry time per key");
    if (n == 0) {
      if (evicted != nullptr) *evicted = {};
      return;
    }

    buffer<Key> d_keys = buffer<Key>::from_host(keys, ex_);
    buffer<cache_op> d_ops;
    if (!ops.empty()) d_ops = buffer<cache_op>::from_host(ops, ex_);
    buffer<std::uint64_t> d_in, d_out, d_exp, d_ev_values;
    if (needs_in) {
      d_in = buffer<std::uint64_t>(n * value_words_, ex_);
      copy_bytes_in(d_in, in);
    }
    if (needs_out) d_out = buffer<std::uint64_t>(n * value_words_, ex_);
    if (!expires_at.empty()) d_exp = buffer<std::uint64_t>::from_host(expires_at, ex_);
    buffer<Key> d_ev_keys;
    buffer<std::uint8_t> d_ev_flags;
    if (evicted != nullptr) {
      d_ev_keys = buffer<Key>(n, ex_);
      d_ev_values = buffer<std::uint64_t>(n * value_words_, ex_);
      d_ev_flags = buffer<std::uint8_t>(n, ex_);
    }
    buffer<status> d_status(n, ex_);

    // no status counts wanted: no counters, and the copies below wait for the batch
    std::unique_ptr<groups_scratch> g = join_groups(n, d_ops.data(), uniform, d_keys.data());
    const detail::op_groups<Key> groups = g ? g->groups : detail::op_groups<Key>{};
    queue_batch(ex_, n, d_ops.data(), uniform, d_keys.data(), d_in.data(), d_out.data(), d_status.data(), d_exp.data(),
                nullptr, d_ev_keys.data(), d_ev_values.data(), d_ev_flags.data(), groups);
    fix_up_groups(groups, n, d_keys.data(), d_status.data(), d_out.data());

    d_status.copy_to_host(statuses.data(), n);  // waits for the batch and the fix-up
    return_groups(std::move(g));
    if (needs_out) {
      std::vector<std::uint64_t> words(n * value_words_);
      d_out.copy_to_host(words.data(), words.size());
      std::memcpy(out.data(), words.data(), out.size());
    }
    if (evicted != nullptr) {
      std::vector<std::uint8_t> flags(n);
      d_ev_flags.copy_to_host(flags.data(), n);
      std::vector<Key> ks(n);
      d_ev_keys.copy_to_host(ks.data(), n);
      std::vector<std::uint64_t> vs(n * value_words_);
      d_ev_values.copy_to_host(vs.data(), vs.size());
      *evicted = {};
      for (std::size_t i = 0; i < n; ++i) {
        if (flags[i] == 0) continue;
        evicted->op_index.push_back(i);
        evicted->keys.push_back(ks[i]);
        const auto* b = reinterpret_cast<const std::byte*>(vs.data() + i * value_words_);
        evicted->values.insert(evicted->values.end(), b, b + stride);
      }
    }
  }

  void copy_bytes_in(buffer<std::uint64_t>& dst, std::span<const std::byte> src) {
    std::vector<std::uint64_t> words(dst.size());
    std::memcpy(words.data(), src.data(), src.size());
    dst.copy_from_host(words.data(), words.size());
  }

  cache_config cfg_;
  execution ex_;
  std::size_t buckets_ = 0;
  std::uint32_t value_words_ = 0;
  std::atomic<std::uint64_t> clock_{0};
  std::atomic<std::uint64_t> now_{0};
  std::atomic<std::uint64_t> epoch_{0};
  buffer<std::uint64_t> keys_, values_;
  buffer<std::uint32_t> versions_;
  buffer<std::uint64_t> stamps_, expires_, digests_;
  buffer<std::uint32_t> locks_, moves_;
  buffer<unsigned long long> occupied_;
  struct counters_pool {
    std::mutex m;
    std::vector<std::unique_ptr<batch_counters>> free;
    std::vector<std::unique_ptr<groups_scratch>> groups;
  };
  std::unique_ptr<counters_pool> pool_ = std::make_unique<counters_pool>();
};

/// The seed's CCHT as one instantiation: buckets of 4 slots, per-slot reader/writer locks, LRU,
/// key and value in one record per slot (cache_designs::ccht).
template <class Key = std::uint64_t>
using ccht_cache = kv_cache<Key, 4, 4, cache_designs::ccht>;

}  // namespace warpkv
