// warpkv-bench cache --memcached: the YCSB trace against a real memcached through libmemcached.
//
// The server: "auto" starts `memcached -l 127.0.0.1 -p <free port> -m <MiB> -t <threads>` as a
// child process (binary from $WARPKV_MEMCACHED or PATH), waits until it accepts connections and
// stops it (SIGTERM, then SIGKILL) when the run ends; "HOST:PORT" uses a running server, flushed
// before the load (its own -m and -t are reported from its stats).
// The clients: client_threads threads, each with its own libmemcached handle (ASCII protocol, TCP
// no-delay), take whole batches of the trace in turn (batch b goes to thread b % threads). Within
// a batch the reads go out as multi-gets (memcached_mget of the distinct keys), then every read
// miss is set (insert on a read miss, as the GPU cache's get_or_set: the key's other reads in the
// same multi-get count as hits, as they would in trace order) and the writes are set one by one.
// Reads are gathered until a read of a record written earlier in the batch: then the multi-get
// and the pending writes go out first, so each record sees its operations in trace order (YCSB D
// reads the records it has just inserted); otherwise a batch is one multi-get.
// --memcached-pipelined-sets: the sets are buffered and sent with noreply (flushed before each
// multi-get and at the end of each group), memcached's heavy-batching mode; set errors are then
// not seen by the client (the values read back are still verified).
// Refused sets: under memory pressure memcached may refuse a set with "SERVER_ERROR out of memory
// storing object" (libmemcached: MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE, which records no
// error message, so the connection's last message still reads "SUCCESS"). Its item allocation
// (items.c, do_item_alloc_pull) tries 10 times to evict from the LRU tail and gives up when other
// worker threads keep winning the freed chunks or hold the tail items: a race that needs many
// server threads running at once (seen on the 16-core GPU machine with -t 16 and 16 clients, not
// on 2 cores), or always with -M (no eviction) once memory is full. memcached then unlinks the
// key's old value, so the key reads as a miss: a cache may do that. The client retries such a set
// up to max_set_retries times (as a real client would), then counts it as refused (load or run
// phase) rather than as a failure; any other error is a failure. A refused insert-on-miss does not
// make the key's later reads in the same multi-get hits. The server's own count (stats
// store_no_memory) is reported too: it also sees the refused noreply sets of pipelined mode.
// $WARPKV_MEMCACHED_ARGS: extra arguments for the auto server (e.g. -M, as the smoke test of the
// refused-set path uses). $WARPKV_MEMCACHED_FAULT=wrong-value: every load set stores the value of
// the next record, so that any hit returns a wrong value and verification must fail (the smoke
// test that proves it still does).
// Verification: every value carries its record number, a writer tag and bytes derived from both,
// so a hit for the wrong key or with torn bytes is counted as a failure (as is any libmemcached
// error); the caller turns failures into exit code 1.
#include "memcached_baseline.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libmemcached/memcached.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "warpkv/core/hash.hpp"

extern char** environ;

namespace warpkv_bench {
namespace {

using u64 = std::uint64_t;
using clock_type = std::chrono::steady_clock;


/// value = [record (8 bytes)][tag (8 bytes)][bytes of fmix64(record, tag, i)...]
void fill_value(u64 record, u64 tag, char* v, std::size_t n) {
  std::memset(v, 0, n);
  std::memcpy(v, &record, std::min<std::size_t>(8, n));
  if (n > 8) std::memcpy(v + 8, &tag, std::min<std::size_t>(8, n - 8));
  for (std::size_t i = 16; i < n; ++i) v[i] = static_cast<char>(warpkv::fmix64(record * 0x9e3779b97f4a7c15ull + tag + i) & 0xff);
}

/// Empty when the value is record's, with consistent bytes; else what is wrong.
std::string check_value(u64 record, const char* v, std::size_t n, std::size_t want_n) {
  if (n != want_n) return "value of " + std::to_string(n) + " bytes, expected " + std::to_string(want_n);
  if (n < 16) return {};
  u64 r = 0, tag = 0;
  std::memcpy(&r, v, 8);
  std::memcpy(&tag, v + 8, 8);
  if (r != record) return "value of record " + std::to_string(r) + " under the key of record " + std::to_string(record);
  for (std::size_t i = 16; i < n; ++i)
    if (v[i] != static_cast<char>(warpkv::fmix64(record * 0x9e3779b97f4a7c15ull + tag + i) & 0xff))
      return "torn value of record " + std::to_string(record) + " at byte " + std::to_string(i);
  return {};
}

std::string find_binary() {
  if (const char* e = std::getenv("WARPKV_MEMCACHED"); e != nullptr && *e != '\0') {
    if (::access(e, X_OK) == 0) return e;
    throw std::runtime_error(std::string("--memcached auto: $WARPKV_MEMCACHED=") + e + " is not an executable file");
  }
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t at = 0;
  while (at <= p.size()) {
    const std::size_t end = std::min(p.find(':', at), p.size());
    const std::string dir = p.substr(at, end - at);
    const std::string cand = (dir.empty() ? std::string(".") : dir) + "/memcached";
    struct stat st {};
    if (::stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(cand.c_str(), X_OK) == 0) return cand;
    at = end + 1;
  }
  throw std::runtime_error(
      "--memcached auto: no memcached binary on PATH (install Debian's memcached package, or set "
      "WARPKV_MEMCACHED=/path/to/memcached; see docs/perf.md for carrying it as extracted .deb files)");
}

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("--memcached auto: socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("--memcached auto: cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

bool accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

/// A memcached child process on 127.0.0.1, stopped by the destructor.
class memcached_child {
 public:
  memcached_child(std::size_t memory_mb, unsigned threads, const std::vector<std::string>& extra_args) {
    const std::string bin = find_binary();
    port_ = free_loopback_port();
    std::vector<std::string> args{bin, "-l", "127.0.0.1", "-p", std::to_string(port_), "-U", "0",
                                  "-m", std::to_string(memory_mb), "-t", std::to_string(threads), "-c", "4096"};
    if (::geteuid() == 0) args.insert(args.end(), {"-u", "root"});  // memcached refuses root without -u
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (const int rc = ::posix_spawn(&pid_, bin.c_str(), nullptr, nullptr, argv.data(), environ); rc != 0)
      throw std::runtime_error("--memcached auto: cannot start " + bin + ": " + std::strerror(rc));
    const auto deadline = clock_type::now() + std::chrono::seconds(10);
    while (!accepts(port_)) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("--memcached auto: " + bin + " exited at start (status " + std::to_string(st) +
                                 "); its message is above");
      }
      if (clock_type::now() > deadline) {
        stop();
        throw std::runtime_error("--memcached auto: " + bin + " did not accept connections on 127.0.0.1:" +
                                 std::to_string(port_) + " within 10 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  memcached_child(const memcached_child&) = delete;
  memcached_child& operator=(const memcached_child&) = delete;
  ~memcached_child() { stop(); }
  int port() const { return port_; }

 private:
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int st = 0;
    for (int i = 0; i < 250 && ::waitpid(pid_, &st, WNOHANG) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (::waitpid(pid_, &st, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
    }
    pid_ = -1;
  }
  pid_t pid_ = -1;
  int port_ = 0;
};

/// A libmemcached handle for one thread.
class client {
 public:
  client(const std::string& host, int port, bool pipelined = false) : m_(memcached_create(nullptr)) {
    if (m_ == nullptr) throw std::runtime_error("--memcached: memcached_create failed");
    memcached_behavior_set(m_, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    if (pipelined) {  // sets are buffered and sent with noreply; the connection keeps their order
      memcached_behavior_set(m_, MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, 1);
      memcached_behavior_set(m_, MEMCACHED_BEHAVIOR_NOREPLY, 1);
    }
    if (memcached_server_add(m_, host.c_str(), static_cast<in_port_t>(port)) != MEMCACHED_SUCCESS) {
      memcached_free(m_);
      throw std::runtime_error("--memcached: cannot add server " + host + ":" + std::to_string(port));
    }
  }
  client(const client&) = delete;
  client& operator=(const client&) = delete;
  ~client() { memcached_free(m_); }
  memcached_st* get() const { return m_; }
  /// The return code's name and the connection's last message: the message alone can read
  /// "SUCCESS" for a code that is not (seen on the GPU machine's 16-thread load, session 5).
  std::string error(memcached_return_t rc) const { return std::string(memcached_strerror(m_, rc)) + " (" + error() + ")"; }
  std::string error() const { return memcached_last_error_message(m_) ? memcached_last_error_message(m_) : "no message"; }

 private:
  memcached_st* m_;
};

/// One server statistic of `stats`, 0 when absent. Through memcached_stat_execute, which hands
/// over every line: memcached_stat_get_value knows only a fixed list of names and answers 0 for
/// the others (store_no_memory among them).
u64 server_stat(const client& c, const char* name) {
  struct wanted {
    const char* name;
    u64 value = 0;
  } w{name};
  const memcached_return_t rc = memcached_stat_execute(
      c.get(), nullptr,
      [](const memcached_instance_st*, const char* key, size_t key_length, const char* value, size_t value_length,
         void* context) -> memcached_return_t {
        auto* x = static_cast<wanted*>(context);
        if (key_length == std::strlen(x->name) && std::memcmp(key, x->name, key_length) == 0)
          x->value = std::strtoull(std::string(value, value_length).c_str(), nullptr, 10);
        return MEMCACHED_SUCCESS;
      },
      &w);
  if (rc != MEMCACHED_SUCCESS) throw std::runtime_error("--memcached: stats failed: " + c.error(rc));
  return w.value;
}

/// $WARPKV_MEMCACHED_ARGS split at blanks (no quoting).
std::vector<std::string> extra_server_args() {
  std::vector<std::string> out;
  const char* e = std::getenv("WARPKV_MEMCACHED_ARGS");
  for (const char* p = e ? e : ""; *p != '\0';) {
    while (*p == ' ' || *p == '\t') ++p;
    const char* q = p;
    while (*q != '\0' && *q != ' ' && *q != '\t') ++q;
    if (q != p) out.emplace_back(p, q);
    p = q;
  }
  return out;
}

struct failure_log {
  std::atomic<u64> count{0};
  std::mutex m;
  std::string first;
  void add(const std::string& what) {
    if (count.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> g(m);
      first = what;
    }
  }
};

/// Sets refused for lack of memory and the retries they took, per client thread.
struct refusals {
  u64 refused = 0, retries = 0;
};

/// memcached_set, sent again up to max_retries times while the server refuses it for lack of
/// memory. True when stored (or buffered, for noreply sets); false when still refused (counted in
/// k) or failed for any other reason (counted in fail, `what` names the set).
bool store(const client& c, const std::string& key, const char* v, std::size_t n, unsigned max_retries, refusals& k,
           failure_log& fail, const char* what) {
  for (unsigned attempt = 0;; ++attempt) {
    const auto rc = memcached_set(c.get(), key.data(), key.size(), v, n, 0, 0);
    if (rc == MEMCACHED_SUCCESS) return true;
    if (rc != MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE) {
      fail.add(std::string(what) + ": " + c.error(rc));
      return false;
    }
    if (attempt == max_retries) {
      ++k.refused;
      return false;
    }
    ++k.retries;
    std::this_thread::yield();  // the refusal is a lost race for an evicted chunk: try again at once
  }
}

}  // namespace

bool memcached_baseline_available() { return true; }

std::size_t memcached_memory_mb(std::size_t entries, std::size_t key_bytes, std::size_t value_bytes, std::size_t* item_bytes) {
  const std::size_t item = 56 + key_bytes + 1 + value_bytes + 2;
  std::size_t chunk = 96;  // memcached's smallest slab chunk (48-byte header + -n 48), growth -f 1.25
  while (chunk < item) chunk = (static_cast<std::size_t>(static_cast<double>(chunk) * 1.25) + 7) / 8 * 8;
  if (item_bytes) *item_bytes = chunk;
  // every item has the same size, so all live in one slab class of 1 MiB pages of whole chunks
  const std::size_t per_page = (std::size_t{1} << 20) / chunk;
  return std::max<std::size_t>(2, (entries + per_page - 1) / per_page);  // memcached refuses -m 1 (-I 1m > m/2)
}

memcached_run_result run_memcached_ycsb(const memcached_run_config& cfg, const memcached_trace_view& tv) {
  const auto& keys = *tv.record_keys;
  const auto& is_read = *tv.is_read;
  const auto& recs = *tv.records;
  memcached_run_result res;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  res.client_threads = cfg.client_threads ? cfg.client_threads : hw;
  res.batch = std::max<std::size_t>(1, cfg.batch);
  res.ops = recs.size();

  std::unique_ptr<memcached_child> child;
  std::string host = "127.0.0.1";
  int port = 0;
  if (cfg.target == "auto") {
    res.memory_mb = memcached_memory_mb(cfg.capacity, cfg.key_bytes, cfg.value_bytes, &res.item_bytes);
    res.server_threads = cfg.server_threads ? cfg.server_threads : hw;
    const std::vector<std::string> extra = extra_server_args();
    for (const auto& a : extra) res.server_extra_args += (res.server_extra_args.empty() ? "" : " ") + a;
    child = std::make_unique<memcached_child>(res.memory_mb, res.server_threads, extra);
    port = child->port();
  } else {
    const auto colon = cfg.target.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == cfg.target.size())
      throw std::runtime_error("--memcached: expected HOST:PORT or auto, got '" + cfg.target + "'");
    host = cfg.target.substr(0, colon);
    port = std::atoi(cfg.target.c_str() + colon + 1);
    if (port <= 0 || port > 65535) throw std::runtime_error("--memcached: bad port in '" + cfg.target + "'");
  }

  client control(host, port);
  {
    memcached_return_t rc;
    memcached_version(control.get());
    const memcached_instance_st* inst = memcached_server_instance_by_position(control.get(), 0);
    res.version = std::to_string(memcached_server_major_version(inst)) + "." +
                  std::to_string(memcached_server_minor_version(inst)) + "." + std::to_string(memcached_server_micro_version(inst));
    if (memcached_server_major_version(inst) == UINT8_MAX)
      throw std::runtime_error("--memcached: no answer from " + host + ":" + std::to_string(port) + ": " + control.error());
    if (!child) {  // a running server: start empty, report its own limits
      if ((rc = memcached_flush(control.get(), 0)) != MEMCACHED_SUCCESS)
        throw std::runtime_error("--memcached: flush_all failed: " + control.error(rc));
      res.memory_mb = static_cast<std::size_t>(server_stat(control, "limit_maxbytes") >> 20);
      res.server_threads = static_cast<unsigned>(server_stat(control, "threads"));
    }
  }

  failure_log fail;
  const std::size_t vb = cfg.value_bytes;
  const char* fault = std::getenv("WARPKV_MEMCACHED_FAULT");
  const bool wrong_values = fault != nullptr && std::strcmp(fault, "wrong-value") == 0;
  if (fault != nullptr && *fault != '\0' && !wrong_values)
    throw std::runtime_error(std::string("--memcached: unknown $WARPKV_MEMCACHED_FAULT=") + fault + " (known: wrong-value)");
  if (wrong_values)
    std::fprintf(stderr, "memcached: WARPKV_MEMCACHED_FAULT=wrong-value: every load set stores the next record's value "
                         "(verification must fail)\n");
  const u64 no_memory_before = server_stat(control, "store_no_memory");
  std::atomic<u64> refused{0}, retries{0};
  // load phase (untimed): records [0, load_records), split over the client threads
  {
    std::vector<std::jthread> pool;
    for (unsigned w = 0; w < res.client_threads; ++w)
      pool.emplace_back([&, w] {
        client c(host, port);
        std::vector<char> v(vb);
        refusals k;
        for (u64 r = w; r < tv.load_records; r += res.client_threads) {
          fill_value(wrong_values ? r + 1 : r, 0, v.data(), vb);
          store(c, keys[r], v.data(), vb, cfg.max_set_retries, k, fail, "load set");
        }
        refused += k.refused;
        retries += k.retries;
      });
  }
  res.load_sets_refused = refused.exchange(0);
  res.items_after_load = server_stat(control, "curr_items");
  const u64 evictions_before = server_stat(control, "evictions");

  // run phase: batch b to thread b % threads
  const std::size_t nbatches = (recs.size() + res.batch - 1) / res.batch;
  std::atomic<u64> reads{0}, hits{0};
  std::vector<std::unique_ptr<client>> clients;
  for (unsigned w = 0; w < res.client_threads; ++w) clients.push_back(std::make_unique<client>(host, port, cfg.pipelined_sets));
  const auto t0 = clock_type::now();
  {
    std::vector<std::jthread> pool;
    for (unsigned w = 0; w < res.client_threads; ++w)
      pool.emplace_back([&, w] {
        memcached_st* m = clients[w]->get();
        memcached_result_st result;
        memcached_result_create(m, &result);
        std::vector<char> v(vb);
        std::unordered_map<u64, std::uint32_t> want;  // distinct read records of the batch -> occurrences
        std::vector<const char*> kp;
        std::vector<std::size_t> kl;
        std::vector<u64> order;
        u64 my_reads = 0, my_hits = 0;
        refusals k;
        std::vector<std::size_t> writes;          // writes of the batch not yet sent, in trace order
        std::unordered_set<u64> written;          // their records
        std::size_t batch_no = 0;
        // Sends the multi-get of the reads gathered so far (insert on a miss), then the writes.
        auto flush = [&] {
          if (!kp.empty()) {
            if (cfg.pipelined_sets) memcached_flush_buffers(m);
            if (const auto rc = memcached_mget(m, kp.data(), kl.data(), kp.size()); rc != MEMCACHED_SUCCESS)
              fail.add("mget: " + clients[w]->error(rc));
            memcached_return_t rc = MEMCACHED_SUCCESS;
            while (memcached_result_st* got = memcached_fetch_result(m, &result, &rc)) {
              const char* key = memcached_result_key_value(got);
              const std::size_t key_len = memcached_result_key_length(got);
              const char* val = memcached_result_value(got);
              const std::size_t vlen = memcached_result_length(got);
              u64 r = ~u64{0};
              if (vlen >= 8) std::memcpy(&r, val, 8);
              const auto it = want.find(r);
              if (it == want.end() || keys[r].size() != key_len || std::memcmp(keys[r].data(), key, key_len) != 0) {
                fail.add("wrong value: multi-get returned for key '" + std::string(key, key_len) +
                         "' a value that does not belong to that key");
              } else if (std::string e = check_value(r, val, vlen, vb); !e.empty()) {
                fail.add(e);
              } else if (it->second != 0) {
                my_hits += it->second;
                it->second = 0;  // found: not set below
              }
            }
            if (rc != MEMCACHED_END && rc != MEMCACHED_SUCCESS && rc != MEMCACHED_NOTFOUND)
              fail.add(std::string("fetch: ") + memcached_strerror(m, rc));
            // insert on a read miss; the key's later reads in the group hit it, unless the insert
            // was refused (they would have missed too)
            for (const u64 r : order)
              if (const std::uint32_t n = want[r]; n != 0) {
                fill_value(r, 1 + batch_no, v.data(), vb);
                if (store(*clients[w], keys[r], v.data(), vb, cfg.max_set_retries, k, fail, "set")) my_hits += n - 1;
              }
          }
          for (const std::size_t i : writes) {
            fill_value(recs[i], 1 + i, v.data(), vb);
            store(*clients[w], keys[recs[i]], v.data(), vb, cfg.max_set_retries, k, fail, "set");
          }
          if (cfg.pipelined_sets)
            if (const auto rc = memcached_flush_buffers(m); rc != MEMCACHED_SUCCESS) fail.add("flush: " + clients[w]->error(rc));
          want.clear();
          kp.clear();
          kl.clear();
          order.clear();
          writes.clear();
          written.clear();
        };
        for (std::size_t b = w; b < nbatches; b += res.client_threads) {
          batch_no = b;
          const std::size_t first = b * res.batch, last = std::min(recs.size(), first + res.batch);
          for (std::size_t i = first; i < last; ++i) {
            const u64 r = recs[i];
            if (!is_read[i]) {
              writes.push_back(i);
              written.insert(r);
              continue;
            }
            if (written.count(r) != 0) flush();  // a read after a write of its record sees that write
            ++my_reads;
            if (want[r]++ == 0) {
              order.push_back(r);
              kp.push_back(keys[r].data());
              kl.push_back(keys[r].size());
            }
          }
          flush();
        }
        memcached_result_free(&result);
        reads += my_reads;
        hits += my_hits;
        refused += k.refused;
        retries += k.retries;
      });
  }
  res.ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  res.reads = reads.load();
  res.read_hits = hits.load();
  res.evictions = server_stat(control, "evictions") - evictions_before;
  res.run_sets_refused = refused.load();
  res.set_retries = retries.load();
  res.server_store_no_memory = server_stat(control, "store_no_memory") - no_memory_before;
  std::fprintf(stderr,
               "memcached: sets refused for lack of memory (after %u retries): %llu in the load, %llu in the run; retries %llu; "
               "server store_no_memory %llu%s%s\n",
               cfg.max_set_retries, static_cast<unsigned long long>(res.load_sets_refused),
               static_cast<unsigned long long>(res.run_sets_refused), static_cast<unsigned long long>(res.set_retries),
               static_cast<unsigned long long>(res.server_store_no_memory),
               res.server_extra_args.empty() ? "" : "; extra server args: ", res.server_extra_args.c_str());
  res.failures = fail.count.load();
  res.first_failure = fail.first;
  return res;
}

}  // namespace warpkv_bench
