# How h5tile's targets link HDF5 (after find_package(HDF5)).
#
# The library, the command and the tests link hdf5::hdf5 as found. The Python extension is loaded
# into processes that may already hold another HDF5 in the global symbol scope: cuPyNumeric loads
# its library with RTLD_GLOBAL, which puts there the HDF5 that Legate's wheel carries, and every
# HDF5 symbol of a shared libhdf5 loaded later (the extension's calls and the library's calls to
# itself) then binds to that one, which aborts the process ("Headers are 1.10.8, library is
# 1.14.6"). So a target whose property H5TILE_STATIC_HDF5 is on links HDF5's static library with
# its symbols hidden (--exclude-libs): its HDF5 calls are bound when it is linked, to its own copy,
# and it neither sees nor shows HDF5 symbols at run time.
#
# Defines:
#   h5tile_hdf5          INTERFACE target that libh5tile links: hdf5::hdf5, or for a consuming
#                        target with H5TILE_STATIC_HDF5 on, h5tile_hdf5_static
#   h5tile_hdf5_static   the static library and what it links (only where one is usable)
#   H5TILE_STATIC_HDF5_FOUND  whether h5tile_hdf5_static exists; h5tile_static_hdf5_why: else why not
# Cache: H5TILE_STATIC_HDF5 (AUTO, ON or OFF): whether the Python extension links it.

set(H5TILE_STATIC_HDF5 AUTO CACHE STRING
    "Link HDF5's static library into the Python extension with its symbols hidden: AUTO (where a static libhdf5 that can go into a shared object is found), ON, OFF")
set_property(CACHE H5TILE_STATIC_HDF5 PROPERTY STRINGS AUTO ON OFF)

# The static library (a path or a target), its link dependencies and sources to compile with it:
# hdf5-config.cmake's static target (HDF5 built with CMake), or the libhdf5.a beside the shared
# library that FindHDF5 found through h5cc (Debian: .../hdf5/serial/libhdf5.a) with the libraries
# h5cc names. The latter is copied with its references to stdout and stderr renamed
# (src/hdf5/static_stdio.c says why).
function(h5tile_find_static_hdf5 out_library out_links out_sources)
  set(${out_library} "" PARENT_SCOPE)
  set(${out_links} "" PARENT_SCOPE)
  set(${out_sources} "" PARENT_SCOPE)
  foreach(candidate hdf5::hdf5-static hdf5-static)
    if(TARGET ${candidate})
      set(${out_library} ${candidate} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  if(NOT TARGET hdf5::hdf5 OR NOT CMAKE_OBJCOPY)
    return()
  endif()
  get_target_property(location hdf5::hdf5 IMPORTED_LOCATION)
  if(NOT location)
    get_target_property(location hdf5::hdf5 IMPORTED_LOCATION_RELEASE)
  endif()
  if(NOT location OR NOT location MATCHES "\\.so(\\.[0-9]+)*$")
    return()
  endif()
  string(REGEX REPLACE "\\.so(\\.[0-9]+)*$" ".a" archive "${location}")
  if(NOT EXISTS "${archive}")
    return()
  endif()
  set(copy ${CMAKE_BINARY_DIR}/hdf5_static/libhdf5.a)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/hdf5_static)
  execute_process(COMMAND ${CMAKE_OBJCOPY} --redefine-sym stdout=h5tile_hdf5_stdout
                          --redefine-sym stderr=h5tile_hdf5_stderr ${archive} ${copy}.new
                  RESULT_VARIABLE failed OUTPUT_QUIET ERROR_QUIET)
  if(failed)
    return()
  endif()
  file(COPY_FILE ${copy}.new ${copy} ONLY_IF_DIFFERENT)  # relinked only when HDF5 changed
  file(REMOVE ${copy}.new)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${archive})  # copied again when it changes
  set(links ${HDF5_C_LIBRARIES})
  list(REMOVE_ITEM links "${location}")
  set(${out_library} "${copy}" PARENT_SCOPE)
  set(${out_links} "${links}" PARENT_SCOPE)
  set(${out_sources} ${PROJECT_SOURCE_DIR}/src/hdf5/static_stdio.c PARENT_SCOPE)
endfunction()

# Whether a shared object can hold the static library with its symbols hidden (one compiled
# without -fPIC may not): a small shared library that calls HDF5, built at configure time.
function(h5tile_check_static_hdf5 out_ok library links sources)
  set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/h5tile_static_hdf5_check)
  file(WRITE ${dir}/src/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.24)
project(h5tile_static_hdf5_check C)
find_package(HDF5 COMPONENTS C REQUIRED)
foreach(candidate hdf5::hdf5-static hdf5-static)
  if(TARGET ${candidate} AND NOT H5TILE_HDF5_ARCHIVE)
    set(H5TILE_HDF5_ARCHIVE ${candidate})
  endif()
endforeach()
string(REPLACE "|" ";" links "${H5TILE_HDF5_LINKS}")
string(REPLACE "|" ";" sources "${H5TILE_HDF5_SOURCES}")
add_library(check SHARED check.c ${sources})
target_include_directories(check PRIVATE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
target_link_libraries(check PRIVATE ${H5TILE_HDF5_ARCHIVE} ${links})
target_link_options(check PRIVATE LINKER:--exclude-libs,ALL LINKER:--no-undefined)
]=])
  file(WRITE ${dir}/src/check.c [=[
#include <hdf5.h>
int h5tile_check(void) {
  unsigned major, minor, release;
  return H5get_libversion(&major, &minor, &release) < 0 ? -1 : (int)H5F_ACC_RDONLY;
}
]=])
  set(archive "${library}")
  if(TARGET "${library}")
    set(archive "")
  endif()
  # One value each (CMAKE_FLAGS splits lists): lists are joined with '|'.
  string(REPLACE ";" "|" links "${links}")
  string(REPLACE ";" "|" sources "${sources}")
  try_compile(ok ${dir}/build ${dir}/src h5tile_static_hdf5_check
              CMAKE_FLAGS "-DH5TILE_HDF5_ARCHIVE=${archive}" "-DH5TILE_HDF5_LINKS=${links}"
                          "-DH5TILE_HDF5_SOURCES=${sources}" "-DHDF5_ROOT=${HDF5_ROOT}" "-DHDF5_DIR=${HDF5_DIR}"
                          "-DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}"
              OUTPUT_VARIABLE output)
  file(WRITE ${dir}/output.log "${output}")
  set(${out_ok} ${ok} PARENT_SCOPE)
endfunction()

set(H5TILE_STATIC_HDF5_FOUND OFF)
set(h5tile_static_hdf5_why "H5TILE_STATIC_HDF5=OFF")
if(NOT H5TILE_STATIC_HDF5 STREQUAL "OFF")
  h5tile_find_static_hdf5(h5tile_static_hdf5_library h5tile_static_hdf5_links h5tile_static_hdf5_sources)
  if(h5tile_static_hdf5_library)
    # Checked once for each library and its links (the check takes seconds).
    set(h5tile_static_hdf5_key "${h5tile_static_hdf5_library}|${h5tile_static_hdf5_links}|${CMAKE_C_COMPILER}")
    if(NOT "${h5tile_static_hdf5_key}" STREQUAL "${H5TILE_STATIC_HDF5_CHECKED}")
      h5tile_check_static_hdf5(h5tile_static_hdf5_ok "${h5tile_static_hdf5_library}" "${h5tile_static_hdf5_links}"
                               "${h5tile_static_hdf5_sources}")
      set(H5TILE_STATIC_HDF5_OK ${h5tile_static_hdf5_ok} CACHE INTERNAL "")
      set(H5TILE_STATIC_HDF5_CHECKED "${h5tile_static_hdf5_key}" CACHE INTERNAL "")
    endif()
    set(h5tile_static_hdf5_ok ${H5TILE_STATIC_HDF5_OK})
    if(h5tile_static_hdf5_ok)
      set(H5TILE_STATIC_HDF5_FOUND ON)
    else()
      set(h5tile_static_hdf5_why "${h5tile_static_hdf5_library} cannot be linked into a shared object: see ${CMAKE_BINARY_DIR}/CMakeFiles/h5tile_static_hdf5_check/output.log")
    endif()
  else()
    set(h5tile_static_hdf5_why "no static libhdf5 was found beside the HDF5 found")
  endif()
  if(NOT H5TILE_STATIC_HDF5_FOUND AND H5TILE_STATIC_HDF5 STREQUAL "ON")
    message(FATAL_ERROR "H5TILE_STATIC_HDF5=ON, but ${h5tile_static_hdf5_why}")
  endif()
endif()

if(H5TILE_STATIC_HDF5_FOUND)
  add_library(h5tile_hdf5_static INTERFACE)
  if(TARGET "${h5tile_static_hdf5_library}")
    target_link_libraries(h5tile_hdf5_static INTERFACE ${h5tile_static_hdf5_library})
  else()
    get_target_property(h5tile_hdf5_includes hdf5::hdf5 INTERFACE_INCLUDE_DIRECTORIES)
    target_include_directories(h5tile_hdf5_static INTERFACE ${h5tile_hdf5_includes})
    target_link_libraries(h5tile_hdf5_static INTERFACE ${h5tile_static_hdf5_library} ${h5tile_static_hdf5_links})
    target_sources(h5tile_hdf5_static INTERFACE ${h5tile_static_hdf5_sources})
  endif()
  target_link_options(h5tile_hdf5_static INTERFACE LINKER:--exclude-libs,ALL)
  set(h5tile_hdf5_choice "$<IF:$<BOOL:$<TARGET_PROPERTY:H5TILE_STATIC_HDF5>>,h5tile_hdf5_static,hdf5::hdf5>")
else()
  set(h5tile_hdf5_choice hdf5::hdf5)
endif()
add_library(h5tile_hdf5 INTERFACE)
target_link_libraries(h5tile_hdf5 INTERFACE ${h5tile_hdf5_choice})
