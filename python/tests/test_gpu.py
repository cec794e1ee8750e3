"""On the GPU only (skipped elsewhere): no host copies, streams, __cuda_array_interface__
producers, and the 2^26-key find against the C++ bulk call. The rest of the suite (test_maps.py,
test_cache.py) runs with PyTorch and CuPy tensors there through the xp fixture.

scripts/gpu-python runs it (WARPKV_BENCH: path of warpkv-bench for the timing comparison)."""

import json
import os
import statistics
import subprocess
import time

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
    with torch.cuda.stream(s):
        vals = keys * 3  # produced on s: the insert must wait for it
        m.insert(keys, vals, stream=s)
        got, found = m.find(keys)  # default: the current stream, s
        ok = bool(found.all()) and bool((got == vals).all())
    s.synchronize()
    assert ok
    got, found = m.find(keys, stream=torch.cuda.current_stream().cuda_stream)  # an int handle
    torch.cuda.synchronize()
    assert bool(found.all())
    own = torch.cuda.Stream()
    m2 = warpkv.CuckooMap(1024, "int64", "int64", stream=own)  # the map's own stream
    m2.insert(torch.arange(10, device="cuda"), torch.arange(10, device="cuda"))
    assert bool(m2.contains(torch.arange(10, device="cuda")).all())


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
    out = torch.empty_like(values)
    samples = []
    for i in range(7):
        torch.cuda.synchronize()
        t = time.perf_counter()
        m.find(keys, out=out)
        torch.cuda.synchronize()
        if i >= 2:
            samples.append((time.perf_counter() - t) * 1e3)
    py_ms = statistics.median(samples)
    assert torch.equal(out, values)
    cpp_ms = _cpp_find_ms(n)
    print(f"find 2^26 from PyTorch: {py_ms:.3f} ms; C++ bulk call: {cpp_ms} ms")
    if cpp_ms is None:
        pytest.skip(f"set WARPKV_BENCH to warpkv-bench for the comparison (Python: {py_ms:.3f} ms)")
    assert py_ms <= 1.10 * cpp_ms, f"Python {py_ms:.3f} ms vs C++ {cpp_ms:.3f} ms"
