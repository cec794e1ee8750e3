#pragma once
// warpkv::stm::heap<T, Mode>: N transactional objects of a trivially copyable T (up to 64
// bytes), each stored as ceil(sizeof(T) / 8) 64-bit words next to a 64-bit versioned lock
// word, plus the global version clock of opaque mode. The host object owns the memory on its
// backend (stream-ordered on the GPU); `ref()` gives the copyable device view that
// transactions (transaction.hpp) run against.
//
// Host-side access (assign, to_vector, versions) is not transactional: call it only while no
// kernel uses the heap. On the cuda backend it is stream-ordered on the heap's stream.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "warpkv/core/buffer.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/stm/detail/lock_word.hpp"
#include "warpkv/stm/status.hpp"

namespace warpkv::stm {

/// Largest object a heap holds. Larger state is split over several objects (one transaction
/// may touch many); a larger T is refused at compile time.
inline constexpr std::size_t max_object_bytes = 64;

template <class T>
concept transactional_object = std::is_trivially_copyable_v<T> && !std::is_const_v<T> &&
                               !std::is_volatile_v<T> && sizeof(T) <= max_object_bytes;

/// Largest number of objects in one heap (object ids are 32-bit inside transactions).
inline constexpr std::size_t max_heap_objects = std::numeric_limits<std::uint32_t>::max();

namespace detail {

template <class T>
inline constexpr unsigned words_of = static_cast<unsigned>((sizeof(T) + 7) / 8);

template <class T>
WARPKV_HD inline void to_words(const T& v, std::uint64_t* w) {
  constexpr unsigned W = words_of<T>;
  if constexpr (sizeof(T) != W * 8) w[W - 1] = 0;  // padding bytes of the last word are zero
  std::memcpy(w, &v, sizeof(T));
}

template <class T>
WARPKV_HD inline T from_words(const std::uint64_t* w) {
  T v;
  std::memcpy(&v, w, sizeof(T));
  return v;
}

/// Fills `n` words with `value` (lock words, or every object's words with one pattern).
struct fill_words {
  std::uint64_t* words;
  std::size_t n;
  std::uint64_t pattern[8];  // word i gets pattern[i % period]
  unsigned period;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index) const {
    constexpr std::size_t per_tile = 1024;
    const std::size_t begin = tile_index * per_tile;
    for (std::size_t i = begin + t.thread_rank(); i < begin + per_tile && i < n; i += Tile::size())
      words[i] = pattern[i % period];
  }
};

}  // namespace detail

/// Device view of a heap: cheap to copy, valid while the heap lives.
template <class T, mode M = mode::opaque>
class heap_ref {
  static_assert(transactional_object<T>,
                "warpkv::stm objects must be trivially copyable, non-const and at most 64 bytes "
                "(8 words); split larger state into several objects");

 public:
  using value_type = T;
  static constexpr mode heap_mode = M;
  static constexpr unsigned words_per_object = detail::words_of<T>;

  heap_ref() = default;
  /// control: detail::control_words + 2 * detail::queue_stripes(n) words (clock, serial
  /// tickets, queue tickets).
  WARPKV_HD heap_ref(std::uint64_t* locks, std::uint64_t* words, std::uint64_t* control, std::size_t n)
      : locks_(locks), words_(words), ctl_(control), n_(n), stripe_mask_(detail::queue_stripes(n) - 1) {}

  WARPKV_HD std::size_t size() const { return n_; }
  /// The versioned lock word of object `id` (layout: detail/lock_word.hpp).
  WARPKV_HD std::uint64_t& lock_word(std::size_t id) const { return locks_[id]; }
  /// Word `w` of object `id`.
  WARPKV_HD std::uint64_t& data_word(std::size_t id, unsigned w) const { return words_[id * words_per_object + w]; }
  /// The global version clock word (opaque mode): clock value << 1 | serial flag.
  WARPKV_HD std::uint64_t& clock_word() const { return ctl_[0]; }
  /// Serial-mode tickets (opaque mode): next ticket to hand out, ticket now served.
  WARPKV_HD std::uint64_t& ticket_word() const { return ctl_[1]; }
  WARPKV_HD std::uint64_t& serving_word() const { return ctl_[2]; }
  /// The contention-queue stripe of object `id`.
  WARPKV_HD std::size_t stripe_of(std::size_t id) const { return id & stripe_mask_; }
  /// Contention queue of stripe `s`: next ticket to hand out, ticket now served.
  WARPKV_HD std::uint64_t& queue_ticket_word(std::size_t s) const { return ctl_[detail::control_words + 2 * s]; }
  WARPKV_HD std::uint64_t& queue_serving_word(std::size_t s) const { return ctl_[detail::control_words + 2 * s + 1]; }

 private:
  std::uint64_t* locks_ = nullptr;
  std::uint64_t* words_ = nullptr;
  std::uint64_t* ctl_ = nullptr;
  std::size_t n_ = 0;
  std::size_t stripe_mask_ = 0;
};

template <class T, mode M = mode::opaque>
class heap {
  static_assert(transactional_object<T>,
                "warpkv::stm::heap<T>: T must be trivially copyable, non-const and at most 64 bytes "
                "(8 words); split larger state into several objects");

 public:
  using value_type = T;
  using ref_type = heap_ref<T, M>;
  static constexpr mode heap_mode = M;
  static constexpr unsigned words_per_object = detail::words_of<T>;

  /// n objects, each T{} at version 0. Throws warpkv::error(invalid_argument) when n is 0 or
  /// above max_heap_objects, (out_of_memory) when the backend cannot hold it.
  explicit heap(std::size_t n, execution ex = execution::automatic()) : ex_(ex) {
    allocate(n);
    fill(T{});
  }
  /// One object per element of `init`, at version 0.
  explicit heap(std::span<const T> init, execution ex = execution::automatic()) : ex_(ex) {
    allocate(init.size());
    fill_locks();
    assign(init);
  }

  [[nodiscard]] std::size_t size() const { return n_; }
  [[nodiscard]] const execution& exec() const { return ex_; }
  [[nodiscard]] ref_type ref() const { return ref_type(locks_.data(), words_.data(), control_.data(), n_); }

  /// Overwrites every object with `value` and resets versions and the clock to 0.
  void fill(const T& value) {
    std::array<std::uint64_t, 8> pattern{};
    detail::to_words(value, pattern.data());
    launch_fill(words_.data(), n_ * words_per_object, pattern, words_per_object);
    fill_locks();
  }
  /// Overwrites the objects with `values` (values.size() must equal size()); versions are kept.
  void assign(std::span<const T> values) {
    require(values.size() == n_, "values", "must hold exactly size() = " + std::to_string(n_) + " objects");
    std::vector<std::uint64_t> w(n_ * words_per_object);
    for (std::size_t i = 0; i < n_; ++i) detail::to_words(values[i], w.data() + i * words_per_object);
    words_.copy_from_host(w.data(), w.size());
  }
  /// Every object's value (waits for the heap's stream).
  [[nodiscard]] std::vector<T> to_vector() const {
    const std::vector<std::uint64_t> w = words_.to_vector();
    std::vector<T> out(n_);
    for (std::size_t i = 0; i < n_; ++i) out[i] = detail::from_words<T>(w.data() + i * words_per_object);
    return out;
  }
  /// Every object's lock word (version << 1 | locked); between kernels no lock is held.
  [[nodiscard]] std::vector<std::uint64_t> lock_words() const { return locks_.to_vector(); }
  /// Every object's version.
  [[nodiscard]] std::vector<std::uint64_t> versions() const {
    std::vector<std::uint64_t> v = locks_.to_vector();
    for (auto& x : v) x = detail::version_of(x);
    return v;
  }
  /// The global version clock: the number of update commits so far in opaque mode.
  [[nodiscard]] std::uint64_t clock() const { return detail::clock_value(control_.to_vector()[0]); }
  /// How many times a transaction escalated to serial mode (opaque mode).
  [[nodiscard]] std::uint64_t serial_escalations() const { return control_.to_vector()[2]; }
  /// How many times a transaction queued on a contention stripe (opaque mode).
  [[nodiscard]] std::uint64_t queued_retries() const {
    const std::vector<std::uint64_t> c = control_.to_vector();
    std::uint64_t sum = 0;
    for (std::size_t i = detail::control_words; i < c.size(); i += 2) sum += c[i];
    return sum;
  }

 private:
  void allocate(std::size_t n) {
    require(n > 0, "n", "a heap holds at least one object");
    require(n <= max_heap_objects, "n", "at most 2^32 - 1 objects per heap (ids are 32-bit)");
    require(n <= std::numeric_limits<std::size_t>::max() / (8 * words_per_object), "n", "heap size overflows size_t");
    n_ = n;
    locks_ = buffer<std::uint64_t>(n, ex_);
    words_ = buffer<std::uint64_t>(n * words_per_object, ex_);
    control_ = buffer<std::uint64_t>(detail::control_words + 2 * detail::queue_stripes(n), ex_);
  }
  void fill_locks() {
    launch_fill(locks_.data(), n_, std::array<std::uint64_t, 8>{}, 1);
    const std::vector<std::uint64_t> zero(control_.size(), 0);
    control_.copy_from_host(zero.data(), zero.size());
  }
  void launch_fill(std::uint64_t* p, std::size_t n, const std::array<std::uint64_t, 8>& pattern, unsigned period) {
    if (ex_.where == backend::host) {  // host memory: no thread pool needed
      for (std::size_t i = 0; i < n; ++i) p[i] = pattern[i % period];
      return;
    }
    detail::fill_words body{p, n, {}, period};
    for (unsigned i = 0; i < 8; ++i) body.pattern[i] = pattern[i];
    launch<32>(ex_, (n + 1023) / 1024, simple_body<detail::fill_words>{body});
  }

  execution ex_;
  std::size_t n_ = 0;
  buffer<std::uint64_t> locks_;
  buffer<std::uint64_t> words_;
  buffer<std::uint64_t> control_;
};

}  // namespace warpkv::stm
