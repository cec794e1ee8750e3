#pragma once
// Probing schemes of the open-addressing maps, and the probe sequence they drive.
//
// The table is read in *windows*: W consecutive slots starting at a multiple of W (W = the map's
// tile size times its slots per lane, L), lane r reading slots r*L .. r*L+L-1 of it (L = 1: one
// slot per lane; L = 2 or 4: one or two 16-byte loads of packed pairs per lane). Inside a window
// the probe order is slot s of every lane in lane order, for s = 0 .. L-1 (for one lane: the
// window's slots in address order). A key's probe sequence is a sequence of windows: the first is
// the window holding slot hash(k) mod capacity; window j+1 starts W * stride(j, hash) slots after
// window j (mod capacity). Because windows are aligned and the capacity is a power of two that W
// divides, a window never straddles the end of the table; the sequence wraps between windows.
//
// A policy is a type with
//   WARPKV_HD static constexpr std::size_t stride(std::size_t j, std::uint64_t hash);
// giving the distance, in windows, from window j to window j+1. The sequence must visit every
// window of the table within its first capacity/W windows (so an insert that probes them all
// finds any free slot).
#include <cstddef>
#include <cstdint>

#include "warpkv/core/config.hpp"

namespace warpkv {

/// Consecutive windows: offsets 0, 1, 2, ... (in windows) from the home window.
struct linear_probing {
  static constexpr const char* name = "linear";
  WARPKV_HD static constexpr std::size_t stride(std::size_t, std::uint64_t) { return 1; }
};

/// Triangular offsets 0, 1, 3, 6, 10, ... (in windows) from the home window. For a power-of-two
/// number of windows m, j(j+1)/2 mod m is a permutation of [0, m) over j in [0, m), so the first
/// m windows are the whole table, each once.
struct quadratic_probing {
  static constexpr const char* name = "quadratic";
  WARPKV_HD static constexpr std::size_t stride(std::size_t j, std::uint64_t) { return j + 1; }
};

namespace detail {

/// The windows of one key's probe sequence, in order (W slots each, L of them per lane).
template <class Probing, int W, int L = 1>
class probe_sequence {
  static_assert(L >= 1 && W % L == 0, "a window is a whole number of lanes' slots");

 public:
  WARPKV_HD probe_sequence(std::uint64_t hash, std::size_t mask)
      : hash_(hash), mask_(mask), start_(static_cast<std::size_t>(hash) & mask & ~static_cast<std::size_t>(W - 1)) {}

  /// First slot of the current window.
  WARPKV_HD std::size_t window() const { return start_; }
  /// The first slot lane `lane` reads in the current window (it reads L from there).
  WARPKV_HD std::size_t slot(unsigned lane) const { return start_ + static_cast<std::size_t>(lane) * L; }
  /// The r-th slot of the current window in probe order (r < W).
  WARPKV_HD std::size_t probe_slot(unsigned r) const { return slot(r % (W / L)) + r / (W / L); }
  /// Moves to the next window.
  WARPKV_HD void next() { start_ = (start_ + static_cast<std::size_t>(W) * Probing::stride(j_++, hash_)) & mask_; }

 private:
  std::uint64_t hash_;
  std::size_t mask_;
  std::size_t start_;
  std::size_t j_ = 0;
};

}  // namespace detail
}  // namespace warpkv
