#pragma once
namespace warpkv {
/// Memory orders understood by warpkv::atomic_ref on both backends.
enum class memory_order { relaxed, acquire, release, acq_rel, seq_cst };
}  // namespace warpkv
