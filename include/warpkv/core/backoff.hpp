#pragma once
// Bounded exponential back-off for retry loops under contention: the GPU sleeps the warp
// (__nanosleep), the host yields its thread. Lets a herd of colliding writers thin out.
#include "warpkv/core/config.hpp"

#if !WARPKV_DEVICE_PASS
#include <thread>
#endif

namespace warpkv {

WARPKV_HD inline void backoff(int attempt) {
#if WARPKV_DEVICE_PASS
  const unsigned shift = attempt < 10 ? static_cast<unsigned>(attempt) : 10u;
  __nanosleep(32u << shift);  // 32 ns .. 32 us
#else
  (void)attempt;
  std::this_thread::yield();
#endif
}

}  // namespace warpkv
