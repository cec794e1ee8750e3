#pragma once
// cache_submitter: the CCHT front end for many host threads, with N batch buffers (default 2:
// double buffering). Threads submit single operations into the filling buffer's host staging
// (page-locked on the GPU, so copies are asynchronous DMA); when it holds `threshold`
// operations (or on flush(), or when its oldest operation has waited `deadline`) the thread that
// sealed it queues, on that buffer's own stream, the copy of its operations to the device, the
// batch kernel and the copy of the results back, and returns at once; the next submit fills
// another free buffer meanwhile. A completer thread waits for each launched buffer's stream in
// launch order, fulfils its futures and frees the buffer. When all N buffers are launched and
// not yet completed, submit() waits for one to come back (at most N batches in flight).
//
// Thread safety: submit() and flush() may be called from any number of threads. The destructor
// stops the timer, flushes what is pending and waits for every batch.
//
// Order in which operations take effect:
//  - the operations of one batch are concurrent with each other (a batch is a mixed batch of
//    kv_cache::execute: each operation is linearizable, in any order consistent with that);
//  - batches are launched in the order they are sealed, each on its buffer's stream. On the GPU
//    a batch may start while earlier ones still run (other streams, the cache's own included), so
//    operations of batches in flight at the same time are concurrent with each other as well;
//    on the host backend the sealing threads run batches at once, possibly simultaneously;
//  - an operation submitted after the future of another became ready takes effect after it (that
//    batch completed before the later one was launched). A thread that submits twice on one key
//    without waiting between may see the two take effect in either order.
// Errors: bad arguments throw warpkv::error from submit(); a failure of a batch (CUDA, memory)
// reaches each of its futures as that exception.
// Not done yet (issue 11, section 3): callbacks as an alternative to futures, and eviction
// reports (cache_evictions) through the submitter.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "warpkv/cache/kv_cache.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"

namespace warpkv {

template <class Cache>
class cache_submitter {
 public:
  using key_type = typename Cache::key_type;
  struct result {
    status st = status::not_found;
    std::vector<std::byte> value;  ///< value_bytes() bytes for a get/get_or_set that returns a value, else empty
  };

  /// `deadline` > 0: a timer thread also launches the filling batch once its oldest operation has
  /// waited that long (so a lone submitter waiting on its future is served without flush()).
  /// `buffers`: batch buffers (each `threshold` operations of staging and device memory, and a
  /// stream): 1 fills only while no batch is in flight, 2 double-buffers, more pipelines deeper.
  cache_submitter(Cache& cache, std::size_t threshold, std::chrono::microseconds deadline = std::chrono::microseconds{0},
                  std::size_t buffers = 2)
      : cache_(cache), threshold_(threshold), deadline_(deadline) {
    require(threshold > 0, "threshold", "a batch needs at least one operation");
    require(deadline.count() >= 0, "deadline", "must not be negative");
    require(buffers > 0, "buffers", "a submitter needs at least one batch buffer");
    for (std::size_t i = 0; i < buffers; ++i) {
      slots_.push_back(std::make_unique<slot>(cache.exec(), threshold, cache.value_stride() / 8));
      free_.push_back(i);
    }
    completer_ = std::thread([this] { complete_loop(); });
    if (deadline.count() > 0) timer_ = std::thread([this] { timer_loop(); });
  }
  cache_submitter(const cache_submitter&) = delete;
  cache_submitter& operator=(const cache_submitter&) = delete;
  ~cache_submitter() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_timer_ = true;
    }
    timer_wake_.notify_all();
    if (timer_.joinable()) timer_.join();
    try {
      flush();
    } catch (...) {  // the futures carry the error; a destructor must not throw
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_completer_ = true;
    }
    launched_cv_.notify_all();
    completer_.join();
  }

  /// Queues one operation; `value` (set/add/get_or_set) holds at most value_bytes() bytes
  /// (zero-padded). Launches the batch when it reaches the threshold.
  std::future<result> submit(cache_op op, const key_type& key, std::span<const std::byte> value = {},
                             std::uint64_t expires_at = 0) {
    require(static_cast<unsigned>(op) <= static_cast<unsigned>(cache_op::contains), "op", "unknown operation code");
    require(value.size() <= cache_.value_bytes(), "value",
            std::to_string(value.size()) + " bytes exceed the cache's value_bytes of " + std::to_string(cache_.value_bytes()));
    std::future<result> f;
    std::size_t sealed = none;
    bool started = false;
    {
      std::unique_lock<std::mutex> g(mu_);
      while (filling_ == none) {  // take a free buffer, or wait for the completer to free one
        if (free_.empty()) {
          freed_.wait(g);
          continue;
        }
        filling_ = free_.back();
        free_.pop_back();
        oldest_ = std::chrono::steady_clock::now();
        started = true;
      }
      slot& s = *slots_[filling_];
      const std::size_t i = s.n++, vw = s.value_words;
      s.ops.data()[i] = op;
      s.keys.data()[i] = key;
      const bool writes = op == cache_op::set || op == cache_op::add || op == cache_op::get_or_set;
      s.any_in = s.any_in || writes;
      s.any_out = s.any_out || op == cache_op::get || op == cache_op::get_or_set;
      s.any_expiry = s.any_expiry || expires_at != 0;
      if (writes) {
        std::uint64_t* w = s.in.data() + i * vw;
        std::fill(w, w + vw, std::uint64_t{0});
        if (!value.empty()) std::memcpy(w, value.data(), value.size());
      }
      s.expires.data()[i] = expires_at;
      s.promises.emplace_back();
      f = s.promises.back().get_future();
      if (s.n == threshold_) sealed = seal_locked();
    }
    if (sealed != none) launch(sealed);
    else if (started && timer_.joinable()) timer_wake_.notify_one();
    return f;
  }

  /// Launches whatever is pending and waits until every batch sealed before returns has
  /// completed (its futures are ready).
  void flush() {
    std::size_t sealed = none;
    std::uint64_t upto = 0;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (filling_ != none) sealed = seal_locked();
      upto = sealed_;
    }
    if (sealed != none) launch(sealed);
    std::unique_lock<std::mutex> g(mu_);
    freed_.wait(g, [&] {
      return std::none_of(slots_.begin(), slots_.end(), [&](const auto& s) { return s->seq != 0 && s->seq <= upto; });
    });
  }

  [[nodiscard]] std::size_t batches() const { return batches_.load(); }
  [[nodiscard]] std::size_t operations() const { return operations_.load(); }
  [[nodiscard]] std::size_t threshold() const { return threshold_; }
  [[nodiscard]] std::chrono::microseconds deadline() const { return deadline_; }
  [[nodiscard]] std::size_t buffers() const { return slots_.size(); }
  /// The most batches that were launched and not yet completed at one time (at most buffers()).
  [[nodiscard]] std::size_t peak_in_flight() const {
    std::lock_guard<std::mutex> g(mu_);
    return peak_in_flight_;
  }
  /// Bytes copied to the device (operation codes, keys, and values/expiry times where a batch
  /// has them) and back (statuses, and values where a batch reads), over completed batches.
  [[nodiscard]] std::uint64_t bytes_to_device() const { return bytes_in_.load(); }
  [[nodiscard]] std::uint64_t bytes_from_device() const { return bytes_out_.load(); }

 private:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  using word = std::uint64_t;

  // One batch buffer: host staging, device arrays and a stream. Free, filling (filling_), or
  // launched (seq != 0) until the completer has fulfilled its futures.
  struct slot {
    owned_stream stream;  // first: the device buffers below are freed on it before it goes
    std::size_t value_words;
    pinned_buffer<cache_op> ops;
    pinned_buffer<key_type> keys;
    pinned_buffer<word> in, out, expires;
    pinned_buffer<status> statuses;
    buffer<cache_op> d_ops;
    buffer<key_type> d_keys;
    buffer<word> d_in, d_out, d_expires;
    buffer<status> d_statuses;
    std::vector<std::promise<result>> promises;
    std::size_t n = 0;
    bool any_in = false, any_out = false, any_expiry = false;
    std::uint64_t seq = 0;     // seal order (1, 2, ...) while launched; 0 while free or filling
    std::exception_ptr error;  // set when queueing or running the batch failed

    slot(const execution& base, std::size_t cap, std::size_t vw)
        : stream(base), value_words(vw),
          ops(cap, base), keys(cap, base), in(cap * vw, base), out(cap * vw, base), expires(cap, base),
          statuses(cap, base),
          d_ops(cap, stream.exec()), d_keys(cap, stream.exec()), d_in(cap * vw, stream.exec()),
          d_out(cap * vw, stream.exec()), d_expires(cap, stream.exec()), d_statuses(cap, stream.exec()) {
      promises.reserve(cap);
      synchronize(stream.exec());  // the device buffers exist before a batch uses them
    }
  };

  std::size_t seal_locked() {
    const std::size_t i = filling_;
    filling_ = none;
    slots_[i]->seq = ++sealed_;
    peak_in_flight_ = std::max(peak_in_flight_, ++in_flight_);
    return i;
  }

  /// Queues the sealed slot's batch on its stream (the host backend runs it here) and hands it to
  /// the completer. The caller owns the slot until then.
  void launch(std::size_t index) {
    slot& s = *slots_[index];
    const std::size_t n = s.n, vw = s.value_words;
    try {
      s.d_ops.copy_from_host(s.ops.data(), n);
      s.d_keys.copy_from_host(s.keys.data(), n);
      if (s.any_in) s.d_in.copy_from_host(s.in.data(), n * vw);
      if (s.any_expiry) s.d_expires.copy_from_host(s.expires.data(), n);
      cache_.enqueue_resident(s.stream.exec(), n, s.d_ops.data(), cache_op::get, s.d_keys.data(),
                              s.any_in ? s.d_in.data() : nullptr, s.any_out ? s.d_out.data() : nullptr,
                              s.d_statuses.data(), s.any_expiry ? s.d_expires.data() : nullptr);
      s.d_statuses.copy_to_host_async(s.statuses.data(), n);
      if (s.any_out) s.d_out.copy_to_host_async(s.out.data(), n * vw);
    } catch (...) {
      s.error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      launched_.push_back(index);
    }
    launched_cv_.notify_one();
  }

  /// Waits for each launched slot in launch order, fulfils its futures, frees it.
  void complete_loop() {
    for (;;) {
      std::size_t index = none;
      {
        std::unique_lock<std::mutex> g(mu_);
        launched_cv_.wait(g, [&] { return !launched_.empty() || stop_completer_; });
        if (launched_.empty()) return;
        index = launched_.front();
        launched_.pop_front();
      }
      slot& s = *slots_[index];
      try {  // also after a failed launch: copies queued before it must end before the slot is refilled
        synchronize(s.stream.exec());
      } catch (...) {
        if (!s.error) s.error = std::current_exception();
      }
      fulfil(s);
      {
        std::lock_guard<std::mutex> g(mu_);
        s.seq = 0;
        --in_flight_;
        free_.push_back(index);
      }
      freed_.notify_all();
    }
  }

  void fulfil(slot& s) {
    const std::size_t n = s.n, vw = s.value_words, bytes = cache_.value_bytes();
    std::size_t done = 0;
    try {
      if (s.error) std::rethrow_exception(s.error);
      // counted before any future is ready: a caller holding a result sees its batch counted
      ++batches_;
      operations_ += n;
      bytes_in_ += n * (sizeof(cache_op) + sizeof(key_type)) + (s.any_in ? n * vw * 8 : 0) +
                   (s.any_expiry ? n * sizeof(word) : 0);
      bytes_out_ += n * sizeof(status) + (s.any_out ? n * vw * 8 : 0);
      for (; done < n; ++done) {
        result r;
        r.st = s.statuses.data()[done];
        const cache_op op = s.ops.data()[done];
        const bool has_value = (op == cache_op::get || op == cache_op::get_or_set) &&
                               (r.st == status::found || r.st == status::inserted);
        if (has_value) {
          const auto* v = reinterpret_cast<const std::byte*>(s.out.data() + done * vw);
          r.value.assign(v, v + bytes);
        }
        s.promises[done].set_value(std::move(r));
      }
    } catch (...) {
      for (; done < n; ++done) s.promises[done].set_exception(std::current_exception());
    }
    s.promises.clear();
    s.n = 0;
    s.any_in = s.any_out = s.any_expiry = false;
    s.error = nullptr;
  }

  /// Launches the filling batch when its oldest operation has waited `deadline_`.
  void timer_loop() {
    std::unique_lock<std::mutex> g(mu_);
    while (!stop_timer_) {
      if (filling_ == none) {
        timer_wake_.wait(g);
        continue;
      }
      const auto due = oldest_ + deadline_;
      if (std::chrono::steady_clock::now() < due) {
        timer_wake_.wait_until(g, due);
        continue;
      }
      const std::size_t sealed = seal_locked();
      g.unlock();
      launch(sealed);
      g.lock();
    }
  }

  Cache& cache_;
  std::size_t threshold_;
  std::chrono::microseconds deadline_;
  std::vector<std::unique_ptr<slot>> slots_;

  mutable std::mutex mu_;  // guards everything below up to the counters, and slots' fill state
  std::condition_variable freed_;        // a slot came back (submitters waiting for one, flush)
  std::condition_variable launched_cv_;  // a slot was launched (the completer)
  std::condition_variable timer_wake_;   // a batch started filling, or stop
  std::vector<std::size_t> free_;
  std::deque<std::size_t> launched_;
  std::size_t filling_ = none;
  std::chrono::steady_clock::time_point oldest_;  // submit time of the filling batch's first operation
  std::uint64_t sealed_ = 0;
  std::size_t in_flight_ = 0, peak_in_flight_ = 0;
  bool stop_timer_ = false, stop_completer_ = false;

  std::atomic<std::size_t> batches_{0}, operations_{0};
  std::atomic<std::uint64_t> bytes_in_{0}, bytes_out_{0};
  std::thread completer_, timer_;  // last: they start after everything they use exists
};

}  // namespace warpkv
