#pragma once
// cache_submitter: the CCHT front end for many host threads. Threads submit single operations
// into one reusable buffer; when it holds `threshold` operations (or on flush()) the submitting
// thread swaps it with a second, reusable buffer and runs that as one mixed batch on the cache,
// while other threads keep filling the first. Each submitter gets a std::future of its result.
//
// Thread safety: submit() and flush() may be called from any number of threads. Batches run one
// at a time per submitter (several submitters on one cache run concurrently, see kv_cache.hpp).
// The destructor flushes what is pending.
// Not done yet (issue 11, section 3): a latency deadline (a batch is launched only by the
// threshold or flush()), pinned buffers and stream double-buffering of transfers.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <future>
#include <mutex>
#include <span>
#include <vector>

#include "warpkv/cache/kv_cache.hpp"
#include "warpkv/core/error.hpp"

namespace warpkv {

template <class Cache>
class cache_submitter {
 public:
  using key_type = typename Cache::key_type;
  struct result {
    status st = status::not_found;
    std::vector<std::byte> value;  ///< value_bytes() bytes for a get/get_or_set that returns a value, else empty
  };

  cache_submitter(Cache& cache, std::size_t threshold) : cache_(cache), threshold_(threshold) {
    require(threshold > 0, "threshold", "a batch needs at least one operation");
  }
  cache_submitter(const cache_submitter&) = delete;
  cache_submitter& operator=(const cache_submitter&) = delete;
  ~cache_submitter() {
    try {
      flush();
    } catch (...) {  // the futures carry the error; a destructor must not throw
    }
  }

  /// Queues one operation; `value` (set/add/get_or_set) holds at most value_bytes() bytes
  /// (zero-padded). Runs a batch when the buffer reaches the threshold.
  std::future<result> submit(cache_op op, const key_type& key, std::span<const std::byte> value = {},
                             std::uint64_t expires_at = 0) {
    require(static_cast<unsigned>(op) <= static_cast<unsigned>(cache_op::contains), "op", "unknown operation code");
    require(value.size() <= cache_.value_bytes(), "value",
            std::to_string(value.size()) + " bytes exceed the cache's value_bytes of " + std::to_string(cache_.value_bytes()));
    std::future<result> f;
    bool full = false;
    {
      std::lock_guard<std::mutex> g(fill_);
      const std::size_t stride = cache_.value_stride();
      pending_.ops.push_back(op);
      pending_.keys.push_back(key);
      pending_.values.resize(pending_.values.size() + stride);
      if (!value.empty()) std::memcpy(pending_.values.data() + pending_.values.size() - stride, value.data(), value.size());
      pending_.expires.push_back(expires_at);
      pending_.promises.emplace_back();
      f = pending_.promises.back().get_future();
      full = pending_.ops.size() >= threshold_;
    }
    if (full) run_pending();
    return f;
  }

  /// Runs whatever is pending now.
  void flush() { run_pending(); }

  [[nodiscard]] std::size_t batches() const { return batches_.load(); }
  [[nodiscard]] std::size_t operations() const { return operations_.load(); }
  [[nodiscard]] std::size_t threshold() const { return threshold_; }

 private:
  struct batch {
    std::vector<cache_op> ops;
    std::vector<key_type> keys;
    std::vector<std::byte> values, out;
    std::vector<std::uint64_t> expires;
    std::vector<status> statuses;
    std::vector<std::promise<result>> promises;
    void clear() {  // keeps the capacity: the buffers are reused batch after batch
      ops.clear();
      keys.clear();
      values.clear();
      expires.clear();
      promises.clear();
    }
  };

  void run_pending() {
    std::lock_guard<std::mutex> one_batch(run_);
    {
      std::lock_guard<std::mutex> g(fill_);
      if (pending_.ops.empty()) return;
      std::swap(pending_, running_);
    }
    batch& b = running_;
    const std::size_t n = b.ops.size(), stride = cache_.value_stride();
    b.out.resize(n * stride);
    b.statuses.resize(n);
    try {
      cache_.execute(b.ops, b.keys, b.values, b.out, b.statuses, nullptr, b.expires);
    } catch (...) {
      for (auto& p : b.promises) p.set_exception(std::current_exception());
      b.clear();
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      result r;
      r.st = b.statuses[i];
      const bool has_value = (b.ops[i] == cache_op::get || b.ops[i] == cache_op::get_or_set) &&
                             (r.st == status::found || r.st == status::inserted);
      if (has_value) r.value.assign(b.out.data() + i * stride, b.out.data() + i * stride + cache_.value_bytes());
      b.promises[i].set_value(std::move(r));
    }
    ++batches_;
    operations_ += n;
    b.clear();
  }

  Cache& cache_;
  std::size_t threshold_;
  std::mutex fill_;  // guards pending_
  std::mutex run_;   // one batch at a time; guards running_
  batch pending_, running_;
  std::atomic<std::size_t> batches_{0}, operations_{0};
};

}  // namespace warpkv
