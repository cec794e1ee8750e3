# The README's "use from another CMake project" path, as a newcomer takes it (issue 22, item 5):
#  1. configure a fresh build of warpkv and `cmake --install` it with nothing built (scripts/demo
#     builds one target only: install must not need any other build output, such as the Vulkan
#     backend's SPIR-V);
#  2. configure examples/ against that prefix with the C++ compiler only, build, run every example
#     (host backend), and check the version the package and the header report;
#  3. when nvcc is found (NVCC): configure examples/ again with CUDA and compile device_ref.cu with
#     nvcc (not run: no GPU needed); nvcc gets -std=c++20 from warpkv::warpkv alone.
# Arguments: SOURCE, BUILD (scratch root), GENERATOR, VERSION, VULKAN (WARPKV_VULKAN), NVCC.
set(fresh ${BUILD}/consumer-warpkv)
set(prefix ${BUILD}/consumer-prefix)
set(cbuild ${BUILD}/consumer-build)
set(cubuild ${BUILD}/consumer-build-cuda)
file(REMOVE_RECURSE ${fresh} ${prefix} ${cbuild} ${cubuild})

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc)
    string(LENGTH "${out}" n)
    if(n GREATER 4000)  # the end of the output says what failed
      math(EXPR from "${n} - 4000")
      string(SUBSTRING "${out}" ${from} -1 out)
    endif()
    message(FATAL_ERROR "consumer: ${what} failed (${rc}):\n...${out}")
  endif()
  message(STATUS "consumer: ${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step("configure a fresh warpkv" ${CMAKE_COMMAND} -S ${SOURCE} -B ${fresh} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
     -DWARPKV_CUDA=OFF -DWARPKV_BUILD_TESTS=OFF -DWARPKV_BUILD_TOOLS=OFF -DWARPKV_VULKAN=${VULKAN}
     -DCMAKE_INSTALL_MESSAGE=NEVER)
step("install it unbuilt" ${CMAKE_COMMAND} --install ${fresh} --prefix ${prefix})
foreach(f include/warpkv/version.hpp include/warpkv/hopscotch/hopscotch_map.hpp share/doc/warpkv/LICENSE)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "consumer: ${f} was not installed")
  endif()
endforeach()
file(STRINGS ${prefix}/include/warpkv/version.hpp version_line REGEX "#define WARPKV_VERSION_STRING")
if(NOT version_line MATCHES "\"${VERSION}\"")
  message(FATAL_ERROR "consumer: version.hpp says '${version_line}', the project is ${VERSION}")
endif()

step("configure examples (C++ compiler)" ${CMAKE_COMMAND} -S ${SOURCE}/examples -B ${cbuild} -G ${GENERATOR}
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DWARPKV_EXAMPLES_CUDA=OFF)
if(NOT step_output MATCHES "warpkv ${VERSION} found")
  message(FATAL_ERROR "consumer: find_package(warpkv) did not report version ${VERSION}:\n${step_output}")
endif()
step("build examples" ${CMAKE_COMMAND} --build ${cbuild})
foreach(example bulk_host mixed_execute kv_cache)
  step("run ${example}" ${cbuild}/${example})
  message(STATUS "${step_output}")
endforeach()

if(NVCC)
  step("configure examples (nvcc)" ${CMAKE_COMMAND} -S ${SOURCE}/examples -B ${cubuild} -G ${GENERATOR}
       -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DWARPKV_EXAMPLES_CUDA=ON
       -DCMAKE_CUDA_COMPILER=${NVCC} -DCMAKE_CUDA_ARCHITECTURES=90)
  step("compile device_ref.cu with nvcc" ${CMAKE_COMMAND} --build ${cubuild} --target device_ref)
else()
  message(STATUS "consumer: no nvcc: the nvcc consumer (device_ref.cu) was not compiled")
endif()
