#pragma once
#include <cstdint>
#include <string_view>

#include "warpkv/core/config.hpp"

namespace warpkv {

/// Per-operation result shared by every warpkv map.
enum class status : std::uint8_t {
  inserted = 0,   ///< key was absent and is now present with the given value
  assigned = 1,   ///< key was present; its value was replaced (insert_or_assign)
  found = 2,      ///< key is present (find, contains, insert of a present key)
  not_found = 3,  ///< key is absent (find, contains, erase)
  erased = 4,     ///< key was present and has been removed
  full = 5,       ///< no room within reach; the bulk API grows and retries, a device ref returns it
  invalid_key = 6 ///< the key equals the map's empty-key sentinel; the map was not touched
};

/// Operation codes of a mixed batch (`execute`).
enum class op : std::uint8_t { insert = 0, insert_or_assign = 1, find = 2, erase = 3, contains = 4 };

constexpr std::string_view to_string(status s) {
  switch (s) {
    case status::inserted: return "inserted";
    case status::assigned: return "assigned";
    case status::found: return "found";
    case status::not_found: return "not_found";
    case status::erased: return "erased";
    case status::full: return "full";
    case status::invalid_key: return "invalid_key";
  }
  return "unknown";
}

constexpr std::string_view to_string(op o) {
  switch (o) {
    case op::insert: return "insert";
    case op::insert_or_assign: return "insert_or_assign";
    case op::find: return "find";
    case op::erase: return "erase";
    case op::contains: return "contains";
  }
  return "unknown";
}

}  // namespace warpkv
