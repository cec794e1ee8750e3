"""Array plumbing of the Python layer: which framework an array belongs to, allocating results
of the caller's array type on the caller's device, and stream handles. The compiled module
(warpkv._ext) checks dtypes, lengths, contiguity and devices; this module only allocates."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Optional

import numpy as np


def framework_of(x: Any) -> str:
    """'numpy', 'torch', 'cupy', 'numba', 'jax' or 'other'."""
    mod = type(x).__module__.split(".", 1)[0]
    if mod in ("numpy", "torch", "cupy", "numba", "jax", "jaxlib"):
        return "jax" if mod == "jaxlib" else mod
    return "other"


def on_device(x: Any) -> bool:
    """True for arrays in CUDA device memory."""
    fw = framework_of(x)
    if fw == "numpy":
        return False
    if fw == "torch":
        return x.device.type == "cuda"
    if fw == "cupy" or hasattr(x, "__cuda_array_interface__"):
        return True
    if hasattr(x, "__dlpack_device__"):
        return x.__dlpack_device__()[0] in (2, 13)  # kDLCUDA, kDLCUDAManaged
    return False


def dtype_name(d: Any) -> str:
    """The NumPy name of a dtype given as a string, a NumPy dtype or type, or a torch dtype."""
    if isinstance(d, str):
        return np.dtype(d).name
    mod = type(d).__module__.split(".", 1)[0]
    if mod == "torch":
        return str(d).replace("torch.", "")
    return np.dtype(d).name


def _torch():
    import torch

    return torch


def _cupy():
    import cupy

    return cupy


def _default_device_framework() -> str:
    for name in ("cupy", "torch"):
        try:
            __import__(name)
            return name
        except ImportError:
            pass
    raise RuntimeError("warpkv: results on the GPU need CuPy or PyTorch (neither is installed)")


def empty(like: Any, shape, dtype: str) -> Any:
    """An uninitialised array of `shape` and `dtype` of like's framework, on like's device
    (NumPy for host arrays of any other framework)."""
    fw = framework_of(like)
    if fw == "torch":
        torch = _torch()
        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if fw == "cupy":
        cupy = _cupy()
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    if fw == "numba" and on_device(like):
        from numba import cuda

        return cuda.device_array(shape, dtype=dtype)
    if on_device(like):
        return empty_on(_default_device_framework(), shape, dtype)
    return np.empty(shape, dtype=dtype)


def empty_on(framework: str, shape, dtype: str, device: int = 0) -> Any:
    """An uninitialised array of the named framework ('numpy', 'torch', 'cupy'; on the GPU
    `device` for the last two)."""
    if framework == "torch":
        torch = _torch()
        return torch.empty(shape, dtype=getattr(torch, dtype), device=f"cuda:{device}")
    if framework == "cupy":
        cupy = _cupy()
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)


def zeros(like: Any, shape, dtype: str) -> Any:
    out = empty(like, shape, dtype)
    if framework_of(out) == "numba":
        out.copy_to_device(np.zeros(shape, dtype=dtype))
    else:
        out[...] = 0
    return out


def from_numpy(a: np.ndarray, like: Any) -> Any:
    """`a` (host) as an array of like's framework on like's device (a copy when they differ)."""
    fw = framework_of(like)
    if fw == "torch":
        return _torch().from_numpy(np.ascontiguousarray(a)).to(like.device)
    if fw == "cupy":
        cupy = _cupy()
        with cupy.cuda.Device(like.device.id):
            return cupy.asarray(a)
    if on_device(like):
        if fw == "numba":
            from numba import cuda

            return cuda.to_device(a)
        return from_numpy(a, empty_on(_default_device_framework(), 0, "uint8"))
    return a


def as_array(x: Any, dtype: str, device_framework: Optional[str], device: int, arg: str) -> Any:
    """Lists, tuples and ranges become arrays of `dtype` (NumPy, or `device_framework` on
    `device` when the structure runs on a GPU); anything else passes untouched (the compiled
    module checks it)."""
    if not isinstance(x, (list, tuple, range)):
        if framework_of(x) == "torch" and x.requires_grad:
            return x.detach()  # DLPack refuses tensors that require grad; the data is the same
        return x
    try:
        a = np.asarray(x, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as e:
        raise TypeError(f"warpkv: argument '{arg}': cannot make an array of {dtype} from it ({e})") from None
    if device_framework is None:
        return a
    out = from_numpy(a, empty_on(device_framework, 0, dtype, device))
    # the copy was queued on the current stream; a call given another stream must not read the
    # array before it landed (lists are a convenience: they copy and wait)
    synchronize_current(out)
    return out


def synchronize_current(like: Any) -> None:
    """Waits for the current stream of like's framework (PyTorch, CuPy) on the device."""
    fw = framework_of(like)
    if fw == "torch" and like.device.type == "cuda":
        _torch().cuda.current_stream(like.device).synchronize()
    elif fw == "cupy":
        _cupy().cuda.get_current_stream().synchronize()


def length(x: Any, arg: str) -> int:
    shape = getattr(x, "shape", None)
    if shape is None and hasattr(x, "__cuda_array_interface__"):
        shape = x.__cuda_array_interface__.get("shape")
    if shape is None or len(shape) == 0:
        raise TypeError(f"warpkv: argument '{arg}': expected a 1-D array, got {type(x).__name__}")
    return int(shape[0])


def stream_handle(stream: Any, like: Any = None) -> Optional[int]:
    """A CUDA stream handle (int) from an int, a torch.cuda.Stream, a cupy.cuda.Stream or any
    object with __cuda_stream__; None: the current stream of like's framework (PyTorch, CuPy)
    when like is on the device, else None (the structure's own stream)."""
    if stream is None:
        if like is None or not on_device(like):
            return None
        fw = framework_of(like)
        if fw == "torch":
            return int(_torch().cuda.current_stream(like.device).cuda_stream)
        if fw == "cupy":
            return int(_cupy().cuda.get_current_stream().ptr)
        return None
    if isinstance(stream, bool):
        raise TypeError("warpkv: argument 'stream': expected a stream or an int handle, got bool")
    if isinstance(stream, int):
        if stream < 0:
            raise ValueError(f"warpkv: argument 'stream': a stream handle is a pointer (>= 0), got {stream}")
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return int(stream.cuda_stream)
    if hasattr(stream, "ptr"):  # cupy.cuda.Stream
        return int(stream.ptr)
    raise TypeError(
        "warpkv: argument 'stream': expected an int handle, a torch.cuda.Stream, a cupy.cuda.Stream "
        f"or an object with __cuda_stream__, got {type(stream).__name__}"
    )


def stream_context(like: Any, stream: Any):
    """A context that makes `stream` (when given) the current stream of like's framework, so that
    the results the Python layer allocates and computes (status arrays, found masks) are ordered
    on it, as the call itself is; a no-op without a stream or on the host."""
    if stream is None or not on_device(like):
        return contextlib.nullcontext()
    fw = framework_of(like)
    if fw == "torch":
        torch = _torch()
        s = stream if isinstance(stream, torch.cuda.Stream) else torch_stream(stream_handle(stream), like.device)
        return torch.cuda.stream(s)
    if fw == "cupy":
        cupy = _cupy()
        return stream if isinstance(stream, cupy.cuda.Stream) else cupy_stream(stream_handle(stream))
    return contextlib.nullcontext()


# The raw handles CUDA gives a meaning of their own (driver_types.h): 0, the default stream (the
# legacy one: the extension is not built with per-thread default streams), 1 (cudaStreamLegacy,
# the same stream named explicitly) and 2 (cudaStreamPerThread).
LEGACY_HANDLES = (0, 1)


def torch_stream(handle: int, device: Any = None) -> Any:
    """The torch.cuda.Stream that is the CUDA stream `handle`.

    Never torch.cuda.ExternalStream(0): PyTorch reads a stream_ptr of 0 as "none given" and
    returns a new stream of its pool (non-blocking), so work put "on handle 0" that way is not
    ordered with the default stream at all; that made found masks be computed before the find
    that writes their statuses had run (issue 26's test_torch_streams). ExternalStream(1) is
    refused by PyTorch (odd ids are its own streams'). Both name the legacy default stream, which
    is PyTorch's default stream unless PyTorch was built with per-thread default streams."""
    torch = _torch()
    cur = torch.cuda.current_stream(device)
    if int(cur.cuda_stream) == handle:
        return cur
    default = torch.cuda.default_stream(device)
    if int(default.cuda_stream) == handle:
        return default
    if handle in LEGACY_HANDLES:
        if int(default.cuda_stream) in LEGACY_HANDLES:
            return default
        raise ValueError(
            f"warpkv: argument 'stream': handle {handle} is the legacy default stream, which this PyTorch "
            "(per-thread default streams) cannot name; pass a torch.cuda.Stream")
    return torch.cuda.ExternalStream(handle, device=device)


def cupy_stream(handle: int) -> Any:
    """The cupy.cuda stream that is the CUDA stream `handle` (the current one when it is; Stream.null
    for the legacy default stream)."""
    cupy = _cupy()
    cur = cupy.cuda.get_current_stream()
    if int(cur.ptr) == handle:
        return cur
    if handle in LEGACY_HANDLES:
        return cupy.cuda.Stream.null
    if hasattr(cupy.cuda, "ExternalStream"):
        with warnings.catch_warnings():  # CuPy 14 deprecates it for Stream.from_external (a protocol object)
            warnings.simplefilter("ignore", DeprecationWarning)
            return cupy.cuda.ExternalStream(handle)
    return cupy.cuda.Stream.from_external(_StreamHandle(handle))


class _StreamHandle:
    """A raw handle under the CUDA stream protocol (__cuda_stream__ -> (version, handle))."""

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def count(n: Any, arg: str) -> int:
    """A non-negative int argument (sizes, capacities)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"warpkv: argument '{arg}': expected an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"warpkv: argument '{arg}': must be >= 0, got {n}")
    return int(n)
