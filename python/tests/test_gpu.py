"""On the GPU only (skipped elsewhere): no host copies, streams, __cuda_array_interface__
producers, and the 2^26-key find against the C++ bulk call. The rest of the suite (test_maps.py,
test_cache.py) runs with PyTorch and CuPy tensors there through the xp fixture.

scripts/gpu-python runs it (WARPKV_BENCH: path of warpkv-bench for the timing comparison)."""

import json
import os
import statistics
import subprocess
import time

import numpy as np
import pytest

import warpkv

S = warpkv.Status

pytestmark = pytest.mark.skipif(not warpkv.cuda_available(), reason="needs the CUDA build of warpkv and a GPU")


def _torch():
    return pytest.importorskip("torch")


def _cupy():
    return pytest.importorskip("cupy")


def test_torch_results_in_place_no_host_copy():
    torch = _torch()
    m = warpkv.HopscotchMap(1 << 16, "int64", "float32")
    assert m.device.startswith("cuda")
    keys = torch.arange(1, 50001, device="cuda", dtype=torch.int64)
    values = torch.rand(keys.numel(), device="cuda")
    kp, vp = keys.data_ptr(), values.data_ptr()
    st = m.insert(keys, values)
    assert st.is_cuda and st.dtype == torch.uint8 and bool((st == S.INSERTED).all())
    out = torch.empty_like(values)
    op = out.data_ptr()
    got, found = m.find(keys, out=out)
    assert got is out and out.data_ptr() == op and found.is_cuda
    assert keys.data_ptr() == kp and values.data_ptr() == vp  # inputs used in place, never replaced
    assert torch.equal(out, values) and bool(found.all())
    # a CPU tensor is refused by a GPU map (naming the argument), not copied
    with pytest.raises(ValueError, match="'keys'"):
        m.find(keys.cpu())
    with pytest.raises(ValueError, match="'values'"):
        m.insert(keys, values.cpu())
    k, v = m.items()
    assert k.is_cuda and v.is_cuda and k.numel() == keys.numel()


def test_torch_streams():
    torch = _torch()
    m = warpkv.LinearMap(1 << 20, "int32", "int32")
    s = torch.cuda.Stream()
    keys = torch.arange(1, 1 << 20, device="cuda", dtype=torch.int32)
    s.wait_stream(torch.cuda.current_stream())  # keys were made on the default stream
    with torch.cuda.stream(s):
        vals = keys * 3  # produced on s: the insert must wait for it
        m.insert(keys, vals, stream=s)
        got, found = m.find(keys)  # default: the current stream, s
        ok = bool(found.all()) and bool((got == vals).all())
    s.synchronize()
    assert ok
    got, found = m.find(keys, stream=torch.cuda.current_stream().cuda_stream)  # an int handle (0)
    torch.cuda.synchronize()
    assert bool(found.all()) and bool((got == vals).all())
    own = torch.cuda.Stream()
    m2 = warpkv.CuckooMap(1024, "int64", "int64", stream=own)  # the map's own stream
    m2.insert(torch.arange(10, device="cuda"), torch.arange(10, device="cuda"))
    assert bool(m2.contains(torch.arange(10, device="cuda")).all())


# Every way of naming the caller's stream: label -> (the `stream` argument, the caller's stream as
# a torch stream), given a side stream. The int handles 0 (the default stream), 1
# (cudaStreamLegacy) and 2 (cudaStreamPerThread) are CUDA's own; torch.cuda.ExternalStream(0) is
# not the default stream but a new pool stream (the cause of test_torch_streams' failure), and
# PyTorch refuses ExternalStream(1): both are its default stream.
TORCH_STREAM_KINDS = {
    "int 0": lambda torch, side: (0, torch.cuda.default_stream()),
    "int 1 (legacy)": lambda torch, side: (1, torch.cuda.default_stream()),
    "int 2 (per-thread)": lambda torch, side: (2, torch.cuda.ExternalStream(2)),
    "int of a side stream": lambda torch, side: (side.cuda_stream, side),
    "torch.cuda.Stream": lambda torch, side: (side, side),
    "None under torch.cuda.stream(side)": lambda torch, side: (None, side),
}


def _busy(torch, stream, cycles=100_000_000):
    """Queues work that spins `cycles` clocks (~50 ms) on `stream`: what is queued after it there
    runs late, so a result read without waiting for it reads what was there before."""
    with torch.cuda.stream(stream):
        torch.cuda._sleep(cycles)


@pytest.mark.parametrize("kind", list(TORCH_STREAM_KINDS))
def test_torch_results_are_ordered_after_the_call_on_every_kind_of_stream(kind):
    """find and contains are stream-ordered (they do not wait): the map's own stream is kept busy
    so that they run late; the masks and values the caller reads on its stream must still be
    those of the finished call. Any stream of the wrong kind or a missing wait fails this."""
    torch = _torch()
    own = torch.cuda.Stream()
    n = 1 << 21
    m = warpkv.LinearMap(n, "int32", "int32", stream=own)
    keys = torch.arange(1, n + 1, device="cuda", dtype=torch.int32)
    vals = keys * 7
    assert bool((m.insert(keys, vals) == S.INSERTED).all())
    side = torch.cuda.Stream()
    arg, caller = TORCH_STREAM_KINDS[kind](torch, side)
    caller.wait_stream(torch.cuda.current_stream())  # keys and vals are ready on the caller's stream
    torch.cuda.synchronize()
    for rnd in range(2):
        _busy(torch, own)
        with torch.cuda.stream(caller):
            got, found = m.find(keys, stream=arg)
            present = m.contains(keys, stream=arg)
            st = m.find(keys[:1024], stream=arg, return_status=True)[2]
            ok = found.all() & present.all() & (got == vals).all() & (st == S.FOUND).all()
        torch.cuda.synchronize()
        assert bool(ok), f"{kind}, round {rnd}: results read before the call finished"


@pytest.mark.parametrize("kind", ["int 0", "int 1 (legacy)", "int 2 (per-thread)", "int of a side stream",
                                  "cupy.cuda.Stream", "None under the side stream"])
def test_cupy_results_are_ordered_after_the_call_on_every_kind_of_stream(kind):
    cupy = _cupy()
    torch = _torch()  # its _sleep keeps the map's stream busy
    own = torch.cuda.Stream()
    n = 1 << 21
    m = warpkv.LinearMap(n, "uint32", "uint32", stream=own)
    keys = cupy.arange(1, n + 1, dtype=cupy.uint32)
    vals = keys * 5
    assert bool((m.insert(keys, vals) == int(S.INSERTED)).all())  # CuPy compares with plain ints only
    side = cupy.cuda.Stream(non_blocking=True)
    arg, caller = {
        "int 0": (0, cupy.cuda.Stream.null),
        "int 1 (legacy)": (1, cupy.cuda.Stream.null),
        "int 2 (per-thread)": (2, warpkv._arrays.cupy_stream(2)),
        "int of a side stream": (side.ptr, side),
        "cupy.cuda.Stream": (side, side),
        "None under the side stream": (None, side),
    }[kind]
    cupy.cuda.Device().synchronize()
    _busy(torch, own)
    with caller:
        got, found = m.find(keys, stream=arg)
        present = m.contains(keys, stream=arg)
        ok = found.all() & present.all() & (got == vals).all()
    cupy.cuda.Device().synchronize()
    assert bool(ok), f"{kind}: results read before the call finished"


def test_torch_list_inputs_with_a_stream_of_their_own():
    """Lists are copied to the device on the current stream; a call given another stream must
    not read them before the copy landed."""
    torch = _torch()
    m = warpkv.HopscotchMap(1 << 12, "int64", "int64")
    side = torch.cuda.Stream()
    st = m.insert(torch.arange(100, device="cuda"), torch.arange(100, device="cuda") * 2)
    torch.cuda.synchronize()
    assert bool((st == S.INSERTED).all())
    with torch.cuda.stream(side):
        got, found = m.find(list(range(100)), stream=side)  # lists become CuPy arrays if it is there, else torch
    side.synchronize()
    assert warpkv._to_numpy(found).all() and (warpkv._to_numpy(got) == np.arange(100) * 2).all()


def test_cupy_and_cuda_array_interface():
    cupy = _cupy()
    m = warpkv.CuckooMap(1 << 16, "uint32", "float64")
    keys = cupy.arange(1, 10001, dtype=cupy.uint32)
    vals = cupy.random.rand(keys.size)
    m.insert(keys, vals)
    got, found = m.find(keys)
    assert isinstance(got, cupy.ndarray) and bool(found.all()) and bool((got == vals).all())

    class CaiOnly:  # a producer with only __cuda_array_interface__ (as Numba's device arrays)
        def __init__(self, a):
            self.a = a
            self.__cuda_array_interface__ = a.__cuda_array_interface__
            self.shape = a.shape
            self.dtype = a.dtype

    got, found = m.find(CaiOnly(keys), out=cupy.empty_like(vals))
    assert bool(found.all())
    with pytest.raises(ValueError, match="contiguous"):
        m.find(CaiOnly(cupy.arange(20, dtype=cupy.uint32)[::2]))
    c = warpkv.KVCache(1 << 12, "float16", 3)
    rows = cupy.random.rand(100, 3).astype(cupy.float16)  # 6-byte rows: staged to the 8-byte stride
    c.set(cupy.arange(100, dtype=cupy.uint64), rows)
    got, hit = c.get(cupy.arange(100, dtype=cupy.uint64))
    assert bool(hit.all()) and bool((got == rows).all())


def _record(name: str, **fields) -> None:
    """Appends a JSON line to $WARPKV_PY_RESULTS (when set: scripts/gpu-python sets it)."""
    path = os.environ.get("WARPKV_PY_RESULTS")
    if path:
        import torch

        with open(path, "a") as f:
            f.write(json.dumps(dict(test=name, device=torch.cuda.get_device_name(), **fields)) + "\n")


def _cpp_find_ms(n: int):
    """Median ms of `warpkv-bench static` find_hit at 2^k keys (capacity 2n), or None."""
    exe = os.environ.get("WARPKV_BENCH")
    if not exe or not os.path.exists(exe):
        return None
    cmd = [exe, "static", "--map", "hopscotch", "--tile", "4", "--keys", str(int(2 * n * 0.95)), "--load-factors", "0.5",
           "--backend", "cuda", "--repeats", "5"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=500).stdout
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            if r.get("operation") == "find_hit" and r.get("map") == "hopscotch_map":
                return float(r["median_ms"])
    return None


def test_find_2_26_keys_matches_the_cpp_bulk_call():
    """The binding adds no copies: a 2^26-key find from PyTorch within 10% of the C++ bulk call
    (warpkv-bench static, same table: capacity 2^27, load 0.5, u32/u32 bits, tile 4)."""
    torch = _torch()
    n = 1 << 26
    m = warpkv.HopscotchMap(n, "int32", "int32")
    assert m.capacity() == 2 * n
    # distinct pseudo-random keys: x -> x * odd mod 2^30 is a bijection; + 1 keeps off the sentinels
    keys = ((torch.arange(n, device="cuda", dtype=torch.int64) * 2654435761) % (1 << 30) + 1).to(torch.int32)
    values = torch.arange(n, device="cuda", dtype=torch.int32)
    m.insert(keys, values)
    # queries: the keys in a random order (warpkv-bench static's find_hit queries a shuffle too)
    perm = torch.randperm(n, device="cuda")
    queries, expect = keys[perm], values[perm]
    out = torch.empty_like(values)
    kp, op = queries.data_ptr(), out.data_ptr()
    samples, event_ms = [], []
    for i in range(9):
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t = time.perf_counter()
        start.record()
        got, _ = m.find(queries, out=out)
        stop.record()
        torch.cuda.synchronize()
        if i >= 2:
            samples.append((time.perf_counter() - t) * 1e3)
            event_ms.append(start.elapsed_time(stop))
        assert got is out and out.data_ptr() == op and queries.data_ptr() == kp  # in place, every time
    py_ms = statistics.median(samples)
    assert torch.equal(out, expect)
    cpp_ms = _cpp_find_ms(n)
    print(f"find 2^26 from PyTorch: {py_ms:.3f} ms wall clock, {statistics.median(event_ms):.3f} ms by CUDA events "
          f"(the whole Python call, mask included); C++ bulk call: {cpp_ms} ms")
    _record("find_2_26", python_wall_ms=py_ms, python_event_ms=statistics.median(event_ms), cpp_event_ms=cpp_ms,
            samples_wall_ms=samples)
    if cpp_ms is None:
        pytest.skip(f"set WARPKV_BENCH to warpkv-bench for the comparison (Python: {py_ms:.3f} ms)")
    assert py_ms <= 1.10 * cpp_ms, f"Python {py_ms:.3f} ms vs C++ {cpp_ms:.3f} ms"
