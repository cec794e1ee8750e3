#pragma once
// warpkv::stm: software transactional memory for the GPU (and host threads).
//   heap.hpp         heap<T, Mode> (host object) and heap_ref<T, Mode> (device view)
//   transaction.hpp  transaction (per thread), tile_transaction (per tile), atomically
//   status.hpp       mode, tx_status
// Design, guarantees per mode and the progress argument: docs/design/stm.md.
#include "warpkv/stm/heap.hpp"
#include "warpkv/stm/status.hpp"
#include "warpkv/stm/transaction.hpp"
