#pragma once
// Transactions over a warpkv::stm::heap, on the GPU or on host threads.
//
//   stm::transaction<T, Mode, Capacity, WriteCapacity>          one thread, one transaction
//   stm::tile_transaction<Tile, T, Mode, Capacity, WriteCapacity> a tile cooperates on one
//   stm::atomically(tx, f)                                      runs f(tx) until it commits
//
// Both variants are basic_transaction: the per-thread one runs on a one-lane group. In the
// per-tile variant every lane of the tile calls every member with the same arguments and gets
// the same results; lanes split the memory traffic (object words, lock words, write-back).
//
// Use:
//   stm::transaction<account> tx(heap.ref(), seed);    // inside a kernel body; seed: any
//   stm::atomically(tx, [&](auto& t) {                  // per-thread value, decorrelates back-off
//     account a = t.read(from), b = t.read(to);
//     if (!t.ok() || a.balance < amount) return;        // values are meaningful only while ok()
//     a.balance -= amount; b.balance += amount;
//     t.write(from, a); t.write(to, b);
//   });                                                  // -> tx_status::committed
//
// Guarantees (argument: docs/design/stm.md):
//  - mode::opaque (default): opacity. Every value a read returns while ok() belongs, with all
//    earlier reads of the same attempt, to one committed state of the heap; this holds for
//    attempts that later abort. Commits are serializable; the serialization point of an update
//    commit is its global-clock increment, of a read-only one its (last) snapshot time.
//    Progress: some transaction always commits (no deadlock, no livelock); a commit never waits
//    for a lock while holding one, so no lane, warp or block can deadlock under independent
//    thread scheduling. atomically escalates a transaction that keeps conflicting to serial
//    mode (FIFO tickets; others wait at begin), so every atomically call finishes
//    (starvation-freedom) and heavy contention degrades to one-at-a-time, not to collapse.
//  - mode::baseline: the seed's obstruction-free design. Committed transactions are
//    serializable; live ones may see inconsistent snapshots; contention may livelock (atomically
//    backs off randomly).
//  - Read and write sets live in the transaction object (registers / local memory). Capacity
//    bounds the distinct objects an attempt touches, WriteCapacity those it writes; going past
//    either fails the attempt with access_set_full / write_set_full, and nothing is written.
//  - No lock is held between calls: a transaction holds locks only inside commit().
//  - Object ids >= heap size fail the attempt with invalid_id; nothing is written.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "warpkv/core/aggregate.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/stm/detail/backoff.hpp"
#include "warpkv/stm/detail/group.hpp"
#include "warpkv/stm/detail/lock_word.hpp"
#include "warpkv/stm/heap.hpp"
#include "warpkv/stm/status.hpp"

namespace warpkv::stm {

template <class Group, class T, mode M, int Capacity, int WriteCapacity>
class basic_transaction {
  static_assert(Capacity >= 1 && Capacity <= 32767, "Capacity (distinct objects per transaction) must be in [1, 32767]");
  static_assert(WriteCapacity >= 1 && WriteCapacity <= Capacity, "WriteCapacity must be in [1, Capacity]");

 public:
  using value_type = T;
  using group_type = Group;
  using heap_type = heap_ref<T, M>;
  static constexpr mode tx_mode = M;
  static constexpr int capacity = Capacity;
  static constexpr int write_capacity = WriteCapacity;
  static constexpr unsigned words = heap_type::words_per_object;

  /// One object of the attempt's footprint, for inspection (tests, statistics).
  struct access {
    std::size_t id;
    bool read;                ///< a read returned this object's version `version`
    bool written;             ///< the attempt wrote it
    std::uint64_t version;    ///< version read; for a blind write, after commit: the version it replaced
    std::uint64_t installed;  ///< after commit: the version the object now has (== version if not written)
  };

  /// Per-tile transaction: every lane of `g` constructs it with the same heap and seed.
  WARPKV_HD basic_transaction(const Group& g, const heap_type& h, std::uint64_t seed = 0)
      : g_(g), h_(h), rng_(seed) {}
  /// Per-thread transaction. `seed` (for example the thread's global index) decorrelates back-off.
  WARPKV_HD explicit basic_transaction(const heap_type& h, std::uint64_t seed = 0)
    requires std::is_same_v<Group, detail::single_lane>
      : g_(), h_(h), rng_(seed) {}

  /// Starts an attempt: empties the read and write sets and takes the snapshot time.
  WARPKV_HD void begin() {
    n_ = 0;
    nw_ = 0;
    wv_ = 0;
    st_ = tx_status::active;
    ++attempts_;
    if constexpr (M == mode::opaque) {
      // One acquire load of the clock per group of lanes beginning together (the tile, or the
      // warp's converged lanes for per-thread transactions on the GPU), then a group sync, so
      // every lane's later loads are ordered after the snapshot: the clock's address is read
      // once per warp, not once per lane (docs/design/stm.md, "clock"). While an escalated
      // transaction runs alone (serial flag), others wait here, holding nothing.
      std::uint32_t delay = 1;
      for (;;) {
        const std::uint64_t c = load_clock();
        if (serial_ || (c & detail::serial_flag) == 0) {
          rv_ = detail::clock_value(c);
          break;
        }
        detail::pause(delay);
        if (delay < 64) delay <<= 1;
      }
    } else {
      rv_ = 0;
    }
  }

  /// Reads object `id` into `out`: its value in the attempt's snapshot, or the value the attempt
  /// wrote. False (out untouched) when the attempt has failed, now or before.
  WARPKV_HD bool read(std::size_t id, T& out) {
    if (st_ != tx_status::active) return false;
    if (id >= h_.size()) return fail(tx_status::invalid_id);
    bool found = false;
    const int k = locate(static_cast<std::uint32_t>(id), found);
    if (found && e_[k].wslot >= 0) {
      out = detail::from_words<T>(wbuf_[e_[k].wslot]);
      return true;
    }
    if (!found && n_ == Capacity) return fail(tx_status::access_set_full);
    std::uint64_t w[words];
    std::uint64_t ver = 0;
    if (!load_object(static_cast<std::uint32_t>(id), w, ver)) return conflict_on(id);
    if (found) {
      // Read again: it must still be the version this attempt saw first.
      if (ver != e_[k].version) return conflict_on(id);
    } else {
      insert_at(k, entry{static_cast<std::uint32_t>(id), f_read, -1, ver});
    }
    out = detail::from_words<T>(w);
    return true;
  }
  /// The value of object `id`, or T{} when the attempt has failed (check ok()).
  WARPKV_HD T read(std::size_t id) {
    T v{};
    read(id, v);
    return v;
  }

  /// Writes `value` to object `id` in the attempt's private copy; it becomes visible at commit.
  WARPKV_HD bool write(std::size_t id, const T& value) {
    if (st_ != tx_status::active) return false;
    if (id >= h_.size()) return fail(tx_status::invalid_id);
    bool found = false;
    const int k = locate(static_cast<std::uint32_t>(id), found);
    int slot = found ? e_[k].wslot : -1;
    if (slot < 0) {
      if (nw_ == WriteCapacity) return fail(tx_status::write_set_full);
      if (!found) {
        if (n_ == Capacity) return fail(tx_status::access_set_full);
        insert_at(k, entry{static_cast<std::uint32_t>(id), 0, -1, 0});
      }
      slot = nw_++;
      e_[k].wslot = static_cast<std::int16_t>(slot);
      e_[k].flags |= f_written;
    }
    detail::to_words(value, wbuf_[slot]);
    return true;
  }

  /// Commits the attempt: true when committed. False leaves the status saying why.
  WARPKV_HD bool commit() {
    if (st_ != tx_status::active) return st_ == tx_status::committed;
    if (n_ == 0 || (M == mode::opaque && nw_ == 0)) {
      // Opaque read-only: every read was validated against the snapshot, which is the
      // serialization point. Nothing to lock.
      st_ = tx_status::committed;
      return true;
    }
    if (!acquire_all()) return fail(tx_status::conflict);  // acquire_all set conflict_id_
    // Holding every lock at the versions read, this commit cannot fail any more: hand the
    // stripe's turn to the next queued transaction now, so that its begin and reads overlap
    // this write-back (its read of an object still locked here waits for the unlock) instead
    // of starting after it.
    leave_queue();
    // Every object of the footprint is locked at the version this attempt read.
    g_.sync();  // every lane's lock acquisitions happen-before what follows on any lane
    if constexpr (M == mode::opaque) wv_ = take_commit_version();  // serialization point
    if (nw_ > 0) {
      atomic_thread_fence(memory_order::release);  // a reader that sees a new word sees the lock
      write_back();
      g_.sync();  // every lane's data stores happen-before every lane's unlock
    }
    release_held(true);
    st_ = tx_status::committed;
    return true;
  }

  /// Abandons the attempt (no lock is held outside commit, so nothing is undone in memory).
  WARPKV_HD void abort() {
    if (st_ == tx_status::active) st_ = tx_status::user_abort;
  }

  WARPKV_HD tx_status status() const { return st_; }
  /// True while the attempt is live: every value read so far is from one consistent snapshot.
  WARPKV_HD bool ok() const { return st_ == tx_status::active || st_ == tx_status::committed; }
  /// Attempts begun by this object.
  WARPKV_HD unsigned attempts() const { return attempts_; }
  /// Randomized exponential back-off before retry number `attempt + 1` (used by atomically).
  WARPKV_HD void backoff(unsigned attempt) {
    if (serial_) return;  // it is about to run alone: no reason to wait
#if WARPKV_DEVICE_PASS
    // Queued, it already waited its turn on the hot stripe: a long sleep would only idle it.
    const unsigned cap = queued_ ? 4 : 12;  // up to 32 x 32 ns queued, 8192 x 32 ns = 0.26 ms not
#else
    const unsigned cap = queued_ ? 2 : 5;  // up to 8 / 64 yields
#endif
    const unsigned e = attempt < cap ? attempt : cap;
    detail::pause(rng_.next() & ((2u << e) - 1u));
  }

  /// Opaque mode: escalates this transaction to serial mode. Waits (holding nothing) for its
  /// FIFO ticket, then raises the heap's serial flag: attempts of other transactions that begin
  /// from then on wait until leave_serial(), so this one soon runs alone and commits. Every
  /// enter_serial() must be followed by leave_serial() (atomically does both). No-op in
  /// baseline mode, which stays obstruction-free as the seed designed it.
  WARPKV_HD void enter_serial() {
    if constexpr (M == mode::opaque) {
      if (serial_) return;
      if (g_.thread_rank() == 0) {
        const std::uint64_t ticket = atomic_ref<std::uint64_t>(h_.ticket_word()).fetch_add(1, memory_order::relaxed);
        const atomic_ref<std::uint64_t> serving(h_.serving_word());
        std::uint32_t delay = 1;
        while (serving.load(memory_order::acquire) != ticket) {
          detail::pause(delay);
          if (delay < 64) delay <<= 1;
        }
        clock_ref().fetch_or(detail::serial_flag, memory_order::acq_rel);
      }
      serial_ = true;
    }
  }
  /// Ends serial mode (if in it): lowers the flag and serves the next ticket.
  WARPKV_HD void leave_serial() {
    if constexpr (M == mode::opaque) {
      if (!serial_) return;
      if (g_.thread_rank() == 0) {
        clock_ref().fetch_and(~detail::serial_flag, memory_order::acq_rel);
        atomic_ref<std::uint64_t>(h_.serving_word()).fetch_add(1, memory_order::release);
      }
      serial_ = false;
    }
  }
  /// True between enter_serial() and leave_serial().
  WARPKV_HD bool serial() const { return serial_; }

  /// Opaque mode, after a conflict: queues this transaction on the contention stripe of the
  /// object the last attempt conflicted on. Waits (holding nothing) for its FIFO ticket on that
  /// stripe; from then on, until leave_queue(), it is the only queued transaction of the stripe,
  /// so retries on a hot object take turns instead of all aborting each other. Unqueued
  /// transactions are not held back (only serial mode stops everything). Every enter_queue()
  /// must be followed by leave_queue() (atomically does both). No-op in baseline mode, in
  /// serial mode and when already queued.
  WARPKV_HD void enter_queue() {
    if constexpr (M == mode::opaque) {
      if (serial_ || queued_) return;
      stripe_ = h_.stripe_of(conflict_id_);
      if (g_.thread_rank() == 0) {
        const std::uint64_t ticket =
            atomic_ref<std::uint64_t>(h_.queue_ticket_word(stripe_)).fetch_add(1, memory_order::relaxed);
        const atomic_ref<std::uint64_t> serving(h_.queue_serving_word(stripe_));
        for (;;) {
          const std::uint64_t now = serving.load(memory_order::acquire);
          if (now == ticket) break;
          // Proportional back-off: each transaction ahead is one attempt of a few microseconds
          // on the GPU, so a waiter far back polls rarely and the next in line often.
          const std::uint64_t ahead = ticket - now;
#if WARPKV_DEVICE_PASS
          detail::pause(static_cast<std::uint32_t>(ahead < 32 ? 16 * ahead : 512));
#else
          detail::pause(static_cast<std::uint32_t>(ahead < 8 ? ahead : 8));
#endif
        }
      }
      g_.sync();  // the group leaves together once lane 0 holds the turn
      queued_ = true;
    }
  }
  /// Ends the turn on the contention stripe (if queued): serves the next ticket.
  WARPKV_HD void leave_queue() {
    if constexpr (M == mode::opaque) {
      if (!queued_) return;
      if (g_.thread_rank() == 0)
        atomic_ref<std::uint64_t>(h_.queue_serving_word(stripe_)).fetch_add(1, memory_order::release);
      queued_ = false;
    }
  }
  /// True between enter_queue() and leave_queue().
  WARPKV_HD bool queued() const { return queued_; }
  /// The object the last conflict was detected on (the one enter_queue() queues for).
  WARPKV_HD std::size_t conflict_object() const { return conflict_id_; }

  // ---- inspection ------------------------------------------------------------------------
  /// Distinct objects touched by the attempt.
  WARPKV_HD int footprint() const { return n_; }
  /// Entry k (ascending ids) of the footprint.
  WARPKV_HD access footprint_entry(int k) const {
    const entry& e = e_[k];
    return access{e.id, (e.flags & f_read) != 0, (e.flags & f_written) != 0, e.version, installed(e)};
  }
  /// Opaque mode: the snapshot time (global clock) the attempt's reads are consistent at.
  WARPKV_HD std::uint64_t snapshot_version() const { return rv_; }
  /// Opaque mode, after an update commit: the clock value it installed (0 otherwise).
  WARPKV_HD std::uint64_t commit_version() const { return wv_; }

 private:
  enum : std::uint16_t { f_read = 1, f_written = 2, f_held = 4 };
  struct entry {
    std::uint32_t id;
    std::uint16_t flags;  // f_held is per lane: set by the lane that holds the lock
    std::int16_t wslot;   // index into wbuf_, -1 when not written
    std::uint64_t version;
  };
  enum lock_result : int { acquired = 0, busy = 1, changed = 2 };

  static constexpr unsigned lanes = Group::size();

  WARPKV_HD atomic_ref<std::uint64_t> lock_ref(std::uint32_t id) const { return atomic_ref<std::uint64_t>(h_.lock_word(id)); }
  WARPKV_HD atomic_ref<std::uint64_t> clock_ref() const { return atomic_ref<std::uint64_t>(h_.clock_word()); }

  WARPKV_HD bool fail(tx_status s) {
    st_ = s;
    return false;
  }
  /// A conflict detected on object `id` (uniform over the group): recorded for enter_queue().
  WARPKV_HD bool conflict_on(std::size_t id) {
    conflict_id_ = id;
    return fail(tx_status::conflict);
  }

  /// The clock word, loaded once per group of the warp's lanes that begin together
  /// (aggregate.hpp: on the GPU the converged lanes, several tiles' or threads' transactions at
  /// once; on the host the calling thread), and lane 0's value on every lane of the tile.
  /// Ordering: the active group's sync after the leader's acquire, and for a tile the shfl
  /// (a barrier on the host; on the GPU the tile's lanes are in one active group or ordered by
  /// the tile's own syncs) make every lane's later loads follow an acquire of this value.
  WARPKV_HD std::uint64_t load_clock() const {
    const std::uint64_t c = aggregated_load(active_lanes{}, clock_ref(), memory_order::acquire);
    return g_.shfl(c, 0);
  }

  /// The commit's version: one clock increment per group of the warp's lanes committing
  /// together (every per-thread transaction and every tile's lane 0 in it take one value each).
  /// Called with the whole footprint locked; the syncs around the increment make every
  /// lane's lock CASes happen-before the leader's release and the increment happen-before every
  /// lane's write-back and unlock (docs/design/stm.md, "clock"; a tile's lanes are also ordered
  /// by the tile syncs around this call in commit).
  WARPKV_HD std::uint64_t take_commit_version() {
    const active_lanes w;
    w.sync();
    const std::uint64_t c =
        aggregated_fetch_add(w, clock_ref(), detail::clock_step, g_.thread_rank() == 0, memory_order::acq_rel);
    w.sync();
    return detail::clock_value(g_.shfl(c, 0)) + 1;
  }

  /// The version e has after this attempt: unchanged unless written by a commit.
  WARPKV_HD std::uint64_t version_after(const entry& e, bool committed) const {
    if ((e.flags & f_written) == 0 || !committed) return e.version;
    return M == mode::opaque ? wv_ : e.version + 1;  // opaque: the commit's clock value; baseline: + 1
  }
  WARPKV_HD std::uint64_t installed(const entry& e) const { return version_after(e, st_ == tx_status::committed); }

  /// Position of `id` in the sorted footprint, or where it would be inserted.
  WARPKV_HD int locate(std::uint32_t id, bool& found) const {
    int k = 0;
    while (k < n_ && e_[k].id < id) ++k;
    found = k < n_ && e_[k].id == id;
    return k;
  }
  WARPKV_HD void insert_at(int k, const entry& e) {
    for (int j = n_; j > k; --j) e_[j] = e_[j - 1];
    e_[k] = e;
    ++n_;
  }

  /// Copies object `id` into w[] on every lane and its version into `ver`. False: conflict.
  WARPKV_HD bool load_object(std::uint32_t id, std::uint64_t* w, std::uint64_t& ver) {
    const atomic_ref<std::uint64_t> lock = lock_ref(id);
    const unsigned r = g_.thread_rank();
    unsigned retries = 0;
    unsigned extensions = 0;
    unsigned lock_waits = 0;
    for (;;) {
      // Seqlock read: acquire the lock word, copy the words (lane r: words r, r + lanes, ...),
      // then an acquire fence and the lock word again. Equal unlocked words before and after
      // mean no commit wrote the object in between (docs/design/stm.md, "reads").
      const std::uint64_t l1 = lock.load(memory_order::acquire);
      std::uint64_t mine[words] = {};
      for (unsigned i = r; i < words; i += lanes)
        mine[i] = atomic_ref<std::uint64_t>(h_.data_word(id, i)).load(memory_order::relaxed);
      const std::uint64_t l1_lane0 = g_.shfl(l1, 0);
      bool stable = l1 == l1_lane0;
      if constexpr (M == mode::opaque) {
        atomic_thread_fence(memory_order::acquire);
        stable = stable && lock.load(memory_order::relaxed) == l1;
      }
      // (baseline reads the seed's way: lock check, copy, no validation; commit catches it)
      if (!g_.all(stable)) {
        if (++retries > 32) return false;
        detail::pause(1);
        continue;
      }
      if (detail::is_locked(l1)) {
        // A commit owns it: its version is about to change. Unqueued readers give up at once
        // (the reader never waits); a queued one, its stripe's turn, waits a few microseconds
        // for that bounded commit rather than spend the turn on an abort, then reads the new
        // version (extending its snapshot). Waiting holds no lock, and lock holders never
        // wait for readers or turns, so this cannot deadlock (docs/design/stm.md).
        if (!queued_ || ++lock_waits > 8) return false;
        detail::pause(lock_waits < 4 ? 2u << lock_waits : 16u);
        continue;
      }
      ver = detail::version_of(l1);
      if constexpr (M == mode::opaque) {
        if (ver > rv_) {
          // Newer than the snapshot: move the snapshot forward if everything read so far is
          // still current, then read the object again under the new snapshot.
          if (++extensions > 8 || !extend()) return false;
          continue;
        }
      }
      for (unsigned i = 0; i < words; ++i) w[i] = g_.shfl(mine[i], i % lanes);
      return true;
    }
  }

  /// Snapshot extension: a new snapshot time if every object read so far is unchanged.
  WARPKV_HD bool extend() {
    const std::uint64_t nrv = detail::group_min(g_, detail::clock_value(clock_ref().load(memory_order::acquire)));
    bool valid = true;
    for (int k = static_cast<int>(g_.thread_rank()); k < n_; k += static_cast<int>(lanes)) {
      const entry& e = e_[k];
      if ((e.flags & f_read) != 0 && lock_ref(e.id).load(memory_order::relaxed) != detail::unlocked_word(e.version))
        valid = false;
    }
    if (!g_.all(valid)) return false;
    rv_ = nrv;
    return true;
  }

  /// One CAS attempt on e's lock: from unlocked at the version read (any version for a blind
  /// write) to locked. Never waits.
  WARPKV_HD lock_result try_lock(entry& e) {
    const atomic_ref<std::uint64_t> lock = lock_ref(e.id);
    const bool was_read = (e.flags & f_read) != 0;
    std::uint64_t expected = was_read ? detail::unlocked_word(e.version) : lock.load(memory_order::relaxed);
    for (;;) {
      if (detail::is_locked(expected)) {
        // Held by another commit. Its version bits are the version before that lock: if that
        // already differs from ours, our read is stale whatever the owner does.
        return was_read && detail::version_of(expected) != e.version ? changed : busy;
      }
      // acquire: the previous owner's write-back happens-before our own write-back.
      if (lock.compare_exchange(expected, expected | detail::lock_bit, memory_order::acquire)) {
        if (!was_read) e.version = detail::version_of(expected);
        e.flags |= f_held;
        return acquired;
      }
      if (was_read && !detail::is_locked(expected)) return changed;  // a commit replaced what we read
      // blind write: the word moved on; try again with the value just seen
    }
  }

  /// Releases the locks this lane holds: restored (abort) or at the installed version (commit).
  WARPKV_HD void release_held(bool committed) {
    for (int k = 0; k < n_; ++k) {
      entry& e = e_[k];
      if ((e.flags & f_held) == 0) continue;
      e.flags = static_cast<std::uint16_t>(e.flags & ~f_held);
      const std::uint64_t v = version_after(e, committed);
      // release: our write-back (commit), or the data we acquired (abort), is visible to the
      // next owner and to readers that acquire this word.
      lock_ref(e.id).store(detail::unlocked_word(v), memory_order::release);
    }
  }

  /// Locks the whole footprint. False: conflict (nothing held).
  WARPKV_HD bool acquire_all() {
    const unsigned r = g_.thread_rank();
    bool all_at_once = false;
    if constexpr (M == mode::baseline || lanes > 1) {
      // Baseline (the seed): try each lock once; any failure aborts. Opaque tiles: the same as a
      // fast path in which every lane locks its share at once; on failure fall back to order.
      bool mine_ok = true;
      bool stale = false;
      std::uint32_t failed_id = 0;
      for (int k = static_cast<int>(r); k < n_; k += static_cast<int>(lanes)) {
        const lock_result o = try_lock(e_[k]);
        if (o != acquired) {
          mine_ok = false;
          stale = o == changed;
          failed_id = e_[k].id;
          break;
        }
      }
      all_at_once = g_.all(mine_ok);
      if (!all_at_once) {
        release_held(false);
        if (M == mode::baseline || g_.any(stale)) {
          conflict_id_ = g_.shfl(failed_id, static_cast<unsigned>(lowest_lane(g_.ballot(!mine_ok))));
          return false;
        }
      }
    }
    if constexpr (M == mode::opaque) {
      if (!all_at_once) {
        // Ascending ids, lane 0 locking for the group. A lock held by another commit is never
        // waited for while holding one: release everything, wait for that lock, start over.
        int k = 0;
        while (k < n_) {
          int o = acquired;
          if (r == 0) o = try_lock(e_[k]);
          o = g_.shfl(o, 0);
          if (o == acquired) {
            ++k;
            continue;
          }
          release_held(false);
          const std::uint32_t id = e_[k].id;
          conflict_id_ = id;
          if (o == changed) return false;
          const bool was_read = (e_[k].flags & f_read) != 0;
          const std::uint64_t read_version = e_[k].version;
          k = 0;
          int stale = 0;
          if (r == 0) {
            const std::uint64_t now = wait_unlocked(id);
            stale = was_read && detail::version_of(now) != read_version;
          }
          if (g_.shfl(stale, 0) != 0) return false;
        }
      }
    }
    if constexpr (lanes > 1) {
      // Blind writes learned the version they replace on the lane that locked them.
      for (int k = 0; k < n_; ++k) {
        if ((e_[k].flags & f_read) != 0) continue;
        e_[k].version = g_.shfl(e_[k].version, all_at_once ? static_cast<unsigned>(k) % lanes : 0u);
      }
    }
    return true;
  }

  /// Polls a lock word (holding no lock) until it is unlocked; returns that word.
  WARPKV_HD std::uint64_t wait_unlocked(std::uint32_t id) const {
    const atomic_ref<std::uint64_t> lock = lock_ref(id);
    std::uint32_t delay = 1;
    for (;;) {
      const std::uint64_t w = lock.load(memory_order::relaxed);
      if (!detail::is_locked(w)) return w;
      detail::pause(delay);
      if (delay < 32) delay <<= 1;
    }
  }

  /// Stores the written objects' words; lanes split the (object, word) items.
  WARPKV_HD void write_back() const {
    const unsigned r = g_.thread_rank();
    unsigned item = 0;
    for (int k = 0; k < n_; ++k) {
      const entry& e = e_[k];
      if ((e.flags & f_written) == 0) continue;
      for (unsigned i = 0; i < words; ++i, ++item)
        if (item % lanes == r) atomic_ref<std::uint64_t>(h_.data_word(e.id, i)).store(wbuf_[e.wslot][i], memory_order::relaxed);
    }
  }

  Group g_;
  heap_type h_;
  detail::xorshift rng_;
  std::uint64_t rv_ = 0;
  std::uint64_t wv_ = 0;
  int n_ = 0;
  int nw_ = 0;
  tx_status st_ = tx_status::idle;
  unsigned attempts_ = 0;
  bool serial_ = false;
  bool queued_ = false;
  std::size_t conflict_id_ = 0;  // object of the last conflict (uniform over the group)
  std::size_t stripe_ = 0;       // contention stripe while queued
  entry e_[Capacity];                      // the footprint, ascending ids
  std::uint64_t wbuf_[WriteCapacity][words];  // private copies of written objects
};

/// A transaction run by one thread.
template <class T, mode M = mode::opaque, int Capacity = 16, int WriteCapacity = 8>
using transaction = basic_transaction<detail::single_lane, T, M, Capacity, WriteCapacity>;

/// A transaction run by all lanes of a tile together (uniform arguments on every lane).
template <class Tile, class T, mode M = mode::opaque, int Capacity = 16, int WriteCapacity = 8>
using tile_transaction = basic_transaction<Tile, T, M, Capacity, WriteCapacity>;

/// Conflicts after which atomically escalates an opaque transaction to serial mode.
inline constexpr unsigned default_escalation = 32;
/// Conflicts after which atomically queues an opaque transaction on the contention stripe of
/// the object it conflicted on (enter_queue); 0: never (escalation alone, the design before
/// contention queues, kept selectable for comparison).
inline constexpr unsigned default_queueing = 1;

/// Runs f(tx) in attempts until one commits or fails for a reason retrying cannot fix.
/// f may read, write and call tx.abort(); when it returns with the attempt live, atomically
/// commits. Returns committed, user_abort, access_set_full, write_set_full, invalid_id, or
/// conflict after `max_attempts` attempts (0: no limit). Between attempts: randomized
/// exponential back-off. Opaque mode: after `queue_after` conflicts (0: never) the transaction
/// queues on the stripe of its last conflict object and keeps that turn until a commit of it
/// holds every lock (or it returns); after
/// `escalate_after` conflicts (0: never) it leaves the queue and escalates to serial mode
/// (enter_serial), which bounds its wait: every call returns after finitely many attempts
/// (starvation-freedom) as long as f terminates.
template <class Tx, class F>
WARPKV_HD tx_status atomically(Tx& tx, F&& f, unsigned max_attempts = 0,
                               unsigned escalate_after = default_escalation,
                               unsigned queue_after = default_queueing) {
  tx_status s = tx_status::idle;
  for (unsigned attempt = 0;; ++attempt) {
    if (escalate_after != 0 && attempt == escalate_after) {
      tx.leave_queue();  // never wait for the serial ticket while holding a stripe's turn
      tx.enter_serial();
    } else if (queue_after != 0 && attempt == queue_after) {
      tx.enter_queue();
    }
    tx.begin();
    f(tx);
    if (tx.status() == tx_status::active) tx.commit();
    s = tx.status();
    if (s != tx_status::conflict || (max_attempts != 0 && attempt + 1 >= max_attempts)) break;
    tx.backoff(attempt);
  }
  tx.leave_queue();
  tx.leave_serial();
  return s;
}

}  // namespace warpkv::stm
