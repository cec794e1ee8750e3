// A user project: find_package(warpkv), a host-backend map, one insert and find.
#include <warpkv/hopscotch/hopscotch_map.hpp>

#include <cstdio>
#include <vector>

int main() {
  warpkv::hopscotch_map<unsigned, unsigned> map(100, {}, warpkv::execution::host(2));
  const std::vector<unsigned> keys{1, 2, 3}, values{10, 20, 30};
  map.insert(keys, values);
  std::vector<unsigned> out;
  const auto st = map.find(keys, out);
  const bool ok = st[1] == warpkv::status::found && out[1] == 20 && map.size() == 3;
  std::puts(ok ? "consumer ok" : "consumer FAILED");
  return ok ? 0 : 1;
}
