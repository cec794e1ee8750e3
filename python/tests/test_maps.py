"""The maps from Python: every method and dtype, a mixed batch against a dict model, per-key
linearizability of racing batches on hot keys, and bad input. NumPy on the host backend; the
same tests run with PyTorch and CuPy tensors on the GPU (the xp fixture)."""

import threading

import numpy as np
import pytest

import warpkv
from conftest import KEY_DTYPES, MAPS, VALUE_DTYPES, distinct_keys, unique_values
from linearizability import check_map_batch

S = warpkv.Status


def make(cls, xp, key_dtype="uint32", value_dtype="uint32", capacity=64, **kw):
    if not (xp.supports(key_dtype) and xp.supports(value_dtype)):
        pytest.skip(f"{xp} has no {key_dtype}/{value_dtype}")
    return cls(capacity, key_dtype, value_dtype, backend=xp.backend, **kw)


def contents(m, xp) -> dict:
    k, v = m.items()
    assert xp.is_native(k) and xp.is_native(v)
    k, v = xp.numpy(k), xp.numpy(v)
    out = dict(zip(k.tolist(), v.tolist()))
    assert len(out) == len(k), "a key is stored twice"
    return out


# every key dtype and every value dtype, 4- and 8-byte keys with 4- and 8-byte values (the host
# backend emulates warps with threads: a batch costs milliseconds, so the full method sweep runs on
# these pairs and test_every_dtype_pair covers the other combinations)
PAIRS = [("int32", "int32"), ("uint32", "uint32"), ("int64", "int64"), ("uint64", "uint64"), ("int32", "float64"),
         ("uint64", "float32")]


@pytest.mark.parametrize("key_dtype,value_dtype", PAIRS)
def test_every_method(map_cls, xp, key_dtype, value_dtype):
    m = make(map_cls, xp, key_dtype, value_dtype, capacity=64)
    assert (m.key_dtype, m.value_dtype) == (key_dtype, value_dtype)
    n = 200  # more than the initial capacity: the map grows
    keys_h = distinct_keys(key_dtype, 2 * n, seed=hash((key_dtype, value_dtype)) & 0xFFFF)
    present, absent = keys_h[:n], keys_h[n:]
    vals = unique_values(value_dtype, n)
    keys = xp.asarray(present)

    st = m.insert(keys, xp.asarray(vals))
    assert xp.is_native(st) and st.dtype == (xp.mod.uint8 if xp.name != "numpy" else np.uint8)
    assert (xp.numpy(st) == S.INSERTED).all()
    assert m.size() == len(m) == n and m.capacity() >= n / 0.9 and m.rehash_count() >= 1
    assert (xp.numpy(m.insert(keys, xp.asarray(vals + 1))) == S.FOUND).all()  # present keys keep their value

    both = xp.asarray(np.concatenate([present, absent]))
    values, found = m.find(both)
    assert xp.is_native(values) and xp.is_native(found)
    values, found = xp.numpy(values), xp.numpy(found)
    np.testing.assert_array_equal(values[:n], vals)
    np.testing.assert_array_equal(values[n:], np.zeros(n, value_dtype))
    np.testing.assert_array_equal(found, np.arange(2 * n) < n)
    _, _, st = m.find(both, return_status=True)
    np.testing.assert_array_equal(xp.numpy(st), np.where(np.arange(2 * n) < n, S.FOUND, S.NOT_FOUND))
    np.testing.assert_array_equal(xp.numpy(m.contains(both)), np.arange(2 * n) < n)

    out = xp.asarray(np.zeros(2 * n, value_dtype))  # results into the caller's array
    values, _ = m.find(both, out=out)
    assert values is out
    np.testing.assert_array_equal(xp.numpy(out)[:n], vals)

    half = present[: n // 2]
    st = m.insert_or_assign(xp.asarray(np.concatenate([half, absent[:10]])), xp.asarray(unique_values(value_dtype, n // 2 + 10, 5000)))
    np.testing.assert_array_equal(xp.numpy(st), [S.ASSIGNED] * (n // 2) + [S.INSERTED] * 10)
    expect = dict(zip(present.tolist(), vals.tolist()))
    expect.update(zip(np.concatenate([half, absent[:10]]).tolist(), unique_values(value_dtype, n // 2 + 10, 5000).tolist()))
    assert contents(m, xp) == expect

    st = m.erase(xp.asarray(np.concatenate([present[:7], absent[-3:]])))
    np.testing.assert_array_equal(xp.numpy(st), [S.ERASED] * 7 + [S.NOT_FOUND] * 3)
    for k in present[:7].tolist():
        del expect[k]
    assert m.size() == len(expect) and contents(m, xp) == expect
    assert m.validate() == ""

    # a mixed batch over distinct keys: its result is that of any order
    ops = np.array([warpkv.Op.INSERT, warpkv.Op.INSERT_OR_ASSIGN, warpkv.Op.FIND, warpkv.Op.ERASE, warpkv.Op.CONTAINS,
                    warpkv.Op.FIND], np.uint8)
    ks = np.array([absent[20], present[10], present[11], present[12], present[13], absent[21]], key_dtype)
    vs = unique_values(value_dtype, 6, 9000)
    st, got = m.execute(xp.asarray(ops), xp.asarray(ks), xp.asarray(vs))
    np.testing.assert_array_equal(xp.numpy(st), [S.INSERTED, S.ASSIGNED, S.FOUND, S.ERASED, S.FOUND, S.NOT_FOUND])
    got = xp.numpy(got)
    assert got[2] == expect[int(present[11])] and got[5] == 0

    cap = m.capacity()
    m.reserve(8 * cap)
    assert m.capacity() >= 8 * cap
    m.clear()
    assert m.size() == 0 and m.capacity() >= 8 * cap and contents(m, xp) == {}
    assert not xp.numpy(m.contains(keys)).any()
    m.rehash(64)


@pytest.mark.parametrize("value_dtype", VALUE_DTYPES)
@pytest.mark.parametrize("key_dtype", KEY_DTYPES)
def test_every_dtype_pair(map_cls, xp, key_dtype, value_dtype):
    m = make(map_cls, xp, key_dtype, value_dtype, capacity=16)
    keys = distinct_keys(key_dtype, 40, seed=5)
    values = unique_values(value_dtype, 40, 1000)
    values[0] = -7 if value_dtype.startswith(("int", "float")) else np.iinfo(value_dtype).max  # sign and top bits
    st, out = m.execute(xp.asarray(np.full(40, warpkv.Op.INSERT, np.uint8)), xp.asarray(keys), xp.asarray(values))
    assert (xp.numpy(st) == S.INSERTED).all()
    got, found = m.find(xp.asarray(keys))
    assert xp.numpy(found).all()
    np.testing.assert_array_equal(xp.numpy(got), values)
    assert contents(m, xp) == dict(zip(keys.tolist(), values.tolist()))


def test_sentinel_keys(map_cls, xp):
    for kd in KEY_DTYPES:
        m = make(map_cls, xp, kd, "uint32")
        bad = np.array(m.invalid_keys, kd)
        assert int(np.array(m.empty_key, kd)) == int(np.iinfo(kd).max)
        st = m.insert(xp.asarray(np.concatenate([bad, np.array([5], kd)])), xp.asarray(np.arange(len(bad) + 1, dtype=np.uint32)))
        np.testing.assert_array_equal(xp.numpy(st), [S.INVALID_KEY] * len(bad) + [S.INSERTED])
        assert m.size() == 1
        _, _, st = m.find(xp.asarray(bad), return_status=True)
        assert (xp.numpy(st) == S.INVALID_KEY).all()
    m = make(map_cls, xp, "int64", "int64", throw_on_invalid_key=True)
    with pytest.raises(warpkv.InvalidKeyError) as e:
        m.insert(xp.asarray(np.array([1, np.iinfo(np.int64).max], np.int64)), xp.asarray(np.array([1, 2], np.int64)))
    assert e.value.code == warpkv.ErrorCode.INVALID_KEY and isinstance(e.value, ValueError)
    assert m.size() == 1  # the batch ran; the valid key is in


def test_dict_model(map_cls, xp):
    """Rounds of random mixed batches, each key at most once per batch (so the outcome is that of
    a sequential run): statuses, find results and contents equal a Python dict's."""
    rng = np.random.default_rng(7)
    m = make(map_cls, xp, "int64", "float64", capacity=16)
    universe = distinct_keys("int64", 3000, seed=3)
    model = {}
    next_value = 1.0
    for _ in range(4):
        n = 600
        ks = rng.choice(universe, size=n, replace=False)
        ops = rng.integers(0, 5, size=n).astype(np.uint8)
        vs = np.arange(next_value, next_value + n)
        next_value += n
        expect_st, expect_out = [], []
        for o, k, v in zip(ops.tolist(), ks.tolist(), vs.tolist()):
            here = k in model
            out = 0.0
            if o == warpkv.Op.INSERT:
                s = S.FOUND if here else S.INSERTED
                model.setdefault(k, v)
            elif o == warpkv.Op.INSERT_OR_ASSIGN:
                s = S.ASSIGNED if here else S.INSERTED
                model[k] = v
            elif o == warpkv.Op.ERASE:
                s = S.ERASED if here else S.NOT_FOUND
                model.pop(k, None)
            else:
                s = S.FOUND if here else S.NOT_FOUND
                out = model[k] if here else 0.0  # contains writes the value too, as in C++
            expect_st.append(s)
            expect_out.append(out)
        st, out = m.execute(xp.asarray(ops), xp.asarray(ks), xp.asarray(vs))
        np.testing.assert_array_equal(xp.numpy(st), expect_st)
        np.testing.assert_array_equal(xp.numpy(out), expect_out)
        assert m.size() == len(model)
        assert contents(m, xp) == model
    assert m.validate() == ""


@pytest.mark.parametrize("key_dtype,value_dtype", [("uint32", "uint32"), ("int64", "float64")])
def test_linearizable_hot_keys(map_cls, xp, key_dtype, value_dtype):
    """Many operations race on a few keys in one batch, several batches in a row: exactly one
    insert of each key wins the first batch, no key is stored twice, and every batch is
    linearizable per key (tests/common/hot_keys.hpp's race, checked by the ported rules)."""
    m = make(map_cls, xp, key_dtype, value_dtype, capacity=64)
    hot = distinct_keys(key_dtype, 6, seed=11)
    n, rounds = 1200, 5
    state = {}
    next_value = 1
    for r in range(rounds):
        i = np.arange(n)
        keys = hot[i % len(hot)]
        values = unique_values(value_dtype, n, next_value)
        next_value += n
        if r < 2:
            ops = np.where(i % 2 == 1, warpkv.Op.INSERT, warpkv.Op.INSERT_OR_ASSIGN)
        else:
            ops = np.choose(i % 4, [warpkv.Op.ERASE, warpkv.Op.FIND, warpkv.Op.INSERT, warpkv.Op.INSERT_OR_ASSIGN])
        ops = ops.astype(np.uint8)
        st, out = m.execute(xp.asarray(ops), xp.asarray(keys), xp.asarray(values))
        st, out = xp.numpy(st), xp.numpy(out)
        if r == 0:
            for k in hot.tolist():
                assert int(((keys == k) & (st == S.INSERTED)).sum()) == 1, f"key {k}"
        k, v = m.items()
        k, v = xp.numpy(k), xp.numpy(v)
        after = dict(zip(k.tolist(), v.view(np.uint32 if v.dtype.itemsize == 4 else np.uint64).tolist()))
        assert len(after) == len(k), "a key is stored twice"
        verdict = check_map_batch(ops, keys, values, st, out, state, after)
        assert verdict is None, f"round {r}: {verdict}"
        assert m.validate() == ""
        state = after


def test_checker_rejects_impossible_histories():
    """The ported checker itself: a history no order explains is refused."""
    ops = np.array([warpkv.Op.INSERT, warpkv.Op.INSERT], np.uint8)
    keys = np.array([1, 1], np.uint32)
    values = np.array([10, 11], np.uint32)
    both = np.array([S.INSERTED, S.INSERTED], np.uint8)
    assert check_map_batch(ops, keys, values, both, np.zeros(2, np.uint32), {}, {1: 10}) is not None
    ok = np.array([S.INSERTED, S.FOUND], np.uint8)
    assert check_map_batch(ops, keys, values, ok, np.zeros(2, np.uint32), {}, {1: 10}) is None
    assert check_map_batch(ops, keys, values, ok, np.zeros(2, np.uint32), {}, {1: 11}) is not None  # final not written by the winner
    find = np.array([warpkv.Op.FIND], np.uint8)
    stale = check_map_batch(find, keys[:1], values[:1], np.array([S.FOUND], np.uint8), np.array([9], np.uint32),
                            {1: 8}, {1: 8})
    assert stale is not None and "never current" in stale
    miss = check_map_batch(find, keys[:1], values[:1], np.array([S.NOT_FOUND], np.uint8), np.zeros(1, np.uint32),
                           {1: 8}, {1: 8})
    assert miss is not None and "absent" in miss


def test_lists_and_empty_batches():
    m = warpkv.LinearMap(10, "int32", "float32", backend="host")
    assert (m.insert([1, -2, 3], [1.5, 2.5, 3.5]) == S.INSERTED).all()
    values, found = m.find([-2, 4])
    assert values.tolist() == [2.5, 0.0] and found.tolist() == [True, False]
    empty = np.empty(0, np.int32)
    assert len(m.insert(empty, np.empty(0, np.float32))) == 0
    assert len(m.find(empty)[0]) == 0 and len(m.erase(empty)) == 0 and len(m.contains(empty)) == 0
    st, out = m.execute(np.empty(0, np.uint8), empty)
    assert len(st) == 0 and len(out) == 0
    assert m.to_dict() == {1: 1.5, -2: 2.5, 3: 3.5}


def test_threads_share_a_map():
    """Python threads may call one map at once (the binding serializes them)."""
    m = warpkv.HopscotchMap(1000, "uint64", "uint64", backend="host")

    def work(t):
        ks = np.arange(t * 1000, t * 1000 + 1000, dtype=np.uint64)
        for _ in range(2):
            m.insert_or_assign(ks, ks + 1)
            values, found = m.find(ks)
            assert found.all() and (values == ks + 1).all()

    threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert m.size() == 3000 and m.validate() == ""


# ---- bad input: a TypeError or ValueError naming the argument, never a crash ------------------


class FakeDeviceArray:
    """Exports __cuda_array_interface__ only (as Numba does); the pointer is never read here."""

    def __init__(self, n, typestr="<u4"):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr, "data": (0xDEAD0000, False),
                                         "version": 3, "strides": None}


@pytest.mark.parametrize("cls", MAPS, ids=lambda c: c.__name__)
def test_bad_input(cls):
    m = cls(64, "uint32", "float32", backend="host")
    k = np.arange(4, dtype=np.uint32)
    v = np.ones(4, np.float32)

    def raises(exc, arg, fn, *a, **kw):
        with pytest.raises(exc) as e:
            fn(*a, **kw)
        assert f"'{arg}'" in str(e.value), str(e.value)

    raises(TypeError, "keys", m.insert, k.astype(np.int64), v)
    raises(TypeError, "keys", m.insert, k.astype(np.float32), v)
    raises(TypeError, "values", m.insert, k, v.astype(np.float64))
    raises(TypeError, "values", m.insert_or_assign, k, v.astype(np.uint32))
    raises(ValueError, "values", m.insert, k, v[:3])
    raises(ValueError, "keys", m.insert, np.arange(8, dtype=np.uint32)[::2], v)
    raises(ValueError, "values", m.insert, k, np.ones(8, np.float32)[::2])
    raises(ValueError, "keys", m.find, k.reshape(2, 2))
    raises(TypeError, "keys", m.find, np.uint32(3))  # 0-d
    raises(TypeError, "keys", m.find, "abc")
    raises(TypeError, "keys", m.find, None)
    raises(TypeError, "keys", m.erase, k.astype(np.int32))
    raises(TypeError, "keys", m.contains, k.astype(np.uint64))
    raises(TypeError, "out", m.find, k, out=np.zeros(4, np.float64))
    raises(ValueError, "out", m.find, k, out=np.zeros(3, np.float32))
    ro = np.zeros(4, np.float32)
    ro.setflags(write=False)
    raises(ValueError, "out", m.find, k, out=ro)
    raises(TypeError, "ops", m.execute, np.zeros(4, np.int64), k, v)
    raises(ValueError, "ops", m.execute, np.zeros(3, np.uint8), k, v)
    raises(ValueError, "values", m.execute, np.zeros(4, np.uint8), k, v[:2])
    raises(ValueError, "keys", m.find, FakeDeviceArray(4))  # device memory on a host map
    raises(ValueError, "values", m.insert, k, FakeDeviceArray(4, "<f4"))
    raises(TypeError, "stream", m.find, k, stream="s")
    raises(TypeError, "key_dtype", cls, 8, "float32", "uint32")
    raises(TypeError, "value_dtype", cls, 8, "uint32", "int16")
    raises(ValueError, "backend", cls, 8, backend="tpu")
    raises(ValueError, "capacity", cls, -1)
    raises(TypeError, "capacity", cls, float("nan"))
    raises(ValueError, "n", m.reserve, -1)
    raises(ValueError, "stream", m.find, k, stream=-1)
    raises(TypeError, "keys", m.insert, k.astype(">u4"), v)  # big-endian: not shareable
    raises(TypeError, "keys", m.find, np.array([1, 2], dtype=object))
    raises(TypeError, "keys", m.find, {1: 2})
    raises(warpkv.InvalidArgumentError, "max_load_factor", cls, 8, max_load_factor=1.5)
    if warpkv.built_backend == "host":
        with pytest.raises(warpkv.UnsupportedError) as e:
            cls(8, backend="cuda")
        assert e.value.code == warpkv.ErrorCode.UNSUPPORTED
    # unknown op codes are refused per operation, as in C++
    st, _ = m.execute(np.array([9, warpkv.Op.INSERT], np.uint8), k[:2], v[:2])
    assert st.tolist() == [S.INVALID_KEY, S.INSERTED]
    # nothing above touched the map beyond that one insert
    assert m.size() == 1 and m.validate() == ""
    # a stream handle is accepted (and ignored) on the host backend
    assert m.find(k, stream=0)[1].sum() == 1


def test_map_specific_options():
    with pytest.raises(warpkv.InvalidArgumentError, match="neighborhood"):
        warpkv.HopscotchMap(8, neighborhood=33, backend="host")
    with pytest.raises(warpkv.InvalidArgumentError, match="hash_functions"):
        warpkv.CuckooMap(8, hash_functions=4, backend="host")
    with pytest.raises(warpkv.InvalidArgumentError, match="tombstone_threshold"):
        warpkv.LinearMap(8, tombstone_threshold=0.0, backend="host")
    m = warpkv.HopscotchMap(8, neighborhood=8, max_probe=64, seed=5, backend="host")
    keys = np.arange(1, 2000, dtype=np.uint32)
    m.insert(keys, keys)
    assert m.find(keys)[1].all() and m.validate() == ""


def test_enums_and_errors():
    assert warpkv.Status.FOUND == 2 and warpkv.Op.CONTAINS == 4 and warpkv.CacheOp.GET_OR_SET == 4
    assert issubclass(warpkv.InvalidArgumentError, ValueError) and issubclass(warpkv.InvalidArgumentError, warpkv.Error)
    assert warpkv.error is warpkv.Error
    import pickle

    e = pickle.loads(pickle.dumps(warpkv.CapacityError(5, "msg")))
    assert e.code == warpkv.ErrorCode.CAPACITY and e.message == "msg"
    info = warpkv.build_info()
    assert info["built_backend"] in ("host", "cuda")
    assert (info["cuda_architectures"] != "") == (info["built_backend"] == "cuda")
