#pragma once
// The checks a file of tile data makes of the array and of every part a rank passes, the same
// for raw files and HDF5 datasets (tile_io.cpp, tile_hdf5.cpp). Internal to src/tiles/.

#include <string>

#include "hit/detail/region.hpp"
#include "hit/shape.hpp"

namespace hit::detail {

// Error(shape) "cannot <action>: ..." for a null global shape.
void check_global(const Shape& global, const std::string& action);
// Error(shape) for a part of another rank than the array's, or not inside it; a null part passes.
void check_part(const Shape& global, const Region& part, const std::string& action);

}  // namespace hit::detail
