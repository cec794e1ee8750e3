#pragma once
// Per-key linearizability check of one concurrent batch, for the maps and (with forgetting) the
// cache.
//
// All operations of a batch are concurrent with each other, so the batch is linearizable iff,
// for every key separately, SOME order of that key's operations explains every reported status
// and value, starting from the key's state before the batch and ending in its state after it.
// Trying orders is hopeless for hot keys (a thousand operations on one key), so the check
// reasons about "present phases" instead, with every written value unique in the batch (the
// tests make them so):
//   - a key's history is a sequence of present phases separated by absent gaps. A phase is
//     opened by the initial state (the first phase) or by a successful insert, changed by assigns
//     and closed by an erase, by a forget (a cache's eviction) or by the end of the batch (the
//     last phase, when the key is present afterwards). So phases G = initially present + inserts
//     and G = erases + forgets + finally present;
//   - ops that saw the key absent need a gap (initially absent, or a closed phase), ops that saw
//     it present (or erased or assigned it) need a phase;
//   - a value read must be current in some phase: the initial value or a value written;
//   - a phase's closing value is known for the last phase (the final value) and for reported
//     forgets (the evicted values): each must be the initial value (closing the first phase, with
//     no assign in it; the last phase then is the only one), an insert's value (closing that
//     insert's phase, with no assign in it) or an assign's value (the assign last in its phase).
//     Distinct known closings close distinct phases, and the batch's assigns need a phase that no
//     such closing keeps free of assigns.
// These conditions are necessary, and sufficient: order the phases (the initial one first, the
// final one last), put each designated assign last in a phase of its own and the other assigns
// before it (or into an erase-closed phase), reads right after the write they return, present
// observations inside any phase and absent ones inside a gap. docs/design/hopscotch.md argues the
// map case, docs/design/cache.md the forgetting one.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "warpkv/core/status.hpp"

namespace warpkv::testing {

template <class Key, class Value>
struct key_state {
  bool present = false;
  Value value{};
};

template <class Value>
struct value_hash {
  std::size_t operator()(const Value& v) const {
    std::uint64_t b = 0;
    static_assert(sizeof(Value) <= 8);
    std::memcpy(&b, &v, sizeof(Value));
    return std::hash<std::uint64_t>{}(b);
  }
};
template <class Value>
bool same_bits(const Value& a, const Value& b) {
  return std::memcmp(&a, &b, sizeof(Value)) == 0;
}
template <class Value>
struct value_eq {
  bool operator()(const Value& a, const Value& b) const { return same_bits(a, b); }
};

/// One key's operations in a batch, by the effect their statuses report.
template <class Value>
struct key_history {
  std::vector<Value> inserts;  ///< values of successful inserts (absent -> present)
  std::vector<Value> assigns;  ///< values of successful assigns (present -> present)
  std::vector<Value> reads;    ///< values returned by hits
  std::size_t erases = 0;      ///< successful erases (present -> absent)
  std::size_t saw_present = 0; ///< ops that needed the key present and read no value (contains, insert found)
  std::size_t saw_absent = 0;  ///< ops that saw the key absent (misses, erase not_found)
};

/// How a structure may lose a present key without an operation on it. A map never does
/// (`none()`); a cache evicts: `any()` when evictions are not reported (any number, at any
/// instant, with any value), or `reported()` when every eviction is reported with its value.
template <class Value>
struct forgetting {
  bool unknown = false;       ///< any number of forgets, values unknown
  std::vector<Value> values;  ///< else exactly these forgets, each of the value then current
  static forgetting none() { return {}; }
  static forgetting any() { return {true, {}}; }
  static forgetting reported(std::vector<Value> v) { return {false, std::move(v)}; }
};

/// Returns why `h` (concurrent operations on one key) has no linearization from `before` to
/// `after` (nullopt: it has one), where the key may be forgotten as `forgets` says.
template <class Value>
std::optional<std::string> check_key_history(const key_history<Value>& h, const std::optional<Value>& before,
                                             const std::optional<Value>& after, const forgetting<Value>& forgets) {
  const std::size_t phases = (before ? 1 : 0) + h.inserts.size();
  const std::size_t closed = phases - (after ? 1 : 0);  // phases an erase or a forget must close
  if (after && phases == 0) return "present at the end although it never was during the batch";
  if (h.erases > closed)
    return std::to_string(h.erases) + " erases succeeded but only " + std::to_string(closed) + " present phases can close";
  std::size_t forgotten = closed - h.erases;
  if (!forgets.unknown) {
    if (forgets.values.size() != forgotten)
      return std::to_string(phases) + " present phases, " + std::to_string(h.erases) + " erases and " +
             std::to_string(forgets.values.size()) + " evictions do not lead to " + (after ? "present" : "absent") +
             " at the end";
  }
  if (h.saw_absent > 0 && before && h.erases + forgotten == 0) return "an op saw the key absent but it never was";
  if (phases == 0 && (h.saw_present > 0 || !h.reads.empty() || !h.assigns.empty()))
    return "an op saw the key present but it never was";

  // value -> how it was written: 'i' insert, 'a' assign ('0' is the initial value)
  std::unordered_map<Value, char, value_hash<Value>, value_eq<Value>> origin;
  for (const Value& v : h.inserts) origin[v] = 'i';
  for (const Value& v : h.assigns) origin[v] = 'a';
  auto origin_of = [&](const Value& v) -> char {
    if (before && same_bits(v, *before)) return '0';
    const auto o = origin.find(v);
    return o == origin.end() ? char{0} : o->second;
  };
  for (const Value& v : h.reads)
    if (origin_of(v) == 0) return "a hit returned a value that was never current (stale or never written)";

  // Known closing values: the final value and the reported evictions.
  std::unordered_set<Value, value_hash<Value>, value_eq<Value>> closings;
  std::size_t assign_free = 0;  // phases a closing keeps free of assigns (closed by their opening value)
  auto close_with = [&](const Value& v, const char* what) -> std::optional<std::string> {
    const char o = origin_of(v);
    if (o == 0) return std::string(what) + " was never current";
    if (!closings.insert(v).second) return std::string(what) + " closes a phase that another value already closes";
    if (o != 'a') ++assign_free;
    return std::nullopt;
  };
  if (after) {
    if (auto why = close_with(*after, "the final value")) return why;
    if (origin_of(*after) == '0' && phases > 1) return "the initial value is final although an insert followed it";
  }
  if (!forgets.unknown)
    for (const Value& v : forgets.values)
      if (auto why = close_with(v, "an evicted value")) return why;
  if (!h.assigns.empty() && assign_free >= phases)
    return "an assign succeeded but every present phase ends with the value that opened it";
  return std::nullopt;
}

/// Checks every key that the batch touched or whose state changed: `histories` holds the batch's
/// operations per key, `before`/`after` each key's state around the batch (absent keys missing),
/// `forgets_of(key)` how that key may have been forgotten. Returns the first violation.
template <class Key, class Value, class ForgetsOf>
std::optional<std::string> check_histories(const std::map<Key, key_history<Value>>& histories,
                                           const std::unordered_map<Key, Value>& before,
                                           const std::unordered_map<Key, Value>& after, ForgetsOf&& forgets_of) {
  std::set<Key> keys;
  for (const auto& [k, h] : histories) keys.insert(k);
  for (const auto& [k, v] : before) keys.insert(k);
  for (const auto& [k, v] : after) keys.insert(k);
  static const key_history<Value> untouched;
  for (const Key& k : keys) {
    auto state = [&](const std::unordered_map<Key, Value>& m) {
      const auto it = m.find(k);
      return it == m.end() ? std::optional<Value>() : std::optional<Value>(it->second);
    };
    const auto h = histories.find(k);
    const key_history<Value>& hist = h == histories.end() ? untouched : h->second;
    if (auto why = check_key_history(hist, state(before), state(after), forgets_of(k))) {
      std::ostringstream os;
      os << "key " << +k << ": " << *why << " (" << hist.inserts.size() << " inserts, " << hist.assigns.size()
         << " assigns, " << hist.erases << " erases, " << hist.reads.size() << " hits, "
         << hist.saw_present + hist.saw_absent << " other ops)";
      return os.str();
    }
  }
  return std::nullopt;
}

/// A map batch: returns an explanation of the first violation, or nullopt if it is linearizable.
/// `before`/`after` give each key's state around the batch (absent keys may be missing).
template <class Key, class Value>
std::optional<std::string> check_linearizable(const std::vector<op>& ops, const std::vector<Key>& keys,
                                              const std::vector<Value>& values, const std::vector<status>& st,
                                              const std::vector<Value>& values_out,
                                              const std::unordered_map<Key, Value>& before,
                                              const std::unordered_map<Key, Value>& after) {
  std::map<Key, key_history<Value>> histories;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    key_history<Value>& h = histories[keys[i]];
    const status s = st[i];
    auto bad = [&](const char* what) {
      std::ostringstream os;
      os << "key " << +keys[i] << ": " << what << " returned " << to_string(s);
      return std::optional<std::string>(os.str());
    };
    switch (ops[i]) {
      case op::insert:
        if (s == status::inserted) h.inserts.push_back(values[i]);
        else if (s == status::found) ++h.saw_present;
        else return bad("insert");
        break;
      case op::insert_or_assign:
        if (s == status::inserted) h.inserts.push_back(values[i]);
        else if (s == status::assigned) h.assigns.push_back(values[i]);
        else return bad("insert_or_assign");
        break;
      case op::erase:
        if (s == status::erased) ++h.erases;
        else if (s == status::not_found) ++h.saw_absent;
        else return bad("erase");
        break;
      case op::find:
      case op::contains:
        if (s == status::found && ops[i] == op::find) h.reads.push_back(values_out[i]);
        else if (s == status::found) ++h.saw_present;
        else if (s == status::not_found) ++h.saw_absent;
        else return bad("find");
        break;
    }
  }
  return check_histories(histories, before, after, [](const Key&) { return forgetting<Value>::none(); });
}

/// A map's live entries (retrieve_all) keyed by key; a key stored twice sets `duplicate`.
template <class Map>
std::unordered_map<typename Map::key_type, typename Map::mapped_type> contents_of(const Map& map,
                                                                                   std::optional<std::string>& duplicate) {
  auto [keys, values] = map.retrieve_all();
  std::unordered_map<typename Map::key_type, typename Map::mapped_type> out;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (!out.emplace(keys[i], values[i]).second && !duplicate) duplicate = "a key is stored twice";
  return out;
}

/// Runs one mixed batch through `map.execute` and checks it: per-key linearizability against
/// `state` (the contents before the batch), no key stored twice, `map.validate()` clean. On
/// success `state` becomes the contents after the batch. Returns the first failure, if any;
/// `statuses` (optional) receives the batch's statuses.
template <class Map>
std::optional<std::string> execute_and_check(Map& map, const std::vector<op>& ops,
                                             const std::vector<typename Map::key_type>& keys,
                                             const std::vector<typename Map::mapped_type>& values,
                                             std::unordered_map<typename Map::key_type, typename Map::mapped_type>& state,
                                             std::vector<status>* statuses = nullptr) {
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  std::vector<V> out;
  const auto st = map.execute(ops, keys, values, out);
  std::optional<std::string> problem;
  auto after = contents_of(map, problem);
  if (!problem) problem = check_linearizable<K, V>(ops, keys, values, st, out, state, after);
  if (!problem) {
    if (const std::string v = map.validate(); !v.empty()) problem = "validate(): " + v;
  }
  if (statuses != nullptr) *statuses = st;
  if (!problem) state = std::move(after);
  return problem;
}

}  // namespace warpkv::testing
