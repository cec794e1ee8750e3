// warpkv-bench without libmemcached (pkg-config found no libmemcached at configure time): the
// --memcached option of `warpkv-bench cache` exists but says it is not built.
#include <stdexcept>

#include "memcached_baseline.hpp"

namespace warpkv_bench {

bool memcached_baseline_available() { return false; }

std::size_t memcached_memory_mb(std::size_t, std::size_t, std::size_t, std::size_t* item_bytes) {
  if (item_bytes) *item_bytes = 0;
  return 0;
}

memcached_run_result run_memcached_ycsb(const memcached_run_config&, const memcached_trace_view&) {
  throw std::runtime_error(
      "--memcached: this warpkv-bench was built without libmemcached (install Debian's libmemcached-dev, "
      "or put its extracted .deb on PKG_CONFIG_PATH, and re-run cmake)");
}

}  // namespace warpkv_bench
