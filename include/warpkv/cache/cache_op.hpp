#pragma once
// The operation codes of a cache batch (kv_cache::execute, execute_resident, the submitter).
#include <cstdint>
#include <string_view>

namespace warpkv {

/// Operation codes of a cache batch.
enum class cache_op : std::uint8_t { get = 0, set = 1, add = 2, erase = 3, get_or_set = 4, contains = 5 };

constexpr std::string_view to_string(cache_op o) {
  switch (o) {
    case cache_op::get: return "get";
    case cache_op::set: return "set";
    case cache_op::add: return "add";
    case cache_op::erase: return "erase";
    case cache_op::get_or_set: return "get_or_set";
    case cache_op::contains: return "contains";
  }
  return "unknown";
}

}  // namespace warpkv
