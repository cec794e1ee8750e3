#pragma once
// cache_submitter: the CCHT front end for many host threads, with N batch buffers (default 2:
// double buffering). Threads submit operations into the filling buffer's host staging
// (page-locked on the GPU, so copies are asynchronous DMA): one at a time (submit: a future
// with its own result) or many at once (submit_bulk: ranges of the filling batches are reserved
// for the caller's arrays under one lock and copied into them as whole ranges outside it, split
// over as many batches as they fill, and the results are copied back as whole ranges into the
// caller's arrays; one future per call). Both are the same path: a submit is a bulk of one with
// its own result storage. When the filling buffer holds `threshold` operations (or on flush(),
// or when its oldest operation has waited `deadline`) it is sealed; once every copy into it has
// ended, the thread that ended the last one (or sealed it, when none was running) queues, on
// that buffer's own stream, the copy of its operations to the device, the batch kernel and the
// copy of the results back, and returns at once; the next submit fills another free buffer
// meanwhile. Completer threads (one per buffer) take the launched buffers in launch order, each
// waits for its buffer's stream, copies each call's share of the results out of the staging (a
// call's future is ready once its last share is in) and frees the buffer; so the copies out of
// several completed batches run at once. When all N buffers are launched and not yet completed,
// submit() waits for one to come back (at most N batches in flight).
//
// Thread safety: submit(), submit_bulk() and flush() may be called from any number of threads
// (the callers' copies into the staging run at once, outside the lock: it guards only the
// reservation of ranges). The destructor stops the timer, flushes what is pending and waits for
// every batch.
//
// Order in which operations take effect:
//  - the operations of one batch are concurrent with each other (a batch is a mixed batch of
//    kv_cache::execute: each operation is linearizable, in any order consistent with that);
//  - a batch is launched once it is sealed and every copy into it has ended (batches sealed one
//    after another may be launched in either order), each on its buffer's stream. On the GPU
//    a batch may start while earlier ones still run (other streams, the cache's own included), so
//    operations of batches in flight at the same time are concurrent with each other as well;
//    on the host backend the sealing threads run batches at once, possibly simultaneously;
//  - an operation submitted after the future of another became ready takes effect after it (that
//    batch completed before the later one was launched). A thread that submits twice on one key
//    without waiting between may see the two take effect in either order.
//  - submit_bulk: the same, per operation. A bulk's operations are concurrent with each other
//    (a key twice in one bulk: either order), also when the bulk spans several batches; a bulk
//    submitted after another's future became ready takes effect after all of it.
// Errors: bad arguments throw warpkv::error from submit()/submit_bulk() before anything is
// queued; a failure of a batch (CUDA, memory) reaches the future of every call with operations
// in it as that exception.
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
    for (std::size_t i = 0; i < buffers; ++i) completers_.emplace_back([this] { complete_loop(); });
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
    for (std::thread& c : completers_) c.join();
  }

  /// Queues one operation; `value` (set/add/get_or_set) holds at most value_bytes() bytes
  /// (zero-padded). Launches the batch when it reaches the threshold. A bulk of one with its own
  /// result storage (submit_bulk's path).
  std::future<result> submit(cache_op op, const key_type& key, std::span<const std::byte> value = {},
                             std::uint64_t expires_at = 0) {
    require(static_cast<unsigned>(op) <= static_cast<unsigned>(cache_op::contains), "op", "unknown operation code");
    if (value.size() > cache_.value_bytes())  // the message built only on failure: submit() is per operation
      require(false, "value",
              std::to_string(value.size()) + " bytes exceed the cache's value_bytes of " + std::to_string(cache_.value_bytes()));
    const bool writes = writes_value(op), reads = reads_value(op);
    auto r = std::make_unique<single_request>(op, reads ? cache_.value_stride() : 0);
    std::future<result> f = r->done.get_future();
    source src{&op, &key, writes ? value.data() : nullptr, writes ? value.size() : 0, &expires_at, writes, reads,
               expires_at != 0};
    queue(r.release(), 1, src);
    return f;
  }

  /// Queues ops.size() operations at once, like kv_cache::execute: operation i is ops[i] on
  /// keys[i]; its value in (set/add/get_or_set) at values_in[i x value_stride()] (value_bytes()
  /// bytes, the stride's padding zero), its value out (get/get_or_set that find or insert) at
  /// values_out[i x value_stride()], its status at statuses[i], its expiry time (0: never) at
  /// expires_at[i]. values_in may be empty when no operation is a set/add/get_or_set (values
  /// then not copied), values_out when the caller wants no values (then not written), expires_at
  /// when none expires. The other entries of values_out are unspecified after completion.
  /// The operations are copied into ranges of the filling batch reserved under one lock (several
  /// batches, sealed and launched in turn, when they exceed what is left of it; when all buffers
  /// are in flight it waits for one as submit() does); the spans must stay valid, and the output spans
  /// untouched, until the returned future is ready: it becomes ready when the last of its
  /// operations has completed and its results are in statuses/values_out, or carries the batch's
  /// exception when a batch holding some of them failed (the outputs are then unspecified).
  /// Bad arguments throw warpkv::error before anything is queued.
  std::future<void> submit_bulk(std::span<const cache_op> ops, std::span<const key_type> keys,
                                std::span<const std::byte> values_in, std::span<std::byte> values_out,
                                std::span<status> statuses, std::span<const std::uint64_t> expires_at = {}) {
    const std::size_t n = ops.size(), stride = cache_.value_stride();
    require(keys.size() == n, "keys", std::to_string(keys.size()) + " keys for " + std::to_string(n) + " operations");
    require(statuses.size() == n, "statuses",
            std::to_string(statuses.size()) + " statuses for " + std::to_string(n) + " operations");
    require(values_in.empty() || values_in.size() == n * stride, "values_in",
            std::to_string(values_in.size()) + " bytes given, the operations need " + std::to_string(n) +
                " x value_stride() = " + std::to_string(n * stride) + " (or none)");
    require(values_out.empty() || values_out.size() == n * stride, "values_out",
            std::to_string(values_out.size()) + " bytes given, the operations need " + std::to_string(n) +
                " x value_stride() = " + std::to_string(n * stride) + " (or none)");
    require(expires_at.empty() || expires_at.size() == n, "expires_at",
            std::to_string(expires_at.size()) + " expiry times for " + std::to_string(n) + " operations (or none)");
    bool writes = false, reads = false;
    for (std::size_t i = 0; i < n; ++i) {
      const cache_op op = ops[i];
      if (static_cast<unsigned>(op) > static_cast<unsigned>(cache_op::contains))  // the message only on failure
        require(false, "ops", "unknown operation code " + std::to_string(static_cast<unsigned>(op)) + " at " + std::to_string(i));
      writes = writes || writes_value(op);
      reads = reads || reads_value(op);
    }
    require(!writes || !values_in.empty(), "values_in", "empty, but the operations include a set/add/get_or_set");
    std::promise<void> ready;
    std::future<void> f = ready.get_future();
    if (n == 0) {
      ready.set_value();
      return f;
    }
    auto r = std::make_unique<bulk_request>(std::move(ready), n, statuses.data(),
                                            values_out.empty() ? nullptr : values_out.data());
    source src{ops.data(), keys.data(), values_in.empty() ? nullptr : values_in.data(), values_in.empty() ? 0 : stride,
               expires_at.empty() ? nullptr : expires_at.data(), writes, reads, !expires_at.empty()};
    queue(r.release(), n, src);
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
    if (sealed != none) launch(sealed);  // none when a copy into it still runs: its copier launches it
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

  static constexpr bool writes_value(cache_op op) {
    return op == cache_op::set || op == cache_op::add || op == cache_op::get_or_set;
  }
  static constexpr bool reads_value(cache_op op) { return op == cache_op::get || op == cache_op::get_or_set; }

  // One submit_bulk or submit call: where its results go and who waits. Created by the caller,
  // then owned by the completer, which copies each completed piece's results into it and, when
  // `left` reaches 0, finishes and deletes it.
  struct request {
    std::atomic<std::size_t> left;  // operations not completed yet (counted down by the completers)
    status* statuses;               // one per operation
    std::byte* values;              // value_stride() bytes per operation, or nullptr: not wanted
    std::exception_ptr error;       // the first failure of a batch holding some of its operations (set under mu_)
    request(std::size_t n, status* st, std::byte* v) : left(n), statuses(st), values(v) {}
    virtual ~request() = default;
    virtual void finish(std::size_t value_bytes) noexcept = 0;  // makes the caller's future ready
  };
  struct bulk_request final : request {
    std::promise<void> done;
    bulk_request(std::promise<void> p, std::size_t n, status* st, std::byte* v)
        : request(n, st, v), done(std::move(p)) {}
    void finish(std::size_t) noexcept override {
      if (this->error) done.set_exception(this->error);
      else done.set_value();
    }
  };
  struct single_request final : request {  // a bulk of one with its own result storage
    cache_op op;
    status st = status::not_found;
    std::vector<std::byte> value;  // value_stride() bytes for a get/get_or_set, filled by the completer
    std::promise<result> done;
    single_request(cache_op o, std::size_t stride) : request(1, nullptr, nullptr), op(o), value(stride) {
      this->statuses = &st;
      this->values = value.empty() ? nullptr : value.data();
    }
    void finish(std::size_t value_bytes) noexcept override {
      try {
        if (this->error) std::rethrow_exception(this->error);
        result r;
        r.st = st;
        if (reads_value(op) && (st == status::found || st == status::inserted)) {
          value.resize(value_bytes);
          r.value = std::move(value);
        }
        done.set_value(std::move(r));
      } catch (...) {
        done.set_exception(std::current_exception());
      }
    }
  };
  // A request's operations [first, first + count) at [at, at + count) of one batch.
  struct piece {
    request* req;
    std::size_t first, at, count;
  };
  // The caller's operations (values: `value_size` bytes each, zero-padded to the stride; nullptr:
  // none) and what they need of a batch.
  struct source {
    const cache_op* ops;
    const key_type* keys;
    const std::byte* values;
    std::size_t value_size;
    const std::uint64_t* expires;  // nullptr: never
    bool writes, reads, expiry;
  };

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
    std::vector<piece> pieces;  // in slot order; at most `cap` (each holds an operation)
    std::size_t n = 0;
    std::size_t copying = 0;         // callers' copies into reserved ranges still running
    bool any_in = false, any_out = false, any_expiry = false;
    std::uint64_t seq = 0;     // seal order (1, 2, ...) while launched; 0 while free or filling
    std::exception_ptr error;  // set when queueing or running the batch failed

    slot(const execution& base, std::size_t cap, std::size_t vw)
        : stream(base), value_words(vw),
          ops(cap, base), keys(cap, base), in(cap * vw, base), out(cap * vw, base), expires(cap, base),
          statuses(cap, base),
          d_ops(cap, stream.exec()), d_keys(cap, stream.exec()), d_in(cap * vw, stream.exec()),
          d_out(cap * vw, stream.exec()), d_expires(cap, stream.exec()), d_statuses(cap, stream.exec()) {
      pieces.reserve(cap);
      synchronize(stream.exec());  // the device buffers exist before a batch uses them
    }
  };

  /// Seals the filling slot: returns it for the caller to launch, or none when a copy into it
  /// still runs (the copier that ends the last one launches it: end_copy_locked).
  std::size_t seal_locked() {
    const std::size_t i = filling_;
    filling_ = none;
    slots_[i]->seq = ++sealed_;
    peak_in_flight_ = std::max(peak_in_flight_, ++in_flight_);
    return slots_[i]->copying == 0 ? i : none;
  }
  /// A copy into slot i has ended: returns i when it was the last into a sealed slot (the caller
  /// launches it), else none.
  std::size_t end_copy_locked(std::size_t i) {
    slot& s = *slots_[i];
    return --s.copying == 0 && s.seq != 0 ? i : none;
  }

  // A range [at, at + count) of slot `index` reserved for the caller's operations [first, ...).
  struct reservation {
    std::size_t index, at, first, count;
  };

  /// The caller's operations [r.first, r.first + r.count) into slot r.index's staging at r.at:
  /// outside the lock (the range is the caller's alone until end_copy_locked).
  void copy_in(const reservation& r, const source& src) {
    const std::size_t stride = cache_.value_stride(), vw = stride / sizeof(word), k = r.count, at = r.at, done = r.first;
    slot& s = *slots_[r.index];
    std::copy_n(src.ops + done, k, s.ops.data() + at);
    std::copy_n(src.keys + done, k, s.keys.data() + at);
    if (src.writes) {
      auto* w = reinterpret_cast<std::byte*>(s.in.data() + at * vw);
      if (src.values != nullptr && src.value_size == stride) {
        std::memcpy(w, src.values + done * stride, k * stride);
      } else {
        for (std::size_t j = 0; j < k; ++j) {
          std::memset(w + j * stride, 0, stride);
          if (src.values != nullptr) std::memcpy(w + j * stride, src.values + (done + j) * src.value_size, src.value_size);
        }
      }
    }
    if (src.expires != nullptr) std::copy_n(src.expires + done, k, s.expires.data() + at);
    else std::fill_n(s.expires.data() + at, k, word{0});
  }

  /// Reserves ranges of the filling batches for a request's n operations under one lock (as
  /// many as fit, sealing each batch it fills and taking a free buffer for the rest), copies
  /// into them outside it, then launches every batch it sealed or finished copying into whose
  /// copies have all ended. When no buffer is free it first copies and launches what it has,
  /// then waits for one. Takes `req`.
  void queue(request* req, std::size_t n, const source& src) {
    std::size_t done = 0;
    bool started = false;
    std::vector<reservation> mine;
    std::vector<std::size_t> to_launch;
    auto copy_and_launch = [&](std::unique_lock<std::mutex>& g) {  // called unlocked; returns unlocked
      for (const reservation& r : mine) copy_in(r, src);
      g.lock();
      for (const reservation& r : mine)
        if (const std::size_t i = end_copy_locked(r.index); i != none) to_launch.push_back(i);
      mine.clear();
      g.unlock();
      for (const std::size_t i : to_launch) launch(i);
      to_launch.clear();
    };
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
      while (done < n && (filling_ != none || !free_.empty())) {
        if (filling_ == none) {
          filling_ = free_.back();
          free_.pop_back();
          oldest_ = std::chrono::steady_clock::now();
          started = true;
        }
        slot& s = *slots_[filling_];
        const std::size_t k = std::min(n - done, threshold_ - s.n);
        mine.push_back(reservation{filling_, s.n, done, k});
        ++s.copying;
        s.any_in = s.any_in || src.writes;
        s.any_out = s.any_out || src.reads;
        s.any_expiry = s.any_expiry || src.expiry;
        s.pieces.push_back(piece{req, done, s.n, k});  // within the reserved capacity
        s.n += k;
        done += k;
        if (s.n == threshold_) seal_locked();  // copying > 0 (ours): launched after the copies
      }
      const bool all = done == n;
      const bool wake = all && started && filling_ != none && timer_.joinable();
      g.unlock();
      copy_and_launch(g);
      if (wake) timer_wake_.notify_one();
      if (all) return;
      g.lock();  // every buffer sealed or in flight: wait for one to come back
      freed_.wait(g, [&] { return filling_ != none || !free_.empty(); });
    }
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

  /// Copies each piece's statuses and values into its request (whole ranges) and finishes the
  /// requests whose last piece this was; or hands them the batch's failure.
  void fulfil(slot& s) {
    const std::size_t n = s.n, vw = s.value_words, stride = vw * sizeof(word);
    if (!s.error) {  // counted before any future is ready: a caller holding a result sees its batch counted
      ++batches_;
      operations_ += n;
      bytes_in_ += n * (sizeof(cache_op) + sizeof(key_type)) + (s.any_in ? n * stride : 0) +
                   (s.any_expiry ? n * sizeof(word) : 0);
      bytes_out_ += n * sizeof(status) + (s.any_out ? n * stride : 0);
    }
    for (const piece& p : s.pieces) {
      request& r = *p.req;
      if (s.error) {
        std::lock_guard<std::mutex> g(mu_);  // completers of other slots may hold pieces of r
        if (!r.error) r.error = s.error;
      } else {
        std::copy_n(s.statuses.data() + p.at, p.count, r.statuses + p.first);
        if (r.values != nullptr && s.any_out)
          std::memcpy(r.values + p.first * stride, s.out.data() + p.at * vw, p.count * stride);
      }
      // the last piece's completer finishes r: every other completer's copies and error
      // happen before (the countdown is one release sequence, read with acquire)
      if (r.left.fetch_sub(p.count, std::memory_order_acq_rel) == p.count) {
        r.finish(cache_.value_bytes());
        delete &r;
      }
    }
    s.pieces.clear();
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
      if (sealed == none) continue;  // a copy into it still runs: its copier launches it
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
  std::vector<std::thread> completers_;  // last: they start after everything they use exists
  std::thread timer_;
};

}  // namespace warpkv
