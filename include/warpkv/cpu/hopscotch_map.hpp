#pragma once
// warpkv::cpu::hopscotch_map: the concurrent lock-based hopscotch hash map of Herlihy, Shavit and
// Tzafrir (2008) on host threads: the CPU baseline of the GLHT experiments.
//
// What it guarantees (argument and linearization points: docs/design/cpu_hopscotch.md):
//  - The single-key calls (insert, insert_or_assign, find, contains, erase) may be called from any
//    number of threads at once and are linearizable. Writers take segment locks (in increasing
//    segment order, so never a deadlock); find and contains take no lock: they validate what they
//    read against the home segment's timestamp and retry (after a few retries they take the lock).
//  - Inserts move entries toward their home bucket (hopscotch displacement); when no free slot is
//    within reach or displacement fails, the inserting thread resizes the table (all segment locks,
//    more room or a new seed) and retries: no insert is ever lost or reported `full`.
//  - A key equal to the empty-key sentinel gets status::invalid_key and never touches the table; the
//    bulk calls throw after the batch when config.throw_on_invalid_key is set.
//  - The bulk calls spread a batch over config.threads host threads (default: the hardware threads);
//    every operation of a batch runs concurrently with the others. Bulk calls and the whole-table
//    calls (size, clear, reserve, rehash, retrieve_all, validate, reclaim) must not overlap other
//    calls on the same map: retired tables (kept alive for lock-free finds that may still read
//    them) are freed there.
// Same statuses as the GPU maps (core/status.hpp); it never returns status::full.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/bulk_map.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/growth.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/cpu/detail/hopscotch_table.hpp"
#include "warpkv/cpu/detail/thread_pool.hpp"

// Test seam: a test translation unit may define WARPKV_CPU_HOPSCOTCH_RACE_PROBE before including
// this header to make lock-free finds yield after reading a hop word and after matching a key, which
// widens the race windows that the timestamps guard from nanoseconds to a scheduler slice.
#ifdef WARPKV_CPU_HOPSCOTCH_RACE_PROBE
#define WARPKV_CPU_RACE_PROBE() std::this_thread::yield()
#else
#define WARPKV_CPU_RACE_PROBE() ((void)0)
#endif

namespace warpkv::cpu {

struct hopscotch_config {
  double max_load_factor = 0.85;     ///< bulk inserts reserve room so size/capacity stays below this
  unsigned neighborhood = 32;        ///< H, 1..32: slots an entry may sit after its home bucket
  unsigned segment_size = 32;        ///< slots per lock segment (a power of two)
  std::size_t max_probe = 1024;      ///< how far an insert looks for a free slot (capped by the capacity)
  std::uint64_t seed = 0;            ///< hash seed; resizes pick new ones
  bool throw_on_invalid_key = false; ///< bulk calls throw warpkv::error(invalid_key) after a batch that held one
  unsigned threads = 0;              ///< threads of a bulk call; 0 = std::thread::hardware_concurrency()
  int find_retries = 8;              ///< lock-free attempts of a find before it takes the segment lock
};

template <hash_key Key, map_value Value>
class hopscotch_map {
  using key_bits = storage_bits_t<sizeof(Key)>;
  using value_bits = storage_bits_t<sizeof(Value)>;
  using table_t = detail::table<key_bits, value_bits>;
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t chunk = 256;  ///< operations a bulk-call thread takes at a time

 public:
  using key_type = Key;
  using mapped_type = Value;
  using config_type = hopscotch_config;
  static constexpr const char* map_name = "cpu::hopscotch_map";

  /// A map with room for at least `capacity_hint` keys at the configured maximum load factor.
  explicit hopscotch_map(std::size_t capacity_hint, hopscotch_config cfg = {}, Key empty_key = default_empty_key<Key>)
      : cfg_(cfg), empty_(empty_key), empty_bits_(to_bits(empty_key)) {
    require(cfg.max_load_factor > 0.0 && cfg.max_load_factor <= 1.0, "max_load_factor", "must be in (0, 1]");
    require(cfg.neighborhood >= 1 && cfg.neighborhood <= 32, "neighborhood", "must be in [1, 32]");
    require(cfg.segment_size >= 1 && std::has_single_bit(cfg.segment_size), "segment_size", "must be a power of two");
    require(cfg.max_probe >= cfg.neighborhood, "max_probe", "must be at least the neighborhood");
    require(cfg.find_retries >= 0, "find_retries", "must not be negative");
    const unsigned threads = cfg.threads != 0 ? cfg.threads : std::max(1u, std::thread::hardware_concurrency());
    pool_ = std::make_unique<detail::thread_pool>(threads);
    install(make_table(capacity_for(capacity_hint), cfg.seed));
  }
  hopscotch_map(const hopscotch_map&) = delete;
  hopscotch_map& operator=(const hopscotch_map&) = delete;

  // ---- single-key calls: any thread, concurrently -------------------------------------------
  status insert(Key k, Value v) { return insert_one(k, v, false); }
  status insert_or_assign(Key k, Value v) { return insert_one(k, v, true); }
  /// found (and *out = the value) or not_found (*out untouched); out may be null.
  status find(Key k, Value* out) const {
    const key_bits kb = to_bits(k);
    if (kb == empty_bits_) return status::invalid_key;
    value_bits v{};
    if (!find_bits(kb, v)) return status::not_found;
    if (out != nullptr) *out = from_bits<Value>(v);
    return status::found;
  }
  [[nodiscard]] bool contains(Key k) const { return find(k, nullptr) == status::found; }
  status erase(Key k) {
    const key_bits kb = to_bits(k);
    if (kb == empty_bits_) return status::invalid_key;
    for (;;) {
      table_t& t = *current_.load(std::memory_order_acquire);
      const std::size_t h = t.home(kb);
      detail::segment& sg = t.seg_of(h);
      detail::lock_segment(sg);
      if (current_.load(std::memory_order_acquire) != &t) {  // resized meanwhile: retry on the new table
        detail::unlock_segment(sg);
        continue;
      }
      const std::size_t s = search_locked(t, h, kb);
      if (s == npos) {
        detail::unlock_segment(sg);
        return status::not_found;
      }
      // Timestamp first: a lock-free find that then sees the slot changed also sees the new stamp.
      sg.timestamp.fetch_add(1, std::memory_order_acq_rel);
      t.hop(h).fetch_and(~(1u << (s - h)), memory_order::release);
      t.key(s).store(empty_bits_, memory_order::release);
      sg.count.fetch_sub(1, std::memory_order_relaxed);
      detail::unlock_segment(sg);
      return status::erased;
    }
  }

  // ---- bulk calls over host memory (the GPU maps' interface) --------------------------------
  batch_summary insert(const Key* keys, const Value* values, std::size_t n, status* out = nullptr) {
    return insert_batch(keys, values, n, out, false);
  }
  batch_summary insert_or_assign(const Key* keys, const Value* values, std::size_t n, status* out = nullptr) {
    return insert_batch(keys, values, n, out, true);
  }
  /// values_out[i] = value of keys[i], or Value{} when absent.
  batch_summary find(const Key* keys, std::size_t n, Value* values_out, status* out = nullptr) {
    check_inputs(n, keys, "keys");
    return run(n, out, [&](std::size_t i) {
      Value v{};
      const status s = find(keys[i], &v);
      if (values_out != nullptr) values_out[i] = v;
      return s;
    });
  }
  batch_summary contains(const Key* keys, std::size_t n, bool* found_out) {
    check_inputs(n, keys, "keys");
    check_inputs(n, found_out, "found_out");
    return run(n, nullptr, [&](std::size_t i) {
      const status s = find(keys[i], nullptr);
      found_out[i] = s == status::found;
      return s;
    });
  }
  batch_summary erase(const Key* keys, std::size_t n, status* out = nullptr) {
    check_inputs(n, keys, "keys");
    return run(n, out, [&](std::size_t i) { return erase(keys[i]); });
  }
  /// A mixed batch; all operations run concurrently. values_out (may be null) receives find
  /// results; an op code outside warpkv::op gets status::invalid_key.
  batch_summary execute(const op* ops, const Key* keys, const Value* values, std::size_t n, status* out,
                        Value* values_out = nullptr) {
    check_inputs(n, ops, "ops");
    check_inputs(n, keys, "keys");
    check_inputs(n, values, "values");
    // Sized up front, as bulk inserts are: a batch into a far-too-small table would otherwise
    // resize many times on its way.
    const auto inserts = static_cast<std::size_t>(std::count_if(
        ops, ops + n, [](op o) { return o == op::insert || o == op::insert_or_assign; }));
    if (static_cast<double>(size() + inserts) > 1.25 * cfg_.max_load_factor * static_cast<double>(capacity()))
      reserve(size() + inserts);
    return run(n, out, [&](std::size_t i) {
      switch (ops[i]) {
        case op::insert: return insert(keys[i], values[i]);
        case op::insert_or_assign: return insert_or_assign(keys[i], values[i]);
        case op::erase: return erase(keys[i]);
        case op::find:
        case op::contains: {
          Value v{};
          const status s = find(keys[i], &v);
          if (values_out != nullptr) values_out[i] = v;
          return s;
        }
      }
      return status::invalid_key;
    });
  }

  std::vector<status> insert(std::span<const Key> keys, std::span<const Value> values) {
    require(keys.size() == values.size(), "values", "must have as many elements as keys");
    std::vector<status> st(keys.size());
    insert(keys.data(), values.data(), keys.size(), st.data());
    return st;
  }
  std::vector<status> insert_or_assign(std::span<const Key> keys, std::span<const Value> values) {
    require(keys.size() == values.size(), "values", "must have as many elements as keys");
    std::vector<status> st(keys.size());
    insert_or_assign(keys.data(), values.data(), keys.size(), st.data());
    return st;
  }
  std::vector<status> find(std::span<const Key> keys, std::vector<Value>& values) {
    std::vector<status> st(keys.size());
    values.assign(keys.size(), Value{});
    find(keys.data(), keys.size(), values.data(), st.data());
    return st;
  }
  std::vector<status> erase(std::span<const Key> keys) {
    std::vector<status> st(keys.size());
    erase(keys.data(), keys.size(), st.data());
    return st;
  }
  std::vector<status> execute(std::span<const op> ops, std::span<const Key> keys, std::span<const Value> values,
                              std::vector<Value>& values_out) {
    require(ops.size() == keys.size(), "keys", "must have as many elements as ops");
    require(values.size() == keys.size(), "values", "must have as many elements as ops");
    std::vector<status> st(keys.size());
    values_out.assign(keys.size(), Value{});
    execute(ops.data(), keys.data(), values.data(), keys.size(), st.data(), values_out.data());
    return st;
  }

  // ---- whole-table calls (not concurrent with any other call) --------------------------------
  [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(table().entries()); }
  /// Home buckets (a power of two); the table has min(max_probe, capacity) more slots as its tail.
  [[nodiscard]] std::size_t capacity() const { return table().buckets; }
  [[nodiscard]] double load_factor() const { return static_cast<double>(size()) / static_cast<double>(capacity()); }
  [[nodiscard]] const hopscotch_config& config() const { return cfg_; }
  [[nodiscard]] Key empty_key() const { return empty_; }
  [[nodiscard]] std::uint64_t seed() const { return table().seed; }
  [[nodiscard]] unsigned threads() const { return pool_->threads(); }
  /// Resizes (on failed displacement, reserve, rehash) since construction.
  [[nodiscard]] std::size_t rehash_count() const { return rehashes_.load(std::memory_order_relaxed); }
  /// Entries moved toward their home bucket by hopscotch displacement since construction.
  [[nodiscard]] std::size_t displacement_count() const { return moves_.load(std::memory_order_relaxed); }

  void clear() {
    const std::size_t buckets = capacity();
    const std::uint64_t seed = table().seed;
    tables_.clear();
    install(make_table(buckets, seed));
  }
  /// Makes room for n keys without passing the maximum load factor.
  void reserve(std::size_t n) {
    const std::size_t need = capacity_for(n);
    if (need > capacity()) resize(current_.load(std::memory_order_acquire), need);
    reclaim();
  }
  /// Rebuilds the table with at least `buckets` buckets (never fewer than the keys need).
  void rehash(std::size_t buckets) {
    resize(current_.load(std::memory_order_acquire),
           std::max(capacity_for(size()), warpkv::detail::round_capacity(buckets)));
    reclaim();
  }
  /// Frees the tables that resizes retired.
  void reclaim() {
    std::lock_guard<std::mutex> g(resize_m_);
    if (tables_.size() > 1) tables_.erase(tables_.begin(), tables_.end() - 1);
  }

  std::pair<std::vector<Key>, std::vector<Value>> retrieve_all() const {
    const table_t& t = table();
    std::pair<std::vector<Key>, std::vector<Value>> out;
    for (std::size_t s = 0; s < t.slots(); ++s) {
      const key_bits k = t.key(s).load(memory_order::relaxed);
      if (k == empty_bits_) continue;
      out.first.push_back(from_bits<Key>(k));
      out.second.push_back(from_bits<Value>(t.value(s).load(memory_order::relaxed)));
    }
    return out;
  }
  /// Writes all entries to keys_out/values_out (room for size()); returns the count.
  std::size_t retrieve_all(Key* keys_out, Value* values_out) const {
    auto [k, v] = retrieve_all();
    std::copy(k.begin(), k.end(), keys_out);
    std::copy(v.begin(), v.end(), values_out);
    return k.size();
  }

  /// Debug aid: checks every structural invariant; returns the first violation or "".
  [[nodiscard]] std::string validate() const {
    const table_t& t = table();
    std::vector<std::int64_t> homed(t.num_segments, 0);
    for (std::size_t s = 0; s < t.slots(); ++s) {
      const key_bits k = t.key(s).load(memory_order::relaxed);
      if (k == empty_bits_) continue;
      const std::size_t h = t.home(k);
      if (s < h || s - h >= t.neighborhood) return "slot " + std::to_string(s) + " is outside its key's neighborhood";
      if ((t.hop(h).load(memory_order::relaxed) & (1u << (s - h))) == 0)
        return "slot " + std::to_string(s) + " has no hop bit in bucket " + std::to_string(h);
      if (search_locked(t, h, k) != s) return "a key is stored twice (slot " + std::to_string(s) + ")";
      ++homed[t.seg_index(h)];
    }
    for (std::size_t b = 0; b < t.buckets; ++b) {
      for (std::uint32_t hop = t.hop(b).load(memory_order::relaxed); hop != 0; hop &= hop - 1) {
        const std::size_t s = b + static_cast<std::size_t>(std::countr_zero(hop));
        const key_bits k = t.key(s).load(memory_order::relaxed);
        if (k == empty_bits_ || t.home(k) != b)
          return "hop bit of bucket " + std::to_string(b) + " points at slot " + std::to_string(s) + " which is not its entry";
      }
    }
    for (std::size_t i = 0; i < t.num_segments; ++i) {
      if (t.segments[i].count.load(std::memory_order_relaxed) != homed[i])
        return "segment " + std::to_string(i) + " counts the wrong number of entries";
      if (t.segments[i].lock.load(std::memory_order_relaxed) != 0) return "segment " + std::to_string(i) + " is locked";
    }
    return "";
  }

 private:
  enum class outcome { done, stale, no_room };

  const table_t& table() const { return *current_.load(std::memory_order_acquire); }

  /// The sizing rule of core/growth.hpp over the map's maximum load factor.
  warpkv::detail::growth_policy growth() const { return warpkv::detail::growth_policy{cfg_.max_load_factor}; }
  std::size_t capacity_for(std::size_t keys) const { return growth().capacity_for(keys); }
  std::unique_ptr<table_t> make_table(std::size_t buckets, std::uint64_t seed) const {
    return std::make_unique<table_t>(buckets, std::min(cfg_.max_probe, buckets), cfg_.neighborhood,
                                     static_cast<unsigned>(std::countr_zero(cfg_.segment_size)), seed, empty_bits_);
  }
  void install(std::unique_ptr<table_t> t) {
    current_.store(t.get(), std::memory_order_release);
    tables_.push_back(std::move(t));
  }

  /// Slot of kb among the entries homed at h, or npos. Exact while the caller holds h's segment
  /// lock (only holders of that lock add, move or remove entries homed at h).
  std::size_t search_locked(const table_t& t, std::size_t h, key_bits kb) const {
    for (std::uint32_t hop = t.hop(h).load(memory_order::acquire); hop != 0; hop &= hop - 1) {
      const std::size_t s = h + static_cast<std::size_t>(std::countr_zero(hop));
      if (t.key(s).load(memory_order::acquire) == kb) return s;
    }
    return npos;
  }

  /// The lock-free find: read the home segment's timestamp, search the bucket's hop bits, and
  /// accept the result only if the timestamp did not move (no entry homed there was moved or
  /// removed meanwhile). After cfg_.find_retries failed attempts, search under the lock.
  bool find_bits(key_bits kb, value_bits& v) const {
    for (;;) {
      const table_t& t = *current_.load(std::memory_order_acquire);
      const std::size_t h = t.home(kb);
      detail::segment& sg = t.seg_of(h);
      for (int attempt = 0; attempt < cfg_.find_retries; ++attempt) {
        const std::uint64_t stamp = sg.timestamp.load(std::memory_order_acquire);
        bool hit = false;
        value_bits got{};
        std::uint32_t hop = t.hop(h).load(memory_order::acquire);
        WARPKV_CPU_RACE_PROBE();
        for (; hop != 0; hop &= hop - 1) {
          const std::size_t s = h + static_cast<std::size_t>(std::countr_zero(hop));
          if (t.key(s).load(memory_order::acquire) == kb) {
            WARPKV_CPU_RACE_PROBE();
            got = t.value(s).load(memory_order::acquire);
            hit = true;
            break;
          }
        }
        if (sg.timestamp.load(std::memory_order_acquire) == stamp) {
          v = got;
          return hit;
        }
      }
      detail::lock_segment(sg);
      if (current_.load(std::memory_order_acquire) != &t) {
        detail::unlock_segment(sg);
        continue;
      }
      const std::size_t s = search_locked(t, h, kb);
      if (s != npos) v = t.value(s).load(memory_order::acquire);
      detail::unlock_segment(sg);
      return s != npos;
    }
  }

  status insert_one(Key k, Value v, bool assign) {
    const key_bits kb = to_bits(k);
    if (kb == empty_bits_) return status::invalid_key;
    const value_bits vb = to_bits(v);
    for (;;) {
      table_t* t = current_.load(std::memory_order_acquire);
      status st{};
      switch (insert_into(*t, kb, vb, assign, true, st)) {
        case outcome::done: return st;
        case outcome::stale: break;
        case outcome::no_room: resize(t, 0); break;
      }
    }
  }

  /// One insert into t. Locks the home bucket's segment, then every segment the probe for a free
  /// slot enters (always in increasing order), hops the free slot back into the neighborhood and
  /// publishes the entry. `published`: t is the map's current table (check it after locking).
  outcome insert_into(table_t& t, key_bits kb, value_bits vb, bool assign, bool published, status& st) {
    const std::size_t h = t.home(kb);
    const std::size_t first = t.seg_index(h);
    std::size_t last = first;
    detail::lock_segment(t.segments[first]);
    const auto unlock_all = [&] {
      for (std::size_t i = first; i <= last; ++i) detail::unlock_segment(t.segments[i]);
    };
    if (published && current_.load(std::memory_order_acquire) != &t) {
      unlock_all();
      return outcome::stale;
    }
    if (const std::size_t s = search_locked(t, h, kb); s != npos) {
      if (assign) t.value(s).store(vb, memory_order::release);
      st = assign ? status::assigned : status::found;
      unlock_all();
      return outcome::done;
    }
    // A free slot at or after h, locking each segment as the probe enters it.
    std::size_t f = npos;
    for (std::size_t s = h; s < h + t.probe; ++s) {
      if (t.seg_index(s) > last) detail::lock_segment(t.segments[last = t.seg_index(s)]);
      if (t.key(s).load(memory_order::acquire) == empty_bits_) {
        f = s;
        break;
      }
    }
    if (f == npos) {
      unlock_all();
      return outcome::no_room;
    }
    // Hop the free slot back: move an entry that may live at f (its home within H - 1 before f)
    // from its slot j < f to f, so j becomes the free slot, until f is within h's neighborhood.
    const std::size_t H = t.neighborhood;
    while (f - h >= H) {
      bool moved = false;
      for (std::size_t b = f - H + 1; b < f && b < t.buckets && !moved; ++b) {  // b > h: its segment is held
        const unsigned reach = static_cast<unsigned>(f - b);                         // 1..H-1 < 32
        const std::uint32_t candidates = t.hop(b).load(memory_order::relaxed) & ((1u << reach) - 1u);
        if (candidates == 0) continue;
        const unsigned d = static_cast<unsigned>(std::countr_zero(candidates));
        const std::size_t j = b + d;
        t.value(f).store(t.value(j).load(memory_order::relaxed), memory_order::release);
        t.key(f).store(t.key(j).load(memory_order::relaxed), memory_order::release);
        t.hop(b).fetch_or(1u << reach, memory_order::release);  // the entry is now reachable at both
        t.seg_of(b).timestamp.fetch_add(1, std::memory_order_acq_rel);
        t.hop(b).fetch_and(~(1u << d), memory_order::release);
        t.key(j).store(empty_bits_, memory_order::release);
        f = j;
        moved = true;
        moves_.fetch_add(1, std::memory_order_relaxed);
      }
      if (!moved) {
        unlock_all();
        return outcome::no_room;
      }
    }
    t.value(f).store(vb, memory_order::release);
    t.key(f).store(kb, memory_order::release);
    t.hop(h).fetch_or(1u << (f - h), memory_order::release);  // linearization point of the insert
    t.segments[first].count.fetch_add(1, std::memory_order_relaxed);
    st = status::inserted;
    unlock_all();
    return outcome::done;
  }

  /// Replaces `from` (if it is still the current table) by a rebuilt one: `buckets` buckets when
  /// non-zero, else twice the buckets when the table is at least half loaded, else the same with a
  /// new seed. Holds every segment lock of `from` while it copies, so no write is lost; lock-free
  /// finds keep reading `from`, which stays allocated until reclaim().
  void resize(table_t* from, std::size_t buckets) {
    std::lock_guard<std::mutex> g(resize_m_);
    if (current_.load(std::memory_order_acquire) != from) return;  // another thread resized it
    for (std::size_t i = 0; i < from->num_segments; ++i) detail::lock_segment(from->segments[i]);
    const auto entries = static_cast<std::size_t>(from->entries());
    if (buckets == 0) buckets = growth().grow_to(from->buckets, entries, 0);
    // Strong guarantee: `from` stays current and unlocked when anything below fails.
    auto unlock_from = [&] {
      for (std::size_t i = 0; i < from->num_segments; ++i) detail::unlock_segment(from->segments[i]);
    };
    try {
      tables_.reserve(tables_.size() + 1);  // the push_back below cannot fail after the switch
      warpkv::detail::rebuild_until_placed(buckets, from->seed, "warpkv: cpu::hopscotch_map could not place every key after 64 rebuilds",
                                           [&](std::size_t attempt_buckets, std::uint64_t seed) {
        buckets = attempt_buckets;  // named by the out-of-memory error below
        auto fresh = make_table(buckets, seed);
        bool ok = true;
        for (std::size_t s = 0; s < from->slots() && ok; ++s) {
          const key_bits k = from->key(s).load(memory_order::relaxed);
          if (k == empty_bits_) continue;
          status st{};
          ok = insert_into(*fresh, k, from->value(s).load(memory_order::relaxed), false, false, st) == outcome::done;
        }
        if (!ok) return false;
        current_.store(fresh.get(), std::memory_order_release);  // writers that now lock `from` see it is stale
        tables_.push_back(std::move(fresh));
        return true;
      });
    } catch (const std::bad_alloc&) {
      unlock_from();
      throw error(errc::out_of_memory, "warpkv: cpu::hopscotch_map cannot allocate a table of " +
                                           std::to_string(buckets) + " buckets");
    } catch (...) {
      unlock_from();
      throw;
    }
    unlock_from();
    rehashes_.fetch_add(1, std::memory_order_relaxed);
  }

  template <class P>
  static void check_inputs(std::size_t n, const P* p, const char* name) {
    require(n == 0 || p != nullptr, name, "is null but n > 0");
  }

  batch_summary insert_batch(const Key* keys, const Value* values, std::size_t n, status* out, bool assign) {
    check_inputs(n, keys, "keys");
    check_inputs(n, values, "values");
    reserve(size() + n);
    return run(n, out, [&](std::size_t i) { return insert_one(keys[i], values[i], assign); });
  }

  /// Runs op(i) for i in [0, n) on the pool, records statuses and counts them; afterwards frees
  /// retired tables, keeps the load factor and reports invalid keys when asked to.
  template <class Op>
  batch_summary run(std::size_t n, status* out, const Op& one) {
    std::array<std::atomic<std::uint64_t>, num_status_kinds> counts{};
    pool_->parallel_for(n, chunk, [&](std::size_t begin, std::size_t end) {
      std::array<std::uint64_t, num_status_kinds> local{};
      for (std::size_t i = begin; i < end; ++i) {
        const status s = one(i);
        if (out != nullptr) out[i] = s;
        ++local[static_cast<int>(s)];
      }
      for (int k = 0; k < num_status_kinds; ++k)
        if (local[k] != 0) counts[k].fetch_add(local[k], std::memory_order_relaxed);
    });
    batch_summary sum;
    for (int k = 0; k < num_status_kinds; ++k) sum.count[k] = counts[k].load(std::memory_order_relaxed);
    reclaim();
    if (sum[status::inserted] > 0 && growth().over_load(size(), capacity()))
      reserve(size());
    if (cfg_.throw_on_invalid_key && sum[status::invalid_key] > 0)
      throw error(errc::invalid_key, "warpkv: " + std::to_string(sum[status::invalid_key]) +
                                         " keys equal the empty-key sentinel (or op codes were invalid)");
    return sum;
  }

  hopscotch_config cfg_;
  Key empty_;
  key_bits empty_bits_;
  std::unique_ptr<detail::thread_pool> pool_;
  std::atomic<table_t*> current_{nullptr};
  std::vector<std::unique_ptr<table_t>> tables_;  ///< the current table last; older ones retired
  mutable std::mutex resize_m_;
  std::atomic<std::size_t> rehashes_{0};
  std::atomic<std::size_t> moves_{0};
};

}  // namespace warpkv::cpu
