"""warpkv: concurrent GPU hash maps and a GPU key-value cache, from NumPy, PyTorch and CuPy.

    >>> import numpy as np, warpkv
    >>> m = warpkv.HopscotchMap(1000, key_dtype="int64", value_dtype="float32")
    >>> st = m.insert(np.arange(10), np.arange(10, dtype=np.float32))
    >>> values, found = m.find(np.array([3, 42]))

Every batch runs its operations concurrently (and linearizably) on the map's backend: the GPU
when this build has CUDA and one is visible, else host threads that emulate warps (then arrays
are NumPy arrays, or anything in host memory). Arrays are used in place, without copies:
anything exporting DLPack (PyTorch, CuPy, JAX) or __cuda_array_interface__ (Numba) on the device,
NumPy on the host; results come back as the caller's array type on the caller's device.

Maps: HopscotchMap (the flagship, GLHT), LinearMap (linear probing), CuckooMap (bucketed cuckoo).
Cache: KVCache (fixed size, LRU/clock/random eviction, TTL). Statuses: Status; op codes: Op,
CacheOp; errors: Error and its subclasses (code and message of the C++ warpkv::error).
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from . import _arrays
from . import _ext

__all__ = [
    "HopscotchMap", "LinearMap", "CuckooMap", "KVCache", "Status", "Op", "CacheOp", "ErrorCode", "Error",
    "InvalidArgumentError", "InvalidKeyError", "OutOfMemoryError", "CudaError", "UnsupportedError",
    "CapacityError", "VulkanError", "Evicted", "build_info", "cuda_available", "built_backend",
]

#: "cuda" or "host": the backend this build of the extension was compiled with.
built_backend: str = _ext.built_backend


def cuda_available() -> bool:
    """True when this build has CUDA and a GPU is visible (maps made with backend="auto" use it)."""
    return _ext.cuda_available()


def build_info() -> dict:
    """What this installation built and what it will run on: built_backend ("cuda" or "host"),
    cuda_architectures (the CUDA build's CMAKE_CUDA_ARCHITECTURES, e.g. "90"; "" for a host
    build), cuda_available (a GPU is visible to this build) and default_backend (where
    backend="auto" runs)."""
    return {
        "built_backend": built_backend,
        "cuda_architectures": getattr(_ext, "cuda_architectures", ""),
        "cuda_available": cuda_available(),
        "default_backend": "cuda" if cuda_available() else "host",
    }


# ---- enums ----------------------------------------------------------------------------------


class Status(enum.IntEnum):
    """Per-operation result (warpkv::status). Status arrays are uint8; compare them with these."""

    INSERTED = 0  #: key was absent and is now present with the given value
    ASSIGNED = 1  #: key was present; its value was replaced (insert_or_assign, a cache's set)
    FOUND = 2  #: key is present (find, contains, an insert of a present key)
    NOT_FOUND = 3  #: key is absent (find, contains, erase)
    ERASED = 4  #: key was present and has been removed
    FULL = 5  #: no room (never returned by the bulk calls: they grow and retry)
    INVALID_KEY = 6  #: the key is a sentinel of the map (see `invalid_keys`), or the op code is unknown


_FOUND = int(Status.FOUND)  # a plain int for array comparisons in every framework


class Op(enum.IntEnum):
    """Operation codes of a map's mixed batch (`execute`); op arrays are uint8."""

    INSERT = 0
    INSERT_OR_ASSIGN = 1
    FIND = 2
    ERASE = 3
    CONTAINS = 4


class CacheOp(enum.IntEnum):
    """Operation codes of a cache's mixed batch (`KVCache.execute`); op arrays are uint8."""

    GET = 0
    SET = 1
    ADD = 2
    ERASE = 3
    GET_OR_SET = 4
    CONTAINS = 5


# ---- errors ---------------------------------------------------------------------------------


class ErrorCode(enum.IntEnum):
    """warpkv::errc."""

    INVALID_ARGUMENT = 0
    INVALID_KEY = 1
    OUT_OF_MEMORY = 2
    CUDA = 3
    UNSUPPORTED = 4
    CAPACITY = 5
    VULKAN = 6


class Error(RuntimeError):
    """A warpkv::error from the C++ library: `code` (ErrorCode) and `message`."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message

    def __reduce__(self):
        return (type(self), (int(self.code), self.message))


class InvalidArgumentError(Error, ValueError):
    """errc::invalid_argument: an argument out of range; the message names it."""


class InvalidKeyError(Error, ValueError):
    """errc::invalid_key: a batch held a sentinel key and the map was made with throw_on_invalid_key."""


class OutOfMemoryError(Error, MemoryError):
    """errc::out_of_memory."""


class CudaError(Error):
    """errc::cuda: a CUDA call or kernel launch failed."""


class UnsupportedError(Error):
    """errc::unsupported: e.g. backend="cuda" in a host-only build or without a GPU."""


class CapacityError(Error):
    """errc::capacity: growth could not place every key (reported, never silent)."""


class VulkanError(Error):
    """errc::vulkan."""


error = Error  # the C++ name
_ext._set_error_classes(
    [InvalidArgumentError, InvalidKeyError, OutOfMemoryError, CudaError, UnsupportedError, CapacityError, VulkanError]
)


# ---- maps -----------------------------------------------------------------------------------


class _Placed:
    """Where a structure runs and how its results are allocated."""

    _core: Any

    def _setup_like(self) -> None:
        self._device_index = int(self._core.device.split(":")[1]) if self._core.device.startswith("cuda") else 0
        self._on_device = self._core.device.startswith("cuda")
        self._like: Any = None  # a 0-length array of the caller's last framework (for items())

    def _arr(self, x: Any, dtype: str, arg: str) -> Any:
        if not isinstance(x, (list, tuple, range)):
            return _arrays.as_array(x, dtype, None, 0, arg)
        return _arrays.as_array(x, dtype, self._device_framework(), self._device_index, arg)

    def _device_framework(self) -> Optional[str]:
        """Where results of a device structure go when no array says: CuPy, else PyTorch."""
        return _arrays._default_device_framework() if self._on_device else None

    def _empty(self, like: Any, shape, dtype: str) -> Any:
        """A result array of like's framework on like's device; when like is not in this
        structure's memory, a NumPy one (the compiled call then refuses like, naming it)."""
        if _arrays.on_device(like) != self._on_device:
            return np.empty(shape, dtype)
        return _arrays.empty(like, shape, dtype)

    def _zeros(self, like: Any, shape, dtype: str) -> Any:
        if _arrays.on_device(like) != self._on_device:
            return np.zeros(shape, dtype)
        return _arrays.zeros(like, shape, dtype)

    def _remember(self, like: Any) -> None:
        if self._like is None or _arrays.framework_of(self._like) != _arrays.framework_of(like):
            self._like = self._empty(like, 0, "uint8")

    def _items_like(self, like: Any) -> Any:
        if like is not None:
            return like
        if self._like is not None:
            return self._like
        if not self._on_device:
            return np.empty(0, np.uint8)
        return _arrays.empty_on(self._device_framework(), 0, "uint8", self._device_index)

    def size(self) -> int:
        """Entries: for a map, the keys its bulk calls counted; for a cache, the live (present,
        unexpired) entries, by a pass over the table."""
        return self._core.size()

    def __len__(self) -> int:
        return self._core.size()

    def capacity(self) -> int:
        """Slots: of a map's table (a power of two, grows), of a cache (fixed: the most entries it holds)."""
        return self._core.capacity()

    def clear(self) -> None:
        """Removes every entry (keeps the capacity)."""
        self._core.clear()

    @property
    def value_dtype(self) -> str:
        """The dtype of values (for a cache: of each row's elements)."""
        return self._core.value_dtype

    @property
    def device(self) -> str:
        """'host' or 'cuda:N'."""
        return self._core.device

    @property
    def backend(self) -> str:
        """'host' or 'cuda'."""
        return self._core.backend


class _Map(_Placed):
    _kind = ""

    def __init__(self, capacity: int, key_dtype: Any, value_dtype: Any, backend: str, stream: Any,
                 host_tiles: int, config: dict):
        s = _arrays.stream_handle(stream)
        self._core = _ext.Map(self._kind, _arrays.count(capacity, "capacity"), _arrays.dtype_name(key_dtype),
                              _arrays.dtype_name(value_dtype), backend, s or 0, int(host_tiles), config)
        self._setup_like()

    # -- helpers --
    def _keys(self, keys: Any) -> Any:
        return self._arr(keys, self._core.key_dtype, "keys")

    def _values(self, values: Any) -> Any:
        return self._arr(values, self._core.value_dtype, "values")

    def _statuses(self, like: Any, n: int) -> Any:
        return self._empty(like, n, "uint8")

    # -- the bulk API --
    def insert(self, keys: Any, values: Any, *, stream: Any = None) -> Any:
        """Inserts each absent key with its value; a present key keeps its value.

        keys: 1-D array of key_dtype; values: 1-D array of value_dtype, as many. Returns the
        statuses (uint8 array of Status: INSERTED, FOUND, INVALID_KEY), of the keys' array type.
        All operations of the batch run concurrently; duplicate keys in a batch: one inserts,
        the others find it. The map grows as needed (no insert is dropped)."""
        return self._insert(keys, values, stream, False)

    def insert_or_assign(self, keys: Any, values: Any, *, stream: Any = None) -> Any:
        """Inserts or replaces each key's value. Returns statuses (INSERTED, ASSIGNED, INVALID_KEY)."""
        return self._insert(keys, values, stream, True)

    def _insert(self, keys: Any, values: Any, stream: Any, assign: bool) -> Any:
        keys, values = self._keys(keys), self._values(values)
        with _arrays.stream_context(keys, stream):
            st = self._statuses(keys, _arrays.length(keys, "keys"))
            self._core.insert(keys, values, st, _arrays.stream_handle(stream, keys), assign)
        self._remember(keys)
        return st

    def find(self, keys: Any, *, out: Any = None, return_status: bool = False, stream: Any = None):
        """Looks each key up. Returns (values, found): values of value_dtype (0 where absent) and a
        bool mask; with return_status=True, (values, found, statuses). `out`: an array of
        value_dtype to write the values to (returned as `values`).

        On the GPU a find is stream-ordered and does not wait for the device."""
        keys = self._keys(keys)
        n = _arrays.length(keys, "keys")
        with _arrays.stream_context(keys, stream):
            values = self._empty(keys, n, self._core.value_dtype) if out is None else out
            st = self._statuses(keys, n)
            self._core.find(keys, values, st, _arrays.stream_handle(stream, keys))
            found = st == _FOUND
        self._remember(keys)
        return (values, found, st) if return_status else (values, found)

    def contains(self, keys: Any, *, stream: Any = None) -> Any:
        """A bool mask: which keys are present."""
        keys = self._keys(keys)
        with _arrays.stream_context(keys, stream):
            out = self._empty(keys, _arrays.length(keys, "keys"), "bool")
            self._core.contains(keys, out, _arrays.stream_handle(stream, keys))
        return out

    def erase(self, keys: Any, *, stream: Any = None) -> Any:
        """Removes each key. Returns statuses (ERASED, NOT_FOUND, INVALID_KEY)."""
        keys = self._keys(keys)
        with _arrays.stream_context(keys, stream):
            st = self._statuses(keys, _arrays.length(keys, "keys"))
            self._core.erase(keys, st, _arrays.stream_handle(stream, keys))
        return st

    def execute(self, ops: Any, keys: Any, values: Any = None, *, stream: Any = None):
        """A mixed batch: operation i is ops[i] (Op codes, uint8) on keys[i], with values[i] for
        inserts (values may be None when no op inserts). All operations run concurrently.
        Returns (statuses, values): the values finds and contains saw (0 on a miss and for inserts
        and erases). An op code
        outside Op gets INVALID_KEY."""
        keys = self._keys(keys)
        n = _arrays.length(keys, "keys")
        ops = self._arr(ops, "uint8", "ops")
        with _arrays.stream_context(keys, stream):
            values = self._zeros(keys, n, self._core.value_dtype) if values is None else self._values(values)
            st = self._statuses(keys, n)
            out = self._zeros(keys, n, self._core.value_dtype)
            self._core.execute(ops, keys, values, st, out, _arrays.stream_handle(stream, keys))
        self._remember(keys)
        return st, out

    # -- whole-table calls (size, capacity, clear: _Placed's) --
    def load_factor(self) -> float:
        return self._core.size() / self._core.capacity()

    def reserve(self, n: int) -> None:
        """Makes room for n keys without passing the maximum load factor."""
        self._core.reserve(_arrays.count(n, "n"))

    def rehash(self, capacity: int) -> None:
        """Rebuilds the table with at least `capacity` slots (never fewer than the keys need)."""
        self._core.rehash(_arrays.count(capacity, "capacity"))

    def rehash_count(self) -> int:
        """Rehashes done so far (growth, reserve, rehash, rebuilds)."""
        return self._core.rehash_count()

    def validate(self) -> str:
        """Debug aid (copies the table to the host): the first broken invariant, or ''."""
        return self._core.validate()

    def items(self, like: Any = None) -> Tuple[Any, Any]:
        """(keys, values) of every entry, in table order. Arrays of like's framework and device;
        default: that of the last batch's keys (NumPy on the host backend)."""
        like = self._items_like(like)
        n = self._core.size()
        k = _arrays.empty(like, max(n, 1), self._core.key_dtype)
        v = _arrays.empty(like, max(n, 1), self._core.value_dtype)
        got = self._core.retrieve_all(k, v, _arrays.stream_handle(None, like))
        return k[:got], v[:got]

    def to_dict(self) -> dict:
        """The entries as a Python dict (copies to the host)."""
        k, v = self.items(None if self._on_device else np.empty(0, np.uint8))
        k, v = _to_numpy(k), _to_numpy(v)
        return dict(zip(k.tolist(), v.tolist()))

    @property
    def key_dtype(self) -> str:
        return self._core.key_dtype

    @property
    def empty_key(self) -> int:
        """The empty-key sentinel: never stored, refused with INVALID_KEY."""
        return _from_bits(self._core.empty_key_bits, self._core.key_dtype)

    @property
    def invalid_keys(self) -> Tuple[int, ...]:
        """Every key value this map refuses (INVALID_KEY)."""
        return (self.empty_key,)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(size={self.size()}, capacity={self.capacity()}, key_dtype={self.key_dtype}, "
                f"value_dtype={self.value_dtype}, device={self.device})")


def _from_bits(bits: int, dtype: str) -> int:
    return int(np.array([bits], dtype=np.uint64).astype(np.dtype(dtype))[0]) if dtype.startswith("int") else bits


def _to_numpy(a: Any) -> np.ndarray:
    fw = _arrays.framework_of(a)
    if fw == "torch":
        return a.detach().cpu().numpy()
    if fw == "cupy":
        return a.get()
    if fw == "numba":
        return a.copy_to_host()
    return np.asarray(a)


def _map_config(max_load_factor, seed, throw_on_invalid_key, **rest) -> dict:
    cfg = {"max_load_factor": float(max_load_factor), "seed": int(seed), "throw_on_invalid_key": bool(throw_on_invalid_key)}
    cfg.update(rest)
    return cfg


class HopscotchMap(_Map):
    """warpkv::hopscotch_map: the lock-free, warp-cooperative hopscotch map (after GLHT), with a
    stash for keys displacement cannot place and automatic growth.

    capacity: keys to make room for (at max_load_factor); the map grows beyond it as needed.
    key_dtype: int32, uint32, int64 or uint64; value_dtype: int32, uint32, int64, uint64, float32
    or float64. Two keys are refused (INVALID_KEY): the empty-key sentinel (the dtype's largest
    value) and its neighbour empty_key ^ 1. backend: "auto" (the GPU when available), "cuda" or
    "host"; stream: the map's own CUDA stream (default: the legacy default stream); host_tiles:
    concurrent tiles of the host backend (0: 2 x cores). neighborhood (H, 1..32), max_probe, seed,
    max_load_factor and throw_on_invalid_key are hopscotch_config's."""

    _kind = "hopscotch"

    def __init__(self, capacity: int = 1024, key_dtype: Any = "uint32", value_dtype: Any = "uint32", *,
                 max_load_factor: float = 0.9, neighborhood: int = 32, max_probe: int = 4096, seed: int = 0,
                 throw_on_invalid_key: bool = False, backend: str = "auto", stream: Any = None, host_tiles: int = 0):
        super().__init__(capacity, key_dtype, value_dtype, backend, stream, host_tiles,
                         _map_config(max_load_factor, seed, throw_on_invalid_key, neighborhood=int(neighborhood),
                                     max_probe=int(max_probe)))

    @property
    def invalid_keys(self) -> Tuple[int, ...]:
        e = self._core.empty_key_bits
        return (self.empty_key, _from_bits(e ^ 1, self._core.key_dtype))


class LinearMap(_Map):
    """warpkv::linear_map: open addressing with linear probing (windows of 4 slots), erase by
    tombstones, cleaned up automatically. Refused keys: the empty key (the dtype's largest value)
    and the erased key (one less). Arguments as HopscotchMap's; tombstone_threshold and max_probe
    are open_addressing_config's."""

    _kind = "linear"

    def __init__(self, capacity: int = 1024, key_dtype: Any = "uint32", value_dtype: Any = "uint32", *,
                 max_load_factor: float = 0.9, tombstone_threshold: float = 0.25, max_probe: int = 4096,
                 seed: int = 0, throw_on_invalid_key: bool = False, backend: str = "auto", stream: Any = None,
                 host_tiles: int = 0):
        super().__init__(capacity, key_dtype, value_dtype, backend, stream, host_tiles,
                         _map_config(max_load_factor, seed, throw_on_invalid_key,
                                     tombstone_threshold=float(tombstone_threshold), max_probe=int(max_probe)))

    @property
    def invalid_keys(self) -> Tuple[int, ...]:
        e = self._core.empty_key_bits
        return (self.empty_key, _from_bits(e - 1, self._core.key_dtype))


class CuckooMap(_Map):
    """warpkv::cuckoo_map: bucketed cuckoo hashing (buckets of 8 slots filled first-fit, 2 or 3 hash functions,
    bounded eviction chains), lock-free finds. Refused key: the empty key (the dtype's largest
    value). Arguments as HopscotchMap's; hash_functions, max_chain and eviction_attempts are
    cuckoo_config's."""

    _kind = "cuckoo"

    def __init__(self, capacity: int = 1024, key_dtype: Any = "uint32", value_dtype: Any = "uint32", *,
                 max_load_factor: float = 0.9, hash_functions: int = 3, max_chain: int = 32,
                 eviction_attempts: int = 8, seed: int = 0, throw_on_invalid_key: bool = False,
                 backend: str = "auto", stream: Any = None, host_tiles: int = 0):
        super().__init__(capacity, key_dtype, value_dtype, backend, stream, host_tiles,
                         _map_config(max_load_factor, seed, throw_on_invalid_key, hash_functions=int(hash_functions),
                                     max_chain=int(max_chain), eviction_attempts=int(eviction_attempts)))


# ---- the cache ------------------------------------------------------------------------------


class Evicted(NamedTuple):
    """Entries a cache batch evicted: the index of the operation that evicted each, its key and
    its value (rows of the cache's value_dtype)."""

    index: Any
    keys: Any
    values: Any


class KVCache(_Placed):
    """warpkv::kv_cache: a fixed-size key-value cache (bucketed cuckoo, two hash functions,
    bounded cuckoo moves, then eviction). It may forget entries (evict, expire) but never returns
    a wrong or torn value. Keys: uint64 or int64 (the all-ones key, uint64 max or int64 -1, is
    refused with INVALID_KEY); 32-bit keys are widened (a copy). Values: rows of value_width
    elements of value_dtype (any int, uint or float dtype of 1-8 bytes): 1-D arrays when
    value_width is 1, else (n, value_width).

    capacity: entries (fixed; rounded up to whole buckets of 4). eviction: "lru" (approximate
    LRU by recency stamps), "clock" or "random", or one of HierarchicalKV's score policies
    "lfu" (access counts), "epoch_lru", "epoch_lfu" (the global epoch, set_global_epoch, in a
    score's high 32 bits) or "custom" (the caller's scores), which come with sync "optimistic",
    layout "value_slab" and no key_digests only; sync: "optimistic" or "rw_lock"; layout:
    "value_slab" or "inline_values"; max_kicks, kick_load_limit, seed, absorb_sets,
    combine_get_or_set, key_digests: cache_config's. backend, stream, host_tiles: as the maps'.
    Batches may be called from several Python threads at once.

    Scores: set/add/get_or_set/execute take scores (uint64 per key, optional) for the policies
    that take them: lfu and epoch_lfu add them to an entry's count (none: 1), custom stores them
    (none: the write's recency stamp, so such entries go in write order); the others ignore
    them. items(with_scores=True) returns each entry's score (docs/design/cache.md, "Score
    policies").

    Expiry: set/add/get_or_set take expires_at (uint64 per key, 0: never); an entry whose time
    is <= the cache's clock (set_time) reads as a miss."""

    def __init__(self, capacity: int, value_dtype: Any = "float32", value_width: int = 1, *,
                 eviction: str = "lru", sync: str = "optimistic", layout: str = "value_slab",
                 max_kicks: int = 5000, kick_load_limit: float = 0.95, seed: int = 0, absorb_sets: bool = False,
                 combine_get_or_set: bool = False, key_digests: bool = False, backend: str = "auto",
                 stream: Any = None, host_tiles: int = 0):
        if _arrays.count(capacity, "capacity") == 0:
            raise ValueError("warpkv: argument 'capacity': a cache needs room for at least one entry")
        cfg = {"eviction": str(eviction), "sync": str(sync), "layout": str(layout), "max_kicks": int(max_kicks),
               "kick_load_limit": float(kick_load_limit), "seed": int(seed), "absorb_sets": bool(absorb_sets),
               "combine_get_or_set": bool(combine_get_or_set), "key_digests": bool(key_digests)}
        s = _arrays.stream_handle(stream)
        self._core = _ext.Cache(int(capacity), _arrays.dtype_name(value_dtype), int(value_width), backend, s or 0,
                                int(host_tiles), cfg)
        self._setup_like()
        self._row_shape = () if self._core.value_width == 1 else (self._core.value_width,)

    # -- helpers --
    def _keys(self, keys: Any) -> Any:
        keys = self._arr(keys, "uint64", "keys")
        dt = _arrays.dtype_name(keys.dtype)
        if dt in ("int32", "uint32"):
            keys = _widen(keys)
        return keys

    def _values(self, values: Any) -> Any:
        return self._arr(values, self._core.value_dtype, "values")

    def _rows(self, like: Any, n: int) -> Any:
        return self._empty(like, (n,) + self._row_shape, self._core.value_dtype)

    def _expiry(self, expires_at: Any) -> Any:
        return None if expires_at is None else self._arr(expires_at, "uint64", "expires_at")

    def _batch(self, ops, uniform: CacheOp, keys, values, want_out: bool, expires_at, return_evicted: bool,
               stream, out=None, want_found: bool = False, scores=None):
        """Runs one batch; returns (statuses, values out, Evicted or None, found mask or None)."""
        keys = self._keys(keys)
        n = _arrays.length(keys, "keys")
        values = None if values is None else self._values(values)
        if scores is not None:
            if return_evicted:
                raise ValueError("warpkv: argument 'scores': not with return_evicted=True (the reporting path takes none)")
            scores = self._arr(scores, "uint64", "scores")
        self._remember(keys)
        s = _arrays.stream_handle(stream, keys)
        expires_at = self._expiry(expires_at)
        # results are allocated (and the mask computed) on the stream the call is ordered with
        with _arrays.stream_context(keys, stream):
            st = self._empty(keys, n, "uint8")
            if want_out and out is None:
                out = self._rows(keys, n)
            if not return_evicted:
                self._core.run(ops, int(uniform), keys, values, out if want_out else None, st, expires_at, scores, s)
                return st, out, None, (st == _FOUND if want_found else None)
            idx, ks, vs = self._core.run_reporting(ops, int(uniform), keys, values, out if want_out else None, st,
                                                   expires_at, s)
        ev = Evicted(
            _arrays.from_numpy(np.frombuffer(idx, dtype=np.uint64).astype(np.int64), keys),
            _arrays.from_numpy(np.frombuffer(ks, dtype=np.uint64).copy(), keys),
            _arrays.from_numpy(np.frombuffer(vs, dtype=self._core.value_dtype).reshape((-1,) + self._row_shape).copy(),
                               keys),
        )
        return st, out, ev, (st == _FOUND if want_found else None)

    # -- batches --
    def get(self, keys: Any, *, out: Any = None, return_status: bool = False, stream: Any = None):
        """Looks keys up. Returns (values, found) (values undefined where not found); with
        return_status=True (values, found, statuses). A hit refreshes the entry's recency."""
        st, out, _, found = self._batch(None, CacheOp.GET, keys, None, True, None, False, stream, out, True)
        return (out, found, st) if return_status else (out, found)

    def contains(self, keys: Any, *, stream: Any = None) -> Any:
        """A bool mask: which keys are cached (and unexpired)."""
        return self._batch(None, CacheOp.CONTAINS, keys, None, False, None, False, stream, None, True)[3]

    def set(self, keys: Any, values: Any, *, expires_at: Any = None, return_evicted: bool = False,
            scores: Any = None, stream: Any = None):
        """Inserts or assigns each key (INSERTED, ASSIGNED, INVALID_KEY), evicting when its buckets
        are full. Returns statuses, or (statuses, Evicted) with return_evicted=True (that path
        goes through the host: a copy in and out, and takes no scores)."""
        st, _, ev, _ = self._batch(None, CacheOp.SET, keys, values, False, expires_at, return_evicted, stream,
                                   scores=scores)
        return (st, ev) if return_evicted else st

    def add(self, keys: Any, values: Any, *, expires_at: Any = None, return_evicted: bool = False,
            scores: Any = None, stream: Any = None):
        """Inserts each absent key (INSERTED; FOUND when present: its value is kept). Returns as set()."""
        st, _, ev, _ = self._batch(None, CacheOp.ADD, keys, values, False, expires_at, return_evicted, stream,
                                   scores=scores)
        return (st, ev) if return_evicted else st

    def get_or_set(self, keys: Any, values: Any, *, expires_at: Any = None, return_evicted: bool = False,
                   out: Any = None, scores: Any = None, stream: Any = None):
        """Returns each key's cached value (FOUND) or sets the given one (INSERTED) and returns it:
        (values, statuses), or (values, statuses, Evicted) with return_evicted=True."""
        st, out, ev, _ = self._batch(None, CacheOp.GET_OR_SET, keys, values, True, expires_at, return_evicted, stream,
                                  out, scores=scores)
        return (out, st, ev) if return_evicted else (out, st)

    def erase(self, keys: Any, *, stream: Any = None) -> Any:
        """Removes each key (ERASED, NOT_FOUND, INVALID_KEY)."""
        return self._batch(None, CacheOp.ERASE, keys, None, False, None, False, stream)[0]

    def accum_or_assign(self, keys: Any, deltas: Any, flags: Any = None, *, stream: Any = None) -> Any:
        """HierarchicalKV's accum_or_assign, for caches of float16, float32 or float64 values
        (others raise TypeError naming value_dtype). deltas: rows of the cache's value_dtype, one
        per key. Returns the statuses.

        Without flags: a live entry gets its delta added element-wise (ASSIGNED); an absent key is
        inserted with its delta as its value (INSERTED), evicting as set() does. With flags (a
        bool array, one per key; HKV's accum_or_assigns): true adds the delta to a live entry
        (ASSIGNED) and leaves an absent key absent (NOT_FOUND); false inserts an absent key with
        the row as its value (INSERTED) and leaves a live entry unchanged (FOUND). The all-ones
        key gets INVALID_KEY. Operations run concurrently, each linearizable per key: a key
        repeated in a batch gets every accumulation (one INSERTED, the rest ASSIGNED, without
        flags), and of several inserts of an absent key one is INSERTED, the rest FOUND. float16
        adds through float32 and rounds once per addition. It takes no scores or expiry times: an
        inserted entry never expires, and an insert or accumulation scores as a write given no
        score (lfu: a count of 1, or +1; custom: the operation's recency stamp)."""
        keys = self._keys(keys)
        n = _arrays.length(keys, "keys")
        deltas = self._arr(deltas, self._core.value_dtype, "deltas")
        flags = None if flags is None else self._arr(flags, "bool", "flags")
        self._remember(keys)
        s = _arrays.stream_handle(stream, keys)
        with _arrays.stream_context(keys, stream):
            st = self._empty(keys, n, "uint8")
            self._core.accum(keys, deltas, flags, st, s)
        return st

    def execute(self, ops: Any, keys: Any, values: Any = None, *, expires_at: Any = None,
                return_evicted: bool = False, scores: Any = None, stream: Any = None):
        """A mixed batch: operation i is ops[i] (CacheOp codes, uint8) on keys[i], with values[i]
        for set/add/get_or_set (values may be None when none is among ops). Returns (statuses,
        values) (the gets' and get_or_sets' values), or (statuses, values, Evicted)."""
        keys = self._keys(keys)
        n = _arrays.length(keys, "keys")
        ops = self._arr(ops, "uint8", "ops")
        if values is None:
            with _arrays.stream_context(keys, stream):  # zeroed on the stream the batch waits for
                values = self._zeros(keys, (n,) + self._row_shape, self._core.value_dtype)
        st, out, ev, _ = self._batch(ops, CacheOp.GET, keys, values, True, expires_at, return_evicted, stream,
                                     scores=scores)
        return (st, out, ev) if return_evicted else (st, out)

    # -- whole-table calls (not concurrently with batches; size, capacity, clear: _Placed's) --

    def set_time(self, now: int) -> None:
        """Sets the expiry clock: entries with 0 < expires_at <= now read as misses."""
        self._core.set_time(_arrays.count(now, "now"))

    def time(self) -> int:
        return self._core.time()

    def set_global_epoch(self, epoch: int) -> None:
        """HierarchicalKV's global epoch: epoch_lru and epoch_lfu put its low 32 bits in a score's
        high 32 bits, so an older epoch's entries are evicted first (other policies ignore it).
        A batch takes the epoch set when it starts."""
        self._core.set_global_epoch(_arrays.count(epoch, "epoch"))

    def global_epoch(self) -> int:
        return self._core.global_epoch()

    def items(self, like: Any = None, *, with_scores: bool = False) -> Tuple[Any, ...]:
        """(keys, values, expires_at) of every live entry (a copy through the host), as arrays of
        like's framework and device (default: that of the last batch's keys); with_scores=True:
        (keys, values, expires_at, scores), scores the eviction policy's uint64 words (lru: a
        recency stamp, lfu: the count, epoch_*: epoch << 32 | stamp or count, custom: the
        caller's)."""
        ks, vs, es, ss = self._core.export_entries()
        like = self._items_like(like)
        keys = np.frombuffer(ks, dtype=np.uint64).copy()
        values = np.frombuffer(vs, dtype=self._core.value_dtype).reshape((-1,) + self._row_shape).copy()
        exp = np.frombuffer(es, dtype=np.uint64).copy()
        arrays = (keys, values, exp) + ((np.frombuffer(ss, dtype=np.uint64).copy(),) if with_scores else ())
        return tuple(_arrays.from_numpy(a, like) for a in arrays)

    @property
    def value_width(self) -> int:
        return self._core.value_width

    @property
    def value_bytes(self) -> int:
        return self._core.value_bytes

    def __repr__(self) -> str:
        return (f"KVCache(capacity={self.capacity()}, value_dtype={self.value_dtype}, value_width={self.value_width}, "
                f"device={self.device})")


def _widen(keys: Any) -> Any:
    """32-bit keys as 64-bit ones (int32 sign-extended), in the same framework: a copy."""
    fw = _arrays.framework_of(keys)
    if fw == "torch":
        import torch

        return keys.to(torch.int64)
    return keys.astype("int64" if _arrays.dtype_name(keys.dtype) == "int32" else "uint64")
