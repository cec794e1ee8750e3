# CUDA detection of warpkv's builds (the C++ project and the Python extension): reads
# WARPKV_CUDA (AUTO, ON or OFF), enables the CUDA language when asked for and found (sm_90
# unless CMAKE_CUDA_ARCHITECTURES says otherwise), and sets WARPKV_WITH_CUDA. Include it from
# the top-level CMakeLists.txt (enable_language must be called there).
set(WARPKV_WITH_CUDA OFF)
if(NOT WARPKV_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)  # H100/H200; override with -DCMAKE_CUDA_ARCHITECTURES=...
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    # CMake 3.25 knows nvcc's dialect flags only up to C++17: teach it C++20.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
      set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(WARPKV_WITH_CUDA ON)
  elseif(WARPKV_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WARPKV_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
