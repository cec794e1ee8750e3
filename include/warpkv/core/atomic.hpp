#pragma once
// atomic_ref and fences for both backends.
//
// On the GPU this is cuda::atomic_ref at device scope (libcu++); on the host it
// is std::atomic_ref, so that many host threads racing on a table exercise the
// same algorithm with real concurrency (and ThreadSanitizer sees every access).
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "warpkv/core/config.hpp"
#include "warpkv/core/memory_order.hpp"

#if WARPKV_HAS_CUDA
#include <cuda/atomic>
#endif

namespace warpkv {

namespace detail {
inline std::memory_order to_std(memory_order o) {
  switch (o) {
    case memory_order::relaxed: return std::memory_order_relaxed;
    case memory_order::acquire: return std::memory_order_acquire;
    case memory_order::release: return std::memory_order_release;
    case memory_order::acq_rel: return std::memory_order_acq_rel;
    default: return std::memory_order_seq_cst;
  }
}
// Failure order of a compare-exchange may not be release/acq_rel.
inline std::memory_order failure_std(memory_order o) {
  switch (o) {
    case memory_order::release:
    case memory_order::relaxed: return std::memory_order_relaxed;
    case memory_order::acq_rel:
    case memory_order::acquire: return std::memory_order_acquire;
    default: return std::memory_order_seq_cst;
  }
}
#if WARPKV_HAS_CUDA
__host__ __device__ inline cuda::std::memory_order to_cuda(memory_order o) {
  switch (o) {
    case memory_order::relaxed: return cuda::std::memory_order_relaxed;
    case memory_order::acquire: return cuda::std::memory_order_acquire;
    case memory_order::release: return cuda::std::memory_order_release;
    case memory_order::acq_rel: return cuda::std::memory_order_acq_rel;
    default: return cuda::std::memory_order_seq_cst;
  }
}
__host__ __device__ inline cuda::std::memory_order failure_cuda(memory_order o) {
  switch (o) {
    case memory_order::release:
    case memory_order::relaxed: return cuda::std::memory_order_relaxed;
    case memory_order::acq_rel:
    case memory_order::acquire: return cuda::std::memory_order_acquire;
    default: return cuda::std::memory_order_seq_cst;
  }
}
#endif
}  // namespace detail

/// A reference that makes every access to *p atomic. T: 4- or 8-byte integer.
template <class T>
class atomic_ref {
  static_assert(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "warpkv::atomic_ref supports 4- and 8-byte integers");

 public:
  WARPKV_HD explicit atomic_ref(T& object) : p_(&object) {}

  WARPKV_HD T load(memory_order o = memory_order::seq_cst) const {
#if WARPKV_DEVICE_PASS
    return dev().load(detail::to_cuda(o));
#else
    return std::atomic_ref<T>(*p_).load(detail::to_std(o));
#endif
  }
  /// A weak read for protocols that validate what they read with a CAS (the bulk insert-only
  /// batches of open addressing): on the GPU one plain `ld.global` (cached in L1, so it may return
  /// an older value of *p than L2 holds, never a torn one: an aligned 4- or 8-byte scalar access is
  /// one memory operation in the PTX model, which does not require data-race freedom). One
  /// volatile asm statement, so the compiler can neither drop it nor load twice (a re-load could
  /// hand the CAS a different word than the one the decision was made on). On the host a relaxed
  /// atomic load (ThreadSanitizer sees an atomic access; a CPU's relaxed load costs a plain one).
  WARPKV_HD T load_weak() const {
#if WARPKV_DEVICE_PASS
    T v;
    if constexpr (sizeof(T) == 8) {
      asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p_));
    } else {
      asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p_));
    }
    return v;
#else
    return std::atomic_ref<T>(*p_).load(std::memory_order_relaxed);
#endif
  }
  WARPKV_HD void store(T v, memory_order o = memory_order::seq_cst) const {
#if WARPKV_DEVICE_PASS
    dev().store(v, detail::to_cuda(o));
#else
    std::atomic_ref<T>(*p_).store(v, detail::to_std(o));
#endif
  }
  /// Strong CAS; on failure `expected` receives the current value.
  WARPKV_HD bool compare_exchange(T& expected, T desired, memory_order o = memory_order::seq_cst) const {
#if WARPKV_DEVICE_PASS
    return dev().compare_exchange_strong(expected, desired, detail::to_cuda(o), detail::failure_cuda(o));
#else
    return std::atomic_ref<T>(*p_).compare_exchange_strong(expected, desired, detail::to_std(o),
                                                           detail::failure_std(o));
#endif
  }
  WARPKV_HD T exchange(T v, memory_order o = memory_order::seq_cst) const {
#if WARPKV_DEVICE_PASS
    return dev().exchange(v, detail::to_cuda(o));
#else
    return std::atomic_ref<T>(*p_).exchange(v, detail::to_std(o));
#endif
  }
  WARPKV_HD T fetch_add(T v, memory_order o = memory_order::seq_cst) const {
#if WARPKV_DEVICE_PASS
    return dev().fetch_add(v, detail::to_cuda(o));
#else
    return std::atomic_ref<T>(*p_).fetch_add(v, detail::to_std(o));
#endif
  }
  WARPKV_HD T fetch_sub(T v, memory_order o = memory_order::seq_cst) const {
#if WARPKV_DEVICE_PASS
    return dev().fetch_sub(v, detail::to_cuda(o));
#else
    return std::atomic_ref<T>(*p_).fetch_sub(v, detail::to_std(o));
#endif
  }
  /// Stores max(current, v) and returns the current value (CUDA's atomicMax). On the host a
  /// CAS loop; when the current value is not smaller nothing is written (a load with the
  /// failure order of `o`).
  WARPKV_HD T fetch_max(T v, memory_order o = memory_order::seq_cst) const {
#if WARPKV_DEVICE_PASS
    return dev().fetch_max(v, detail::to_cuda(o));
#else
    std::atomic_ref<T> a(*p_);
    T cur = a.load(detail::failure_std(o));
    while (cur < v && !a.compare_exchange_weak(cur, v, detail::to_std(o), detail::failure_std(o))) {
    }
    return cur;
#endif
  }
  /// Relaxed fetch_add whose result belongs to the calling thread alone: on the GPU, one
  /// `atom.global.add` per thread (inline PTX), so the object must be in global memory there. For
  /// fetch_add, the toolchain (nvcc 13.0, sm_90) merges the calls of a warp's active threads into
  /// one atomic by a leader that hands out offsets (VOTE/FLO/POPC/SHFL in the SASS); in
  /// chained_map's divergent insert path on an H100 that handed two threads the same pool node
  /// (duplicate nodes, lost keys: ChainedPool.PaperChurnOnRecycledPoolMemory failed in nearly every
  /// run). A generic-address `atom.add` in inline PTX still failed; `atom.global.add` passed 18 of
  /// 18 runs. Use it where the returned value must be unique (slot or node claims).
  WARPKV_HD T fetch_add_exact(T v) const {
#if WARPKV_DEVICE_PASS
    T old;
    if constexpr (sizeof(T) == 8) {
      asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], %2;"
                   : "=l"(old)
                   : "l"(p_), "l"(v)
                   : "memory");
    } else {
      asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;"
                   : "=r"(old)
                   : "l"(p_), "r"(v)
                   : "memory");
    }
    return old;
#else
    return std::atomic_ref<T>(*p_).fetch_add(v, std::memory_order_relaxed);
#endif
  }
  WARPKV_HD T fetch_or(T v, memory_order o = memory_order::seq_cst) const {
#if WARPKV_DEVICE_PASS
    return dev().fetch_or(v, detail::to_cuda(o));
#else
    return std::atomic_ref<T>(*p_).fetch_or(v, detail::to_std(o));
#endif
  }
  WARPKV_HD T fetch_and(T v, memory_order o = memory_order::seq_cst) const {
#if WARPKV_DEVICE_PASS
    return dev().fetch_and(v, detail::to_cuda(o));
#else
    return std::atomic_ref<T>(*p_).fetch_and(v, detail::to_std(o));
#endif
  }

 private:
#if WARPKV_HAS_CUDA
  __device__ cuda::atomic_ref<T, cuda::thread_scope_device> dev() const {
    return cuda::atomic_ref<T, cuda::thread_scope_device>(*p_);
  }
#endif
  T* p_;
};

/// How a probe reads slots:
///  - relaxed: relaxed atomic loads (device scope: they skip L1 and see L2's current value) where
///    writers may run;
///  - weak: atomic_ref::load_weak (L1-cached on the GPU, possibly stale, never torn), for
///    protocols in which every decision taken on a read is validated by a CAS whose failure
///    returns the current word (open addressing's insert-only batches: session 16 measured them
///    faster with a thread per operation; session 11, with tiles, slower);
///  - quiescent: ordinary C++ loads, for a table that nothing writes while the read runs (the bulk
///    API's find-only batches).
enum class read_mode { relaxed, weak, quiescent };

/// Two adjacent 8-byte words (16-byte aligned) read by relaxed atomic loads of device scope, in one
/// instruction on the GPU (`ld.relaxed.gpu.global.v2.u64`: PTX performs a vector access as its
/// elements' scalar accesses, each single-copy atomic, in no particular order); two relaxed loads
/// on the host. A tile that reads a 64-byte bucket this way asks L2 for its two sectors once,
/// where two 8-byte loads per lane ask for each sector twice. `p` must point to global memory.
WARPKV_HD inline void load_relaxed_pair(std::uint64_t* p, std::uint64_t& a, std::uint64_t& b) {
#if WARPKV_DEVICE_PASS
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
#else
  a = std::atomic_ref<std::uint64_t>(p[0]).load(std::memory_order_relaxed);
  b = std::atomic_ref<std::uint64_t>(p[1]).load(std::memory_order_relaxed);
#endif
}

/// Two adjacent 8-byte words (16-byte aligned) in one instruction on the GPU, as a probe reads:
/// relaxed atomic loads (load_relaxed_pair) where writers may run; a weak 16-byte load (L1-cached,
/// each word as atomic_ref::load_weak reads it: possibly stale, never torn; relaxed atomic loads
/// on the host) for read_mode::weak; an ordinary 16-byte load (L1-cached) of a table nothing
/// writes while it runs (read_mode::quiescent; two loads on the host).
template <read_mode Reads>
WARPKV_HD inline void load_pair(std::uint64_t* p, std::uint64_t& a, std::uint64_t& b) {
  if constexpr (Reads == read_mode::relaxed) {
    load_relaxed_pair(p, a, b);
  } else if constexpr (Reads == read_mode::weak) {
#if WARPKV_DEVICE_PASS
    asm volatile("ld.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p));
#else
    load_relaxed_pair(p, a, b);
#endif
  } else {
#if WARPKV_DEVICE_PASS
    const ulonglong2 v = *reinterpret_cast<const ulonglong2*>(p);
    a = v.x;
    b = v.y;
#else
    a = p[0];
    b = p[1];
#endif
  }
}

/// A fence at device scope (GPU) or process scope (host).
WARPKV_HD inline void atomic_thread_fence(memory_order o) {
#if WARPKV_DEVICE_PASS
  cuda::atomic_thread_fence(detail::to_cuda(o), cuda::thread_scope_device);
#else
  std::atomic_thread_fence(detail::to_std(o));
#endif
}

}  // namespace warpkv
