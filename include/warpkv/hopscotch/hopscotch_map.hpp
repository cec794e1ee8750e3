#pragma once
// warpkv::hopscotch_map: a lock-free, warp-cooperative hopscotch key-value map
// (after GLHT) for the GPU, with the same code running on host threads.
//
// What it guarantees (argument and linearization points: docs/design/hopscotch.md):
//  - Every operation of a batch runs concurrently with the others and is linearizable.
//  - No insert is lost: when an insert finds no room (status::full inside the device
//    ref), the bulk API grows the table on the backend (rehash into more capacity,
//    with a fresh hash seed) and re-runs exactly the operations that were full.
//  - A key equal to the empty-key sentinel gets status::invalid_key and never touches
//    the table; with config.throw_on_invalid_key the call throws after the batch ran.
//  - Mutating bulk calls wait for their batch (they must learn whether anything was
//    full); find/contains on the cuda backend are stream-ordered and do not wait.
//    One map must not be used by two host threads at once.
// Pointers passed to the bulk API point to memory of the map's backend (device memory
// for cuda, host memory for host); the std::span overloads take host data on either.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "warpkv/core/batch.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/map_ops.hpp"
#include "warpkv/hopscotch/detail/storage_ops.hpp"
#include "warpkv/hopscotch/hopscotch_ref.hpp"

namespace warpkv {

struct hopscotch_config {
  double max_load_factor = 0.85;     ///< the table grows before size/capacity would pass this (H = 32
                                     ///< hopscotch blocks near 0.88: docs/perf.md)
  unsigned neighborhood = 32;        ///< H, 1..32: slots a key may sit from its home bucket
  std::size_t max_probe = 4096;      ///< how far an insert looks for a free slot to hop back
  std::uint64_t seed = 0;            ///< hash seed; growth picks new ones
  bool throw_on_invalid_key = false; ///< throw warpkv::error(invalid_key) after a batch that held one
};

template <hash_key Key, map_value Value, int TileSize = 4>
class hopscotch_map {
  static_assert(valid_tile_size<TileSize>, "TileSize must be 1, 2, 4, 8, 16 or 32");

 public:
  using key_type = Key;
  using mapped_type = Value;
  using config_type = hopscotch_config;
  using ref_type = hopscotch_ref<Key, Value>;
  using slot_type = typename ref_type::slot_type;
  static constexpr int tile_size = TileSize;

  /// A map with room for at least `capacity_hint` keys at the configured maximum load factor.
  explicit hopscotch_map(std::size_t capacity_hint, hopscotch_config cfg = {},
                         execution ex = execution::automatic(), Key empty_key = default_empty_key<Key>)
      : cfg_(cfg), ex_(ex), empty_(empty_key), seed_(cfg.seed) {
    require(cfg.max_load_factor > 0.0 && cfg.max_load_factor <= 1.0, "max_load_factor", "must be in (0, 1]");
    require(cfg.neighborhood >= 1 && cfg.neighborhood <= 32, "neighborhood", "must be in [1, 32]");
    require(cfg.max_probe >= cfg.neighborhood, "max_probe", "must be at least the neighborhood");
    allocate(capacity_for(capacity_hint), seed_);
  }

  // ---- bulk API over backend memory -------------------------------------------------
  batch_summary insert(const Key* keys, const Value* values, std::size_t n, status* out = nullptr) {
    check_inputs(n, keys, "keys");
    check_inputs(n, values, "values");
    reserve(size_ + n);
    return run(n, out, [=](const ref_type& r) { return detail::insert_op<ref_type, Key, Value>{r, keys, values, false}; });
  }
  batch_summary insert_or_assign(const Key* keys, const Value* values, std::size_t n, status* out = nullptr) {
    check_inputs(n, keys, "keys");
    check_inputs(n, values, "values");
    reserve(size_ + n);
    return run(n, out, [=](const ref_type& r) { return detail::insert_op<ref_type, Key, Value>{r, keys, values, true}; });
  }
  /// values_out[i] = value of keys[i], or Value{} when absent. Stream-ordered (no wait) on cuda.
  void find(const Key* keys, std::size_t n, Value* values_out, status* out = nullptr) {
    check_inputs(n, keys, "keys");
    run_readonly(n, out, detail::find_op<ref_type, Key, Value>{ref(), keys, values_out, nullptr});
  }
  void contains(const Key* keys, std::size_t n, bool* found_out) {
    check_inputs(n, keys, "keys");
    check_inputs(n, found_out, "found_out");
    run_readonly(n, nullptr, detail::find_op<ref_type, Key, Value>{ref(), keys, nullptr, found_out});
  }
  batch_summary erase(const Key* keys, std::size_t n, status* out = nullptr) {
    check_inputs(n, keys, "keys");
    return run(n, out, [=](const ref_type& r) { return detail::erase_op<ref_type, Key>{r, keys}; });
  }
  /// A mixed batch; all operations run concurrently. values_out (may be null) receives
  /// find results; an op code outside warpkv::op gets status::invalid_key.
  batch_summary execute(const op* ops, const Key* keys, const Value* values, std::size_t n, status* out,
                        Value* values_out = nullptr) {
    check_inputs(n, ops, "ops");
    check_inputs(n, keys, "keys");
    check_inputs(n, values, "values");
    return run(n, out, [=](const ref_type& r) {
      return detail::execute_op<ref_type, Key, Value>{r, ops, keys, values, values_out};
    });
  }

  // ---- convenience overloads over host data ---------------------------------------------
  std::vector<status> insert(std::span<const Key> keys, std::span<const Value> values) {
    require(keys.size() == values.size(), "values", "must have as many elements as keys");
    auto k = buffer<Key>::from_host(keys, ex_);
    auto v = buffer<Value>::from_host(values, ex_);
    return with_statuses(keys.size(), [&](status* s) { insert(k.data(), v.data(), keys.size(), s); });
  }
  std::vector<status> insert_or_assign(std::span<const Key> keys, std::span<const Value> values) {
    require(keys.size() == values.size(), "values", "must have as many elements as keys");
    auto k = buffer<Key>::from_host(keys, ex_);
    auto v = buffer<Value>::from_host(values, ex_);
    return with_statuses(keys.size(), [&](status* s) { insert_or_assign(k.data(), v.data(), keys.size(), s); });
  }
  /// Returns each key's status (found / not_found / invalid_key) and fills values (Value{} if absent).
  std::vector<status> find(std::span<const Key> keys, std::vector<Value>& values) {
    auto k = buffer<Key>::from_host(keys, ex_);
    buffer<Value> v(keys.size(), ex_);
    auto st = with_statuses(keys.size(), [&](status* s) { find(k.data(), keys.size(), v.data(), s); });
    values = v.to_vector();
    return st;
  }
  std::vector<status> erase(std::span<const Key> keys) {
    auto k = buffer<Key>::from_host(keys, ex_);
    return with_statuses(keys.size(), [&](status* s) { erase(k.data(), keys.size(), s); });
  }
  std::vector<status> execute(std::span<const op> ops, std::span<const Key> keys, std::span<const Value> values,
                              std::vector<Value>& values_out) {
    require(ops.size() == keys.size(), "keys", "must have as many elements as ops");
    require(values.size() == keys.size(), "values", "must have as many elements as ops");
    auto o = buffer<op>::from_host(ops, ex_);
    auto k = buffer<Key>::from_host(keys, ex_);
    auto v = buffer<Value>::from_host(values, ex_);
    buffer<Value> r(keys.size(), ex_);
    auto st = with_statuses(keys.size(),
                            [&](status* s) { execute(o.data(), k.data(), v.data(), keys.size(), s, r.data()); });
    values_out = r.to_vector();
    return st;
  }

  // ---- whole-table operations -----------------------------------------------------------
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] double load_factor() const { return static_cast<double>(size_) / static_cast<double>(capacity_); }
  [[nodiscard]] const hopscotch_config& config() const { return cfg_; }
  [[nodiscard]] const execution& exec() const { return ex_; }
  [[nodiscard]] Key empty_key() const { return empty_; }
  [[nodiscard]] std::uint64_t seed() const { return seed_; }
  /// Number of rehashes this map has done (growth, reserve, rehash).
  [[nodiscard]] std::size_t rehash_count() const { return rehashes_; }

  /// The device view, for user kernels. Invalidated by any call that may grow the table.
  [[nodiscard]] ref_type ref() const {
    return ref_type(slots_.data(), capacity_, cfg_.neighborhood, empty_, seed_, cfg_.max_probe);
  }

  void clear() {
    detail::init_storage<ref_type>(ex_, slots_.data(), capacity_, empty_);
    size_ = 0;
  }
  /// Makes room for n keys without passing the maximum load factor.
  void reserve(std::size_t n) {
    const std::size_t need = capacity_for(n);
    if (need > capacity_) rehash_to(need);
  }
  /// Rebuilds the table with at least `capacity` slots (never fewer than the keys need).
  void rehash(std::size_t capacity) { rehash_to(std::max(capacity_for(size_), round_capacity(capacity))); }

  /// Writes all entries to keys_out/values_out (backend memory, room for size()); returns the count.
  std::size_t retrieve_all(Key* keys_out, Value* values_out) const {
    return detail::collect_entries<ref_type>(ex_, slots_.data(), capacity_, to_bits(empty_), keys_out, values_out);
  }
  std::pair<std::vector<Key>, std::vector<Value>> retrieve_all() const {
    buffer<Key> k(std::max<std::size_t>(size_, 1), ex_);
    buffer<Value> v(std::max<std::size_t>(size_, 1), ex_);
    const std::size_t n = retrieve_all(k.data(), v.data());
    std::vector<Key> keys(n);
    std::vector<Value> values(n);
    k.copy_to_host(keys.data(), n);
    v.copy_to_host(values.data(), n);
    return {std::move(keys), std::move(values)};
  }

  /// Debug aid (copies the table to the host): checks every structural invariant and returns
  /// a description of the first violation, or an empty string. Call between batches only.
  [[nodiscard]] std::string validate() const {
    return detail::validate_table(ref(), slots_.to_vector(), size_);
  }

 private:
  static std::size_t round_capacity(std::size_t n) {
    std::size_t c = 64;  // at least two neighborhoods, so wrap-around never aliases a bucket with itself
    while (c < n) {
      if (c > (std::size_t{1} << 40)) throw error(errc::out_of_memory, "warpkv: capacity " + std::to_string(n) + " too large");
      c <<= 1;
    }
    return c;
  }
  std::size_t capacity_for(std::size_t keys) const {
    const double slots = std::ceil(static_cast<double>(keys) / cfg_.max_load_factor);
    if (!(slots < 1e15)) throw error(errc::out_of_memory, "warpkv: capacity for " + std::to_string(keys) + " keys overflows");
    return round_capacity(static_cast<std::size_t>(slots));
  }
  template <class P>
  static void check_inputs(std::size_t n, const P* p, const char* name) {
    require(n == 0 || p != nullptr, name, "is null but n > 0");
  }

  void allocate(std::size_t capacity, std::uint64_t seed) {
    slots_ = buffer<slot_type>(capacity, ex_);
    capacity_ = capacity;
    seed_ = seed;
    detail::init_storage<ref_type>(ex_, slots_.data(), capacity_, empty_);
  }

  template <class F>
  std::vector<status> with_statuses(std::size_t n, F&& f) {
    buffer<status> s(n, ex_);
    f(s.data());
    return s.to_vector();
  }

  template <class Op>
  void run_readonly(std::size_t n, status* out, const Op& op) {
    if (n == 0) return;
    buffer<status> tmp;
    if (out == nullptr) {
      tmp = buffer<status>(n, ex_);
      out = tmp.data();
    }
    launch<TileSize>(ex_, (n + TileSize - 1) / TileSize, detail::batch_body<TileSize, Op>{op, n, out, nullptr, false});
    if (ex_.where == backend::host) check_invalid_host(out, n);
  }
  void check_invalid_host(const status* s, std::size_t n) const {
    if (!cfg_.throw_on_invalid_key) return;
    for (std::size_t i = 0; i < n; ++i)
      if (s[i] == status::invalid_key) throw error(errc::invalid_key, "warpkv: key at index " + std::to_string(i) + " is invalid");
  }

  /// Runs a mutating batch; grows and re-runs the operations that came back full until none is.
  template <class MakeOp>
  batch_summary run(std::size_t n, status* out, const MakeOp& make) {
    if (n == 0) return {};
    buffer<status> tmp;
    if (out == nullptr) {
      tmp = buffer<status>(n, ex_);
      out = tmp.data();
    }
    batch_summary part = launch_batch<TileSize>(ex_, n, make(ref()), out);
    batch_summary total = part;
    account(part);
    for (int round = 0; part[status::full] > 0; ++round) {
      if (round >= 64)
        throw error(errc::capacity, "warpkv: hopscotch_map could not place " + std::to_string(part[status::full]) +
                                        " keys after 64 growth rounds");
      grow(part[status::full]);
      const std::uint64_t was_full = part[status::full];
      part = launch_batch<TileSize>(ex_, n, make(ref()), out, /*only_full=*/true);
      total.count[static_cast<int>(status::full)] -= was_full;
      total += part;
      account(part);
    }
    if (static_cast<double>(size_) > cfg_.max_load_factor * static_cast<double>(capacity_)) reserve(size_);
    if (cfg_.throw_on_invalid_key && total[status::invalid_key] > 0)
      throw error(errc::invalid_key, "warpkv: " + std::to_string(total[status::invalid_key]) +
                                         " keys equal the empty-key sentinel (or op codes were invalid)");
    return total;
  }
  void account(const batch_summary& s) { size_ += s[status::inserted]; size_ -= s[status::erased]; }

  /// Called when `pending` inserts found no room: enough capacity for all of them, doubled if the
  /// table is loaded, otherwise only a new seed (keys that collide under one hash rarely collide
  /// under another).
  void grow(std::uint64_t pending) {
    const bool loaded = load_factor() >= 0.5 * cfg_.max_load_factor;
    rehash_to(std::max(loaded ? capacity_ * 2 : capacity_, capacity_for(size_ + pending)));
  }

  void rehash_to(std::size_t capacity) {
    buffer<slot_type> old_slots = std::move(slots_);
    const std::size_t old_capacity = capacity_;
    buffer<status> statuses(old_capacity, ex_);
    std::uint64_t seed = seed_;
    for (int attempt = 0;; ++attempt) {
      if (attempt >= 64) throw error(errc::capacity, "warpkv: rehash could not place every key");
      seed = fmix64(seed + 0x9e3779b97f4a7c15ull);
      allocate(capacity, seed);
      const auto s = launch_batch<TileSize>(
          ex_, old_capacity, detail::reinsert_op<ref_type>{ref(), old_slots.data(), to_bits(empty_)}, statuses.data());
      if (s[status::full] == 0) break;
      if (attempt % 2 == 1) capacity *= 2;  // alternate: new seed, then new seed with more room
    }
    ++rehashes_;
  }

  hopscotch_config cfg_;
  execution ex_;
  Key empty_;
  std::uint64_t seed_;
  buffer<slot_type> slots_;  // hop word of bucket i and slot i side by side
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
  std::size_t rehashes_ = 0;
};

}  // namespace warpkv
