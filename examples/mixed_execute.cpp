// One mixed batch: inserts, upserts, finds and erases that all run concurrently (execute).
// Each operation gets its own status; finds also get their value. Operations on the same key
// in one batch are concurrent, so their order is whatever the map linearizes (see the design
// notes in docs/design/); operations on distinct keys are independent.
#include <warpkv/hopscotch/hopscotch_map.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  using warpkv::op;
  using warpkv::status;
  warpkv::hopscotch_map<std::uint64_t, std::uint64_t> map(1024);
  map.insert(std::vector<std::uint64_t>{1, 2, 3}, std::vector<std::uint64_t>{100, 200, 300});

  const std::vector<op> ops{op::insert, op::insert_or_assign, op::find, op::erase, op::find, op::contains};
  const std::vector<std::uint64_t> keys{4, 2, 1, 3, 99, 4};
  const std::vector<std::uint64_t> values{400, 222, 0, 0, 0, 0};  // read by insert / insert_or_assign only
  std::vector<std::uint64_t> results;                               // find results (0 where none)
  const auto st = map.execute(ops, keys, values, results);

  for (std::size_t i = 0; i < ops.size(); ++i)
    std::printf("  op %zu on key %llu: %s (value %llu)\n", i, static_cast<unsigned long long>(keys[i]),
                std::string(warpkv::to_string(st[i])).c_str(), static_cast<unsigned long long>(results[i]));
  // key 4's insert and contains are concurrent: contains may see it or not.
  const bool ok = st[0] == status::inserted && st[1] == status::assigned && st[2] == status::found &&
                  results[2] == 100 && st[3] == status::erased && st[4] == status::not_found &&
                  (st[5] == status::found || st[5] == status::not_found) && map.size() == 3;
  std::printf("mixed_execute: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
