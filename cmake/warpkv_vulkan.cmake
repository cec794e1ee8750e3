# The Vulkan backend (warpkv::vulkan, issue 12): GLSL compute shaders in shaders/ compiled to
# SPIR-V by glslc at build time and embedded as uint32 arrays (include/warpkv/vulkan/detail/
# spirv.hpp includes the generated .inc files); the host side is header-only over vulkan-hpp.
# A separate INTERFACE target, so the rest of warpkv builds unchanged without Vulkan.
#
# WARPKV_VULKAN=AUTO (default): on when the Vulkan headers (libvulkan-dev) and glslc are found;
# ON: required; OFF: never. The binaries open libvulkan.so.1 at run time (no link dependency).
set(WARPKV_VULKAN "AUTO" CACHE STRING "Build the Vulkan backend: AUTO (if Vulkan headers and glslc are found), ON or OFF")
set_property(CACHE WARPKV_VULKAN PROPERTY STRINGS AUTO ON OFF)
set(WARPKV_WITH_VULKAN OFF)
if(NOT WARPKV_VULKAN STREQUAL "OFF")
  find_package(Vulkan QUIET COMPONENTS glslc)
  find_program(WARPKV_GLSLC NAMES glslc HINTS ${Vulkan_GLSLC_EXECUTABLE})
  find_path(WARPKV_VULKAN_HPP_DIR vulkan/vulkan_raii.hpp HINTS ${Vulkan_INCLUDE_DIRS})
  if(WARPKV_GLSLC AND WARPKV_VULKAN_HPP_DIR)
    set(WARPKV_WITH_VULKAN ON)
  elseif(WARPKV_VULKAN STREQUAL "ON")
    message(FATAL_ERROR "WARPKV_VULKAN=ON but the Vulkan headers (vulkan/vulkan_raii.hpp: libvulkan-dev) "
                        "or glslc (Debian: glslc) were not found")
  endif()
endif()
message(STATUS "warpkv: Vulkan backend ${WARPKV_WITH_VULKAN}")

if(WARPKV_WITH_VULKAN)
  set(_spirv_dir ${PROJECT_BINARY_DIR}/generated/include/warpkv/vulkan/spirv)
  file(MAKE_DIRECTORY ${_spirv_dir})
  set(_shader_dir ${PROJECT_SOURCE_DIR}/shaders)
  set(_spirv_outputs)
  # linear_map_batch_subgroup: linear_map_batch.comp with subgroup-cooperative probing
  # (linear_map_config::probing = subgroup, shaders/linear_map_subgroup.glsl); _ucf: the same
  # with the SubgroupUniformControlFlowKHR execution mode, for devices that offer it (both
  # variants are built; the relaxed _ucf one is unused as long as llvmpipe lacks the extension).
  foreach(_shader linear_map_batch linear_map_batch_subgroup linear_map_batch_subgroup_ucf linear_map_reinsert
                  linear_map_collect)
    set(_source ${_shader})
    set(_shader_defs)
    if(_shader STREQUAL "linear_map_batch_subgroup")
      set(_source linear_map_batch)
      set(_shader_defs -DSUBGROUP_PROBING)
    elseif(_shader STREQUAL "linear_map_batch_subgroup_ucf")
      set(_source linear_map_batch)
      set(_shader_defs -DSUBGROUP_PROBING -DSUBGROUP_UNIFORM_CONTROL_FLOW)
    endif()
    foreach(_bits 32 64)
      foreach(_variant ordered relaxed)
        set(_name ${_shader}_k${_bits})
        set(_defs -DKEY_BITS=${_bits} ${_shader_defs})
        if(_variant STREQUAL "relaxed")
          string(APPEND _name _relaxed)
          list(APPEND _defs -DRELAXED_ONLY)
        endif()
        set(_out ${_spirv_dir}/${_name}.inc)
        # -mfmt=num writes the SPIR-V words as comma-separated numbers, ready to #include into an array.
        add_custom_command(
          OUTPUT ${_out}
          COMMAND ${WARPKV_GLSLC} --target-env=vulkan1.2 -O -Werror ${_defs} -mfmt=num
                  -MD -MF ${_out}.d -o ${_out} ${_shader_dir}/${_source}.comp
          DEPENDS ${_shader_dir}/${_source}.comp ${_shader_dir}/linear_map_common.glsl
                  ${_shader_dir}/linear_map_subgroup.glsl
          DEPFILE ${_out}.d
          COMMENT "glslc ${_source}.comp (${_name})"
          VERBATIM)
        list(APPEND _spirv_outputs ${_out})
      endforeach()
    endforeach()
  endforeach()
  # In ALL, so a full build has them; `cmake --install` after a build of some targets only
  # (scripts/demo builds warpkv-bench) compiles the missing ones first (glslc takes a second).
  add_custom_target(warpkv_vulkan_shaders ALL DEPENDS ${_spirv_outputs})

  add_library(warpkv_vulkan INTERFACE)
  add_library(warpkv::vulkan ALIAS warpkv_vulkan)
  set_target_properties(warpkv_vulkan PROPERTIES EXPORT_NAME vulkan)  # warpkv::vulkan when installed too
  add_dependencies(warpkv_vulkan warpkv_vulkan_shaders)
  target_link_libraries(warpkv_vulkan INTERFACE warpkv::warpkv ${CMAKE_DL_LIBS})
  target_include_directories(warpkv_vulkan INTERFACE $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/generated/include>
                                                     $<BUILD_INTERFACE:${WARPKV_VULKAN_HPP_DIR}>
                                                     $<INSTALL_INTERFACE:include>)
  install(TARGETS warpkv_vulkan EXPORT warpkvTargets)
  list(GET _spirv_outputs 0 _spirv_first)
  install(CODE "
    if(NOT EXISTS \"${_spirv_first}\")
      message(STATUS \"warpkv: building the Vulkan SPIR-V (warpkv_vulkan_shaders) before installing it\")
      execute_process(COMMAND \"${CMAKE_COMMAND}\" --build \"${PROJECT_BINARY_DIR}\" --target warpkv_vulkan_shaders
                      RESULT_VARIABLE _rc)
      if(_rc)
        message(FATAL_ERROR \"warpkv: building warpkv_vulkan_shaders failed; configure with -DWARPKV_VULKAN=OFF to install without the Vulkan backend\")
      endif()
    endif()")
  install(FILES ${_spirv_outputs} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/warpkv/vulkan/spirv)
endif()
