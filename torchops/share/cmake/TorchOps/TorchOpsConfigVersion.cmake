# find_package(TorchOps <version>) support. The version is the package's (setup.py); it
# is read from torchops/_build_info.py, which the build writes beside the library.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/../../../_build_info.py" _torchops_version_line REGEX "^VERSION = ")
string(REGEX REPLACE "^VERSION = \"([^\"]*)\".*" "\\1" PACKAGE_VERSION "${_torchops_version_line}")
unset(_torchops_version_line)
if(NOT PACKAGE_VERSION OR PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
