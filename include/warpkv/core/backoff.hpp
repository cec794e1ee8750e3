#pragma once
// Bounded exponential back-off for retry loops under contention: the GPU sleeps the warp
// (__nanosleep), the host yields its thread. Lets a herd of colliding writers thin out.
#include <cstdint>

#include "warpkv/core/config.hpp"

#if !WARPKV_DEVICE_PASS
#include <thread>
#endif

namespace warpkv {

/// Pauses without touching memory for about `units` short intervals: 32 ns each on the GPU (the
/// warp scheduler runs others meanwhile), one thread yield each on the host backend (CI runs far
/// more lane threads than cores).
WARPKV_HD inline void pause(std::uint32_t units) {
#if WARPKV_DEVICE_PASS
  __nanosleep(units * 32u);
#else
  if (units == 0) units = 1;
  for (std::uint32_t i = 0; i < units; ++i) std::this_thread::yield();
#endif
}

/// Exponential back-off after `attempt` failures: 32 ns .. 32 us on the GPU, one yield on the host.
WARPKV_HD inline void backoff(int attempt) {
#if WARPKV_DEVICE_PASS
  pause(1u << (attempt < 10 ? static_cast<unsigned>(attempt) : 10u));
#else
  (void)attempt;
  pause(1);
#endif
}

}  // namespace warpkv
