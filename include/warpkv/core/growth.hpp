#pragma once
// The growth policy every warpkv map with a growable table shares (the bulk_map_base maps, the
// Vulkan linear_map, cpu::hopscotch_map): how a table is sized, when and how far it grows, how a
// rebuild picks seeds, and the loop that makes a mutating batch lose no insert.
//
//   round_capacity(n, limit, who)   smallest power of two >= n, at least 64 (two full
//                                   neighborhoods/windows, so wrap-around never aliases a bucket
//                                   with itself); errc::out_of_memory past `limit`
//   growth_policy                   the sizing rule over a maximum load factor:
//     capacity_for(keys)            slots for `keys` keys at the maximum load factor
//     over_load(occupied, slots)    whether `occupied` slots pass it
//     grow_to(slots, keys, pending) the capacity a table grows to when `pending` inserts found no
//                                   room: enough for all of them, doubled if the table is at
//                                   least half loaded, otherwise the same (only a new seed: keys
//                                   that collide under one hash rarely collide under another)
//   rebuild_until_placed(...)       a rebuild's attempts: a new seed, then a new seed with twice
//                                   the room, alternately, until every entry fits; 64 attempts
//                                   without success throw errc::capacity
//   rerun_until_placed(...)         a mutating batch's loop: after the launch, while operations
//                                   came back `full`, grow and re-run exactly those operations;
//                                   64 growth rounds without success throw errc::capacity with a
//                                   message naming the map and the keys it could not place
//
// Nothing is lost on failure: the policy decides, the map owns the tables. A map rebuilds beside
// its old table and puts the old one back when an attempt throws (strong guarantee); a batch whose
// growth throws leaves the map consistent: the operations still `full` did not run, all others
// did and were counted.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "warpkv/core/batch.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv::detail {

/// Growth rounds of one batch, and attempts of one rebuild, before errc::capacity.
inline constexpr int max_growth_rounds = 64;
inline constexpr int max_rebuild_attempts = 64;
/// The largest table of the CUDA and host backends (slots).
inline constexpr std::size_t default_max_capacity = std::size_t{1} << 41;

/// Smallest power of two >= n, and at least 64. A capacity of `limit` or more is refused with
/// errc::out_of_memory ("<who>: capacity <n> too large").
inline std::size_t round_capacity(std::size_t n, std::size_t limit = default_max_capacity, const char* who = "warpkv") {
  std::size_t c = 64;
  while (c < n) {
    if (c >= limit) throw error(errc::out_of_memory, std::string(who) + ": capacity " + std::to_string(n) + " too large");
    c <<= 1;
  }
  return c;
}

/// The seed of a rebuild's next attempt.
inline std::uint64_t next_seed(std::uint64_t seed) { return fmix64(seed + 0x9e3779b97f4a7c15ull); }

/// The sizing rule of a table kept below `max_load_factor` (in (0, 1]; the map checks it).
struct growth_policy {
  double max_load_factor = 1.0;
  std::size_t max_capacity = default_max_capacity;  ///< round_capacity's limit
  const char* who = "warpkv";                       ///< names the backend in round_capacity's error

  [[nodiscard]] std::size_t round(std::size_t n) const { return round_capacity(n, max_capacity, who); }

  /// Slots for `keys` keys without passing the maximum load factor.
  [[nodiscard]] std::size_t capacity_for(std::size_t keys) const {
    const double slots = std::ceil(static_cast<double>(keys) / max_load_factor);
    if (!(slots < 1e15)) throw error(errc::out_of_memory, "warpkv: capacity for " + std::to_string(keys) + " keys overflows");
    return round(static_cast<std::size_t>(slots));
  }

  /// Whether `occupied` slots of a table of `capacity` pass the maximum load factor.
  [[nodiscard]] bool over_load(std::size_t occupied, std::size_t capacity) const {
    return static_cast<double>(occupied) > max_load_factor * static_cast<double>(capacity);
  }

  /// The capacity a table of `capacity` slots holding `keys` keys grows to when `pending` inserts
  /// found no room (0: a rebuild asked for by a failed insert that counts itself among `keys`).
  [[nodiscard]] std::size_t grow_to(std::size_t capacity, std::size_t keys, std::uint64_t pending) const {
    const bool loaded = static_cast<double>(keys) >= 0.5 * max_load_factor * static_cast<double>(capacity);
    const std::size_t need = capacity_for(keys + static_cast<std::size_t>(pending));
    const std::size_t grown = loaded ? capacity * 2 : capacity;
    return grown < need ? need : grown;
  }
};

/// The attempts of one rebuild into `capacity` slots: attempt(capacity, seed) builds a table of
/// `capacity` slots hashed with `seed` and returns whether every entry found a place. Seeds follow
/// `seed` (next_seed); after every second failed attempt the capacity doubles. Returns once an
/// attempt succeeded; after max_rebuild_attempts failures throws errc::capacity with `failure`.
/// An attempt that throws ends the rebuild with its error (the map then restores its old table).
template <class Attempt>
void rebuild_until_placed(std::size_t capacity, std::uint64_t seed, const char* failure, Attempt&& attempt) {
  for (int a = 0;; ++a) {
    if (a >= max_rebuild_attempts) throw error(errc::capacity, failure);
    seed = next_seed(seed);
    if (attempt(capacity, seed)) return;
    if (a % 2 == 1) capacity *= 2;
  }
}

/// `total` after the operations counted `full` in it (`was_full` of them) ran again with outcome
/// `part`: their `full` is replaced by what they reported now.
inline void replace_full(batch_summary& total, std::uint64_t was_full, const batch_summary& part) {
  total.count[static_cast<int>(status::full)] -= was_full;
  total += part;
}

/// Names a map in the growth loop's error: prefix then name ("warpkv: " "cuckoo_map").
struct map_label {
  const char* prefix = "";
  const char* name = "";
};

/// Never re-runs a batch without growth (the default of rerun_until_placed's `again`).
struct no_rerun {
  bool operator()() const { return false; }
};

/// The loop after a mutating batch's launch(es), which reported `part` (accounted already, and
/// part of `total`): while operations came back `full`, grow(full count) makes room and
/// relaunch(full count) re-runs exactly the operations whose status is `full` (and returns their
/// counts);
/// account(counts) books each re-run. A map whose batches may also leave operations to re-run
/// without growth (the Vulkan map's inserts that met a pending claim) passes `again`, asked when
/// nothing is full: true re-runs once more (it bounds its own re-runs). After max_growth_rounds
/// growth rounds with keys still full: errc::capacity, "<prefix><name> could not place <n> keys
/// after 64 growth rounds"; the map stays consistent (the `full` operations did not run).
/// Returns the batch's counts, every operation counted once by its final status.
template <class Relaunch, class Grow, class Account, class Again = no_rerun>
batch_summary rerun_until_placed(batch_summary total, batch_summary part, map_label who, Relaunch&& relaunch,
                                 Grow&& grow, Account&& account, Again&& again = {}) {
  for (int growths = 0;;) {
    const std::uint64_t was_full = part[status::full];
    if (was_full > 0) {
      if (growths++ >= max_growth_rounds)
        throw error(errc::capacity, std::string(who.prefix) + who.name + " could not place " + std::to_string(was_full) +
                                        " keys after " + std::to_string(max_growth_rounds) + " growth rounds");
      grow(was_full);
    } else if (!again()) {
      return total;
    }
    part = relaunch(was_full);
    replace_full(total, was_full, part);
    account(part);
  }
}

}  // namespace warpkv::detail
