#pragma once
// A small persistent pool of host threads for the bulk calls of the cpu:: maps: the workers
// park on a condition variable between calls, so a bulk call of 1e5 operations does not pay
// for creating threads (which would dominate its time and distort a CPU-vs-GPU comparison).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "warpkv/core/error.hpp"

namespace warpkv::cpu::detail {

class thread_pool {
 public:
  /// `threads` threads take part in each call: the caller and threads - 1 workers (at least 1).
  explicit thread_pool(unsigned threads) : threads_(std::max(1u, threads)) {
    workers_.reserve(threads_ - 1);
    try {
      for (unsigned i = 1; i < threads_; ++i) workers_.emplace_back([this] { work(); });
    } catch (const std::system_error& e) {  // no thread may be left joinable: stop those started
      stop_all();
      throw warpkv::error(warpkv::errc::unsupported, "warpkv::cpu: could not start worker thread " +
                                                         std::to_string(workers_.size() + 1) + " of " +
                                                         std::to_string(threads_ - 1) + " (" + e.what() + ")");
    }
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() { stop_all(); }

  [[nodiscard]] unsigned threads() const { return threads_; }

  /// Calls f(begin, end) for consecutive chunks of [0, n) on all threads; returns when every
  /// chunk is done. The first exception thrown by f is rethrown here (the rest of the work runs).
  /// Not reentrant: one call at a time per pool.
  template <class F>
  void parallel_for(std::size_t n, std::size_t chunk, F&& f) {
    if (n == 0) return;
    chunk = std::max<std::size_t>(1, chunk);
    if (threads_ == 1 || n <= chunk) {
      f(std::size_t{0}, n);
      return;
    }
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_m;
    std::function<void()> body = [&] {
      for (;;) {
        const std::size_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
        if (begin >= n) return;
        try {
          f(begin, std::min(n, begin + chunk));
        } catch (...) {
          std::lock_guard<std::mutex> g(failure_m);
          if (!failure) failure = std::current_exception();
        }
      }
    };
    {
      std::lock_guard<std::mutex> g(m_);
      job_ = &body;
      busy_ = static_cast<unsigned>(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    body();
    {
      std::unique_lock<std::mutex> g(m_);
      done_.wait(g, [&] { return busy_ == 0; });
      job_ = nullptr;
    }
    if (failure) std::rethrow_exception(failure);
  }

 private:
  void stop_all() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  void work() {
    std::uint64_t seen = 0;
    for (;;) {
      std::function<void()>* job = nullptr;
      {
        std::unique_lock<std::mutex> g(m_);
        wake_.wait(g, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
      }
      (*job)();
      {
        std::lock_guard<std::mutex> g(m_);
        --busy_;
      }
      done_.notify_one();
    }
  }

  unsigned threads_;
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  std::function<void()>* job_ = nullptr;
  std::uint64_t generation_ = 0;
  unsigned busy_ = 0;
  bool stop_ = false;
};

}  // namespace warpkv::cpu::detail
