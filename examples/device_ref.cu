// The map's device ref inside a kernel of your own (compiled by nvcc). Each tile of 4 threads
// cooperates on one operation: here every lane holds a key of its own and warpkv::serve_each
// makes the tile serve the lanes' inserts in turn (GLHT's work sharing).
//
// A ref is a cheap copy of the table's view: any host call that may grow the map (insert,
// reserve, rehash, ...) invalidates it. A ref's insert does not grow the table: it reports
// status::full when there is no room, so size the map for what your kernels insert.
#include <warpkv/core/work_sharing.hpp>
#include <warpkv/hopscotch/hopscotch_map.hpp>

#include <cooperative_groups.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;
using map_t = warpkv::hopscotch_map<std::uint32_t, std::uint32_t, 4>;

__global__ void insert_squares(map_t::ref_type ref, std::uint32_t n, warpkv::status* statuses) {
  auto tile = cg::tiled_partition<4>(cg::this_thread_block());
  warpkv::cuda_tile<4> t(tile);
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool mine = i < n;
  const std::uint32_t key = i + 1;
  warpkv::serve_each(t, mine, [&](unsigned owner) {  // all 4 lanes work on the owner's insert
    const std::uint32_t k = t.shfl(key, owner);
    const warpkv::status s = ref.insert(t, k, k * k);
    if (t.thread_rank() == owner) statuses[i] = s;
  });
}

int main() {
  if (!warpkv::cuda_available()) {
    std::puts("device_ref: no GPU visible: skipped (the kernel was compiled; run it on a machine with a GPU)");
    return 0;
  }
  const std::uint32_t n = 100000;
  map_t map(n);  // sized up front: a ref never grows the table
  warpkv::buffer<warpkv::status> st(n, map.exec());
  insert_squares<<<(n + 255) / 256, 256, 0, map.exec().stream>>>(map.ref(), n, st.data());
  WARPKV_CUDA_CHECK(cudaGetLastError());
  warpkv::synchronize(map.exec());
  // the kernel wrote the table behind the map's back: the host-side size() does not know it, but
  // find() sees every key
  std::vector<std::uint32_t> keys(n), out;
  for (std::uint32_t i = 0; i < n; ++i) keys[i] = i + 1;
  const auto found = map.find(keys, out);
  std::size_t ok_count = 0;
  for (std::uint32_t i = 0; i < n; ++i) ok_count += found[i] == warpkv::status::found && out[i] == keys[i] * keys[i];
  std::printf("device_ref: %zu of %u keys inserted by the kernel found: %s\n", ok_count, n, ok_count == n ? "ok" : "FAILED");
  return ok_count == n ? 0 : 1;
}
