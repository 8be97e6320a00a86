# The libraries of hdf5plugin's compressors that h5tile encodes and decodes itself (zstd, lz4,
# Blosc) and of h5py's LZF, each optional: h5tile_find_codec(NAME HEADER LIBRARY) defines the imported target
# h5tile_codec::NAME and sets H5TILE_CODEC_<NAME> where both are found. Included by
# CMakeLists.txt and, for users of a static libh5tile, by h5tileConfig.cmake (installed beside it).
function(h5tile_find_codec name header library)
  string(TOUPPER ${name} upper)
  find_path(H5TILE_${upper}_INCLUDE_DIR ${header} PATH_SUFFIXES lib${name})  # Debian: liblzf/lzf.h
  find_library(H5TILE_${upper}_LIBRARY ${library})
  mark_as_advanced(H5TILE_${upper}_INCLUDE_DIR H5TILE_${upper}_LIBRARY)
  if(H5TILE_${upper}_INCLUDE_DIR AND H5TILE_${upper}_LIBRARY)
    if(NOT TARGET h5tile_codec::${name})
      add_library(h5tile_codec::${name} UNKNOWN IMPORTED)
      set_target_properties(h5tile_codec::${name} PROPERTIES IMPORTED_LOCATION "${H5TILE_${upper}_LIBRARY}"
                                                             INTERFACE_INCLUDE_DIRECTORIES "${H5TILE_${upper}_INCLUDE_DIR}")
    endif()
    set(H5TILE_CODEC_${upper} ON PARENT_SCOPE)
  else()
    set(H5TILE_CODEC_${upper} OFF PARENT_SCOPE)
  endif()
endfunction()
