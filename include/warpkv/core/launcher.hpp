#pragma once
// Runs a kernel body over a grid of tiles, on the GPU or on a host thread pool.
//
// A body is a copyable object with
//   using accumulator = ...;                        // per-lane state, default-constructed
//   template <class Tile> WARPKV_HD void operator()(const Tile&, std::size_t tile_index, accumulator&) const;
//   template <class Tile> WARPKV_HD void flush(const Tile&, accumulator&) const;  // once per lane at the end
// Every lane of a tile calls operator() with the same tile_index; tiles run concurrently.
// `simple_body` adapts a plain callable (tile, tile_index).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "warpkv/core/config.hpp"
#include "warpkv/core/cuda_check.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/host_pool.hpp"
#include "warpkv/core/tile.hpp"

namespace warpkv {

struct no_accumulator {};

template <class F>
struct simple_body {
  using accumulator = no_accumulator;
  F f;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i, accumulator&) const {
    f(t, i);
  }
  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator&) const {}
};

namespace detail {

/// Runs the tiles on host lane threads borrowed from the process-wide pool (core/host_pool.hpp):
/// at most `concurrent_tiles` tiles at once, and never more than max_host_lanes threads.
template <int N, class Body>
void launch_host(std::size_t num_tiles, const Body& body, unsigned concurrent_tiles) {
  if (num_tiles == 0) return;
  const std::size_t limit = std::max<std::size_t>(1, max_host_lanes / N);
  const std::size_t tiles =
      std::min({static_cast<std::size_t>(concurrent_tiles == 0 ? 1 : concurrent_tiles), num_tiles, limit});
  std::atomic<std::size_t> next{0};
  std::vector<std::unique_ptr<host_tile_state>> states;
  states.reserve(tiles);
  for (std::size_t i = 0; i < tiles; ++i) states.push_back(std::make_unique<host_tile_state>(N));
  host_lane_pool::instance().run(tiles * N, [&](std::size_t lane) {
    const std::size_t t = lane / N;
    const unsigned r = static_cast<unsigned>(lane % N);
    host_tile<N> tile(states[t].get(), r);
    typename Body::accumulator acc{};
    for (;;) {
      std::size_t idx = 0;
      if (r == 0) idx = next.fetch_add(1, std::memory_order_relaxed);
      idx = tile.shfl(idx, 0);
      if (idx >= num_tiles) break;
      body(tile, idx, acc);
    }
    body.flush(tile, acc);
  });
}

#if WARPKV_HAS_CUDA
constexpr int block_threads = 256;
/// Registers of one SM (sm_70 to sm_90).
constexpr int registers_per_sm = 65536;

/// Whether a body's kernel runs as a persistent grid (as many blocks as fit at once, each tile
/// striding over the work) or as one tile per work item (a block per tiles_per_block items, the
/// hardware scheduling blocks as others finish; cuco's launch). A body that declares
/// `thread_per_item = true` gets the latter: for one-lane tiles of the open-addressing maps it
/// ran inserts 14-32 % and finds up to 13 % faster on an H100, for wider tiles it was slower
/// (docs/perf.md, session 11, call J).
template <class Body>
WARPKV_HD constexpr bool persistent_grid() {
  if constexpr (requires { Body::thread_per_item; }) return !Body::thread_per_item;
  return true;
}

/// The launch of a tile-per-item body (persistent_grid() false) may be shaped by the body:
/// `static constexpr int block_threads` (threads per block, a multiple of 32; 0: block_threads
/// above) and `static constexpr int items_per_thread` (each tile runs that many items, striding
/// over the grid, which shrinks by as much; 0 or 1: one). Session 23 (H200): the one-lane
/// open-addressing fast insert ran +5 % at LF 0.5 and +9 % at 0.8 with two operations a thread
/// in blocks of 256 (call H; the generic code's best shape was 128 x 2, +2.2-2.8 %, calls B-D): a
/// block holds its registers until its slowest operation ends, and that tail weighs less when
/// each thread has two to run. Smaller blocks alone, more operations a thread, and every shape
/// for the finds, cuckoo and H64 measured level or slower.
template <class Body>
WARPKV_HD constexpr int block_threads_of() {
  if constexpr (requires { Body::block_threads; }) {
    if constexpr (!persistent_grid<Body>() && Body::block_threads > 0) {
      static_assert(Body::block_threads % 32 == 0 && Body::block_threads <= 1024, "whole warps, at most 1024 threads");
      return Body::block_threads;
    }
  }
  return block_threads;
}
template <class Body>
WARPKV_HD constexpr std::size_t items_per_thread_of() {
  if constexpr (requires { Body::items_per_thread; }) {
    if constexpr (!persistent_grid<Body>() && Body::items_per_thread > 1) return Body::items_per_thread;
  }
  return 1;
}

/// Blocks per SM that a body's kernel must fit: a body that declares `register_budget` (registers
/// per thread, > 0) gets the block count that budget allows, so ptxas plans for it instead of
/// trading spills for occupancy by its own heuristic (nvcc 13.0 put the open-addressing inserts
/// at 40-48 registers with 8-60 B of spills without a bound, and at 45-53 registers with none
/// when given one block); 0 leaves the choice to ptxas.
template <class Body>
constexpr int min_blocks_of() {
  if constexpr (requires { Body::register_budget; }) {
    if constexpr (Body::register_budget > 0) return registers_per_sm / (block_threads_of<Body>() * Body::register_budget);
  }
  return 0;
}

template <int N, class Body>
__global__ void __launch_bounds__(block_threads_of<Body>(), min_blocks_of<Body>()) tile_kernel(Body body, std::size_t num_tiles) {
  namespace cg = cooperative_groups;
  auto cg_tile = cg::tiled_partition<N>(cg::this_thread_block());
  cuda_tile<N> tile(cg_tile);
  constexpr std::size_t tiles_per_block = block_threads_of<Body>() / N;
  typename Body::accumulator acc{};
  if constexpr (requires { body.block_begin(); }) body.block_begin();  // every thread, before any operation
  for (std::size_t idx = blockIdx.x * tiles_per_block + cg_tile.meta_group_rank(); idx < num_tiles;
       idx += static_cast<std::size_t>(gridDim.x) * tiles_per_block) {
    body(tile, idx, acc);
  }
  body.flush(tile, acc);
}

template <int N, class Body>
void launch_cuda(std::size_t num_tiles, const Body& body, cudaStream_t stream) {
  if (num_tiles == 0) return;
  static int resident_blocks = [] {
    int dev = 0, sms = 0, per_sm = 0;
    WARPKV_CUDA_CHECK(cudaGetDevice(&dev));
    WARPKV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    WARPKV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tile_kernel<N, Body>, block_threads_of<Body>(), 0));
    return sms * (per_sm > 0 ? per_sm : 1);
  }();
  constexpr std::size_t tiles_per_block = block_threads_of<Body>() / N;
  constexpr std::size_t items = items_per_thread_of<Body>();  // 1 for a persistent grid
  const std::size_t wanted = (num_tiles + tiles_per_block * items - 1) / (tiles_per_block * items);
  constexpr std::size_t max_grid = 0x7fffffff;  // gridDim.x limit; beyond it the tiles stride
  const std::size_t blocks = persistent_grid<Body>() ? static_cast<std::size_t>(resident_blocks) : max_grid;
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(wanted, blocks));
  tile_kernel<N, Body><<<grid, block_threads_of<Body>(), 0, stream>>>(body, num_tiles);
  WARPKV_CUDA_CHECK_LAUNCH("tile_kernel launch");
}
#endif

}  // namespace detail

/// Runs `body` over `num_tiles` tiles of N lanes on `ex`'s backend.
/// Stream-ordered on the GPU; returns after completion on the host backend.
template <int N, class Body>
void launch(const execution& ex, std::size_t num_tiles, const Body& body) {
  static_assert(valid_tile_size<N>, "tile size must be 1, 2, 4, 8, 16 or 32");
  if (ex.where == backend::cuda) {
#if WARPKV_HAS_CUDA
    detail::launch_cuda<N>(num_tiles, body, ex.stream);
#else
    throw error(errc::unsupported, "warpkv: this translation unit was not compiled with CUDA");
#endif
  } else {
    detail::launch_host<N>(num_tiles, body, ex.concurrent_host_tiles());
  }
}

}  // namespace warpkv
