"""KVCache.accum_or_assign (HierarchicalKV's accum_or_assign, both forms) against a sequential
Python model over several seeds, as tests/cache/test_cache_hkv.cpp's CacheHkvAccum tests do:
accumulate-or-insert, the accum_or_assigns flags (accumulate only / insert only), keys repeated in
a batch (checked per key against its linearizations), float16/32/64 rows in place and staged,
every bound design, racing threads, and bad input. Deltas are small integers, so every sum is
exact in any order (float16 too: its sums stay below 2^11). NumPy on the host backend; the same
tests with PyTorch and CuPy tensors on the GPU (the xp fixture)."""

import threading

import numpy as np
import pytest

import warpkv

S = warpkv.Status
KEYS = 150  # keys drawn from 1..KEYS into a cache of 1024: nothing is evicted
SEEDS = range(4)

# (value_dtype, value_width): rows of 8-byte multiples are used in place, the others staged
ROWS = [("float32", 1), ("float32", 6), ("float64", 1), ("float64", 3), ("float16", 3), ("float16", 4)]
# every design the module binds a kernel for: by_config's choices and the four score policies
DESIGNS = [dict(eviction="clock"), dict(eviction="random"), dict(sync="rw_lock"), dict(layout="inline_values"),
           dict(key_digests=True), dict(eviction="lfu"), dict(eviction="epoch_lru"), dict(eviction="epoch_lfu"),
           dict(eviction="custom")]
CASES = [(dt, w, {}) for dt, w in ROWS] + [("float32", 3, d) for d in DESIGNS]


def case_id(case):
    dt, w, opts = case
    return f"{dt}x{w}" + "".join(f"-{k}={v}" for k, v in opts.items())


def make(xp, value_dtype, width, capacity=1024, **kw):
    if not xp.supports(value_dtype):
        pytest.skip(f"{xp} has no {value_dtype}")
    return warpkv.KVCache(capacity, value_dtype, width, backend=xp.backend, **kw)


def shaped(a, width):
    return a.reshape(-1) if width == 1 else a.reshape(-1, width)


def deltas_for(rng, n, dtype, width):
    lim = 8 if dtype == "float16" else 100  # float16 holds integers exactly up to 2048
    return shaped(rng.integers(-lim, lim + 1, size=n * width).astype(dtype), width)


def expect_model(xp, c, model, width, msg):
    """The cache holds exactly the model's keys, each with the model's row."""
    assert c.size() == len(model), msg
    if not model:
        return
    keys = np.array(sorted(model), np.uint64)
    got, found = c.get(xp.asarray(keys))
    assert xp.numpy(found).all(), msg
    got = xp.numpy(got).astype(np.float64).reshape(len(keys), width)
    want = np.stack([model[k] for k in keys.tolist()])
    np.testing.assert_array_equal(got, want, err_msg=msg)


def check_batch(keys, rows, flags, st, model, width):
    """Checks one batch's statuses per key against every linearization of its operations (each
    operation is linearizable per key) and applies it to the model; returns an error or None.
    flags None: accumulate-or-insert (a key absent before the batch: one INSERTED, its row the
    value, the rest ASSIGNED). Flags: true accumulates into a live entry (ASSIGNED) or finds it
    absent (NOT_FOUND), false inserts an absent key (one INSERTED, the rest FOUND) or leaves a live
    one (FOUND). The result: the inserted row (or the value before) plus the ASSIGNED deltas."""
    rows = rows.astype(np.float64).reshape(len(keys), width)
    by_key = {}
    for i, k in enumerate(keys.tolist()):
        by_key.setdefault(k, []).append(i)
    for k, ops in by_key.items():
        live = k in model
        accum = [i for i in ops if flags is None or flags[i]]
        insert = [i for i in ops if flags is not None and not flags[i]]
        inserted = [i for i in ops if st[i] == S.INSERTED]
        if live:
            if inserted:
                return f"key {k} was live, yet op {inserted[0]} inserted it"
            if any(st[i] != S.ASSIGNED for i in accum):
                return f"key {k} was live: its accumulations are ASSIGNED, got {[int(st[i]) for i in accum]}"
            if any(st[i] != S.FOUND for i in insert):
                return f"key {k} was live: its inserts are FOUND, got {[int(st[i]) for i in insert]}"
            model[k] = model[k] + rows[accum].sum(axis=0)
            continue
        if flags is None:
            if len(inserted) != 1 or any(st[i] != S.ASSIGNED for i in ops if i != inserted[0]):
                return f"key {k} was absent: one INSERTED and the rest ASSIGNED, got {[int(st[i]) for i in ops]}"
            model[k] = rows[ops].sum(axis=0)
            continue
        if insert and (len(inserted) != 1 or inserted[0] not in insert or
                       any(st[i] != S.FOUND for i in insert if i != inserted[0])):
            return f"key {k} was absent: one insert INSERTED, the rest FOUND, got {[int(st[i]) for i in insert]}"
        if not insert and inserted:
            return f"key {k}: inserted without an insert"
        if any(st[i] not in (S.ASSIGNED, S.NOT_FOUND) for i in accum):
            return f"key {k}: an accumulation got {[int(st[i]) for i in accum]}"
        assigned = [i for i in accum if st[i] == S.ASSIGNED]
        if assigned and not insert:
            return f"key {k} was absent and never inserted, yet accumulated into"
        if insert:
            model[k] = rows[inserted[0]] + rows[assigned].sum(axis=0)
    return None


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_accumulate_or_insert_matches_the_model(xp, case):
    """Without flags, keys repeated within a batch: every delta lands, one insert per key absent
    before the batch."""
    value_dtype, width, opts = case
    for seed in SEEDS:
        c = make(xp, value_dtype, width, seed=seed, **opts)
        rng = np.random.default_rng(seed + 90)
        model = {}
        for b in range(25):
            n = int(rng.integers(1, 121))
            keys = rng.integers(1, KEYS + 1, size=n).astype(np.uint64)
            rows = deltas_for(rng, n, value_dtype, width)
            fresh = len(set(keys.tolist()) - set(model))
            st = c.accum_or_assign(xp.asarray(keys), xp.asarray(rows))
            assert xp.is_native(st)
            st = xp.numpy(st)
            msg = f"seed {seed} batch {b}"
            assert (st == S.INSERTED).sum() == fresh, msg
            assert (st == S.ASSIGNED).sum() == n - fresh, msg
            verdict = check_batch(keys, rows, None, st, model, width)
            assert verdict is None, f"{msg}: {verdict}"
            assert c.size() == len(model), msg
        expect_model(xp, c, model, width, f"seed {seed}")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_flags_match_the_sequential_model(xp, case):
    """HKV's accum_or_assigns flags on distinct keys, mixed at random: exact statuses and rows of
    a sequential model (the C++ FlagsAccumulateOnlyPresentAndInsertOnlyAbsent)."""
    value_dtype, width, opts = case
    for seed in SEEDS:
        c = make(xp, value_dtype, width, seed=seed, **opts)
        rng = np.random.default_rng(seed + 190)
        model = {}
        for b in range(25):
            n = int(rng.integers(1, 101))
            keys = rng.permutation(np.arange(1, KEYS + 1, dtype=np.uint64))[:n]
            rows = deltas_for(rng, n, value_dtype, width)
            flags = rng.integers(0, 2, size=n).astype(bool)
            if b == 0:
                flags[: n // 2] = False  # start with entries to accumulate into
            expect = np.empty(n, np.uint8)
            for i, k in enumerate(keys.tolist()):
                row = rows[i].astype(np.float64).reshape(width)
                live = k in model
                if flags[i] and live:
                    model[k] = model[k] + row
                    expect[i] = S.ASSIGNED
                elif flags[i]:
                    expect[i] = S.NOT_FOUND
                elif not live:
                    model[k] = row
                    expect[i] = S.INSERTED
                else:
                    expect[i] = S.FOUND
            st = c.accum_or_assign(xp.asarray(keys), xp.asarray(rows), xp.asarray(flags))
            np.testing.assert_array_equal(xp.numpy(st), expect, err_msg=f"seed {seed} batch {b}")
            assert c.size() == len(model), f"seed {seed} batch {b}"
        expect_model(xp, c, model, width, f"seed {seed}")


@pytest.mark.parametrize("value_dtype,width", ROWS, ids=[f"{d}x{w}" for d, w in ROWS])
def test_flags_with_repeated_keys(xp, value_dtype, width):
    """Flags with keys repeated in a batch, the flags of one key mixed: each key's statuses and
    row are those of some order of its operations (check_batch)."""
    for seed in SEEDS:
        c = make(xp, value_dtype, width, seed=seed)
        rng = np.random.default_rng(seed + 290)
        model = {}
        for b in range(25):
            n = int(rng.integers(1, 161))
            keys = rng.integers(1, KEYS // 3 + 1, size=n).astype(np.uint64)  # about 3 copies of each key
            rows = deltas_for(rng, n, value_dtype, width)
            flags = rng.random(n) < 0.6
            st = xp.numpy(c.accum_or_assign(xp.asarray(keys), xp.asarray(rows), xp.asarray(flags)))
            verdict = check_batch(keys, rows, flags, st, model, width)
            assert verdict is None, f"seed {seed} batch {b}: {verdict}"
            assert c.size() == len(model), f"seed {seed} batch {b}"
        expect_model(xp, c, model, width, f"seed {seed}")


@pytest.mark.parametrize("value_dtype", ["float32", "float64", "float16"])
def test_flags_with_hot_keys_lose_no_delta_and_insert_once(xp, value_dtype):
    """The C++ FlagsWithHotKeysLoseNoDeltaAndInsertOnce: 64 accumulations into a live key all
    land; 64 inserts of an absent key: one INSERTED, 63 FOUND, the row one of theirs, whole."""
    c = make(xp, value_dtype, 2, seed=3)
    live, absent = 7, 8
    st = c.accum_or_assign(xp.asarray(np.array([live], np.uint64)), xp.asarray(np.array([[10, 20]], value_dtype)),
                           xp.asarray(np.array([False])))
    assert xp.numpy(st).tolist() == [S.INSERTED]
    copies = 64
    keys = np.tile(np.array([live, absent], np.uint64), copies)
    i = np.arange(copies)
    rows = np.empty((2 * copies, 2), value_dtype)
    rows[0::2] = np.stack([np.ones(copies), i], axis=1)
    rows[1::2] = np.stack([i, -i], axis=1)
    flags = np.tile(np.array([True, False]), copies)
    st = xp.numpy(c.accum_or_assign(xp.asarray(keys), xp.asarray(rows), xp.asarray(flags)))
    assert (st[0::2] == S.ASSIGNED).all()
    assert (st[1::2] == S.INSERTED).sum() == 1 and (st[1::2] == S.FOUND).sum() == copies - 1
    got, found = c.get(xp.asarray(np.array([live, absent], np.uint64)))
    got = xp.numpy(got).astype(np.float64)
    assert xp.numpy(found).all()
    assert got[0].tolist() == [10 + copies, 20 + copies * (copies - 1) // 2]
    winner = int(np.flatnonzero(st[1::2] == S.INSERTED)[0])
    assert got[1].tolist() == [winner, -winner], "the inserting operation's row, whole"


def test_accumulations_and_lfu_scores():
    """An insert scores as a write given no score, an accumulation as a write to a live entry:
    lfu counts 1, then +1; an accumulate-only miss and an insert-only hit change no value."""
    c = warpkv.KVCache(64, "float32", 2, eviction="lfu", backend="host")
    k = np.array([5], np.uint64)
    one = np.array([[1.5, -2.0]], np.float32)
    assert c.accum_or_assign(k, one).tolist() == [S.INSERTED]
    assert c.accum_or_assign(k, one).tolist() == [S.ASSIGNED]
    keys, values, expires, scores = c.items(with_scores=True)
    assert keys.tolist() == [5] and values.tolist() == [[3.0, -4.0]] and expires.tolist() == [0]
    assert scores.tolist() == [2]
    st = c.accum_or_assign(np.array([5, 6], np.uint64), np.ones((2, 2), np.float32), np.array([False, True]))
    assert st.tolist() == [S.FOUND, S.NOT_FOUND]
    assert c.size() == 1 and c.get(k)[0].tolist() == [[3.0, -4.0]]


def test_keys_and_empty_batches():
    c = warpkv.KVCache(64, "float64", backend="host")
    st = c.accum_or_assign(np.array([np.iinfo(np.uint64).max, 3], np.uint64), np.array([1.0, 2.0]))
    assert st.tolist() == [S.INVALID_KEY, S.INSERTED]  # the all-ones key is refused
    st = c.accum_or_assign(np.array([-1, 3], np.int64), np.array([1.0, 2.0]), np.array([True, True]))
    assert st.tolist() == [S.INVALID_KEY, S.ASSIGNED]
    st = c.accum_or_assign(np.array([3], np.int32), [0.5])  # 32-bit keys are widened; lists converted
    assert st.tolist() == [S.ASSIGNED] and c.get([3])[0].tolist() == [4.5]
    st = c.accum_or_assign([3, 4], [1.0, 1.0], [True, False])
    assert st.tolist() == [S.ASSIGNED, S.INSERTED]
    for flags in (None, np.empty(0, bool)):
        st = c.accum_or_assign(np.empty(0, np.uint64), np.empty(0, np.float64), flags)
        assert len(st) == 0
    assert c.size() == 2


def test_racing_threads_lose_no_delta():
    """Python threads accumulating into the same hot keys at once (the GIL is released): every
    delta lands (the C++ RacingThreadsLoseNoDelta)."""
    c = warpkv.KVCache(512, "float64", 2, backend="host")
    hot, batches, threads = 16, 30, 4
    keys = (np.arange(64) % hot + 1).astype(np.uint64)
    errors = []

    def work(t):
        rows = np.stack([np.ones(64), np.full(64, t + 1.0)], axis=1)
        try:
            for _ in range(batches):
                st = c.accum_or_assign(keys, rows)
                assert ((st == S.INSERTED) | (st == S.ASSIGNED)).all()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert not errors, errors
    got, found = c.get(np.arange(1, hot + 1, dtype=np.uint64))
    per_key = 64 // hot * batches
    assert found.all()
    np.testing.assert_array_equal(got, np.tile([per_key * threads, per_key * (1 + 2 + 3 + 4)], (hot, 1)))


def test_bad_input():
    c = warpkv.KVCache(64, "float32", 2, backend="host")
    k = np.arange(1, 5, dtype=np.uint64)
    d = np.ones((4, 2), np.float32)
    f = np.array([True, False, True, False])

    def raises(exc, arg, *a, cache=c):
        with pytest.raises(exc) as e:
            cache.accum_or_assign(*a)
        assert f"'{arg}'" in str(e.value), str(e.value)

    # integer caches have no accumulation (HierarchicalKV's accum_or_assign adds floats)
    for dt in ("int32", "uint64", "int8"):
        raises(TypeError, "value_dtype", k, np.ones(4, dt), cache=warpkv.KVCache(64, dt, backend="host"))
    raises(TypeError, "keys", k.astype(np.float64), d)
    raises(ValueError, "keys", np.arange(8, dtype=np.uint64)[::2], d)
    raises(TypeError, "deltas", k, d.astype(np.float64))
    raises(TypeError, "deltas", k, d.astype(np.float16))
    raises(ValueError, "deltas", k, d[:3])  # too few rows
    raises(ValueError, "deltas", k, np.ones((5, 2), np.float32))  # too many
    raises(ValueError, "deltas", k, np.ones(4, np.float32))  # rows of 1, the cache's are 2
    raises(ValueError, "deltas", k, np.ones((4, 3), np.float32))
    raises(ValueError, "deltas", k, np.ones((4, 2, 1), np.float32))
    raises(ValueError, "deltas", k, np.ones((4, 4), np.float32)[:, ::2])  # not contiguous
    raises(TypeError, "deltas", k, None)
    raises(TypeError, "deltas", k, "1234")
    raises(TypeError, "flags", k, d, f.astype(np.uint8))
    raises(TypeError, "flags", k, d, f.astype(np.int32))
    raises(TypeError, "flags", k, d, f.astype(np.float32))
    raises(ValueError, "flags", k, d, f[:3])
    raises(ValueError, "flags", k, d, np.ones(5, bool))
    raises(ValueError, "flags", k, d, [True, False])  # a list of the wrong length
    raises(ValueError, "flags", k, d, f.reshape(2, 2))
    raises(ValueError, "flags", k, d, np.ones(8, bool)[::2])  # not contiguous
    raises(TypeError, "flags", k, d, "1010")
    raises(ValueError, "flags", np.empty(0, np.uint64), np.ones((0, 2), np.float32), f)  # the keys are empty
    assert c.size() == 0, "a refused call changes nothing"
    with pytest.raises(TypeError, match="'stream'"):
        c.accum_or_assign(k, d, stream=True)
    st = c.accum_or_assign(k, d, f.astype(np.uint8).astype(bool))  # converted by the caller: fine
    assert st.tolist() == [S.NOT_FOUND, S.INSERTED, S.NOT_FOUND, S.INSERTED]
