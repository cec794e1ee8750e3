#pragma once
// Compilation-mode switches shared by every warpkv header.
//
// WARPKV_HD marks functions that run on both backends: the GPU (when the
// translation unit is compiled by nvcc) and host threads that emulate lanes.
// WARPKV_DEVICE_PASS is true only while nvcc compiles device code; it selects
// the CUDA implementation of tiles and atomics inside WARPKV_HD functions.
#if defined(__CUDACC__)
#define WARPKV_HD __host__ __device__
#define WARPKV_HAS_CUDA 1
#else
#define WARPKV_HD
#define WARPKV_HAS_CUDA 0
#endif

#if defined(__CUDA_ARCH__)
#define WARPKV_DEVICE_PASS 1
#else
#define WARPKV_DEVICE_PASS 0
#endif

#if defined(__CUDACC__)
#define WARPKV_FORCEINLINE __forceinline__
#else
#define WARPKV_FORCEINLINE inline __attribute__((always_inline))
#endif

// WARPKV_UNROLL: full unrolling of a loop with a constant trip count in device code (so arrays
// indexed by its counter stay in registers); nothing in host code.
#if WARPKV_DEVICE_PASS
#define WARPKV_UNROLL _Pragma("unroll")
#else
#define WARPKV_UNROLL
#endif
