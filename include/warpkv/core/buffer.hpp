#pragma once
// RAII storage on either backend: stream-ordered cudaMallocAsync on the GPU,
// plain heap memory on the host backend; and pinned host staging for transfers.
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "warpkv/core/cuda_check.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/fault_injection.hpp"

namespace warpkv {

namespace detail {

/// What a backend allocation is for on the cuda backend: device memory (stream-ordered) or
/// page-locked host memory (transfer staging). The host backend uses heap memory for both.
enum class memory_kind { device, pinned_host };

/// Storage for n elements of T (n > 0); throws errc::out_of_memory when there is none.
template <class T>
T* allocate(std::size_t n, const execution& ex, [[maybe_unused]] memory_kind kind) {
  if (n > std::numeric_limits<std::size_t>::max() / sizeof(T))
    throw error(errc::out_of_memory, "warpkv: buffer of " + std::to_string(n) + " elements overflows size_t");
  const std::size_t bytes = n * sizeof(T);
  if (fault_injection::detail::trip(fault_injection::detail::allocation_countdown))
    throw error(errc::out_of_memory, "warpkv: cannot allocate " + std::to_string(bytes) + " bytes (injected failure)");
  void* p = nullptr;
  if (ex.where == backend::cuda) {
#if WARPKV_HAS_CUDA
    const bool device = kind == memory_kind::device;
    const cudaError_t e = device ? cudaMallocAsync(&p, bytes, ex.stream) : cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw error(errc::out_of_memory, "warpkv: cannot allocate " + std::to_string(bytes) + " bytes of " +
                                           (device ? "device memory" : "pinned host memory"));
    }
    WARPKV_CUDA_CHECK(e);
#endif
  } else {
    p = ::operator new(bytes, std::nothrow);
    if (p == nullptr) throw error(errc::out_of_memory, "warpkv: cannot allocate " + std::to_string(bytes) + " host bytes");
  }
  return static_cast<T*>(p);
}

inline void deallocate(void* p, const execution& ex, [[maybe_unused]] memory_kind kind) noexcept {
  if (p == nullptr) return;
  if (ex.where == backend::cuda) {
#if WARPKV_HAS_CUDA
    // destructors must not throw; a failure here surfaces at the next call
    if (kind == memory_kind::device) (void)cudaFreeAsync(p, ex.stream);
    else (void)cudaFreeHost(p);
#endif
  } else {
    ::operator delete(p);
  }
}

}  // namespace detail

template <class T>
class buffer {
  static_assert(std::is_trivially_copyable_v<T>, "buffers hold trivially copyable elements");

 public:
  buffer() = default;
  buffer(std::size_t n, const execution& ex) : n_(n), ex_(ex) {
    if (n > 0) p_ = detail::allocate<T>(n, ex, detail::memory_kind::device);
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  buffer(buffer&& o) noexcept { swap(o); }
  buffer& operator=(buffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }
  ~buffer() { release(); }

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  const execution& exec() const { return ex_; }

  /// Copies `src` (host memory) into the buffer, stream-ordered.
  void copy_from_host(const T* src, std::size_t n) {
    require(n <= n_, "n", "copy larger than the buffer");
    copy(p_, src, n, true);
  }
  /// Copies n elements, from element `from` on, to host memory and waits for them.
  void copy_to_host(T* dst, std::size_t n, std::size_t from = 0) const {
    require(from <= n_ && n <= n_ - from, "n", "copy past the end of the buffer");
    copy(dst, p_ + from, n, false);
    synchronize(ex_);
  }
  /// The same, stream-ordered without waiting (the host backend copies at once): `dst` is valid
  /// once the stream has reached the copy. Asynchronous only into page-locked memory
  /// (pinned_buffer); from pageable memory CUDA copies synchronously.
  void copy_to_host_async(T* dst, std::size_t n) const {
    require(n <= n_, "n", "copy larger than the buffer");
    copy(dst, p_, n, false);
  }
  std::vector<T> to_vector() const {
    std::vector<T> v(n_);
    copy_to_host(v.data(), n_);
    return v;
  }
  static buffer from_host(std::span<const T> src, const execution& ex) {
    buffer b(src.size(), ex);
    b.copy_from_host(src.data(), src.size());
    return b;
  }

 private:
  void copy(T* dst, const T* src, std::size_t n, bool to_buffer) const {
    if (n == 0) return;
    if (ex_.where == backend::cuda) {
#if WARPKV_HAS_CUDA
      WARPKV_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T),
                                        to_buffer ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, ex_.stream));
#endif
    } else {
      (void)to_buffer;  // host memory both ways
      std::memcpy(dst, src, n * sizeof(T));
    }
  }
  void release() noexcept {
    detail::deallocate(p_, ex_, detail::memory_kind::device);
    p_ = nullptr;
    n_ = 0;
  }
  void swap(buffer& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(ex_, o.ex_);
  }

  T* p_ = nullptr;
  std::size_t n_ = 0;
  execution ex_{};
};

/// Host staging memory for transfers: page-locked (cudaHostAlloc) on the cuda backend, so that
/// stream-ordered copies from and to it are asynchronous DMA and overlap kernels; plain heap
/// memory on the host backend. Not initialised.
template <class T>
class pinned_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "buffers hold trivially copyable elements");

 public:
  pinned_buffer() = default;
  pinned_buffer(std::size_t n, const execution& ex)
      : p_(n > 0 ? detail::allocate<T>(n, ex, detail::memory_kind::pinned_host) : nullptr, release{ex}), n_(n) {}

  T* data() const { return p_.get(); }
  std::size_t size() const { return p_ ? n_ : 0; }

 private:
  struct release {
    execution ex;
    void operator()(T* p) const noexcept { detail::deallocate(p, ex, detail::memory_kind::pinned_host); }
  };
  std::unique_ptr<T, release> p_{nullptr, release{}};
  std::size_t n_ = 0;
};

}  // namespace warpkv
