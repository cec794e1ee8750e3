"""KVCache from Python: every batch kind, value dtypes and widths, expiry, eviction reports,
policies, per-key linearizability with forgetting, and bad input. NumPy on the host backend; the
same tests with PyTorch and CuPy tensors on the GPU (the xp fixture)."""

import numpy as np
import pytest

import warpkv
from linearizability import check_cache_batch

S = warpkv.Status
C = warpkv.CacheOp


def make(xp, capacity=256, value_dtype="float32", value_width=1, **kw):
    if not xp.supports(value_dtype):
        pytest.skip(f"{xp} has no {value_dtype}")
    return warpkv.KVCache(capacity, value_dtype, value_width, backend=xp.backend, **kw)


def rows(dtype, n, width, start=1):
    a = np.arange(start, start + n * width).astype(dtype)
    return a if width == 1 else a.reshape(n, width)


@pytest.mark.parametrize("value_dtype,width", [("float32", 1), ("float64", 1), ("int32", 1), ("uint64", 1),
                                               ("float32", 3), ("float16", 8), ("int8", 5), ("uint16", 4)])
def test_every_method(xp, value_dtype, width):
    c = make(xp, 512, value_dtype, width)
    assert c.capacity() >= 512 and c.value_bytes == width * np.dtype(value_dtype).itemsize
    n = 100
    keys = np.arange(1, n + 1, dtype=np.uint64) * 7919
    vals = rows(value_dtype, n, width)
    st = c.set(xp.asarray(keys), xp.asarray(vals))
    assert xp.is_native(st) and (xp.numpy(st) == S.INSERTED).all()
    assert c.size() == len(c) == n
    got, found = c.get(xp.asarray(keys))
    assert xp.is_native(got) and xp.numpy(found).all()
    np.testing.assert_array_equal(xp.numpy(got), vals)
    miss = np.arange(10**6, 10**6 + 5, dtype=np.uint64)
    _, found, st = c.get(xp.asarray(miss), return_status=True)
    assert not xp.numpy(found).any() and (xp.numpy(st) == S.NOT_FOUND).all()
    assert xp.numpy(c.contains(xp.asarray(np.concatenate([keys[:3], miss[:2]])))).tolist() == [True] * 3 + [False] * 2

    new = rows(value_dtype, n, width, 5000)
    assert (xp.numpy(c.set(xp.asarray(keys[:10]), xp.asarray(new[:10]))) == S.ASSIGNED).all()
    st = c.add(xp.asarray(np.concatenate([keys[10:12], miss[:2]])), xp.asarray(new[10:14]))
    assert xp.numpy(st).tolist() == [S.FOUND] * 2 + [S.INSERTED] * 2
    out, st = c.get_or_set(xp.asarray(np.concatenate([keys[:2], miss[2:3]])), xp.asarray(new[20:23]))
    assert xp.numpy(st).tolist() == [S.FOUND, S.FOUND, S.INSERTED]
    np.testing.assert_array_equal(xp.numpy(out), np.stack([new[0], new[1], new[22]]))
    st = c.erase(xp.asarray(np.concatenate([keys[50:53], np.array([12345], np.uint64)])))
    assert xp.numpy(st).tolist() == [S.ERASED] * 3 + [S.NOT_FOUND]
    assert c.size() == n + 3 - 3

    ops = np.array([C.GET, C.SET, C.ADD, C.ERASE, C.GET_OR_SET, C.CONTAINS, C.GET], np.uint8)
    ks = np.array([keys[0], keys[1], keys[2], keys[3], 99, keys[4], 98], np.uint64)
    vs = rows(value_dtype, 7, width, 9000)
    st, out = c.execute(xp.asarray(ops), xp.asarray(ks), xp.asarray(vs))
    assert xp.numpy(st).tolist() == [S.FOUND, S.ASSIGNED, S.FOUND, S.ERASED, S.INSERTED, S.FOUND, S.NOT_FOUND]
    out = xp.numpy(out)
    np.testing.assert_array_equal(out[0], new[0])
    np.testing.assert_array_equal(out[4], vs[4])

    k, v, e = c.items()
    assert xp.is_native(k)
    k, v, e = xp.numpy(k), xp.numpy(v), xp.numpy(e)
    assert len(k) == c.size() and (e == 0).all()
    d = {int(a): np.atleast_1d(b).tolist() for a, b in zip(k, v)}
    assert d[int(keys[1])] == np.atleast_1d(vs[1]).tolist() and int(keys[3]) not in d
    c.clear()
    assert c.size() == 0 and not xp.numpy(c.contains(xp.asarray(keys))).any()


def test_key_dtypes(xp):
    c = make(xp, 64, "int64")
    st = c.set(xp.asarray(np.array([-5, 3, -1], np.int64)), xp.asarray(np.array([1, 2, 3], np.int64)))
    assert xp.numpy(st).tolist() == [S.INSERTED, S.INSERTED, S.INVALID_KEY]  # -1 is the all-ones sentinel
    got, found = c.get(xp.asarray(np.array([-5, 3], np.int64)))
    assert xp.numpy(found).all() and xp.numpy(got).tolist() == [1, 2]
    for kd in ("int32", "uint32"):  # widened to 64 bits (int32 sign-extended: -5 is the same key)
        if not xp.supports(kd):
            continue
        got, found = c.get(xp.asarray(np.array([-5, 3], kd) if kd == "int32" else np.array([3], kd)))
        assert xp.numpy(found).all()
    st = c.set(xp.asarray(np.array([np.iinfo(np.uint64).max, 4], np.uint64)), xp.asarray(np.array([1, 2], np.int64)))
    assert xp.numpy(st).tolist() == [S.INVALID_KEY, S.INSERTED]


def test_expiry(xp):
    c = make(xp, 64, "uint32")
    keys = np.arange(1, 5, dtype=np.uint64)
    c.set(xp.asarray(keys), xp.asarray(np.arange(4, dtype=np.uint32)), expires_at=xp.asarray(np.array([0, 10, 20, 30], np.uint64)))
    c.set_time(15)
    assert c.time() == 15
    assert xp.numpy(c.contains(xp.asarray(keys))).tolist() == [True, False, True, True]
    _, _, e = c.items()
    assert sorted(xp.numpy(e).tolist()) == [0, 20, 30]
    assert c.size() == 3


@pytest.mark.parametrize("eviction", ["lru", "clock", "random"])
def test_eviction_reports(xp, eviction):
    """A small cache filled far past its capacity: every entry that is gone was reported evicted
    with its value, none twice, and what is left is exactly what was set and not evicted."""
    c = make(xp, 64, "uint64", eviction=eviction)
    n = 400
    keys = np.arange(1, n + 1, dtype=np.uint64)
    st, ev = c.set(xp.asarray(keys), xp.asarray(keys * 10), return_evicted=True)
    assert (xp.numpy(st) == S.INSERTED).all()
    idx, ek, evals = (xp.numpy(a) for a in ev)
    assert xp.is_native(ev.keys)
    assert c.size() <= c.capacity() and len(ek) == n - c.size()
    np.testing.assert_array_equal(evals, ek * 10)
    assert len(set(ek.tolist())) == len(ek)
    assert (idx >= 0).all() and (idx < n).all()
    k, v, _ = c.items()
    left = dict(zip(xp.numpy(k).tolist(), xp.numpy(v).tolist()))
    assert set(left) == set(keys.tolist()) - set(ek.tolist())
    assert all(v == k * 10 for k, v in left.items())
    # get_or_set and execute report too
    out, st, ev = c.get_or_set(xp.asarray(keys[:50] + 1000), xp.asarray(keys[:50]), return_evicted=True)
    assert (xp.numpy(st) == S.INSERTED).all() and len(xp.numpy(ev.keys)) > 0
    st, out, ev = c.execute(xp.asarray(np.full(5, C.SET, np.uint8)), xp.asarray(keys[:5] + 5000),
                            xp.asarray(keys[:5]), return_evicted=True)
    assert len(xp.numpy(ev.index)) == len(xp.numpy(ev.keys))


@pytest.mark.parametrize("options", [dict(sync="rw_lock"), dict(layout="inline_values"), dict(key_digests=True),
                                     dict(absorb_sets=True, combine_get_or_set=True), dict(max_kicks=0),
                                     dict(kick_load_limit=1.0, seed=9)], ids=lambda o: ",".join(o))
def test_options(xp, options):
    c = make(xp, 128, "float64", **options)
    keys = np.arange(1, 101, dtype=np.uint64)
    vals = keys.astype(np.float64) / 4
    c.set(xp.asarray(keys), xp.asarray(vals))
    got, found = c.get(xp.asarray(keys))
    found = xp.numpy(found)
    assert found.sum() == c.size() > 50  # a cache may evict, even below capacity
    np.testing.assert_array_equal(xp.numpy(got)[found], vals[found])


@pytest.mark.parametrize("reported", [True, False])
def test_linearizable_hot_keys(xp, reported):
    """Racing mixed batches on a few hot keys plus cold ones in a small cache (so evictions
    happen): each batch is linearizable per key with its reported evictions (or with any
    forgetting when not reported), the C++ cache test's rules."""
    c = make(xp, 32, "uint64")
    rng = np.random.default_rng(1)
    hot = np.arange(1, 5, dtype=np.uint64)
    cold = np.arange(100, 200, dtype=np.uint64)
    before = {}
    version = 1
    for r in range(5):
        n = 800
        keys = np.where(rng.random(n) < 0.7, rng.choice(hot, n), rng.choice(cold, n)).astype(np.uint64)
        ops = rng.integers(0, 6, n).astype(np.uint8)
        values = np.arange(version, version + n, dtype=np.uint64)
        version += n
        if reported:
            st, out, ev = c.execute(xp.asarray(ops), xp.asarray(keys), xp.asarray(values), return_evicted=True)
            ek, evs = xp.numpy(ev.keys), xp.numpy(ev.values)
        else:
            st, out = c.execute(xp.asarray(ops), xp.asarray(keys), xp.asarray(values))
            ek, evs = np.empty(0, np.uint64), np.empty(0, np.uint64)
        k, v, _ = c.items()
        after = dict(zip(xp.numpy(k).tolist(), xp.numpy(v).tolist()))
        verdict = check_cache_batch(ops, keys, values, xp.numpy(st), xp.numpy(out), ek, evs, reported, before, after)
        assert verdict is None, f"round {r}: {verdict}"
        before = after


def test_cache_checker_cases():
    """Hand-made histories from the C++ checker's test: accepted and rejected ones."""
    F, N, I, A = S.FOUND, S.NOT_FOUND, S.INSERTED, S.ASSIGNED

    def check(ops, st, out, before, after, evicted, reported):
        n = len(ops)
        values = np.arange(10, 10 + n, dtype=np.uint64)
        ek = np.array([k for k, _ in evicted], np.uint64)
        ev = np.array([v for _, v in evicted], np.uint64)
        return check_cache_batch(np.array(ops, np.uint8), np.ones(n, np.uint64), values, np.array(st, np.uint8),
                                 np.array(out, np.uint64), ek, ev, reported, before, after)

    assert check([C.GET], [N], [0], {1: 5}, {}, [], False) is None
    assert check([C.GET], [N], [0], {1: 5}, {}, [(1, 5)], True) is None
    assert check([C.GET], [N], [0], {1: 5}, {1: 5}, [], False) is not None
    assert check([C.GET, C.SET], [F, I], [5, 0], {1: 5}, {1: 11}, [(1, 5)], True) is None
    assert check([C.GET_OR_SET, C.GET_OR_SET], [I, F], [10, 10], {1: 5}, {1: 10}, [(1, 5)], True) is None
    assert check([C.GET], [F], [5], {1: 6}, {1: 6}, [], False) is not None  # stale
    assert check([C.SET], [A], [0], {}, {1: 10}, [], False) is not None  # assigned, never present
    assert check([C.SET], [I], [0], {1: 5}, {1: 10}, [], True) is not None  # insert into a present key


def test_bad_input():
    c = warpkv.KVCache(64, "float32", 2, backend="host")
    k = np.arange(4, dtype=np.uint64)
    v = np.ones((4, 2), np.float32)

    def raises(exc, arg, fn, *a, **kw):
        with pytest.raises(exc) as e:
            fn(*a, **kw)
        assert f"'{arg}'" in str(e.value), str(e.value)

    raises(TypeError, "keys", c.get, k.astype(np.float64))
    raises(TypeError, "values", c.set, k, v.astype(np.float64))
    raises(ValueError, "values", c.set, k, np.ones(4, np.float32))  # rows of 1, the cache's are 2
    raises(ValueError, "values", c.set, k, np.ones((4, 3), np.float32))
    raises(ValueError, "values", c.set, k, v[:3])
    raises(ValueError, "values", c.set, k, np.ones((4, 4), np.float32)[:, ::2])
    raises(ValueError, "keys", c.get, np.arange(8, dtype=np.uint64)[::2])
    raises(TypeError, "expires_at", c.set, k, v, expires_at=np.zeros(4, np.int32))
    raises(ValueError, "expires_at", c.set, k, v, expires_at=np.zeros(3, np.uint64))
    raises(TypeError, "ops", c.execute, np.zeros(4, np.int32), k, v)
    raises(ValueError, "ops", c.execute, np.zeros(5, np.uint8), k, v)
    raises(TypeError, "out", c.get, k, out=np.zeros((4, 2), np.float64))
    raises(ValueError, "eviction", warpkv.KVCache, 8, eviction="fifo", backend="host")
    # the score policies are bound with the default sync, layout and key matching only
    raises(ValueError, "sync", warpkv.KVCache, 8, eviction="lfu", sync="rw_lock", backend="host")
    raises(ValueError, "layout", warpkv.KVCache, 8, eviction="custom", layout="inline_values", backend="host")
    raises(ValueError, "key_digests", warpkv.KVCache, 8, eviction="epoch_lru", key_digests=True, backend="host")
    raises(TypeError, "scores", c.set, k, v, scores=np.zeros(4, np.int32))
    raises(ValueError, "scores", c.set, k, v, scores=np.zeros(3, np.uint64))
    raises(ValueError, "scores", c.set, k, v, scores=np.zeros(4, np.uint64), return_evicted=True)
    raises(ValueError, "sync", warpkv.KVCache, 8, sync="spin", backend="host")
    raises(TypeError, "value_dtype", warpkv.KVCache, 8, "complex64", backend="host")
    raises(ValueError, "capacity", warpkv.KVCache, 0, backend="host")
    raises(TypeError, "capacity", warpkv.KVCache, 1.5, backend="host")
    st = c.set(np.empty(0, np.uint64), np.empty((0, 2), np.float32))  # an empty batch of rows
    assert len(st) == 0
    raises(warpkv.InvalidArgumentError, "kick_load_limit", warpkv.KVCache, 8, kick_load_limit=2.0, backend="host")
    raises(warpkv.InvalidArgumentError, "value_bytes", warpkv.KVCache, 8, "float64", 1000, backend="host")
    # an unknown op code is refused per operation, as the device batch does
    st, _ = c.execute(np.array([9, C.SET], np.uint8), k[:2], v[:2])
    assert st.tolist() == [S.INVALID_KEY, S.INSERTED] and c.size() == 1


def test_threads_share_a_cache():
    """Batches from several Python threads at once (the cache allows it; the GIL is released)."""
    import threading

    c = warpkv.KVCache(4096, "uint64", backend="host")
    errors = []

    def work(t):
        ks = np.arange(t * 500 + 1, t * 500 + 501, dtype=np.uint64)
        for _ in range(2):
            c.set(ks, ks * 3)
            got, hit = c.get(ks)
            if not (got[hit] == ks[hit] * 3).all():
                errors.append(t)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and 0 < c.size() <= 1500


# ---- HierarchicalKV's score policies (capacity 8: two buckets of 4, every key's candidates are
# the whole table, so each insert into the full cache evicts the policy's smallest score) ----


def one(xp, k):
    return xp.asarray(np.array([k], np.uint64))


def scores_of(c):
    k, _, _, sc = c.items(np.empty(0, np.uint64), with_scores=True)  # NumPy arrays
    return dict(zip(k.tolist(), sc.tolist()))


def test_lfu_keeps_the_most_frequently_hit_keys(xp):
    c = make(xp, 8, "uint64", eviction="lfu")
    assert c.capacity() == 8
    keys = np.arange(1, 9, dtype=np.uint64)
    assert (xp.numpy(c.set(xp.asarray(keys), xp.asarray(keys))) == S.INSERTED).all()
    for _ in range(5):  # the hot keys are hit first: they are the least recent afterwards
        _, found = c.get(xp.asarray(keys[:4]))
        assert xp.numpy(found).all()
    c.set(xp.asarray(keys[4:]), xp.asarray(keys[4:]))  # the cold keys: assigned, count 2
    sc = scores_of(c)
    assert [sc[k] for k in keys.tolist()] == [6] * 4 + [2] * 4
    for n in range(4):  # LRU would evict the hot keys now; LFU evicts counts 1 and 2
        c.set(one(xp, 100 + n), one(xp, 100 + n))
    assert xp.numpy(c.contains(xp.asarray(keys[:4]))).all(), "a frequently hit key was evicted"
    assert c.size() == 8
    # a given score is the increment
    c.set(one(xp, 1), one(xp, 1), scores=one(xp, 10))
    assert scores_of(c)[1] == 16


def test_custom_scores_choose_the_victim(xp):
    c = make(xp, 8, "uint64", eviction="custom")
    keys = np.arange(1, 9, dtype=np.uint64)
    given = (keys * 100).astype(np.uint64)
    c.set(xp.asarray(keys), xp.asarray(keys), scores=xp.asarray(given))
    assert scores_of(c) == dict(zip(keys.tolist(), given.tolist()))
    c.get(xp.asarray(keys))  # hits change nothing
    assert scores_of(c) == dict(zip(keys.tolist(), given.tolist()))
    c.set(one(xp, 50), one(xp, 50), scores=one(xp, 1000))
    assert xp.numpy(c.contains(xp.asarray(keys))).tolist() == [False] + [True] * 7  # score 100 went
    c.set(one(xp, 51), one(xp, 51), scores=one(xp, 5))  # the smallest resident goes, not the newcomer
    assert scores_of(c) == {**dict(zip(keys[2:].tolist(), given[2:].tolist())), 50: 1000, 51: 5}


def test_epoch_lru_evicts_an_older_epoch_first(xp):
    c = make(xp, 8, "uint64", eviction="epoch_lru")
    keys = np.arange(1, 9, dtype=np.uint64)
    c.set_global_epoch(2)
    assert c.global_epoch() == 2
    c.set(xp.asarray(keys[:4]), xp.asarray(keys[:4]))
    c.set_global_epoch(1)  # the later entries are of an older epoch
    c.set(xp.asarray(keys[4:]), xp.asarray(keys[4:]))
    sc = scores_of(c)
    assert [sc[k] >> 32 for k in keys.tolist()] == [2] * 4 + [1] * 4
    c.set(one(xp, 100), one(xp, 100))
    # LRU would evict key 1 (the oldest); epoch_lru the oldest of epoch 1: key 5
    assert xp.numpy(c.contains(xp.asarray(keys))).tolist() == [True] * 4 + [False] + [True] * 3


def test_epoch_lfu_counts_within_the_epoch(xp):
    c = make(xp, 8, "uint64", eviction="epoch_lfu")
    keys = np.arange(1, 5, dtype=np.uint64)
    c.set_global_epoch(3)
    c.set(xp.asarray(keys), xp.asarray(keys), scores=xp.asarray(np.array([1, 2, 3, 4], np.uint64)))
    assert scores_of(c) == {k: (3 << 32) | k for k in keys.tolist()}
    c.get(xp.asarray(keys[:1]))
    assert scores_of(c)[1] == (3 << 32) | 2
    c.set_global_epoch(4)  # a hit moves the entry to the current epoch, its count kept
    c.get(xp.asarray(keys[:1]))
    assert scores_of(c)[1] == (4 << 32) | 3
