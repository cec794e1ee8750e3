// warpkv-bench cache --memcached: the YCSB trace replayed against a real memcached server through
// libmemcached (memcached_baseline.cpp). Plain C++: no warpkv or CUDA headers, so the translation
// unit is compiled by the host compiler and linked only when pkg-config finds libmemcached
// (WARPKV_BENCH_HAS_MEMCACHED); without it memcached_baseline_available() is false and
// run_memcached_ycsb throws a message saying so (memcached_baseline_stub.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace warpkv_bench {

struct memcached_run_config {
  std::string target;            ///< "auto" (start a server on a loopback port) or "HOST:PORT"
  unsigned client_threads = 0;   ///< 0: hardware threads
  unsigned server_threads = 0;   ///< memcached -t (auto only); 0: hardware threads
  std::size_t batch = 4096;      ///< operations per batch (reads of a batch go out as one multi-get)
  std::size_t capacity = 0;      ///< entries the server should hold (sizes -m when auto)
  std::size_t key_bytes = 24;    ///< for the -m computation
  std::size_t value_bytes = 100; ///< bytes of every value written
  bool pipelined_sets = false;   ///< buffer the sets and send them with noreply (no round trip each)
  unsigned max_set_retries = 3;  ///< retries of a set refused for lack of memory, then it counts as refused
};

/// One YCSB run phase: op i reads (get, insert on a miss) or writes (set) record records[i];
/// record_keys[r] is record r's key. Records [0, load_records) are loaded first (untimed).
struct memcached_trace_view {
  const std::vector<std::string>* record_keys = nullptr;
  const std::vector<std::uint8_t>* is_read = nullptr;
  const std::vector<std::uint64_t>* records = nullptr;
  std::uint64_t load_records = 0;
};

struct memcached_run_result {
  double ms = 0;                  ///< wall time of the run phase (all client threads)
  std::uint64_t ops = 0, reads = 0, read_hits = 0;
  std::uint64_t failures = 0;     ///< wrong/torn values, unexpected keys, errors of libmemcached
  /// Sets memcached refused for lack of memory ("SERVER_ERROR out of memory storing object",
  /// MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE) after max_set_retries retries: not failures. A
  /// refused set leaves the key absent (memcached unlinks its old value), so it reads as a miss.
  /// Counted by the client, i.e. only sets with a reply (not the noreply sets of pipelined_sets).
  std::uint64_t load_sets_refused = 0, run_sets_refused = 0;
  std::uint64_t set_retries = 0;  ///< sets sent again after such a refusal (load and run)
  /// The server's own count (stats store_no_memory, load and run, retries included): the
  /// refusals of noreply sets too, which no client sees.
  std::uint64_t server_store_no_memory = 0;
  std::string server_extra_args;  ///< $WARPKV_MEMCACHED_ARGS appended to the auto server's command
  std::string first_failure;      ///< the first failure, for the message
  std::string version;            ///< memcached's version (from the server)
  std::size_t memory_mb = 0;      ///< -m (auto) or the server's limit_maxbytes in MiB
  unsigned server_threads = 0;    ///< -t (auto) or the server's "threads" stat
  unsigned client_threads = 0;
  std::size_t batch = 0;
  std::uint64_t items_after_load = 0, evictions = 0;  ///< server stats: curr_items, evictions in the run
  std::size_t item_bytes = 0;     ///< bytes per item assumed for -m (see memcached_memory_mb)
};

/// True when warpkv-bench was built with libmemcached.
bool memcached_baseline_available();

/// memcached's memory limit (MiB, -m) to hold `entries` items of key_bytes/value_bytes:
/// item = 56 (item header with CAS) + key + 1 + value + 2 ("\r\n") bytes, rounded up to the
/// slab chunk that stores it (memcached's default classes: 96 bytes, then x1.25, 8-aligned), so
/// a 1 MiB slab page holds floor(2^20 / chunk) items and -m = ceil(entries / that), at least 2
/// (memcached refuses -m 1 with its default 1 MiB item size limit).
/// YCSB (24-byte keys, 100-byte values): 183 -> 192-byte chunks, 5461 items per MiB. -m is whole
/// MiB, so memcached holds up to 5460 more entries than asked; the run reports the items it
/// really held after the load (stats curr_items).
std::size_t memcached_memory_mb(std::size_t entries, std::size_t key_bytes, std::size_t value_bytes,
                                std::size_t* item_bytes = nullptr);

/// Runs the trace against memcached; throws std::runtime_error when the server cannot be started
/// or reached (or when warpkv-bench was built without libmemcached).
memcached_run_result run_memcached_ycsb(const memcached_run_config&, const memcached_trace_view&);

}  // namespace warpkv_bench
