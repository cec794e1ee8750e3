// Bulk calls from host data: insert, find, upsert (insert_or_assign), erase, size.
// Compiled by a plain C++ compiler the map runs on the host backend (host threads emulating
// warps); compiled by nvcc it runs on the GPU when one is visible (execution::automatic()).
#include <warpkv/hopscotch/hopscotch_map.hpp>
#include <warpkv/version.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  using warpkv::status;
  warpkv::hopscotch_map<std::uint32_t, std::uint32_t> map(1 << 16);  // room for 65536 keys before growth
  std::printf("warpkv %s, backend: %s\n", WARPKV_VERSION_STRING, map.exec().name().c_str());

  std::vector<std::uint32_t> keys, values;
  for (std::uint32_t k = 1; k <= 1000; ++k) {
    keys.push_back(k);
    values.push_back(10 * k);
  }
  const auto inserted = map.insert(keys, values);  // one status per key: inserted, or found if present

  std::vector<std::uint32_t> out;
  const auto found = map.find(keys, out);  // found + the value, or not_found + 0
  bool ok = inserted[0] == status::inserted && found[999] == status::found && out[999] == 10000;

  map.insert_or_assign(std::vector<std::uint32_t>{7}, std::vector<std::uint32_t>{77});  // status::assigned
  map.erase(std::vector<std::uint32_t>{8});                                              // status::erased
  const auto after = map.find(std::vector<std::uint32_t>{7, 8}, out);
  ok = ok && out[0] == 77 && after[1] == status::not_found && map.size() == 999;

  std::printf("bulk_host: %zu keys, capacity %zu: %s\n", map.size(), map.capacity(), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
