#pragma once
// Test hooks that make the host-side resource acquisitions of warpkv fail on purpose, so the
// tests can check that every call that allocates leaves a structure exactly as it was when an
// allocation (or a host lane thread) cannot be had. Unarmed (the default) they cost one relaxed
// atomic load per allocation, which is nothing beside the allocation itself.
//
//   warpkv::fault_injection::fail_allocation(3);   // the 4th allocation from now fails
//   warpkv::fault_injection::fail_thread_start(0); // the next host lane thread fails to start
//   warpkv::fault_injection::disarm();
// A failed allocation throws warpkv::error(out_of_memory), as a real one does; a failed thread
// start throws warpkv::error(unsupported) from the launch that needed it.
#include <atomic>

namespace warpkv::fault_injection {

namespace detail {
inline std::atomic<long long> allocation_countdown{-1};
inline std::atomic<long long> thread_countdown{-1};

/// True when the armed countdown reaches this event (then the hook disarms itself).
inline bool trip(std::atomic<long long>& countdown) {
  long long v = countdown.load(std::memory_order_relaxed);
  while (v >= 0) {
    if (countdown.compare_exchange_weak(v, v - 1, std::memory_order_relaxed)) return v == 0;
  }
  return false;
}
}  // namespace detail

/// The allocation `n` allocations from now (0: the next one) fails; later ones succeed.
inline void fail_allocation(long long n) { detail::allocation_countdown.store(n, std::memory_order_relaxed); }
/// The host lane thread start `n` starts from now (0: the next one) fails.
inline void fail_thread_start(long long n) { detail::thread_countdown.store(n, std::memory_order_relaxed); }
/// Whether an armed allocation failure has not fired yet.
inline bool allocation_armed() { return detail::allocation_countdown.load(std::memory_order_relaxed) >= 0; }
inline void disarm() {
  detail::allocation_countdown.store(-1, std::memory_order_relaxed);
  detail::thread_countdown.store(-1, std::memory_order_relaxed);
}

}  // namespace warpkv::fault_injection
