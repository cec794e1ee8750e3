"""Shared helpers of the Python tests (host backend, NumPy arrays; test_gpu.py adds the device)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import warpkv  # noqa: E402

MAPS = [warpkv.HopscotchMap, warpkv.LinearMap, warpkv.CuckooMap]
KEY_DTYPES = ["int32", "uint32", "int64", "uint64"]
VALUE_DTYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"]


def distinct_keys(dtype: str, n: int, seed: int = 0) -> np.ndarray:
    """n distinct keys of dtype spread over its range (negative ones for signed types), none of
    them a sentinel of any map (the largest value and the two below it)."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max) - 3
    out = set()
    while len(out) < n:
        draw = rng.integers(lo, hi, size=2 * n, dtype=np.uint64 if dtype == "uint64" else np.int64, endpoint=True)
        out.update(int(x) for x in draw)
    keys = np.array(sorted(out)[:n], dtype=dtype)
    rng.shuffle(keys)
    return keys


def unique_values(dtype: str, n: int, start: int = 1) -> np.ndarray:
    """n distinct values of dtype (exact in float32: below 2^24)."""
    return np.arange(start, start + n).astype(dtype)


@pytest.fixture(params=MAPS, ids=lambda c: c.__name__)
def map_cls(request):
    return request.param


class Xp:
    """The array framework a test runs with: NumPy on the host backend; PyTorch or CuPy tensors
    on the GPU (those skip unless this build has CUDA, a GPU is visible and the framework is
    installed: the GPU machine runs them)."""

    def __init__(self, name: str):
        self.name = name
        self.backend = "host" if name == "numpy" else "cuda"
        if name == "torch":
            import torch

            self.mod = torch
        elif name == "cupy":
            import cupy

            self.mod = cupy
        else:
            self.mod = np

    def asarray(self, a):
        a = np.asarray(a)
        if self.name == "torch":
            return self.mod.from_numpy(np.ascontiguousarray(a)).to("cuda")
        if self.name == "cupy":
            return self.mod.asarray(a)
        return a

    def numpy(self, x) -> np.ndarray:
        if self.name == "torch":
            return x.cpu().numpy()
        if self.name == "cupy":
            return self.mod.asnumpy(x)
        return np.asarray(x)

    def is_native(self, x) -> bool:
        """x is this framework's array (and on the GPU for the device frameworks)."""
        if self.name == "torch":
            return isinstance(x, self.mod.Tensor) and x.is_cuda
        if self.name == "cupy":
            return isinstance(x, self.mod.ndarray)
        return isinstance(x, np.ndarray)

    def supports(self, dtype: str) -> bool:
        return self.name != "torch" or hasattr(self.mod, dtype)

    def __repr__(self):
        return self.name


def _device_ready(name: str) -> bool:
    if not warpkv.cuda_available():
        return False
    try:
        __import__(name)
        return True
    except ImportError:
        return False


@pytest.fixture(params=["numpy", "torch", "cupy"])
def xp(request):
    if request.param != "numpy" and not _device_ready(request.param):
        pytest.skip(f"{request.param} on the GPU: needs the CUDA build, a GPU and {request.param}")
    return Xp(request.param)
