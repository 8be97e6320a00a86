#pragma once
/// @file
/// h5tile: parallel HDF5 input and output of tiled N-dimensional arrays.

#include <h5tile/array.hpp>
#include <h5tile/communicator.hpp>
#include <h5tile/device.hpp>
#include <h5tile/dtype.hpp>
#include <h5tile/error.hpp>
#include <h5tile/io.hpp>
#include <h5tile/objects.hpp>
#include <h5tile/options.hpp>
#include <h5tile/settings.hpp>
#include <h5tile/version.hpp>
