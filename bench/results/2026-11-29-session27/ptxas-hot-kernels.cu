#include <cstdio>
#include <cuda_runtime.h>
#include "warpkv/cache/kv_cache.hpp"
using namespace warpkv;
template <class Cache> void probe(const char* name) {
  using R = typename Cache::ref_type; using RR = typename Cache::read_ref_type;
  constexpr int T = Cache::tile_size, TR = Cache::read_tile_size;
  cudaFuncAttributes a{}, b{};
  cudaFuncGetAttributes(&a, detail::tile_kernel<TR, detail::cache_phase_body<TR, detail::cache_read_op<RR>>>);
  cudaFuncGetAttributes(&b, detail::tile_kernel<T, detail::cache_phase_body<T, detail::cache_write_op<R, cache_pass::fast>>>);
  printf("%s %d %d\n", name, a.numRegs, b.numRegs);
}
int main() { probe<kv_cache<std::uint64_t, 8>>("u64"); probe<kv_cache<byte_key<32>, 8>>("bk32"); probe<ccht_cache<std::uint64_t>>("ccht"); }
