// Instantiates the bulk kernels of the maps (the kernels their uniform and mixed batches launch)
// for scripts/sass-lint, which compiles this file to a cubin, disassembles it with nvdisasm and
// checks it with scripts/sass_lint.py (a ptxas fault, issue 24; docs/design/hopscotch.md).
#include <cstdint>

#include "warpkv/cuckoo/cuckoo_map.hpp"
#include "warpkv/hopscotch/hopscotch_map.hpp"
#include "warpkv/open_addressing/linear_map.hpp"
#include "warpkv/open_addressing/quadratic_map.hpp"

namespace {
template <class Map>
void use(Map& m, std::size_t n) {
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  const K* k = nullptr;
  const V* v = nullptr;
  V* o = nullptr;
  warpkv::status* s = nullptr;
  const warpkv::op* ops = nullptr;
  m.insert(k, v, n, s);
  m.insert_or_assign(k, v, n, s);
  m.find(k, n, o);
  m.erase(k, n, s);
  m.execute(ops, k, v, n, s, o);
}
}  // namespace

void instantiate_hot_kernels(std::size_t n) {
  warpkv::hopscotch_map<std::uint32_t, std::uint32_t, 4> h4(64);
  warpkv::hopscotch_map<std::uint64_t, std::uint64_t, 1> h1(64);
  warpkv::hopscotch_map<std::uint32_t, std::uint32_t, 4, warpkv::hopscotch_buckets> b4(64);
  warpkv::hopscotch_map<std::uint32_t, std::uint32_t, 1, warpkv::hopscotch_buckets> b1(64);
  warpkv::cuckoo_map<std::uint32_t, std::uint32_t, 8> c8(64);
  warpkv::cuckoo_map<std::uint32_t, std::uint32_t, 1> c1(64);
  warpkv::linear_map<std::uint32_t, std::uint32_t, 1> l1(64);
  warpkv::quadratic_map<std::uint32_t, std::uint32_t, 1> q1(64);
  use(h4, n);
  use(h1, n);
  use(b4, n);
  use(b1, n);
  use(c8, n);
  use(c1, n);
  use(l1, n);
  use(q1, n);
}
