#pragma once
// Modes and transaction statuses of warpkv::stm.
#include <cstdint>
#include <string_view>

namespace warpkv::stm {

/// How a heap's transactions synchronize (guarantees per mode: docs/design/stm.md).
enum class mode : std::uint8_t {
  /// The seed's design: private copies, lazy (commit-time) conflict detection, write-back,
  /// a CAS-acquired versioned lock per object, version check, increment on release.
  /// Obstruction-free: a commit that meets a held lock aborts. Committed transactions are
  /// serializable; a live transaction may observe an inconsistent snapshot ("zombie").
  baseline,
  /// Opacity (TL2-style global version clock, every read validated, snapshot extension) and a
  /// contention manager with a progress guarantee (commit-time locks taken in ascending object
  /// order, never waiting while holding one). The default.
  opaque,
};

/// State of a transaction. Only `conflict` is retried by `atomically`.
enum class tx_status : std::uint8_t {
  idle = 0,             ///< constructed, not begun
  active = 1,           ///< begun; reads and writes allowed
  committed = 2,        ///< its writes are visible, atomically
  conflict = 3,         ///< aborted by a conflict with another transaction; retrying may succeed
  access_set_full = 4,  ///< it touched more distinct objects than the compile-time Capacity
  write_set_full = 5,   ///< it wrote more distinct objects than the compile-time WriteCapacity
  invalid_id = 6,       ///< an object id was >= the heap's size
  user_abort = 7,       ///< abort() was called
};

constexpr std::string_view to_string(mode m) { return m == mode::baseline ? "baseline" : "opaque"; }

constexpr std::string_view to_string(tx_status s) {
  switch (s) {
    case tx_status::idle: return "idle";
    case tx_status::active: return "active";
    case tx_status::committed: return "committed";
    case tx_status::conflict: return "conflict";
    case tx_status::access_set_full: return "access_set_full";
    case tx_status::write_set_full: return "write_set_full";
    case tx_status::invalid_id: return "invalid_id";
    case tx_status::user_abort: return "user_abort";
  }
  return "unknown";
}

}  // namespace warpkv::stm
