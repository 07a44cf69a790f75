# CMake package config for torchops, found with
#   find_package(TorchOps REQUIRED)
# after putting torchops.cmake_prefix_path (Python: `import torchops;
# print(torchops.cmake_prefix_path)`) on CMAKE_PREFIX_PATH, beside torch.utils.cmake_prefix_path.
#
# Defines the target TorchOps::torchops: the operator library (torchops/_C*.so, the same
# file Python loads), the include directory of torchops/ops.h, and torch. Linking it
# registers every torchops:: operator in the program, so TorchScript models and AOTInductor
# packages that call them load, even when the program calls no torchops function itself.
# Also sets TorchOps_LIBRARY and TorchOps_INCLUDE_DIRS.
include(CMakeFindDependencyMacro)
find_dependency(Torch)

# This file is <package>/share/cmake/TorchOps/TorchOpsConfig.cmake.
get_filename_component(_torchops_package_dir "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
file(GLOB _torchops_libraries "${_torchops_package_dir}/_C*.so")
if(NOT _torchops_libraries)
  set(TorchOps_FOUND FALSE)
  set(TorchOps_NOT_FOUND_MESSAGE
      "torchops's compiled library _C*.so is missing from ${_torchops_package_dir}; build it with "
      "`pip install --no-build-isolation -e .` in the torchops checkout")
  return()
endif()
list(GET _torchops_libraries 0 TorchOps_LIBRARY)
set(TorchOps_INCLUDE_DIRS "${_torchops_package_dir}/include")

if(NOT TARGET TorchOps::torchops)
  add_library(TorchOps::torchops INTERFACE IMPORTED)
  # --no-as-needed, as PyTorch's own config does for libtorch_cpu: a program that only
  # loads models calls nothing in the library, and a linker that drops unused libraries
  # would leave the operators unregistered ("Unknown builtin op: torchops::bitshift").
  set_target_properties(TorchOps::torchops PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${TorchOps_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "-Wl,--no-as-needed,\"${TorchOps_LIBRARY}\" -Wl,--as-needed;torch")
endif()
unset(_torchops_package_dir)
unset(_torchops_libraries)
