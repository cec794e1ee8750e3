// The map/ref contract (core/map_concepts.hpp): every map of the library satisfies it, a minimal
// new map built only from what the contract names satisfies it (and works: it grows through the
// shared growth policy), and maps or refs that lack a member do not. Host-only translation unit:
// the checks are compile-time, the minimal map runs on the host backend.
#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "warpkv/chained/chained_map.hpp"
#include "warpkv/core/bulk_map.hpp"
#include "warpkv/core/growth.hpp"
#include "warpkv/core/map_concepts.hpp"
#include "warpkv/core/slot_layout.hpp"
#include "warpkv/cuckoo/cuckoo_map.hpp"
#include "warpkv/hopscotch/hopscotch_map.hpp"
#include "warpkv/open_addressing/linear_map.hpp"
#include "warpkv/open_addressing/quadratic_map.hpp"

namespace warpkv::testing {
namespace {

// ---- every map and ref of the library --------------------------------------------------------
using u32 = std::uint32_t;
using u64 = std::uint64_t;

static_assert(slot_array_ref<open_addressing_ref<u32, u32, linear_probing, 4>>);
static_assert(slot_array_ref<open_addressing_ref<u64, u64, linear_probing, 4>>);
static_assert(slot_array_ref<open_addressing_ref<u32, u32, quadratic_probing, 8>>);
static_assert(slot_array_ref<cuckoo_ref<u32, u32>>);
static_assert(slot_array_ref<cuckoo_ref<u64, u64>>);
static_assert(slot_array_ref<hopscotch_ref<u32, u32>>);
static_assert(slot_array_ref<hopscotch_ref<u64, u32>>);
// chained_map's table is bucket heads and node lists, not one slot array: it fits the ops only.
static_assert(device_map_ref<chained_ref<u32, u32, chained_alloc::pool>>);
static_assert(device_map_ref<chained_ref<u64, u64, chained_alloc::device>>);
static_assert(!slot_array_ref<chained_ref<u32, u32, chained_alloc::pool>>);
// The refs' members are templates over any tile: a warp-wide host tile checks too.
static_assert(slot_array_ref<cuckoo_ref<u32, u32>, host_tile<8>>);

static_assert(bulk_map<linear_map<u32, u32>>);
static_assert(bulk_map<linear_map<u64, u64, 8>>);
static_assert(bulk_map<quadratic_map<u32, u32>>);
static_assert(bulk_map<cuckoo_map<u32, u32>>);
static_assert(bulk_map<cuckoo_map<u64, u64, 4>>);
static_assert(bulk_map<hopscotch_map<u32, u32>>);
static_assert(bulk_map<hopscotch_map<u64, u32>>);
// The bucketized layout: its table is buckets, not one slot array the base rebuilds (its own
// rehash_to and retrieve_all, as chained_map).
static_assert(device_map_ref<hopscotch_bucket_ref<u32, u32>, host_tile<4>>);
static_assert(!slot_array_ref<hopscotch_bucket_ref<u32, u32>>);
static_assert(bulk_map<hopscotch_map<u32, u32, 1, hopscotch_buckets>>);
static_assert(bulk_map<hopscotch_map<u32, u32, 4, hopscotch_buckets>>);
static_assert(bulk_map<chained_map<u32, u32>>);
static_assert(bulk_map<chained_map<u64, u64, chained_alloc::device>>);

// ---- a minimal new map: what the contract names, nothing else ---------------------------------
// Linear probing over packed 8-byte pairs (core/slot_layout.hpp), one lane per operation; an
// insert claims an empty slot by one CAS of the pair, erase leaves a tombstone. Nothing is ever
// moved while a batch runs, so a key is never stored twice.
struct toy_ref {
  using key_type = u32;
  using mapped_type = u32;
  using key_bits = u32;
  using layout = detail::pair_slot_layout<u32, u32, detail::slot_header::none>;
  using slot_type = layout::slot;
  static constexpr u32 empty = ~u32{0};
  static constexpr u32 erased = ~u32{0} - 1;

  slot_type* slots = nullptr;
  std::size_t mask = 0;
  std::uint64_t seed = 0;

  [[nodiscard]] std::size_t capacity() const { return mask + 1; }
  static key_bits stored_key(const slot_type& s) { return layout::key_of(s); }
  static u32 stored_value(const slot_type& s) { return layout::value_of(s); }
  static void init_slot(slot_type& s, key_type e) { layout::init(s, e); }

  template <class Tile>
  status insert(const Tile& t, u32 k, u32 v) const {
    return put(t, k, v, false);
  }
  template <class Tile>
  status insert_or_assign(const Tile& t, u32 k, u32 v) const {
    return put(t, k, v, true);
  }
  template <class Tile>
  status find(const Tile&, u32 k, u32* out = nullptr) const {
    if (k == empty || k == erased) return status::invalid_key;
    for (std::size_t p = 0, i = home(k); p <= mask; ++p, i = (i + 1) & mask) {
      const auto e = layout::load(slots[i], memory_order::acquire);
      if (e.key == empty) return status::not_found;
      if (e.key == k) {
        if (out != nullptr) *out = e.value;
        return status::found;
      }
    }
    return status::not_found;
  }
  template <class Tile>
  status contains(const Tile& t, u32 k) const {
    return find(t, k);
  }
  template <class Tile>
  status erase(const Tile&, u32 k) const {
    if (k == empty || k == erased) return status::invalid_key;
    for (std::size_t p = 0, i = home(k); p <= mask; ++p, i = (i + 1) & mask) {
      auto e = layout::load(slots[i], memory_order::acquire);
      if (e.key == empty) return status::not_found;
      if (e.key != k) continue;
      std::uint64_t seen = layout::pack(e.key, e.value);
      while (!atomic_ref<std::uint64_t>(slots[i].pair).compare_exchange(seen, layout::pack(erased, 0),
                                                                           memory_order::acq_rel)) {
        if (layout::unpack(seen).key != k) return status::not_found;  // erased by another op
      }
      return status::erased;
    }
    return status::not_found;
  }

 private:
  [[nodiscard]] std::size_t home(u32 k) const { return static_cast<std::size_t>(fmix64(k ^ seed)) & mask; }
  template <class Tile>
  status put(const Tile&, u32 k, u32 v, bool assign) const {
    if (k == empty || k == erased) return status::invalid_key;
    for (std::size_t p = 0, i = home(k); p <= mask; ++p, i = (i + 1) & mask) {
      auto e = layout::load(slots[i], memory_order::acquire);
      if (e.key == empty) {
        std::uint64_t seen = layout::pack(empty, 0);
        if (atomic_ref<std::uint64_t>(slots[i].pair).compare_exchange(seen, layout::pack(k, v), memory_order::acq_rel))
          return status::inserted;
        e = layout::unpack(seen);  // taken meanwhile: by k, or by another key
      }
      if (e.key != k) continue;
      if (!assign) return status::found;
      std::uint64_t seen = layout::pack(e.key, e.value);
      while (!atomic_ref<std::uint64_t>(slots[i].pair).compare_exchange(seen, layout::pack(k, v), memory_order::acq_rel))
        if (layout::unpack(seen).key != k) return status::full;  // erased meanwhile: not in this toy
      return status::assigned;
    }
    return status::full;  // no empty slot: the bulk API grows and re-runs this op
  }
};
static_assert(slot_array_ref<toy_ref>);

struct toy_config {
  double max_load_factor = 0.9;
  std::uint64_t seed = 0;
  bool throw_on_invalid_key = false;
};

class toy_map : public detail::bulk_map_base<toy_map, toy_ref, toy_config, 1> {
  using base = detail::bulk_map_base<toy_map, toy_ref, toy_config, 1>;
  friend base;

 public:
  static constexpr const char* map_name = "toy_map";
  toy_map(std::size_t capacity_hint, toy_config cfg, execution ex) : base(cfg, ex, toy_ref::empty, toy_ref::erased) {
    allocate(capacity_for(capacity_hint), cfg.seed);
  }
  [[nodiscard]] toy_ref ref() const { return toy_ref{slots_.data(), capacity_ - 1, seed_}; }

 private:
  void reset_table(bool) { detail::init_storage<toy_ref>(ex_, slots_.data(), capacity_, empty_); }
};
static_assert(bulk_map<toy_map>);

// ---- what lacks a member does not satisfy the contract ----------------------------------------
struct ref_without_erase {
  using key_type = u32;
  using mapped_type = u32;
  template <class Tile>
  status insert(const Tile&, u32, u32) const;
  template <class Tile>
  status insert_or_assign(const Tile&, u32, u32) const;
  template <class Tile>
  status find(const Tile&, u32, u32* = nullptr) const;
  template <class Tile>
  status contains(const Tile&, u32) const;
};
static_assert(!device_map_ref<ref_without_erase>);

// Declares a fast bulk insert but does not offer it.
struct ref_with_false_fast_claim : toy_ref {
  static constexpr bool fast_bulk_inserts = true;
};
static_assert(!device_map_ref<ref_with_false_fast_claim>);

// Every op, but no slot array the base could allocate and rebuild.
struct ref_without_slots : ref_without_erase {
  using slot_type = u64;
  template <class Tile>
  status erase(const Tile&, u32) const;
};
static_assert(device_map_ref<ref_without_slots>);
static_assert(!slot_array_ref<ref_without_slots>);

// A map that leaves out one thing the contract names; with nothing left out it satisfies it.
enum class omit { nothing, reset_table, map_name, friendship };
struct named_map {
  static constexpr const char* map_name = "partial_map";
};
struct unnamed_map {};
template <omit O, class R = toy_ref>
class partial_map : public detail::bulk_map_base<partial_map<O, R>, R, toy_config, 1>,
                    public std::conditional_t<O == omit::map_name, unnamed_map, named_map> {
  using base = detail::bulk_map_base<partial_map, R, toy_config, 1>;
  // A friend declaration that names a non-class type is ignored: omit::friendship befriends
  // nobody, so the base cannot call the private hooks.
  friend std::conditional_t<O == omit::friendship, int, base>;

 public:
  [[nodiscard]] R ref() const { return {}; }

 private:
  void reset_table(bool)
    requires(O != omit::reset_table)
  {}
};
static_assert(bulk_map<partial_map<omit::nothing>>);
static_assert(!bulk_map<partial_map<omit::reset_table>>);  // the base could not initialise a table
static_assert(!bulk_map<partial_map<omit::map_name>>);     // its messages could not name the map
static_assert(!bulk_map<partial_map<omit::friendship>>);   // its hooks are out of the base's reach
// A ref without a slot array, and a map that does not rebuild its table itself.
static_assert(!bulk_map<partial_map<omit::nothing, ref_without_slots>>);

// A side array taken without the hook that puts it back.
class map_with_half_side : public detail::bulk_map_base<map_with_half_side, toy_ref, toy_config, 1> {
  using base = detail::bulk_map_base<map_with_half_side, toy_ref, toy_config, 1>;
  friend base;

 public:
  static constexpr const char* map_name = "map_with_half_side";
  [[nodiscard]] toy_ref ref() const { return {}; }

 private:
  void reset_table(bool) {}
  std::vector<int> take_side() { return {}; }
};
static_assert(!bulk_map<map_with_half_side>);

// ---- the minimal map runs: batches, growth through the shared policy, the contract's passes ---
TEST(MapConcepts, MinimalMapWorksThroughTheBulkEngine) {
  toy_map m(16, toy_config{}, execution::host());
  EXPECT_EQ(m.capacity(), 64u);
  constexpr u32 n = 5000;  // far past the first table: several growth rounds and rehashes
  std::vector<u32> keys(n), values(n);
  for (u32 i = 0; i < n; ++i) {
    keys[i] = i * 7919u + 1u;
    values[i] = i;
  }
  // Inserted in batches: each reserves room first (the growth policy's capacity_for).
  for (u32 b = 0; b < n; b += 1000) {
    const auto st = m.insert(std::span<const u32>(keys).subspan(b, 1000), std::span<const u32>(values).subspan(b, 1000));
    for (const status s : st) ASSERT_EQ(s, status::inserted);
  }
  EXPECT_EQ(m.size(), n);
  EXPECT_GE(m.capacity(), detail::growth_policy{0.9}.capacity_for(n));
  EXPECT_GT(m.rehash_count(), 0u);
  std::vector<u32> got;
  const auto st = m.find(keys, got);
  for (u32 i = 0; i < n; ++i) {
    ASSERT_EQ(st[i], status::found) << i;
    ASSERT_EQ(got[i], values[i]) << i;
  }
  const auto er = m.erase(std::span<const u32>(keys).first(100));
  for (const status s : er) ASSERT_EQ(s, status::erased);
  EXPECT_EQ(m.size(), n - 100);
  m.rehash(2 * m.capacity());  // the base's rebuild over the ref's stored_key / stored_value
  auto [k, v] = m.retrieve_all();
  EXPECT_EQ(k.size(), n - 100);
  for (std::size_t i = 0; i < k.size(); ++i) ASSERT_EQ((k[i] - 1u) / 7919u, v[i]);
}

}  // namespace
}  // namespace warpkv::testing
