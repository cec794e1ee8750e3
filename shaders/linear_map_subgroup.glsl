// Subgroup-cooperative probing (linear_map_config::probing = subgroup): the invocations of a
// subgroup serve their operations in turn, GLHT-style. Each round, the lowest lane with work left
// (the leader) hands its op, key and value to the whole subgroup; the subgroup walks that key's
// probe sequence a window at a time, one slot per lane, and finds the first stop (k or empty) by
// ballot; the lane that read the stop alone acts on it (ready-bit read, CAS, stores) and passes
// its result back by shuffle. The probe sequence, the probe bound, the statuses and every access
// to a slot are those of the per-invocation operations in linear_map_common.glsl; the argument
// is in docs/design/vulkan.md ("Subgroup-cooperative probing").
//
// Needs GL_KHR_shader_subgroup_basic, _ballot and _shuffle in compute (the host checks
// VkPhysicalDeviceSubgroupProperties before it picks this variant). The shuffles take a lane
// chosen by ballot (dynamically uniform): OpGroupNonUniformShuffle accepts that without
// subgroupBroadcastDynamicId. No lane ever waits for another lane: the only waits are the
// subgroup's collectives, and a pending claim of the key is re-read at most pc.pending_waits
// times before the operation hands back ST_RETRY, as in op_insert.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require

#if KEY_BITS == 64
KEY shuffle_key(KEY k, uint lane) {  // two 32-bit shuffles: no shaderSubgroupExtendedTypes needed
  const uvec2 w = unpackUint2x32(k);
  return packUint2x32(uvec2(subgroupShuffle(w.x, lane), subgroupShuffle(w.y, lane)));
}
#else
KEY shuffle_key(KEY k, uint lane) { return subgroupShuffle(k, lane); }
#endif

#ifndef RELAXED_ONLY
// Before a claim: every lane's window read happens-before the claiming lane's CAS (subgroup-scope
// release by each reader, acquire by the claimer), so an operation that synchronizes with the
// claim's publication sees every slot this window read as filled: P under happens-before
// across lanes, as the CUDA tile's fence + sync() (docs/design/open_addressing.md).
#define SYNC_BEFORE_CLAIM() \
  controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease)
#else
// llvmpipe runs a subgroup as one SIMD thread: the lanes' reads precede the claim in that
// thread's program order and every atomic is a sequentially consistent x86 instruction; its
// barriers are what this variant avoids (see linear_map_common.glsl).
#define SYNC_BEFORE_CLAIM()
#endif

// Reads this lane's slot of the window at probe position p of k's sequence: the lanes taking part
// are the active lanes of the subgroup (all of them in practice: the workgroup is a multiple of
// the subgroup size and no invocation leaves early), the lane of rank r among them reads slot
// home + p + r, so the window has no gap even if some lanes were inactive (a skipped slot would
// break the prefix invariant P); lanes past the probe bound read nothing. Returns the ballot of
// the stops (k or empty); `hits` gets the ballot of the lanes that read k, `slot` this lane's
// slot, `width` the window's size (the active lanes).
uvec4 read_window(KEY k, uint home, uint p, out uvec4 hits, out uint slot, out uint width) {
  const uvec4 lanes = subgroupBallot(true);
  width = subgroupBallotBitCount(lanes);
  const uint rank = subgroupBallotExclusiveBitCount(lanes);
  slot = (home + p + rank) & pc.capacity_mask;
  KEY cur = ERASED_KEY;  // beyond max_probe: neither k nor empty, i.e. passed
  if (p + rank < pc.max_probe) cur = LOAD_KEY(slots.table[slot].key);
  hits = subgroupBallot(cur == k);
  return subgroupBallot(cur == k || cur == EMPTY_KEY);
}

// The first stop of k's probe sequence (k or empty), shared by find and erase: true when that
// slot held k, with its lane in c (each lane's `slot` is the slot it read); false when the stop
// is empty or max_probe passes first. Every lane returns the same (the result comes from ballots).
bool coop_locate(KEY k, out uint c, out uint slot) {
  const uint home = home_slot(k);
  uint width;
  c = 0u;
  slot = 0u;
  for (uint p = 0u; p < pc.max_probe; p += width) {
    uvec4 hits;
    const uvec4 stops = read_window(k, home, p, hits, slot, width);
    if (stops == uvec4(0u)) continue;  // only other keys and tombstones
    c = subgroupBallotFindLSB(stops);
    return subgroupBallotBitExtract(hits, c);  // false: an empty stop
  }
  return false;
}

// find: the first stop decides; its lane reads the ready bit and the value.
uint coop_find(KEY k, out uint value) {
  value = 0u;
  uint c, slot;
  if (!coop_locate(k, c, slot)) return ST_NOT_FOUND;
  uint st = ST_NOT_FOUND;
  uint v = 0u;
  if (gl_SubgroupInvocationID == c && is_ready(slot)) {  // pending: not found
    v = LOAD_WORD(slots.table[slot].value, ACQUIRE);
    st = ST_FOUND;
  }
  value = subgroupShuffle(v, c);
  return subgroupShuffle(st, c);
}

// erase: the stop's lane tombstones a live k by CAS.
uint coop_erase(KEY k) {
  uint c, slot;
  if (!coop_locate(k, c, slot)) return ST_NOT_FOUND;
  uint st = ST_NOT_FOUND;
  if (gl_SubgroupInvocationID == c && is_ready(slot)) {
    const KEY prev = atomicCompSwap(slots.table[slot].key, k, ERASED_KEY, CAS_ORDER);
    st = prev == k ? ST_ERASED : ST_NOT_FOUND;
  }
  return subgroupShuffle(st, c);
}

// insert / insert_or_assign: an empty stop is claimed by its lane (CAS, value store, ready bit:
// no collective in between); a lost CAS re-reads the window (the slot now holds k or another
// key). k ready: found / assign by the stop's lane. k pending: the window is read again, at most
// pc.pending_waits times, then ST_RETRY (the host re-runs the operation in a later dispatch).
uint coop_insert(KEY k, uint value, bool or_assign) {
  const uint home = home_slot(k);
  uint p = 0u;
  uint waited = 0u;
  while (p < pc.max_probe) {
    uvec4 hits;
    uint slot;
    uint width;
    const uvec4 stops = read_window(k, home, p, hits, slot, width);
    if (stops == uvec4(0u)) {
      p += width;
      continue;
    }
    const uint c = subgroupBallotFindLSB(stops);
    if (!subgroupBallotBitExtract(hits, c)) {
      SYNC_BEFORE_CLAIM();
      uint won = 0u;
      if (gl_SubgroupInvocationID == c) {
        if (atomicCompSwap(slots.table[slot].key, EMPTY_KEY, k, CAS_ORDER) == EMPTY_KEY) {
          STORE_WORD(slots.table[slot].value, value, RELAXED);
          atomicOr(ready.bits[slot >> 5], 1u << (slot & 31u), RELEASE);
          won = 1u;
        }
      }
      if (subgroupShuffle(won, c) != 0u) return ST_INSERTED;
      continue;  // lost the claim: look at the same window again
    }
    uint done = 0u;
    if (gl_SubgroupInvocationID == c && is_ready(slot)) {
      if (or_assign) STORE_WORD(slots.table[slot].value, value, RELEASE);
      done = 1u;
    }
    if (subgroupShuffle(done, c) != 0u) return or_assign ? ST_ASSIGNED : ST_FOUND;
    if (waited++ >= pc.pending_waits) return ST_RETRY;
    // pending: read the window again (the slot holds k, or a tombstone once published and erased)
  }
  return ST_FULL;
}

// One operation of the leader, run by the whole subgroup (subgroup-uniform arguments).
uint coop_execute(uint o, KEY k, uint value, out uint found_value) {
  found_value = 0u;
  if (o == OP_INSERT || o == OP_INSERT_OR_ASSIGN) return coop_insert(k, value, o == OP_INSERT_OR_ASSIGN);
  if (o == OP_FIND || o == OP_CONTAINS) return coop_find(k, found_value);
  return coop_erase(k);  // the caller passes valid op codes only
}
