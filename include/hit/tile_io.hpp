#pragma once
// Collective file I/O of distributed tiles (docs/tiles.md, "Tile files"): raw files with MPI-IO,
// and HDF5 datasets with parallel HDF5 (read and write below, "FILE.h5:/dataset").
//
// The file is the whole global array, raw row-major binary of the element type, no header (so
// numpy's np.fromfile(path, dtype).reshape(extents) reads it). Element p (row-major position of
// `global`) is at byte p * sizeof(T); a strided global shape is stored compactly by position.
//
// Every rank passes the tiles it holds; each tile's shape must lie inside `global` (strided
// blocks of cyclic layouts are fine, views and tiles with padding or ghosts too: only shape() is
// written or read). Null and empty tiles are skipped, so an inactive rank passes none. Parts of
// different ranks should not overlap when writing (which rank's value wins is unspecified).
//
// The file view is built from MPI derived datatypes (nested hvectors per block, one struct per
// collective call) and moved with MPI_File_write_all / read_all; a rank whose blocks interleave in
// the file (several strided blocks) needs more than one collective call, agreed by all ranks.
//
// write_raw writes to `<path>.tmp-<host>.<pid>.<random>` in the same folder and renames it to
// `path` once every rank succeeded, so a failed write never leaves a partial file under the final
// name (an existing file there is untouched) and the temporary is removed; temporaries of `path`
// left by killed runs on this host are removed after a successful write. Every failure is agreed:
// all ranks throw the same hit::Error (io for files, shape for parts outside `global`).

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hit/core/mpi_type.hpp"
#include "hit/detail/region.hpp"
#include "hit/shape.hpp"
#include "hit/tile.hpp"

namespace hit {

namespace detail {

// An element type as the files see it: MPI's, its bytes, and its kind ('f' floating point, 'i'
// signed, 'u' unsigned integer) for an HDF5 dataset's type.
struct RawElement {
  MPI_Datatype type;
  std::size_t size;
  char kind = 'f';
};

void write_raw_blocks(const std::string& path, const Shape& global,
                      const std::vector<Region>& blocks, RawElement element, MPI_Comm comm);
void read_raw_blocks(const std::string& path, const Shape& global,
                     const std::vector<Region>& blocks, RawElement element, MPI_Comm comm);

// An HDF5 dataset named as "FILE.h5:/path/to/dataset" (or FILE.hdf5): the file and the dataset's
// absolute path. Nothing for any other name (a raw file). Error(invalid_argument) for a name of
// an .h5 or .hdf5 file without a dataset, or a dataset path that is not absolute.
struct Hdf5Dataset {
  std::string file;
  std::string dataset;
};
std::optional<Hdf5Dataset> hdf5_dataset(const std::string& path);
// Collective parallel HDF5 I/O of blocks (docs/tiles.md, "HDF5 datasets"); as the raw ones, every
// failure agreed, writes to a temporary file renamed on success.
void write_hdf5_blocks(const std::string& path, const Shape& global,
                       const std::vector<Region>& blocks, RawElement element, MPI_Comm comm);
void read_hdf5_blocks(const std::string& path, const Shape& global,
                      const std::vector<Region>& blocks, RawElement element, MPI_Comm comm);
// The HDF5 ones for a dataset's name, else the raw ones.
void write_blocks(const std::string& path, const Shape& global, const std::vector<Region>& blocks,
                  RawElement element, MPI_Comm comm);
void read_blocks(const std::string& path, const Shape& global, const std::vector<Region>& blocks,
                 RawElement element, MPI_Comm comm);

// One tile's elements (its shape(), no ghost cells), without their type; the null region for
// the null tile.
template <class T>
Region raw_block(const Tile<T>& t) {
  return t.is_null() ? Region{} : region_of(t, t.shape());
}

template <class T>
RawElement raw_element() {
  return RawElement{mpi_type<T>(), sizeof(T),
                    std::is_floating_point_v<T> ? 'f'
                    : std::is_signed_v<T>       ? 'i'
                                                : 'u'};
}

template <class T>
std::vector<Region> raw_blocks(const std::vector<Tile<T>>& parts) {
  std::vector<Region> blocks;
  blocks.reserve(parts.size());
  for (const Tile<T>& t : parts) blocks.push_back(raw_block(t));
  return blocks;
}

// What check_finite found on this rank: 4·position + kind (0 NaN, 1 +inf, 2 −inf) of its first
// non-finite element in the file's row-major order, or the largest int64 for none.
constexpr std::int64_t all_finite = std::numeric_limits<std::int64_t>::max();
template <class T>
std::int64_t first_nonfinite(const Tile<T>& t, const Shape& global) {
  std::int64_t first = all_finite;
  if (t.is_null()) return first;
  t.for_each([&](const Index& i, const T& v) {
    if (std::isfinite(static_cast<double>(v))) return;
    std::int64_t position = 0;
    for (int k = 0; k < global.rank(); ++k) {
      position = position * global.extent(k) + global[k].to_tile(i[k]);
    }
    const std::int64_t kind = std::isnan(static_cast<double>(v)) ? 0 : v > 0 ? 1 : 2;
    if (position < all_finite / 4) first = std::min(first, 4 * position + kind);
  });
  return first;
}
// Agrees on the first non-finite element over `comm` and throws it on every rank.
void agree_finite(const std::string& path, std::string_view what, const Shape& global,
                  std::int64_t mine, MPI_Comm comm);

}  // namespace detail

// Collective over `comm`: writes the distributed array `global` from every rank's `parts`.
template <class T>
void write_raw(const std::string& path, const Shape& global, const std::vector<Tile<T>>& parts,
               MPI_Comm comm) {
  detail::write_raw_blocks(path, global, detail::raw_blocks(parts), detail::raw_element<T>(), comm);
}

// Collective over `comm`: fills every rank's `parts` from the file of the array `global`. The file
// must exist and have exactly global.size() * sizeof(T) bytes. Ghost cells and padding of the
// parts are left as they were.
template <class T>
void read_raw(const std::string& path, const Shape& global, std::vector<Tile<T>>& parts,
              MPI_Comm comm) {
  detail::read_raw_blocks(path, global, detail::raw_blocks(parts), detail::raw_element<T>(), comm);
}

// As write_raw and read_raw, for either kind of array file: `FILE.h5:/path/to/dataset` (also
// `.hdf5`) is a dataset of an HDF5 file, read and written collectively with parallel HDF5; any
// other name a raw file. A dataset read must have the element type (class and size) and the
// extents of `global`, or every rank throws Error(io) naming the file, the dataset, what it holds
// and what was expected. A dataset written replaces one of that name (groups on its path are
// created); the other objects of an existing file are kept. The file is written under a temporary
// name and renamed on success, as a raw file is.
template <class T>
void write(const std::string& path, const Shape& global, const std::vector<Tile<T>>& parts,
           MPI_Comm comm) {
  detail::write_blocks(path, global, detail::raw_blocks(parts), detail::raw_element<T>(), comm);
}

template <class T>
void read(const std::string& path, const Shape& global, std::vector<Tile<T>>& parts,
          MPI_Comm comm) {
  detail::read_blocks(path, global, detail::raw_blocks(parts), detail::raw_element<T>(), comm);
}

template <class T>
void write(const std::string& path, const Shape& global, const Tile<T>& part, MPI_Comm comm) {
  detail::write_blocks(path, global, {detail::raw_block(part)}, detail::raw_element<T>(), comm);
}

template <class T>
void read(const std::string& path, const Shape& global, Tile<T>& part, MPI_Comm comm) {
  detail::read_blocks(path, global, {detail::raw_block(part)}, detail::raw_element<T>(), comm);
}

// Collective over `comm`: every rank's `parts` of the array `global` read from `path` hold finite
// numbers only, or every rank throws the same Error(invalid_argument) naming the file (as `what`
// says it, e.g. "A (--a)"), the first non-finite element in the file's row-major order, its index
// and what it is ("element [3, 5] (position 29) is NaN"). For inputs whose factorisations or
// products would carry a NaN silently to the result (BLAS and LAPACK do not report them).
template <class T>
void check_finite(const std::string& path, const Shape& global, const std::vector<Tile<T>>& parts,
                  MPI_Comm comm, std::string_view what = "tile data file") {
  std::int64_t mine = detail::all_finite;
  for (const Tile<T>& t : parts) mine = std::min(mine, detail::first_nonfinite(t, global));
  detail::agree_finite(path, what, global, mine, comm);
}

template <class T>
void check_finite(const std::string& path, const Shape& global, const Tile<T>& part, MPI_Comm comm,
                  std::string_view what = "tile data file") {
  detail::agree_finite(path, what, global, detail::first_nonfinite(part, global), comm);
}

// For a program that checks its outputs before it computes: check_output_path of the file an
// array is written to (the HDF5 file of FILE.h5:/dataset), and the dataset's name. On one rank;
// the program agrees the failure.
void check_output_array(const std::string& path, std::string_view what);

// One tile per rank (an inactive rank passes a null tile).
template <class T>
void write_raw(const std::string& path, const Shape& global, const Tile<T>& part, MPI_Comm comm) {
  detail::write_raw_blocks(path, global, {detail::raw_block(part)}, detail::raw_element<T>(), comm);
}

template <class T>
void read_raw(const std::string& path, const Shape& global, Tile<T>& part, MPI_Comm comm) {
  detail::read_raw_blocks(path, global, {detail::raw_block(part)}, detail::raw_element<T>(), comm);
}

}  // namespace hit
