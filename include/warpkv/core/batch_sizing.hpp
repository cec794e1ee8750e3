#pragma once
// Sizing a mixed batch before it runs: how many of its operations may insert, and about how many
// distinct keys they carry (a HyperLogLog sketch of 1024 registers over the inserting ops' keys,
// standard error about 3 %). A map grows for min(inserting ops, distinct estimate) new keys up
// front, so a batch of fresh keys into a tiny table costs what it costs in a table sized for it,
// while a batch of hot keys (many inserts of few keys) does not blow the table up.
// One pass over ops and keys; a register is written only when the pass raises it (rare after
// the first few thousand keys), so the atomics are few.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/batch_partition.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/table_passes.hpp"

namespace warpkv::detail {

inline constexpr unsigned sketch_bits = 10;
inline constexpr std::size_t sketch_registers = std::size_t{1} << sketch_bits;

/// Adds a key to the sketch's 1024 registers (each holds the largest rank seen; a register is
/// written only when this key raises it).
template <class Key>
WARPKV_HD void sketch_key(std::uint32_t* registers, Key key) {
  const std::uint64_t h = fmix64(static_cast<std::uint64_t>(to_bits(key)) + 0x9e3779b97f4a7c15ull);
  const std::size_t reg = static_cast<std::size_t>(h >> (64 - sketch_bits));
  const std::uint64_t rest = (h << sketch_bits) | (std::uint64_t{1} << (sketch_bits - 1));
  std::uint32_t rank = 1;
  while ((rest & (std::uint64_t{1} << (64 - rank))) == 0) ++rank;  // leading zeros + 1
  atomic_ref<std::uint32_t> r(registers[reg]);
  std::uint32_t seen = r.load(memory_order::relaxed);
  while (seen < rank && !r.compare_exchange(seen, rank, memory_order::relaxed)) {
  }
}

/// Operation i of the sizing pass: `inserted` for an op that may insert (its key goes into the
/// sketch), `not_found` for the rest. launch_batch counts the statuses per warp, so the pass
/// costs no atomic per op.
template <class Key>
struct sketch_inserts_op {
  const op* ops;
  const Key* keys;
  std::uint32_t* registers;
  template <class Tile>
  WARPKV_HD status operator()(const Tile&, std::size_t i) const {
    if (ops[i] != op::insert && ops[i] != op::insert_or_assign) return status::not_found;
    sketch_key(registers, keys[i]);
    return status::inserted;
  }
};

/// The partition pass of a mixed batch (core/batch_partition.hpp) that also sketches the keys of
/// the ops that may insert (the writes list): the sizing a synchronous mixed batch needs, in the
/// launch and wait the partition costs anyway (a pass of its own cost the chained map's 1e5-op
/// batches ~0.05-0.1 ms, session 22, call A).
template <class Key>
struct sketching_op_kind_sorter : op_kind_sorter {
  const Key* keys;
  std::uint32_t* registers;
  WARPKV_HD void put(unsigned q, std::size_t pos, std::uint32_t idx) const {
    op_kind_sorter::put(q, pos, idx);
    if (q == static_cast<unsigned>(op_list::writes)) sketch_key(registers, keys[idx]);
  }
};
template <class Key>
void partition_and_sketch_ops(const execution& ex, const op* ops, const Key* keys, std::size_t n,
                              std::uint32_t* reads_and_erases, std::uint32_t* writes, unsigned long long* counts,
                              std::uint32_t* registers) {
  sort_into_lists(ex, sketching_op_kind_sorter<Key>{{ops, n, reads_and_erases, writes}, keys, registers}, n, counts);
}

struct insert_estimate {
  std::uint64_t inserts = 0;   ///< ops that may insert (insert, insert_or_assign)
  std::uint64_t distinct = 0;  ///< estimated distinct keys among them (never above inserts)
};

/// The estimate from a sketch's registers (host copies) over `inserts` inserting ops.
inline insert_estimate estimate_from_sketch(const std::uint32_t* h, std::uint64_t inserts) {
  insert_estimate e;
  e.inserts = inserts;
  const double m = static_cast<double>(sketch_registers);
  double sum = 0.0;
  std::size_t zeros = 0;
  for (std::size_t j = 0; j < sketch_registers; ++j) {
    sum += std::ldexp(1.0, -static_cast<int>(h[j]));
    zeros += h[j] == 0 ? 1 : 0;
  }
  double est = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
  if (est <= 2.5 * m && zeros > 0) est = m * std::log(m / static_cast<double>(zeros));  // small-range correction
  e.distinct = std::min<std::uint64_t>(e.inserts, static_cast<std::uint64_t>(std::ceil(est)));
  return e;
}

/// One pass over a mixed batch in the backend's memory (counted in `counters`); waits for it.
template <class Key>
insert_estimate estimate_inserts(const execution& ex, const op* ops, const Key* keys, std::size_t n,
                                 batch_counters& counters) {
  buffer<std::uint32_t> registers(sketch_registers, ex);
  fill_words<std::uint32_t>(ex, registers.data(), registers.size(), 0u);
  const batch_summary s = launch_batch<1, sketch_inserts_op<Key>, batch_shape::op_per_tile>(
      ex, n, sketch_inserts_op<Key>{ops, keys, registers.data()}, nullptr, counters);
  std::array<std::uint32_t, sketch_registers> h{};
  registers.copy_to_host(h.data(), h.size());
  return estimate_from_sketch(h.data(), s[status::inserted]);
}

}  // namespace warpkv::detail
