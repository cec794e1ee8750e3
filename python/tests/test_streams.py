"""Stream plumbing of the Python layer, on any machine: which stream the results of a call are
allocated and computed on. The frameworks are stand-ins that behave as PyTorch's and CuPy's
stream APIs do where it matters, so these run in CI without a GPU, CuPy or PyTorch.

The bug these guard against (issue 26, test_torch_streams on the GPU): a call given the default
stream as an int handle (`stream=torch.cuda.current_stream().cuda_stream`, i.e. 0) wrapped it in
torch.cuda.ExternalStream(0), which PyTorch reads as "no pointer given" and answers with a new
stream of its pool. The found mask was then computed on that unrelated non-blocking stream while
the find ran on the default one, and part of it read statuses not yet written.

The invariant: inside stream_context(like, h), the framework's current stream IS the stream h,
for every kind of handle (0 and cudaStreamLegacy = 1: the legacy default stream; 2:
cudaStreamPerThread; any other pointer; stream objects); no handle is ever turned into a new
stream, and one the framework cannot name is refused with a ValueError."""

import contextlib
import itertools
import types

import pytest

from warpkv import _arrays

# ---- a PyTorch stand-in: streams, current/default stream, ExternalStream as PyTorch has it ------


class _TorchStream:
    _pool = itertools.count(0x7F000000, 0x100)  # fresh handles of pool streams

    def __init__(self, handle=None, device=None):
        self.cuda_stream = next(self._pool) if handle is None else handle
        self.device = device

    def __eq__(self, other):
        return isinstance(other, _TorchStream) and other.cuda_stream == self.cuda_stream

    __hash__ = None


class _TorchExternalStream(_TorchStream):
    def __new__(cls, stream_ptr, device=None):
        # torch/csrc/cuda/Stream.cpp: `stream_ptr ? getStreamFromExternal(...) : getStreamFromPool(...)`
        if stream_ptr % 2 == 1:  # seen on the GPU (PyTorch 2.11): odd ids are PyTorch's own streams
            raise RuntimeError(f"invalid StreamId{stream_ptr}")
        s = object.__new__(_TorchStream if stream_ptr == 0 else cls)
        _TorchStream.__init__(s, None if stream_ptr == 0 else stream_ptr, device)
        return s

    def __init__(self, stream_ptr, device=None):
        pass


def _fake_torch(default_handle=0):
    state = {"current": None}
    default = _TorchStream(default_handle)
    state["current"] = default

    @contextlib.contextmanager
    def stream(s):
        prev, state["current"] = state["current"], s
        try:
            yield s
        finally:
            state["current"] = prev

    cuda = types.SimpleNamespace(
        Stream=_TorchStream,
        ExternalStream=_TorchExternalStream,
        current_stream=lambda device=None: state["current"],
        default_stream=lambda device=None: default,
        stream=stream,
    )
    return types.SimpleNamespace(cuda=cuda), state


class _Device:
    type = "cuda"
    index = 0


class FakeTensor:
    device = _Device()


FakeTensor.__module__ = "torch"  # what framework_of reads


# ---- a CuPy stand-in ----------------------------------------------------------------------------


def _fake_cupy():
    state = {}

    class Stream:
        def __init__(self, ptr=None):
            self.ptr = ptr if ptr is not None else id(self)

        def __enter__(self):
            state.setdefault("stack", []).append(state["current"])
            state["current"] = self
            return self

        def __exit__(self, *exc):
            state["current"] = state["stack"].pop()

    class ExternalStream(Stream):
        def __init__(self, ptr, device_id=-1):
            super().__init__(ptr)

    Stream.null = Stream(0)
    state["current"] = Stream.null
    cuda = types.SimpleNamespace(Stream=Stream, ExternalStream=ExternalStream,
                                 get_current_stream=lambda: state["current"])
    return types.SimpleNamespace(cuda=cuda), state


class FakeCupyArray:
    pass


FakeCupyArray.__module__ = "cupy"

CUDA_STREAM_LEGACY = 1  # cudaStreamLegacy (driver_types.h)
HANDLES = [0, CUDA_STREAM_LEGACY, 2, 0x5A5A5A00]  # default, legacy, per-thread, a stream of its own


@pytest.fixture
def torch_fake(monkeypatch):
    fake, state = _fake_torch()
    monkeypatch.setattr(_arrays, "_torch", lambda: fake)
    return fake, state


@pytest.fixture
def cupy_fake(monkeypatch):
    fake, state = _fake_cupy()
    monkeypatch.setattr(_arrays, "_cupy", lambda: fake)
    return fake, state


def test_the_stand_in_has_pytorchs_external_stream_of_null():
    """The traps themselves, as PyTorch has them: ExternalStream(0) is a new stream, not the
    default one; ExternalStream(1) (cudaStreamLegacy) is refused."""
    fake, _ = _fake_torch()
    assert fake.cuda.ExternalStream(0).cuda_stream != 0
    assert fake.cuda.ExternalStream(0x1234).cuda_stream == 0x1234
    with pytest.raises(RuntimeError):
        fake.cuda.ExternalStream(CUDA_STREAM_LEGACY)


@pytest.mark.parametrize("handle", HANDLES)
def test_torch_int_handle_is_the_current_stream_inside_the_context(torch_fake, handle):
    fake, state = torch_fake
    like = FakeTensor()
    with _arrays.stream_context(like, handle):
        cur = state["current"]
        # 0 and cudaStreamLegacy (1) both name the legacy default stream: PyTorch's default one
        if handle in (0, CUDA_STREAM_LEGACY):
            assert cur is fake.cuda.default_stream()
        else:
            assert cur.cuda_stream == handle
    assert state["current"].cuda_stream == 0  # restored


def test_torch_default_stream_handle_is_the_default_stream_object(torch_fake):
    fake, state = torch_fake
    with _arrays.stream_context(FakeTensor(), fake.cuda.current_stream().cuda_stream):
        assert state["current"] is fake.cuda.default_stream()


def test_torch_handle_of_the_current_side_stream_stays_on_it(torch_fake):
    fake, state = torch_fake
    side = fake.cuda.Stream()
    with fake.cuda.stream(side):
        with _arrays.stream_context(FakeTensor(), side.cuda_stream):
            assert state["current"] is side
        # None: the current stream, by handle, for the compiled call
        assert _arrays.stream_handle(None, FakeTensor()) == side.cuda_stream


@pytest.mark.parametrize("handle", [0, CUDA_STREAM_LEGACY])
def test_torch_legacy_stream_under_per_thread_default_stream_builds(monkeypatch, handle):
    """A PyTorch whose default stream is per-thread (handle 2) has no object for the legacy
    default stream: a clear error naming the argument, never a pool stream or a crash."""
    fake, state = _fake_torch(default_handle=2)
    monkeypatch.setattr(_arrays, "_torch", lambda: fake)
    with pytest.raises(ValueError, match="'stream'"):
        _arrays.stream_context(FakeTensor(), handle)
    with _arrays.stream_context(FakeTensor(), 2):  # its own default stream, by handle
        assert state["current"] is fake.cuda.default_stream()


@pytest.mark.parametrize("make", ["torch.Stream", "object with cuda_stream", "__cuda_stream__"])
def test_torch_stream_objects(torch_fake, make):
    fake, state = torch_fake
    side = fake.cuda.Stream()
    if make == "torch.Stream":
        arg = side
    elif make == "object with cuda_stream":
        arg = types.SimpleNamespace(cuda_stream=side.cuda_stream)
    else:
        arg = types.SimpleNamespace(__cuda_stream__=lambda: (0, side.cuda_stream))
    assert _arrays.stream_handle(arg) == side.cuda_stream
    with _arrays.stream_context(FakeTensor(), arg):
        assert state["current"].cuda_stream == side.cuda_stream


@pytest.mark.parametrize("handle", HANDLES)
def test_cupy_int_handle_is_the_current_stream_inside_the_context(cupy_fake, handle):
    fake, state = cupy_fake
    with _arrays.stream_context(FakeCupyArray(), handle):
        assert state["current"].ptr == (0 if handle == CUDA_STREAM_LEGACY else handle)  # Stream.null for both
    assert state["current"] is fake.cuda.Stream.null


def test_cupy_stream_object(cupy_fake):
    fake, state = cupy_fake
    s = fake.cuda.Stream()
    assert _arrays.stream_handle(s) == s.ptr
    with _arrays.stream_context(FakeCupyArray(), s):
        assert state["current"] is s


def test_no_stream_or_host_arrays_change_nothing(torch_fake):
    import numpy as np

    fake, state = torch_fake
    before = state["current"]
    with _arrays.stream_context(FakeTensor(), None):
        assert state["current"] is before
    with _arrays.stream_context(np.zeros(3), 0):
        assert state["current"] is before


@pytest.mark.parametrize("bad", [-1, True, 1.5, "0"])
def test_bad_handles_name_the_argument(bad):
    with pytest.raises((TypeError, ValueError), match="'stream'"):
        _arrays.stream_handle(bad)
