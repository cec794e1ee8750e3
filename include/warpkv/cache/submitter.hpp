#pragma once
// cache_submitter: the CCHT front end for many host threads. Threads submit single operations
// into one reusable buffer; when it holds `threshold` operations (or on flush(), or when its
// oldest operation has waited `deadline`) the submitting thread (or the deadline's timer thread)
// swaps it with a second, reusable buffer and runs that as one mixed batch on the cache, while
// other threads keep filling the first. Each submitter gets a std::future of its result.
//
// Thread safety: submit() and flush() may be called from any number of threads. Batches run one
// at a time per submitter (several submitters on one cache run concurrently, see kv_cache.hpp).
// The destructor stops the timer and flushes what is pending.
// Not done yet (issue 11, section 3): pinned buffers and stream double-buffering of transfers
// (a batch goes through kv_cache::execute: pageable copies, one batch in flight).
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <future>
#include <mutex>
#include <span>
#include <thread>
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

  /// `deadline` > 0: a timer thread also runs the pending batch once its oldest operation has
  /// waited that long (so a lone submitter waiting on its future is served without flush()).
  cache_submitter(Cache& cache, std::size_t threshold, std::chrono::microseconds deadline = std::chrono::microseconds{0})
      : cache_(cache), threshold_(threshold), deadline_(deadline) {
    require(threshold > 0, "threshold", "a batch needs at least one operation");
    require(deadline.count() >= 0, "deadline", "must not be negative");
    if (deadline.count() > 0) timer_ = std::thread([this] { timer_loop(); });
  }
  cache_submitter(const cache_submitter&) = delete;
  cache_submitter& operator=(const cache_submitter&) = delete;
  ~cache_submitter() {
    if (timer_.joinable()) {
      {
        std::lock_guard<std::mutex> g(fill_);
        stop_ = true;
      }
      wake_.notify_all();
      timer_.join();
    }
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
    bool full = false, first = false;
    {
      std::lock_guard<std::mutex> g(fill_);
      first = pending_.ops.empty();
      if (first) oldest_ = std::chrono::steady_clock::now();
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
    else if (first && timer_.joinable()) wake_.notify_one();
    return f;
  }

  /// Runs whatever is pending now.
  void flush() { run_pending(); }

  [[nodiscard]] std::size_t batches() const { return batches_.load(); }
  [[nodiscard]] std::size_t operations() const { return operations_.load(); }
  [[nodiscard]] std::size_t threshold() const { return threshold_; }
  [[nodiscard]] std::chrono::microseconds deadline() const { return deadline_; }

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

  /// Runs the pending batch when its oldest operation has waited `deadline_`.
  void timer_loop() {
    std::unique_lock<std::mutex> g(fill_);
    while (!stop_) {
      if (pending_.ops.empty()) {
        wake_.wait(g);
        continue;
      }
      const auto due = oldest_ + deadline_;
      if (std::chrono::steady_clock::now() < due) {
        wake_.wait_until(g, due);
        continue;
      }
      g.unlock();  // run_pending takes run_ then fill_
      run_pending();
      g.lock();
    }
  }

  Cache& cache_;
  std::size_t threshold_;
  std::chrono::microseconds deadline_;
  std::condition_variable wake_;  // with fill_: the timer waits for work or its due time
  std::chrono::steady_clock::time_point oldest_;  // submit time of pending_'s first operation
  bool stop_ = false;
  std::thread timer_;
  std::mutex fill_;  // guards pending_
  std::mutex run_;   // one batch at a time; guards running_
  batch pending_, running_;
  std::atomic<std::size_t> batches_{0}, operations_{0};
};

}  // namespace warpkv
