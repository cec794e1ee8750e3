#pragma once
// Order-independent sums: k-means adds floats into per-cluster sums from many threads at once.
// Float atomics would make the sums (and then centroids and labels) depend on the order the
// hardware happens to pick. Instead every term is rounded once to a 64-bit fixed-point integer
// (value * 2^s, s chosen from the data's largest magnitude and n so that no sum can overflow),
// and integer addition is associative: same input, same sums, on every backend and every run.
// Resolution: 2^-(61 - ceil(log2 n)) of the largest magnitude, about 1e-11 relative at n = 2^24,
// far below float32 rounding of the result.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"

namespace warpkv::detail {

WARPKV_HD inline std::uint64_t to_fixed(double scaled) {
#if WARPKV_DEVICE_PASS
  return static_cast<std::uint64_t>(__double2ll_rn(scaled));
#else
  return static_cast<std::uint64_t>(std::llrint(scaled));
#endif
}

inline double from_fixed(std::uint64_t bits, double scale) {
  return static_cast<double>(static_cast<std::int64_t>(bits)) / scale;
}

/// Scale 2^s such that any `terms` values of magnitude <= bound sum without overflow.
inline double fixed_scale(double bound, std::size_t terms) {
  int log_terms = 0;
  while ((std::size_t{1} << log_terms) < terms + 1 && log_terms < 62) ++log_terms;
  const int bits = 61 - log_terms;  // |term| <= 2^bits, so |sum| <= 2^61
  if (!(bound > 0)) return std::ldexp(1.0, bits);
  int e = 0;
  (void)std::frexp(bound, &e);  // bound < 2^e
  return std::ldexp(1.0, bits - e);
}

WARPKV_HD inline void add_fixed(std::uint64_t* p, std::uint64_t v) {
  atomic_ref<std::uint64_t>(*p).fetch_add(v, memory_order::relaxed);
}

}  // namespace warpkv::detail
