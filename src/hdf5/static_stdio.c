/* The C library's stdout and stderr for a static HDF5 inside a shared object (cmake/h5tile_hdf5.cmake).
 *
 * Debian's libhdf5.a is compiled as position-independent *executable* code, which reads `stdout`
 * and `stderr` at a fixed distance from itself, as if the C library's variables had been copied
 * into the program; a shared object cannot be linked that way. The build renames those two
 * references in its copy of the archive to the variables below (objcopy --redefine-sym), which
 * live beside HDF5 and hold the C library's streams, set when the module is loaded (before any
 * HDF5 call: HDF5 starts on its first API call). HDF5 writes to them only to print its error stack,
 * which h5tile turns off, and debugging output. */
#include <stdio.h>

__attribute__((visibility("hidden"))) FILE* h5tile_hdf5_stdout;
__attribute__((visibility("hidden"))) FILE* h5tile_hdf5_stderr;

__attribute__((constructor)) static void h5tile_hdf5_stdio_init(void) {
  h5tile_hdf5_stdout = stdout;
  h5tile_hdf5_stderr = stderr;
}
