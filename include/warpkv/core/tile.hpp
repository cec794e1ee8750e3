#pragma once
// The warp-tile layer: a group of 1, 2, 4, 8, 16 or 32 lanes that execute one
// algorithm together. Device algorithms take `Tile const&` and use only:
//   thread_rank(), size(), sync(), ballot(p), any(p), all(p), shfl(v, src).
// cuda_tile wraps a cooperative-groups tile; host_tile runs each lane on its
// own host thread and makes collectives real rendezvous points, so the host
// backend exercises the same interleavings the GPU can produce between tiles.
#include <barrier>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "warpkv/core/config.hpp"

#if WARPKV_HAS_CUDA
#include <cooperative_groups.h>
#endif

namespace warpkv {

template <int N>
constexpr bool valid_tile_size = (N == 1 || N == 2 || N == 4 || N == 8 || N == 16 || N == 32);

/// Lowest set bit index of a nonzero ballot mask.
WARPKV_HD inline int lowest_lane(std::uint32_t mask) {
#if WARPKV_DEVICE_PASS
  return __ffs(mask) - 1;
#else
  return std::countr_zero(mask);
#endif
}

WARPKV_HD inline int popcount32(std::uint32_t mask) {
#if WARPKV_DEVICE_PASS
  return __popc(mask);
#else
  return std::popcount(mask);
#endif
}

#if WARPKV_HAS_CUDA
/// GPU tile over cooperative groups. Only meaningful in device code.
template <int N>
class cuda_tile {
  static_assert(valid_tile_size<N>, "tile size must be 1, 2, 4, 8, 16 or 32");

 public:
  using cg_tile = cooperative_groups::thread_block_tile<N, cooperative_groups::thread_block>;
  __device__ explicit cuda_tile(cg_tile t) : t_(t) {}
  WARPKV_HD static constexpr unsigned size() { return N; }
  __device__ unsigned thread_rank() const { return t_.thread_rank(); }
  __device__ void sync() const { t_.sync(); }
  __device__ std::uint32_t ballot(bool p) const {
    if constexpr (N == 1) return p ? 1u : 0u;
    else return t_.ballot(p);
  }
  __device__ bool any(bool p) const { return ballot(p) != 0; }
  __device__ bool all(bool p) const { return ballot(p) == full_mask(); }
  template <class T>
  __device__ T shfl(T v, unsigned src) const {
    if constexpr (N == 1) return v;
    else return t_.shfl(v, src);
  }
  WARPKV_HD static constexpr std::uint32_t full_mask() { return N == 32 ? 0xffffffffu : ((1u << N) - 1u); }

 private:
  cg_tile t_;
};
#endif

/// Rendezvous state shared by the N host threads that play one tile.
struct host_tile_state {
  explicit host_tile_state(int lanes) : barrier(lanes) {}
  std::barrier<> barrier;
  std::uint64_t exchange[32] = {};
};

/// Host tile: lane `rank` of a tile whose collectives meet at `state`.
/// Its members are WARPKV_HD only so that algorithm templates compiled by nvcc may name
/// them; host tiles exist only on host threads, so the device pass compiles them empty.
template <int N>
class host_tile {
  static_assert(valid_tile_size<N>, "tile size must be 1, 2, 4, 8, 16 or 32");

 public:
  host_tile(host_tile_state* state, unsigned rank) : s_(state), rank_(rank) {}
  WARPKV_HD static constexpr unsigned size() { return N; }
  WARPKV_HD unsigned thread_rank() const { return rank_; }
  WARPKV_HD void sync() const {
#if !WARPKV_DEVICE_PASS
    if constexpr (N > 1) s_->barrier.arrive_and_wait();
#endif
  }
  WARPKV_HD std::uint32_t ballot(bool p) const {
    if constexpr (N == 1) {
      return p ? 1u : 0u;
    } else {
      std::uint32_t mask = 0;
#if !WARPKV_DEVICE_PASS
      s_->exchange[rank_] = p ? 1 : 0;
      sync();  // every lane has published
      for (unsigned i = 0; i < N; ++i) mask |= static_cast<std::uint32_t>(s_->exchange[i]) << i;
      sync();  // every lane has read before anyone publishes again
#endif
      return mask;
    }
  }
  WARPKV_HD bool any(bool p) const { return ballot(p) != 0; }
  WARPKV_HD bool all(bool p) const { return ballot(p) == full_mask(); }
  template <class T>
  WARPKV_HD T shfl(T v, unsigned src) const {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(std::uint64_t),
                  "shfl moves trivially copyable values of up to 8 bytes");
    if constexpr (N == 1) {
      return v;
    } else {
#if !WARPKV_DEVICE_PASS
      std::uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof(T));
      s_->exchange[rank_] = bits;
      sync();
      bits = s_->exchange[src % N];  // CUDA semantics: src is taken modulo the tile size
      sync();
      std::memcpy(&v, &bits, sizeof(T));
#else
      (void)src;
#endif
      return v;
    }
  }
  WARPKV_HD static constexpr std::uint32_t full_mask() { return N == 32 ? 0xffffffffu : ((1u << N) - 1u); }

 private:
  host_tile_state* s_;
  unsigned rank_;
};

}  // namespace warpkv
