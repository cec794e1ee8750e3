#pragma once
// The host backend's lane threads: a process-wide pool of parked threads that the host launcher
// borrows for each launch, so a batch does not pay for creating threads and a failure to create
// one is an error instead of a hang.
//
// A launch of T tiles x N lanes needs T x N threads at once (the lanes of a tile meet at
// barriers, so every lane must run). acquire() takes that many idle workers, starting new ones
// when too few are idle; when one cannot be started (a process or memory limit), the workers
// already taken go back and warpkv::error(unsupported) is thrown before any lane ran, so no
// lane waits at a barrier for a lane that never comes. Launches from several host threads may
// run at once (each borrows its own workers: a resident host kernel can wait for another
// launch's effects). The pool keeps at most max_host_lanes threads in use at once.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "warpkv/core/error.hpp"
#include "warpkv/core/fault_injection.hpp"

namespace warpkv::detail {

/// The most host lane threads one launch may use (tiles x lanes); the launcher runs fewer
/// tiles at once rather than more threads.
inline constexpr std::size_t max_host_lanes = 1024;

class host_lane_pool {
  struct worker {
    std::mutex m;
    std::condition_variable cv;
    std::function<void()> job;  // set while the worker is lent
    bool stop = false;
    std::thread thread;
  };

 public:
  static host_lane_pool& instance() {
    static host_lane_pool pool;
    return pool;
  }
  host_lane_pool(const host_lane_pool&) = delete;
  host_lane_pool& operator=(const host_lane_pool&) = delete;
  ~host_lane_pool() {
    std::vector<worker*> all;
    {
      std::lock_guard<std::mutex> g(m_);
      for (auto& w : workers_) all.push_back(w.get());
    }
    for (worker* w : all) {
      {
        std::lock_guard<std::mutex> g(w->m);
        w->stop = true;
      }
      w->cv.notify_one();
    }
    for (worker* w : all)
      if (w->thread.joinable()) w->thread.join();
  }

  /// Threads the pool has started (idle or lent).
  std::size_t size() const {
    std::lock_guard<std::mutex> g(m_);
    return workers_.size();
  }

  /// Runs lane(i) for i in [0, lanes) on `lanes` threads at once and returns when all are done.
  /// Throws warpkv::error before running anything when the threads cannot be had.
  void run(std::size_t lanes, const std::function<void(std::size_t)>& lane) {
    if (lanes == 0) return;
    if (lanes > max_host_lanes)
      throw error(errc::invalid_argument, "warpkv: a host launch of " + std::to_string(lanes) +
                                              " lanes exceeds the host backend's limit of " +
                                              std::to_string(max_host_lanes));
    std::vector<worker*> lent = acquire(lanes);
    std::latch done(static_cast<std::ptrdiff_t>(lanes));
    for (std::size_t i = 0; i < lanes; ++i) {
      worker* w = lent[i];
      {
        std::lock_guard<std::mutex> g(w->m);
        w->job = [this, w, i, &lane, &done] {
          lane(i);
          give_back(w);
          done.count_down();
        };
      }
      w->cv.notify_one();
    }
    done.wait();
  }

 private:
  host_lane_pool() = default;

  std::vector<worker*> acquire(std::size_t lanes) {
    std::vector<worker*> lent;
    lent.reserve(lanes);
    std::lock_guard<std::mutex> g(m_);
    while (!idle_.empty() && lent.size() < lanes) {
      lent.push_back(idle_.back());
      idle_.pop_back();
    }
    while (lent.size() < lanes) {
      auto w = std::make_unique<worker>();
      try {
        if (fault_injection::detail::trip(fault_injection::detail::thread_countdown))
          throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again), "injected failure");
        w->thread = std::thread([p = w.get()] { work(p); });
      } catch (const std::system_error& e) {
        for (worker* back : lent) idle_.push_back(back);  // none of them has a job yet
        throw error(errc::unsupported, "warpkv: the host backend could not start lane thread " +
                                           std::to_string(workers_.size() + 1) + " (" + e.what() +
                                           "); lower WARPKV_HOST_TILES or execution::host_tiles");
      }
      lent.push_back(w.get());
      workers_.push_back(std::move(w));
    }
    return lent;
  }

  void give_back(worker* w) {
    std::lock_guard<std::mutex> g(m_);
    idle_.push_back(w);
  }

  static void work(worker* w) {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> g(w->m);
        w->cv.wait(g, [&] { return w->stop || static_cast<bool>(w->job); });
        if (w->stop && !w->job) return;
        job = std::move(w->job);
        w->job = nullptr;
      }
      job();  // returns the worker to the idle list before the launch is told it is done
    }
  }

  mutable std::mutex m_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<worker*> idle_;
};

}  // namespace warpkv::detail
