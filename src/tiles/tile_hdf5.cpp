// Collective HDF5 I/O of tiles with parallel HDF5 over MPI-IO (docs/tiles.md, "HDF5 datasets").
//
// Every rank opens the file with the MPI-IO driver; each of a rank's blocks is a regular hyperslab
// of the dataset (start, stride and count per axis: a strided block of a cyclic layout is one
// too), moved to and from a dense buffer with one collective H5Dread/H5Dwrite per block. The ranks
// agree on the number of calls (the most blocks any rank has); a rank with fewer selects nothing
// in the calls left. Every step that can fail is agreed with hit::collectively before the next
// collective call, and HDF5's own error stack is not printed: the Error says what failed.
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hit/tile_io.hpp"

#include "hit/core/collective.hpp"
#include "hit/core/file.hpp"
#include "tiles/tile_parts.hpp"

namespace hit::detail {
namespace {

namespace fs = std::filesystem;

// One HDF5 identifier, closed with its kind's close function.
class Handle {
 public:
  using Close = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Close close) : id_(id), close_(close) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), close_(o.close_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
      close_ = o.close_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const noexcept { return id_; }
  // Gives the identifier up (to close it where the close must be checked).
  hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }
  bool valid() const noexcept { return id_ >= 0; }
  void reset() noexcept {
    if (id_ >= 0 && close_ != nullptr) close_(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Close close_ = nullptr;
};

// A new identifier, or Error(io) saying what could not be done.
Handle made(hid_t id, Handle::Close close, const std::string& what) {
  if (id < 0) throw Error(ErrorKind::io, what);
  return Handle(id, close);
}

void check_h5(herr_t code, const std::string& what) {
  if (code < 0) throw Error(ErrorKind::io, what);
}

// HDF5 prints its error stack on stderr by default; the Errors say what failed instead.
void quiet_hdf5() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

std::string type_name(char kind, std::size_t bytes) {
  const std::string bits = std::to_string(bytes * 8) + "-bit ";
  if (kind == 'f') return bits + "floating point";
  return bits + (kind == 'i' ? "signed integers" : "unsigned integers");
}

hid_t native_type(const RawElement& e, const std::string& what) {
  if (e.kind == 'f' && e.size == sizeof(double)) return H5T_NATIVE_DOUBLE;
  if (e.kind == 'f' && e.size == sizeof(float)) return H5T_NATIVE_FLOAT;
  if (e.kind == 'i' && e.size == 8) return H5T_NATIVE_INT64;
  if (e.kind == 'i' && e.size == 4) return H5T_NATIVE_INT32;
  if (e.kind == 'u' && e.size == 8) return H5T_NATIVE_UINT64;
  if (e.kind == 'u' && e.size == 4) return H5T_NATIVE_UINT32;
  throw Error(ErrorKind::invalid_argument,
              what + ": no HDF5 type for elements of " + type_name(e.kind, e.size));
}

// File access with the MPI-IO driver over `comm`, transfers collective.
Handle file_access(MPI_Comm comm, const std::string& what) {
  Handle fapl = made(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, what + ": H5Pcreate");
  check_h5(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), what + ": H5Pset_fapl_mpio");
  return fapl;
}

Handle collective_transfer(const std::string& what) {
  Handle dxpl = made(H5Pcreate(H5P_DATASET_XFER), H5Pclose, what + ": H5Pcreate");
  check_h5(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), what + ": H5Pset_dxpl_mpio");
  return dxpl;
}

// Whether every link on the dataset's path exists (H5Lexists fails on a missing group before it).
bool dataset_exists(hid_t file, const std::string& dataset) {
  std::size_t at = 0;
  while (at != std::string::npos) {
    at = dataset.find('/', at + 1);
    const std::string prefix = dataset.substr(0, at);
    if (prefix.empty() || prefix == "/") continue;
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return true;
}

// A block as a hyperslab of the dataset: start, stride and count per axis.
struct Hyperslab {
  std::vector<hsize_t> start, stride, count;
  hsize_t elements = 1;
};

Hyperslab hyperslab_of(const Shape& global, const Region& r) {
  Hyperslab h;
  for (int k = 0; k < global.rank(); ++k) {
    const Sig& s = r.shape[k];
    const Sig& g = global[k];
    h.start.push_back(static_cast<hsize_t>(g.to_tile(s.begin())));
    h.stride.push_back(static_cast<hsize_t>(s.size() > 1 ? s.stride() / g.stride() : 1));
    h.count.push_back(static_cast<hsize_t>(s.size()));
    h.elements *= static_cast<hsize_t>(s.size());
  }
  return h;
}

// Between a region (any steps) and a dense row-major buffer of its elements.
void copy_region(const Region& r, unsigned char* dense, bool to_dense) {
  const int rank = r.rank();
  const std::size_t width = r.element_size;
  std::array<index_t, max_rank> at{};
  const index_t total = r.elements();
  for (index_t n = 0; n < total; ++n) {
    index_t offset = 0;
    for (int k = 0; k < rank; ++k) offset += at[static_cast<std::size_t>(k)] * r.steps[k];
    unsigned char* element = r.byte_at(offset);
    unsigned char* packed = dense + static_cast<std::size_t>(n) * width;
    if (to_dense) {
      std::memcpy(packed, element, width);
    } else {
      std::memcpy(element, packed, width);
    }
    for (int k = rank - 1; k >= 0; --k) {
      if (++at[static_cast<std::size_t>(k)] < r.shape[k].size()) break;
      at[static_cast<std::size_t>(k)] = 0;
    }
  }
}

enum class Direction { read, write };

// Moves every rank's blocks through `dataset`, one collective call per block (the most any rank
// has), each call agreed.
void transfer_blocks(hid_t dataset, const Shape& global, const std::vector<Region>& blocks,
                     const RawElement& element, Direction direction, MPI_Comm comm,
                     const std::string& what) {
  std::vector<const Region*> mine;
  for (const Region& r : blocks) {
    if (!r.shape.is_null() && !r.shape.empty()) mine.push_back(&r);
  }
  int calls = static_cast<int>(mine.size());
  allreduce_in_place(&calls, 1, MPI_INT, MPI_MAX, comm);
  const hid_t type = native_type(element, what);
  for (int c = 0; c < calls; ++c) {
    collectively(comm, [&] {
      const Handle dxpl = collective_transfer(what);
      const Handle file_space = made(H5Dget_space(dataset), H5Sclose, what + ": H5Dget_space");
      Handle memory;
      std::vector<unsigned char> dense;
      const Region* r = static_cast<std::size_t>(c) < mine.size() ? mine[c] : nullptr;
      if (r != nullptr) {
        const Hyperslab h = hyperslab_of(global, *r);
        check_h5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, h.start.data(),
                                     h.stride.data(), h.count.data(), nullptr),
                 what + ": selecting " + r->shape.str());
        memory =
            made(H5Screate_simple(1, &h.elements, nullptr), H5Sclose, what + ": H5Screate_simple");
        dense.resize(static_cast<std::size_t>(h.elements) * element.size);
        if (direction == Direction::write) copy_region(*r, dense.data(), true);
      } else {
        check_h5(H5Sselect_none(file_space.get()), what + ": H5Sselect_none");
        const hsize_t none = 1;
        memory = made(H5Screate_simple(1, &none, nullptr), H5Sclose, what + ": H5Screate_simple");
        check_h5(H5Sselect_none(memory.get()), what + ": H5Sselect_none");
      }
      if (direction == Direction::write) {
        check_h5(H5Dwrite(dataset, type, memory.get(), file_space.get(), dxpl.get(),
                          dense.empty() ? nullptr : dense.data()),
                 what + ": H5Dwrite");
      } else {
        check_h5(H5Dread(dataset, type, memory.get(), file_space.get(), dxpl.get(),
                         dense.empty() ? nullptr : dense.data()),
                 what + ": H5Dread");
        if (r != nullptr) copy_region(*r, dense.data(), false);
      }
    });
  }
}

std::string extents_text(const std::vector<hsize_t>& dims) {
  std::string s = "[";
  for (std::size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + std::to_string(dims[k]);
  return s + "]";
}

std::vector<hsize_t> extents_of(const Shape& global) {
  std::vector<hsize_t> dims;
  for (int k = 0; k < global.rank(); ++k) dims.push_back(static_cast<hsize_t>(global.extent(k)));
  return dims;
}

// The dataset's element type and extents are the program's, or Error(io) saying what it holds.
void check_dataset(hid_t dataset, const Shape& global, const RawElement& element,
                   const std::string& what) {
  const Handle type = made(H5Dget_type(dataset), H5Tclose, what + ": H5Dget_type");
  const H5T_class_t cls = H5Tget_class(type.get());
  const std::size_t size = H5Tget_size(type.get());
  char kind = '?';
  if (cls == H5T_FLOAT) kind = 'f';
  if (cls == H5T_INTEGER) kind = H5Tget_sign(type.get()) == H5T_SGN_NONE ? 'u' : 'i';
  if (kind != element.kind || size != element.size) {
    const std::string holds = kind == '?' ? "elements that are not numbers" : type_name(kind, size);
    throw Error(ErrorKind::io, what + ": the dataset holds " + holds + ", expected " +
                                   type_name(element.kind, element.size));
  }
  const Handle space = made(H5Dget_space(dataset), H5Sclose, what + ": H5Dget_space");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  const std::vector<hsize_t> expected = extents_of(global);
  if (dims != expected) {
    throw Error(ErrorKind::io, what + ": the dataset's extents are " + extents_text(dims) +
                                   ", expected " + extents_text(expected) + " (the array " +
                                   global.str() + ")");
  }
}

}  // namespace

std::optional<Hdf5Dataset> hdf5_dataset(const std::string& path) {
  for (const std::string suffix : {".h5", ".hdf5"}) {
    const std::size_t at = path.find(suffix + ":");
    if (at != std::string::npos) {
      Hdf5Dataset d{path.substr(0, at + suffix.size()), path.substr(at + suffix.size() + 1)};
      if (d.dataset.size() < 2 || d.dataset.front() != '/' || d.dataset.back() == '/') {
        throw Error(ErrorKind::invalid_argument,
                    "'" + path + "': name the dataset by its absolute path, as FILE" + suffix +
                        ":/group/dataset");
      }
      return d;
    }
    if (path.size() > suffix.size() && path.ends_with(suffix)) {
      throw Error(ErrorKind::invalid_argument,
                  "'" + path + "' is an HDF5 file: name the dataset too, as " + path +
                      ":/dataset (a raw file needs another name)");
    }
  }
  return std::nullopt;
}

void write_hdf5_blocks(const std::string& path, const Shape& global,
                       const std::vector<Region>& blocks, RawElement element, MPI_Comm comm) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  std::optional<Hdf5Dataset> target;
  const std::string what = "cannot write tile data to '" + path + "'";
  collectively(comm, [&] {
    target = hdf5_dataset(path);
    check_global(global, "write '" + path + "'");
    for (const Region& r : blocks) check_part(global, r, "write '" + path + "'");
    (void)native_type(element, what);
  });
  const std::string& file = target->file;
  bool existed = false;
  collectively(comm, [&] {
    if (me != 0) return;
    check_output_path(file, "HDF5 file");
    std::error_code ec;
    existed = fs::exists(file, ec);
    if (existed && H5Fis_hdf5(file.c_str()) <= 0) {
      throw Error(ErrorKind::io, what + ": '" + file + "' exists and is not an HDF5 file");
    }
  });
  int exists = existed ? 1 : 0;
  MPI_Bcast(&exists, 1, MPI_INT, 0, comm);
  existed = exists != 0;
  std::string suffix;
  if (me == 0) suffix = temporary_suffix();
  broadcast(suffix, 0, comm);
  const std::string temporary = file + suffix;
  const auto remove_temporary = [&] {
    if (me != 0) return;
    std::error_code ec;
    fs::remove(temporary, ec);
  };
  quiet_hdf5();
  try {
    // The other objects of an existing file are kept: the new dataset goes into a copy of it.
    collectively(comm, [&] {
      if (me != 0 || !existed) return;
      std::error_code ec;
      fs::copy_file(file, temporary, fs::copy_options::overwrite_existing, ec);
      if (ec) {
        throw Error(ErrorKind::io,
                    what + ": cannot copy '" + file + "' to '" + temporary + "': " + ec.message());
      }
    });
    {
      Handle h5;
      collectively(comm, [&] {
        const Handle fapl = file_access(comm, what);
        h5 = existed ? made(H5Fopen(temporary.c_str(), H5F_ACC_RDWR, fapl.get()), H5Fclose,
                            what + ": cannot open '" + temporary + "'")
                     : made(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                            H5Fclose, what + ": cannot create '" + temporary + "'");
      });
      Handle dataset;
      collectively(comm, [&] {
        const std::string& name = target->dataset;
        if (existed && dataset_exists(h5.get(), name)) {
          check_h5(H5Ldelete(h5.get(), name.c_str(), H5P_DEFAULT),
                   what + ": cannot replace the dataset " + name);
        }
        const std::vector<hsize_t> dims = extents_of(global);
        const Handle space = made(H5Screate_simple(global.rank(), dims.data(), nullptr), H5Sclose,
                                  what + ": H5Screate_simple");
        const Handle links = made(H5Pcreate(H5P_LINK_CREATE), H5Pclose, what + ": H5Pcreate");
        check_h5(H5Pset_create_intermediate_group(links.get(), 1),
                 what + ": H5Pset_create_intermediate_group");
        dataset = made(H5Dcreate2(h5.get(), name.c_str(), native_type(element, what), space.get(),
                                  links.get(), H5P_DEFAULT, H5P_DEFAULT),
                       H5Dclose,
                       what + ": cannot create the dataset " + name +
                           " (a group or dataset on its path is in the way?)");
      });
      transfer_blocks(dataset.get(), global, blocks, element, Direction::write, comm, what);
      dataset.reset();
      collectively(comm, [&] { check_h5(H5Fclose(h5.release()), what + ": closing the file"); });
    }
    collectively(comm, [&] {
      if (me == 0) rename_into_place(temporary, file, "HDF5 file", what);
    });
  } catch (...) {
    remove_temporary();
    throw;
  }
}

void read_hdf5_blocks(const std::string& path, const Shape& global,
                      const std::vector<Region>& blocks, RawElement element, MPI_Comm comm) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  std::optional<Hdf5Dataset> target;
  const std::string what = "cannot read tile data from '" + path + "'";
  collectively(comm, [&] {
    target = hdf5_dataset(path);
    check_global(global, "read '" + path + "'");
    for (const Region& r : blocks) check_part(global, r, "read '" + path + "'");
  });
  quiet_hdf5();
  collectively(comm, [&] {
    if (me != 0) return;
    std::FILE* f = std::fopen(target->file.c_str(), "rb");
    if (f == nullptr) throw Error(ErrorKind::io, what + ": " + std::strerror(errno));
    std::fclose(f);
    std::error_code ec;
    if (fs::is_directory(target->file, ec)) throw Error(ErrorKind::io, what + ": it is a folder");
    if (H5Fis_hdf5(target->file.c_str()) <= 0) {
      throw Error(ErrorKind::io, what + ": '" + target->file + "' is not an HDF5 file");
    }
  });
  Handle h5;
  collectively(comm, [&] {
    const Handle fapl = file_access(comm, what);
    h5 = made(H5Fopen(target->file.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose, what);
  });
  Handle dataset;
  collectively(comm, [&] {
    if (!dataset_exists(h5.get(), target->dataset)) {
      throw Error(ErrorKind::io,
                  what + ": '" + target->file + "' has no dataset " + target->dataset);
    }
    dataset = made(H5Dopen2(h5.get(), target->dataset.c_str(), H5P_DEFAULT), H5Dclose,
                   what + ": " + target->dataset + " is not a dataset");
    check_dataset(dataset.get(), global, element, what);
  });
  transfer_blocks(dataset.get(), global, blocks, element, Direction::read, comm, what);
}

}  // namespace hit::detail

namespace hit {

void check_output_array(const std::string& path, std::string_view what) {
  const std::optional<detail::Hdf5Dataset> dataset = detail::hdf5_dataset(path);
  check_output_path(dataset ? dataset->file : path, what);
}

}  // namespace hit

namespace hit::detail {

void write_blocks(const std::string& path, const Shape& global, const std::vector<Region>& blocks,
                  RawElement element, MPI_Comm comm) {
  bool hdf5 = false;
  collectively(comm, [&] { hdf5 = hdf5_dataset(path).has_value(); });
  if (hdf5) {
    write_hdf5_blocks(path, global, blocks, element, comm);
  } else {
    write_raw_blocks(path, global, blocks, element, comm);
  }
}

void read_blocks(const std::string& path, const Shape& global, const std::vector<Region>& blocks,
                 RawElement element, MPI_Comm comm) {
  bool hdf5 = false;
  collectively(comm, [&] { hdf5 = hdf5_dataset(path).has_value(); });
  if (hdf5) {
    read_hdf5_blocks(path, global, blocks, element, comm);
  } else {
    read_raw_blocks(path, global, blocks, element, comm);
  }
}

}  // namespace hit::detail
