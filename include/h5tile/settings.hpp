#pragma once
/// @file
/// Process-wide defaults. Each is read once from its environment variable (validated; a bad
/// value throws InvalidArgument naming the variable) and can be changed at run time.
///
/// | setting      | variable          | default                      |
/// |--------------|-------------------|------------------------------|
/// | threads      | H5TILE_THREADS    | hardware threads (at least 1)|
/// | task_size    | H5TILE_TASK_SIZE  | 8 MiB                        |
/// | alignment    | H5TILE_ALIGNMENT  | 4096 bytes                   |

#include <cstddef>

namespace h5tile::settings {

/// Worker threads (and default ranks of to_file). Thread-safe.
[[nodiscard]] unsigned threads();
void set_threads(unsigned n);

/// Bytes moved by one I/O task; larger transfers are split into tasks of this size.
[[nodiscard]] std::size_t task_size();
void set_task_size(std::size_t bytes);

/// File-space alignment of raw data in files h5tile writes (a power of two).
[[nodiscard]] std::size_t alignment();
void set_alignment(std::size_t bytes);

}  // namespace h5tile::settings
