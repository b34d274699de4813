// Collective raw file I/O of tiles with MPI-IO (docs/tiles.md, the raw file format).
//
// Each rank describes its blocks to MPI-IO with derived datatypes: a block is a nest of hvectors
// (one level per axis) both in the file (positions of the global array) and in memory (the tile's
// steps). A file view must visit the file in non-decreasing order, so blocks whose byte ranges
// interleave (2-D block-cyclic parts, several strided parts) are split into their rows, planes,
// ... until the pieces are disjoint; what still interleaves after that (strided parts sharing rows)
// goes into further collective calls ("rounds"), each with a valid view. Every step that can fail
// on some ranks only is agreed with hit::collectively before the next collective call.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hit/tile_io.hpp"

#include "hit/core/collective.hpp"
#include "hit/core/file.hpp"
#include "tiles/tile_parts.hpp"

namespace hit::detail {

void check_global(const Shape& global, const std::string& action) {
  if (global.is_null()) {
    throw Error(ErrorKind::shape, "cannot " + action + ": the global array shape is null");
  }
}

void check_part(const Shape& global, const Region& r, const std::string& action) {
  if (r.shape.is_null()) return;
  const int rank = global.rank();
  if (r.shape.rank() != rank) {
    throw Error(ErrorKind::shape, "cannot " + action + ": part " + r.shape.str() + " has rank " +
                                      std::to_string(r.shape.rank()) + ", the global array " +
                                      global.str() + " has rank " + std::to_string(rank));
  }
  if (!global.includes(r.shape)) {
    throw Error(ErrorKind::shape, "cannot " + action + ": part " + r.shape.str() +
                                      " is not inside the global array " + global.str());
  }
}

namespace {

namespace fs = std::filesystem;

// Splitting stops once a rank has this many pieces; past it, interleaving blocks cost extra
// collective calls instead of ever longer datatypes.
constexpr std::size_t max_pieces = std::size_t{1} << 16;

// A block as the file and the memory see it, in elements.
struct BlockMap {
  int rank = 0;
  std::array<index_t, max_rank> extent{};
  std::array<index_t, max_rank> file_step{};  // file distance per position of the block
  std::array<index_t, max_rank> mem_step{};
  index_t file_start = 0;  // file position of the block's first element
  char* origin = nullptr;
};

// The part of a block with its first `depth` positions fixed: a box over the remaining axes.
struct Piece {
  std::size_t block = 0;
  int depth = 0;
  index_t file_start = 0;
  index_t file_end = 0;  // one past the file position of its last element
  char* address = nullptr;
};

struct Plan {
  std::vector<BlockMap> blocks;
  std::vector<std::vector<Piece>> rounds;  // each sorted by file_start, pairwise disjoint
};

void check_io(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw Error(ErrorKind::io, what + ": " + mpi_error_text(code));
}

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

index_t piece_end(const BlockMap& b, int depth, index_t start) {
  index_t end = start;
  for (int k = depth; k < b.rank; ++k) {
    end += (b.extent[static_cast<std::size_t>(k)] - 1) * b.file_step[static_cast<std::size_t>(k)];
  }
  return end + 1;
}

// Marks the pieces whose file ranges meet another piece's (pieces sorted by file_start).
std::vector<char> overlapping(const std::vector<Piece>& pieces) {
  std::vector<char> out(pieces.size(), 0);
  index_t max_end = std::numeric_limits<index_t>::min();
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0 && pieces[i].file_start < max_end) out[i] = 1;
    if (i + 1 < pieces.size() && pieces[i].file_end > pieces[i + 1].file_start) out[i] = 1;
    max_end = std::max(max_end, pieces[i].file_end);
  }
  return out;
}

void sort_by_file(std::vector<Piece>& pieces) {
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return a.file_start != b.file_start ? a.file_start < b.file_start : a.file_end < b.file_end;
  });
}

Plan make_plan(const Shape& global, const std::vector<Region>& raw, std::size_t element_size,
               const std::string& action) {
  check_global(global, action);
  const int rank = global.rank();
  std::array<index_t, max_rank> global_step{};  // row-major file distance per global position
  index_t step = 1;
  for (int k = rank - 1; k >= 0; --k) {
    global_step[static_cast<std::size_t>(k)] = step;
    step *= global.extent(k);
  }
  Plan plan;
  std::vector<Piece> pieces;
  for (const Region& r : raw) {
    check_part(global, r, action);
    if (r.shape.is_null()) continue;
    if (r.shape.empty()) continue;
    BlockMap b;
    b.rank = rank;
    b.origin = static_cast<char*>(r.data);
    for (int k = 0; k < rank; ++k) {
      const auto u = static_cast<std::size_t>(k);
      const Sig& s = r.shape[k];
      const Sig& g = global[k];
      if (s.size() > INT_MAX) {
        throw Error(ErrorKind::invalid_argument, "cannot " + action + ": part " + r.shape.str() +
                                                     " has more than " + std::to_string(INT_MAX) +
                                                     " elements on axis " + std::to_string(k));
      }
      b.extent[u] = s.size();
      b.file_start += g.to_tile(s.begin()) * global_step[u];
      b.file_step[u] = (s.size() > 1 ? s.stride() / g.stride() : 1) * global_step[u];
      b.mem_step[u] = r.steps[u];
    }
    pieces.push_back(
        Piece{plan.blocks.size(), 0, b.file_start, piece_end(b, 0, b.file_start), b.origin});
    plan.blocks.push_back(b);
  }

  // Split interleaving pieces along their next axis until they are disjoint (or too many).
  for (;;) {
    sort_by_file(pieces);
    const std::vector<char> meets = overlapping(pieces);
    std::vector<Piece> next;
    bool split = false;
    std::size_t count = pieces.size();
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      const BlockMap& b = plan.blocks[p.block];
      const auto d = static_cast<std::size_t>(p.depth);
      const auto children = static_cast<std::size_t>(b.extent[d]);
      if (!meets[i] || p.depth >= rank - 1 || count - 1 + children > max_pieces) {
        next.push_back(p);
        continue;
      }
      count += children - 1;
      split = true;
      for (index_t q = 0; q < b.extent[d]; ++q) {
        const index_t start = p.file_start + q * b.file_step[d];
        char* address = p.address + static_cast<std::ptrdiff_t>(q * b.mem_step[d] *
                                                                static_cast<index_t>(element_size));
        next.push_back(
            Piece{p.block, p.depth + 1, start, piece_end(b, p.depth + 1, start), address});
      }
    }
    pieces.swap(next);
    if (!split) break;
  }

  // What still interleaves goes to separate rounds: greedy interval partitioning (in order of
  // start, each piece joins the round that ended earliest if that round ended before it starts).
  using Slot = std::pair<index_t, std::size_t>;  // (end of the round's last piece, round)
  std::priority_queue<Slot, std::vector<Slot>, std::greater<>> ends;
  for (const Piece& p : pieces) {
    if (!ends.empty() && ends.top().first <= p.file_start) {
      const std::size_t r = ends.top().second;
      ends.pop();
      plan.rounds[r].push_back(p);
      ends.emplace(p.file_end, r);
    } else {
      plan.rounds.push_back({p});
      ends.emplace(p.file_end, plan.rounds.size() - 1);
    }
  }
  return plan;
}

// Derived datatypes of the pieces of one round, freed on scope exit.
class RoundTypes {
 public:
  RoundTypes() = default;
  RoundTypes(const RoundTypes&) = delete;
  RoundTypes& operator=(const RoundTypes&) = delete;
  ~RoundTypes() {
    for (MPI_Datatype& t : owned_) MPI_Type_free(&t);
  }

  // A nest of hvectors over axes depth..rank-1 with `steps` (elements) around `element`.
  // Pieces of one block at one depth share their types, so the count of types stays small.
  MPI_Datatype box(std::size_t block, const BlockMap& b, int depth, bool in_file,
                   RawElement element) {
    const auto key = std::make_tuple(block, depth, in_file);
    if (auto it = made_.find(key); it != made_.end()) return it->second;
    const auto& steps = in_file ? b.file_step : b.mem_step;
    MPI_Datatype t = element.type;
    for (int k = b.rank - 1; k >= depth; --k) {
      const auto u = static_cast<std::size_t>(k);
      const int count = static_cast<int>(b.extent[u]);
      MPI_Datatype next = MPI_DATATYPE_NULL;
      if (k == b.rank - 1 && steps[u] == 1) {
        check_mpi(MPI_Type_contiguous(count, t, &next), "MPI_Type_contiguous");
      } else {
        const auto stride = static_cast<MPI_Aint>(steps[u] * static_cast<index_t>(element.size));
        check_mpi(MPI_Type_create_hvector(count, 1, stride, t, &next), "MPI_Type_create_hvector");
      }
      owned_.push_back(next);
      t = next;
    }
    made_.emplace(key, t);
    return t;
  }

  MPI_Datatype structure(const std::vector<MPI_Aint>& displacements,
                         const std::vector<MPI_Datatype>& types) {
    const std::vector<int> ones(types.size(), 1);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    check_mpi(MPI_Type_create_struct(static_cast<int>(types.size()), ones.data(),
                                     displacements.data(), types.data(), &t),
              "MPI_Type_create_struct");
    owned_.push_back(t);
    check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
    return t;
  }

 private:
  std::vector<MPI_Datatype> owned_;
  std::map<std::tuple<std::size_t, int, bool>, MPI_Datatype> made_;
};

enum class Direction { write, read };

// One collective transfer: every rank calls set_view and write_all/read_all exactly once, even
// when building its datatypes failed (it then moves nothing), and reports its failure afterwards.
void transfer_round(MPI_File fh, const Plan& plan, std::size_t round, RawElement element,
                    Direction direction, const std::string& path) {
  const std::vector<Piece> none;  // a rank with fewer rounds still takes part
  const std::vector<Piece>& pieces = round < plan.rounds.size() ? plan.rounds[round] : none;
  RoundTypes types;
  MPI_Datatype file_type = element.type;
  MPI_Datatype memory_type = element.type;
  int count = 0;
  index_t expected = 0;
  std::exception_ptr failure;
  if (!pieces.empty()) {
    try {
      std::vector<MPI_Aint> file_at, memory_at;
      std::vector<MPI_Datatype> file_types, memory_types;
      for (const Piece& p : pieces) {
        const BlockMap& b = plan.blocks[p.block];
        file_at.push_back(static_cast<MPI_Aint>(p.file_start * static_cast<index_t>(element.size)));
        file_types.push_back(types.box(p.block, b, p.depth, true, element));
        MPI_Aint address = 0;
        check_mpi(MPI_Get_address(p.address, &address), "MPI_Get_address");
        memory_at.push_back(address);
        memory_types.push_back(types.box(p.block, b, p.depth, false, element));
        index_t n = 1;
        for (int k = p.depth; k < b.rank; ++k) n *= b.extent[static_cast<std::size_t>(k)];
        expected += n;
      }
      file_type = types.structure(file_at, file_types);
      memory_type = types.structure(memory_at, memory_types);
      count = 1;
    } catch (...) {
      failure = std::current_exception();
      file_type = memory_type = element.type;
      count = 0;
      expected = 0;
    }
  }
  const int view = MPI_File_set_view(fh, 0, element.type, file_type, "native", MPI_INFO_NULL);
  void* buffer = count > 0 ? MPI_BOTTOM : nullptr;
  MPI_Status status;
  const int moved = direction == Direction::write
                        ? MPI_File_write_all(fh, buffer, count, memory_type, &status)
                        : MPI_File_read_all(fh, buffer, count, memory_type, &status);
  if (failure) std::rethrow_exception(failure);
  const std::string what = direction == Direction::write
                               ? "cannot write tile data to '" + path + "'"
                               : "cannot read tile data from '" + path + "'";
  check_io(view, what + " (setting the file view)");
  check_io(moved, what);
  MPI_Count done = 0;
  MPI_Get_elements_x(&status, element.type, &done);
  if (done != static_cast<MPI_Count>(expected)) {
    throw Error(ErrorKind::io, what + ": moved " + std::to_string(done) + " of " +
                                   std::to_string(expected) + " elements");
  }
}

// The number of collective rounds: the most any rank needs.
int agreed_rounds(const Plan& plan, MPI_Comm comm) {
  int rounds = static_cast<int>(plan.rounds.size());
  allreduce_in_place(&rounds, 1, MPI_INT, MPI_MAX, comm);
  return rounds;
}

// Rank 0's temporary name for `path` (its host and process id in it, see hit::temporary_suffix),
// known to every rank.
std::string agreed_temporary(const std::string& path, MPI_Comm comm) {
  std::string suffix;
  if (rank_of(comm) == 0) suffix = temporary_suffix();
  broadcast(suffix, 0, comm);
  return path + suffix;
}

void check_input_file(const std::string& path, const Shape& global, std::size_t element_size) {
  const std::string what = "cannot read tile data from '" + path + "'";
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw Error(ErrorKind::io, what + ": " + std::strerror(errno));
  std::fclose(f);
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error(ErrorKind::io, what + ": it is a folder");
  const auto actual = fs::file_size(path, ec);
  if (ec) throw Error(ErrorKind::io, what + ": " + ec.message());
  const auto expected = static_cast<std::uintmax_t>(global.size()) * element_size;
  if (actual != expected) {
    throw Error(ErrorKind::io, what + ": the file has " + std::to_string(actual) +
                                   " bytes, expected " + std::to_string(expected) +
                                   " bytes (the global array " + global.str() + ": " +
                                   std::to_string(global.size()) + " elements of " +
                                   std::to_string(element_size) + " bytes)");
  }
}

// Closes an open file on every rank once, whatever happened before.
class OpenFile {
 public:
  explicit OpenFile(MPI_Comm comm) : comm_(comm) {}
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  MPI_File* handle() { return &fh_; }
  MPI_File get() const { return fh_; }
  // Collective; call on every rank after the open was agreed.
  void close(const std::string& what) {
    closing_ = true;
    collectively(comm_, [&] { check_io(MPI_File_close(&fh_), what + " (closing the file)"); });
  }
  // For the failure paths: every rank is there (the failure was agreed), so closing is safe.
  void close_quietly() {
    if (!closing_ && fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
    closing_ = true;
  }

 private:
  MPI_Comm comm_;
  MPI_File fh_ = MPI_FILE_NULL;
  bool closing_ = false;
};

}  // namespace

void write_raw_blocks(const std::string& path, const Shape& global,
                      const std::vector<Region>& blocks, RawElement element, MPI_Comm comm) {
  const int me = rank_of(comm);
  Plan plan;
  // Parts first, so that a bad part is reported rather than a file problem of rank 0.
  collectively(comm,
               [&] { plan = make_plan(global, blocks, element.size, "write '" + path + "'"); });
  collectively(comm, [&] {
    if (me == 0) check_output_path(path, "tile data file");
  });
  const int rounds = agreed_rounds(plan, comm);
  const std::string temporary = agreed_temporary(path, comm);
  const std::string what = "cannot write tile data to '" + path + "'";

  OpenFile file(comm);
  try {
    collectively(comm, [&] {
      check_io(MPI_File_open(comm, temporary.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY,
                             MPI_INFO_NULL, file.handle()),
               what + ": cannot create '" + temporary + "'");
    });
  } catch (...) {
    // Ranks that did open it (if any) keep a handle; the name is removed all the same.
    if (me == 0) {
      std::error_code ec;
      fs::remove(temporary, ec);
    }
    throw;
  }
  try {
    for (int r = 0; r < rounds; ++r) {
      collectively(comm, [&] {
        transfer_round(file.get(), plan, static_cast<std::size_t>(r), element, Direction::write,
                       path);
      });
    }
    file.close(what);
    collectively(comm, [&] {
      if (me != 0) return;
      // Parts need not cover the whole array: the file gets its full size all the same (holes
      // read as zeros). Done here, by one rank on the closed file, to spare a collective.
      const auto bytes = static_cast<std::uintmax_t>(global.size()) * element.size;
      std::error_code ec;
      if (fs::file_size(temporary, ec) != bytes || ec) {
        fs::resize_file(temporary, bytes, ec);
        if (ec) {
          throw Error(ErrorKind::io, what + ": cannot extend '" + temporary + "' to " +
                                         std::to_string(bytes) + " bytes: " + ec.message());
        }
      }
      rename_into_place(temporary, path, "tile data file", what);
    });
  } catch (...) {
    file.close_quietly();
    if (me == 0) {
      std::error_code ec;
      fs::remove(temporary, ec);
    }
    throw;
  }
}

void agree_finite(const std::string& path, std::string_view what, const Shape& global,
                  std::int64_t mine, MPI_Comm comm) {
  std::int64_t first = mine;
  allreduce_in_place(&first, 1, MPI_INT64_T, MPI_MIN, comm);
  if (first == all_finite) return;
  std::int64_t position = first / 4;
  static constexpr const char* kinds[] = {"NaN", "+inf", "-inf"};
  const char* kind = kinds[first % 4];
  // The index of that position in `global`, row-major.
  std::vector<index_t> index(static_cast<std::size_t>(global.rank()));
  for (int k = global.rank() - 1; k >= 0; --k) {
    const index_t extent = global.extent(k);
    index[static_cast<std::size_t>(k)] = global[k].to_array(position % extent);
    position /= extent;
  }
  std::string at;
  for (const index_t i : index) at += (at.empty() ? "" : ", ") + std::to_string(i);
  throw Error::everywhere(ErrorKind::invalid_argument,
                          std::string(what) + " '" + path + "': element [" + at + "] (position " +
                              std::to_string(first / 4) + " of the file) is " + kind +
                              "; the input must be finite numbers");
}

void read_raw_blocks(const std::string& path, const Shape& global,
                     const std::vector<Region>& blocks, RawElement element, MPI_Comm comm) {
  const int me = rank_of(comm);
  Plan plan;
  collectively(comm,
               [&] { plan = make_plan(global, blocks, element.size, "read '" + path + "'"); });
  collectively(comm, [&] {
    if (me == 0) check_input_file(path, global, element.size);
  });
  const int rounds = agreed_rounds(plan, comm);
  const std::string what = "cannot read tile data from '" + path + "'";

  OpenFile file(comm);
  collectively(comm, [&] {
    check_io(MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, file.handle()),
             what);
  });
  try {
    for (int r = 0; r < rounds; ++r) {
      collectively(comm, [&] {
        transfer_round(file.get(), plan, static_cast<std::size_t>(r), element, Direction::read,
                       path);
      });
    }
    file.close(what);
  } catch (...) {
    file.close_quietly();
    throw;
  }
}

}  // namespace hit::detail
