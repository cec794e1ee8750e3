#pragma once
// Where bulk operations run: on the GPU (stream-ordered) or on host threads
// that emulate tiles. The host backend is the CI guard and the reference.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "warpkv/core/config.hpp"
#include "warpkv/core/cuda_check.hpp"
#include "warpkv/core/error.hpp"

namespace warpkv {

enum class backend { cuda, host };

#if WARPKV_HAS_CUDA
using stream_t = cudaStream_t;
#else
using stream_t = void*;
#endif

/// True when this build has CUDA and a device is visible.
inline bool cuda_available() {
#if WARPKV_HAS_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  return n > 0;
#else
  return false;
#endif
}

/// How and where a structure runs its bulk operations.
struct execution {
  backend where = backend::host;
  stream_t stream = nullptr;       ///< CUDA stream (cuda backend)
  unsigned host_tiles = 0;         ///< concurrent tiles on the host backend; 0 = default

  /// The GPU when this build and machine have one, else the host backend.
  static execution automatic() { return cuda_available() ? gpu() : host(); }
  static execution gpu(stream_t s = nullptr) {
    if (!cuda_available())
      throw error(errc::unsupported, "warpkv: backend::cuda requested but no CUDA device is available in this build");
    return execution{backend::cuda, s, 0};
  }
  static execution host(unsigned tiles = 0) { return execution{backend::host, nullptr, tiles}; }

  /// Concurrent host tiles: explicit value, else WARPKV_HOST_TILES, else max(4, 2 x hardware threads).
  [[nodiscard]] unsigned concurrent_host_tiles() const {
    if (host_tiles != 0) return host_tiles;
    if (const char* env = std::getenv("WARPKV_HOST_TILES")) {
      const long v = std::strtol(env, nullptr, 10);
      if (v > 0) return static_cast<unsigned>(v);
    }
    return std::max(4u, 2u * std::max(1u, std::thread::hardware_concurrency()));
  }
  [[nodiscard]] std::string name() const { return where == backend::cuda ? "cuda" : "host"; }
};

/// Waits for all work queued on `ex` (a no-op on the host backend, which is synchronous).
inline void synchronize(const execution& ex) {
#if WARPKV_HAS_CUDA
  if (ex.where == backend::cuda) WARPKV_CUDA_CHECK(cudaStreamSynchronize(ex.stream));
#else
  (void)ex;
#endif
}

/// A CUDA stream of its own (non-blocking: it does not wait for the legacy default stream) on
/// the cuda backend, destroyed with the object; on the host backend, the given execution as is
/// (its work is synchronous anyway). exec() is `base` with that stream.
class owned_stream {
 public:
  owned_stream() = default;
  explicit owned_stream(const execution& base) : ex_(base) {
#if WARPKV_HAS_CUDA
    if (base.where == backend::cuda) {
      cudaStream_t s = nullptr;
      WARPKV_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      ex_.stream = s;
      owned_ = true;
    }
#endif
  }
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;
  ~owned_stream() {
#if WARPKV_HAS_CUDA
    if (owned_) (void)cudaStreamDestroy(ex_.stream);  // destructors must not throw; queued work still completes
#endif
  }
  [[nodiscard]] const execution& exec() const { return ex_; }

 private:
  execution ex_{};
  [[maybe_unused]] bool owned_ = false;  // only the cuda build creates streams
};

}  // namespace warpkv
