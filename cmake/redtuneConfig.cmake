# redtuneConfig.cmake - find_package(redtune) for an installed libredtune (`ninja install`).
#
#   find_package(redtune 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE redtune::redtune)
#
# redtune::redtune is the shared library (lib/libredtune.so.0) with include/redtune.h. It
# links no CUDA library: libcuda and NVRTC are loaded at run time (docs/api.md). The paths
# are found from this file's place (lib/cmake/redtune/), so an installed tree may be moved.
get_filename_component(_redtune_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET redtune::redtune)
  if(NOT EXISTS "${_redtune_prefix}/lib/libredtune.so.0" OR
     NOT EXISTS "${_redtune_prefix}/include/redtune.h")
    set(redtune_FOUND FALSE)
    set(redtune_NOT_FOUND_MESSAGE
        "${_redtune_prefix}: lib/libredtune.so.0 or include/redtune.h is missing")
    return()
  endif()
  add_library(redtune::redtune SHARED IMPORTED)
  set_target_properties(redtune::redtune PROPERTIES
    IMPORTED_LOCATION "${_redtune_prefix}/lib/libredtune.so.0"
    IMPORTED_SONAME "libredtune.so.0"
    INTERFACE_INCLUDE_DIRECTORIES "${_redtune_prefix}/include")
endif()

set(redtune_INCLUDE_DIRS "${_redtune_prefix}/include")
set(redtune_LIBRARIES redtune::redtune)
unset(_redtune_prefix)
