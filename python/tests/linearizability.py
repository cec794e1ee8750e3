"""Per-key linearizability check of one concurrent batch: a port of the C++ checker's rules
(tests/common/linearizability.hpp; its header comment argues them, docs/design/hopscotch.md and
docs/design/cache.md prove them). Every written value must be unique in the batch.

A key's history is present phases separated by absent gaps. Phases opened = initially present +
successful inserts; closed = erases + forgets + (present at the end ? 0 : 1 for the last). Ops
that saw the key absent need a gap, those that saw it present need a phase; a value read must be
the initial value or one written; known closing values (the final value, reported evictions)
each close a distinct phase, and assigns need a phase that no such closing keeps assign-free.
Values are compared as bits (Python ints)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import numpy as np

INSERTED, ASSIGNED, FOUND, NOT_FOUND, ERASED, FULL, INVALID_KEY = range(7)
STATUS_NAMES = ["inserted", "assigned", "found", "not_found", "erased", "full", "invalid_key"]


@dataclass
class KeyHistory:
    inserts: List[int] = field(default_factory=list)  # values of successful inserts
    assigns: List[int] = field(default_factory=list)  # values of successful assigns
    reads: List[int] = field(default_factory=list)  # values returned by hits
    erases: int = 0
    saw_present: int = 0  # ops that needed the key present and read no value
    saw_absent: int = 0  # ops that saw the key absent


@dataclass
class Forgetting:
    """How a key may be lost without an operation on it: never (a map), `unknown` (any number of
    forgets, values unknown), or exactly `values` (reported evictions)."""

    unknown: bool = False
    values: List[int] = field(default_factory=list)


NONE = Forgetting()
ANY = Forgetting(unknown=True)


def check_key_history(h: KeyHistory, before: Optional[int], after: Optional[int], forgets: Forgetting) -> Optional[str]:
    phases = (1 if before is not None else 0) + len(h.inserts)
    if after is not None and phases == 0:
        return "present at the end although it never was during the batch"
    closed = phases - (1 if after is not None else 0)
    if h.erases > closed:
        return f"{h.erases} erases succeeded but only {closed} present phases can close"
    forgotten = closed - h.erases
    if not forgets.unknown and len(forgets.values) != forgotten:
        return (f"{phases} present phases, {h.erases} erases and {len(forgets.values)} evictions do not lead to "
                f"{'present' if after is not None else 'absent'} at the end")
    if h.saw_absent > 0 and before is not None and h.erases + forgotten == 0:
        return "an op saw the key absent but it never was"
    if phases == 0 and (h.saw_present > 0 or h.reads or h.assigns):
        return "an op saw the key present but it never was"

    origin: Dict[int, str] = {}
    for v in h.inserts:
        origin[v] = "i"
    for v in h.assigns:
        origin[v] = "a"

    def origin_of(v: int) -> Optional[str]:
        if before is not None and v == before:
            return "0"
        return origin.get(v)

    for v in h.reads:
        if origin_of(v) is None:
            return "a hit returned a value that was never current (stale or never written)"

    closings = set()
    assign_free = 0

    def close_with(v: int, what: str) -> Optional[str]:
        nonlocal assign_free
        o = origin_of(v)
        if o is None:
            return f"{what} was never current"
        if v in closings:
            return f"{what} closes a phase that another value already closes"
        closings.add(v)
        if o != "a":
            assign_free += 1
        return None

    if after is not None:
        why = close_with(after, "the final value")
        if why:
            return why
        if origin_of(after) == "0" and phases > 1:
            return "the initial value is final although an insert followed it"
    if not forgets.unknown:
        for v in forgets.values:
            why = close_with(v, "an evicted value")
            if why:
                return why
    if h.assigns and assign_free >= phases:
        return "an assign succeeded but every present phase ends with the value that opened it"
    return None


def check_histories(histories: Dict[int, KeyHistory], before: Dict[int, int], after: Dict[int, int],
                    forgets_of: Callable[[int], Forgetting]) -> Optional[str]:
    keys = set(histories) | set(before) | set(after)
    for k in sorted(keys):
        h = histories.get(k, KeyHistory())
        why = check_key_history(h, before.get(k), after.get(k), forgets_of(k))
        if why:
            return (f"key {k}: {why} ({len(h.inserts)} inserts, {len(h.assigns)} assigns, {h.erases} erases, "
                    f"{len(h.reads)} hits, {h.saw_present + h.saw_absent} other ops)")
    return None


def bits(a) -> np.ndarray:
    """A host array's elements as unsigned bits of their width."""
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


# op codes of warpkv.Op and warpkv.CacheOp
M_INSERT, M_INSERT_OR_ASSIGN, M_FIND, M_ERASE, M_CONTAINS = range(5)
C_GET, C_SET, C_ADD, C_ERASE, C_GET_OR_SET, C_CONTAINS = range(6)

# What each (op, status) tells of the key: an insert or assign of the op's value, a read of the
# value returned, an erase, or an observation of the key present or absent; any other status is
# a violation. "insert_own": a cache's get_or_set that inserted must return its own value.
_ADD = {INSERTED: "insert", FOUND: "present"}  # insert if absent (a map's insert, a cache's add)
_UPSERT = {INSERTED: "insert", ASSIGNED: "assign"}  # a map's insert_or_assign, a cache's set
_ERASE = {ERASED: "erase", NOT_FOUND: "absent"}
_READ = {FOUND: "read", NOT_FOUND: "absent"}  # a map's find, a cache's get
_CONTAINS = {FOUND: "present", NOT_FOUND: "absent"}
MAP_EFFECTS = {M_INSERT: _ADD, M_INSERT_OR_ASSIGN: _UPSERT, M_ERASE: _ERASE, M_FIND: _READ, M_CONTAINS: _CONTAINS}
CACHE_EFFECTS = {C_GET: _READ, C_CONTAINS: _CONTAINS, C_SET: _UPSERT, C_ADD: _ADD, C_ERASE: _ERASE,
                 C_GET_OR_SET: {FOUND: "read", INSERTED: "insert_own"}}


def histories_of(ops, keys, values, statuses, values_out, effects):
    """Each key's history in a batch, or a string naming the first impossible (op, status)."""
    vals, outs = bits(values).tolist(), bits(values_out).tolist()
    histories: Dict[int, KeyHistory] = {}
    for i, (o, k, s) in enumerate(zip(np.asarray(ops).tolist(), np.asarray(keys).tolist(),
                                      np.asarray(statuses).tolist())):
        h = histories.setdefault(k, KeyHistory())
        effect = effects.get(o, {}).get(s)
        if effect == "insert_own" and outs[i] != vals[i]:
            effect = None
        if effect is None:
            return f"op {i} ({o}) on key {k}: status {STATUS_NAMES[s] if s < 7 else s}, returned {outs[i]}"
        if effect in ("insert", "insert_own"):
            h.inserts.append(vals[i])
        elif effect == "assign":
            h.assigns.append(vals[i])
        elif effect == "read":
            h.reads.append(outs[i])
        elif effect == "erase":
            h.erases += 1
        elif effect == "present":
            h.saw_present += 1
        else:
            h.saw_absent += 1
    return histories


def check_map_batch(ops, keys, values, statuses, values_out, before: Dict[int, int], after: Dict[int, int]):
    """A map batch (host arrays; values as written). Returns the first violation or None."""
    histories = histories_of(ops, keys, values, statuses, values_out, MAP_EFFECTS)
    if isinstance(histories, str):
        return histories
    return check_histories(histories, before, after, lambda k: NONE)


def check_cache_batch(ops, keys, values, statuses, values_out, evicted_keys, evicted_values, reported: bool,
                      before: Dict[int, int], after: Dict[int, int]):
    """A cache batch with one-element values (versions, unique per op). `evicted_*`: every
    eviction of the batch when `reported`; else the cache may have forgotten anything."""
    histories = histories_of(ops, keys, values, statuses, values_out, CACHE_EFFECTS)
    if isinstance(histories, str):
        return histories
    evictions: Dict[int, List[int]] = {}
    for k, v in zip(np.asarray(evicted_keys).tolist(), bits(evicted_values).reshape(-1).tolist()):
        evictions.setdefault(k, []).append(v)
    return check_histories(histories, before, after,
                           lambda k: Forgetting(False, evictions.get(k, [])) if reported else ANY)
