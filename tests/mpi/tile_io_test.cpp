// hit-test-procs: 1 2 3 4
// Collective raw file I/O of tiles: write under one distribution, read back under another, and
// check every element against a formula of its global index; the file itself is checked byte by
// byte on rank 0 with plain stdio. Distributions are made here (the layout layer is not used):
// row blocks, column blocks, 2-D blocks (with an idle rank when P is odd), cyclic rows and columns
// (strided blocks), 2-D block-cyclic (many blocks per rank), interleaved strided blocks (several
// collective rounds), and everything on one rank. The same for HDF5 datasets (hit::read and
// hit::write of FILE.h5:/dataset), each file checked on rank 0 with the HDF5 library alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/tile.hpp"
#include "hit/tile_io.hpp"

namespace {

namespace fs = std::filesystem;
using hit::Error;
using hit::ErrorKind;
using hit::Index;
using hit::index_t;
using hit::Shape;
using hit::Sig;
using hit::Tile;
using ::testing::HasSubstr;

MPI_Comm comm() {
  return hit::Environment::current().comm();
}
int my_rank() {
  return hit::Environment::current().rank();
}
int procs() {
  return hit::Environment::current().size();
}

// ---- element values ---------------------------------------------------------------------------

template <class T>
T value_of(const Index& i) {
  // Distinct per index and, for the 8-byte types, using the high bytes too.
  std::int64_t v = 0;
  for (int k = 0; k < i.rank(); ++k) v = v * 1000 + (i[k] + 100);
  if constexpr (std::is_same_v<T, std::int64_t>) return (v << 24) + 5;
  if constexpr (std::is_same_v<T, double>) return static_cast<double>(v) + 0.25;
  return static_cast<T>(v);
}

template <class T>
T sentinel() {
  return static_cast<T>(-7);
}

// ---- distributions (positions of the global shape, mapped to its indices) ----------------------

using Blocks = std::vector<Shape>;  // the blocks of one rank
using Distribution = std::function<Blocks(const Shape& global, int rank, int procs)>;

// Hitmap's block split: the first n % p parts get one more; empty parts are left out.
Sig block_of(index_t n, int parts, int part) {
  const index_t base = n / parts, extra = n % parts;
  const index_t begin = part * base + std::min<index_t>(part, extra);
  return Sig(begin, begin + base + (part < extra ? 1 : 0));
}

Shape positions_of(const Shape& global, int axis, const Sig& s) {
  Shape p = Shape::of_rank(global.rank());
  for (int k = 0; k < global.rank(); ++k) p = p.with_sig(k, Sig(0, global.extent(k)));
  return p.with_sig(axis, s);
}

Blocks keep_nonempty(const Shape& global, const std::vector<Shape>& positions) {
  Blocks out;
  for (const Shape& p : positions) {
    if (!p.empty()) out.push_back(global.select_tile(p));
  }
  return out;
}

Blocks row_blocks(const Shape& g, int r, int p) {
  return keep_nonempty(g, {positions_of(g, 0, block_of(g.extent(0), p, r))});
}

Blocks column_blocks(const Shape& g, int r, int p) {
  return keep_nonempty(g, {positions_of(g, g.rank() - 1, block_of(g.extent(g.rank() - 1), p, r))});
}

// A (p/2) x 2 grid of blocks over the first two axes; with p odd the last rank holds nothing.
Blocks grid_blocks(const Shape& g, int r, int p) {
  const int cols = p >= 2 ? 2 : 1, rows = std::max(1, p / cols);
  if (r >= rows * cols) return {};
  Shape pos = positions_of(g, 0, block_of(g.extent(0), rows, r / cols));
  pos = pos.with_sig(1, block_of(g.extent(1), cols, r % cols));
  return keep_nonempty(g, {pos});
}

Blocks cyclic_rows(const Shape& g, int r, int p) {
  if (r >= g.extent(0)) return {};
  return keep_nonempty(g, {positions_of(g, 0, Sig(r, g.extent(0), p))});
}

Blocks cyclic_columns(const Shape& g, int r, int p) {
  const int last = g.rank() - 1;
  if (r >= g.extent(last)) return {};
  return keep_nonempty(g, {positions_of(g, last, Sig(r, g.extent(last), p))});
}

// 2 x 3 blocks over the first two axes dealt round-robin: several blocks per rank, which share
// rows with each other in the file.
Blocks block_cyclic(const Shape& g, int r, int p) {
  std::vector<Shape> out;
  int n = 0;
  for (index_t i = 0; i < g.extent(0); i += 2) {
    for (index_t j = 0; j < g.extent(1); j += 3) {
      if (n++ % p != r) continue;
      Shape pos = positions_of(g, 0, Sig(i, std::min(i + 2, g.extent(0))));
      out.push_back(pos.with_sig(1, Sig(j, std::min(j + 3, g.extent(1)))));
    }
  }
  return keep_nonempty(g, out);
}

// Two strided column sets per rank, [r::2p] and [r+p::2p]: they interleave within every row, so
// they cannot share one file view.
Blocks interleaved_columns(const Shape& g, int r, int p) {
  const int last = g.rank() - 1;
  const index_t m = g.extent(last);
  std::vector<Shape> out;
  if (r < m) out.push_back(positions_of(g, last, Sig(r, m, 2 * p)));
  if (r + p < m) out.push_back(positions_of(g, last, Sig(r + p, m, 2 * p)));
  return keep_nonempty(g, out);
}

Blocks all_on_last_rank(const Shape& g, int r, int p) {
  if (r != p - 1) return {};
  return {g};
}

struct NamedDistribution {
  const char* name;
  Distribution fn;
};

const std::vector<NamedDistribution>& distributions() {
  static const std::vector<NamedDistribution> all = {
      {"rows", row_blocks},
      {"columns", column_blocks},
      {"grid", grid_blocks},
      {"cyclic_rows", cyclic_rows},
      {"cyclic_columns", cyclic_columns},
      {"block_cyclic", block_cyclic},
      {"interleaved_columns", interleaved_columns},
      {"all_on_last_rank", all_on_last_rank},
  };
  return all;
}

// The blocks of all ranks cover the global shape exactly once (a check of the test itself).
void expect_partition(const Shape& g, const Distribution& d) {
  index_t total = 0;
  for (int r = 0; r < procs(); ++r) {
    for (const Shape& b : d(g, r, procs())) {
      EXPECT_TRUE(g.includes(b));
      total += b.size();
    }
  }
  EXPECT_EQ(total, g.size());
}

// ---- tiles over blocks, stored three ways -----------------------------------------------------

enum class Storage { plain, ghosts_and_padding, view_of_larger };

// A part and the tile whose memory holds it (the same tile for plain storage).
template <class T>
struct Held {
  Tile<T> part;
  Tile<T> owner;
};

template <class T>
std::vector<Held<T>> make_tiles(const Blocks& blocks, Storage storage) {
  std::vector<Held<T>> out;
  for (const Shape& b : blocks) {
    switch (storage) {
      case Storage::plain: {
        Tile<T> t(b);
        out.push_back({t, t});
        break;
      }
      case Storage::ghosts_and_padding: {
        Shape max = Shape::of_rank(b.rank());
        for (int k = 0; k < b.rank(); ++k) max = max.with_sig(k, Sig(0, b.extent(k) + 1 + k));
        Tile<T> t(b, {.max_shape = max, .ghost = 1});
        out.push_back({t, t});
        break;
      }
      case Storage::view_of_larger: {
        // Owner over the stride-1 box around the block: a strided block becomes a strided view.
        Shape box = b;
        for (int k = 0; k < b.rank(); ++k)
          box = box.with_sig(k, Sig(b[k].begin(), b[k].last() + 1));
        Tile<T> owner(box, {.ghost = 1});
        out.push_back({owner.select(b), owner});
        break;
      }
    }
  }
  return out;
}

template <class T>
std::vector<Tile<T>> parts_of(const std::vector<Held<T>>& held) {
  std::vector<Tile<T>> out;
  for (const auto& h : held) out.push_back(h.part);
  return out;
}

// ---- shared scratch folder --------------------------------------------------------------------

std::string shared_temp_dir() {
  std::string dir;
  if (my_rank() == 0) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/hit-tile-io-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    dir = pattern;
  }
  int n = static_cast<int>(dir.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, comm());
  dir.resize(static_cast<std::size_t>(n));
  MPI_Bcast(dir.data(), n, MPI_CHAR, 0, comm());
  return dir;
}

class TileIo : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = shared_temp_dir(); }
  void TearDown() override {
    MPI_Barrier(comm());
    if (my_rank() == 0) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // Names in the folder (rank 0's view, broadcast), to see that no temporary was left behind.
  std::vector<std::string> listing() const {
    std::string all;
    if (my_rank() == 0) {
      for (const auto& e : fs::directory_iterator(dir_)) all += e.path().filename().string() + "\n";
    }
    int n = static_cast<int>(all.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, comm());
    all.resize(static_cast<std::size_t>(n));
    MPI_Bcast(all.data(), n, MPI_CHAR, 0, comm());
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < all.size()) {
      const auto nl = all.find('\n', start);
      out.push_back(all.substr(start, nl - start));
      start = nl + 1;
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string dir_;
};

// Rank 0 reads the file with stdio and checks its size and every element; the verdict is shared.
template <class T>
void expect_file_holds(const std::string& file, const Shape& g) {
  int ok = 1;
  if (my_rank() == 0) {
    std::error_code ec;
    const auto bytes = fs::file_size(file, ec);
    EXPECT_FALSE(ec) << file;
    EXPECT_EQ(bytes, static_cast<std::uintmax_t>(g.size()) * sizeof(T)) << file;
    std::vector<T> data(static_cast<std::size_t>(g.size()));
    std::FILE* f = std::fopen(file.c_str(), "rb");
    EXPECT_NE(f, nullptr) << file;
    if (f != nullptr) {
      EXPECT_EQ(std::fread(data.data(), sizeof(T), data.size(), f), data.size());
      std::fclose(f);
    }
    std::size_t n = 0, bad = 0;
    g.for_each([&](const Index& i) {
      if (data[n++] != value_of<T>(i) && bad++ < 5) ADD_FAILURE() << file << " at " << i;
    });
    ok = bad == 0 && !::testing::Test::HasFailure();
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm());
  EXPECT_TRUE(ok) << "rank 0 found a bad file " << file;
}

// Every element of every part holds its formula value; all else in the owners is the sentinel.
template <class T>
void expect_parts_hold(const std::vector<Held<T>>& held, const std::string& what) {
  for (const auto& h : held) {
    const Shape all = h.owner.allocated_shape();
    std::size_t bad = 0;
    all.for_each([&](const Index& i) {
      const T expected = h.part.shape().contains(i) ? value_of<T>(i) : sentinel<T>();
      if (h.owner(i) != expected && bad++ < 5) {
        ADD_FAILURE() << what << ": part " << h.part.shape() << " at " << i;
      }
    });
  }
}

template <class T>
void fill_parts(std::vector<Held<T>>& held) {
  for (auto& h : held) h.part.for_each([](const Index& i, T& x) { x = value_of<T>(i); });
}

template <class T>
void fill_sentinel(std::vector<Held<T>>& held) {
  for (auto& h : held) h.owner.select(h.owner.allocated_shape()).fill(sentinel<T>());
}

template <class T>
void write_under(const std::string& file, const Shape& global, const NamedDistribution& d,
                 Storage storage) {
  auto written = make_tiles<T>(d.fn(global, my_rank(), procs()), storage);
  fill_parts(written);
  hit::write_raw(file, global, parts_of(written), comm());
  expect_file_holds<T>(file, global);
}

template <class T>
void read_under(const std::string& file, const Shape& global, const NamedDistribution& d,
                Storage storage, const std::string& what) {
  auto read = make_tiles<T>(d.fn(global, my_rank(), procs()), storage);
  fill_sentinel(read);
  auto parts = parts_of(read);
  hit::read_raw(file, global, parts, comm());
  expect_parts_hold(read, what + " read under " + d.name + " " + global.str());
}

// Writes `global` under distribution a and reads it back under a+1 and a+shift (mod count), with
// the storages rotating, so every distribution is written and read in several storages.
template <class T>
void write_and_read_back(const std::string& file, const Shape& global, std::size_t a,
                         std::size_t shift) {
  const auto& ds = distributions();
  write_under<T>(file, global, ds[a], static_cast<Storage>(a % 3));
  const std::string what = std::string("written under ") + ds[a].name;
  read_under<T>(file, global, ds[(a + 1) % ds.size()], static_cast<Storage>((a + 1) % 3), what);
  if (shift != 0) {
    read_under<T>(file, global, ds[(a + shift) % ds.size()], static_cast<Storage>((a + 2) % 3),
                  what);
  }
}

// ---- HDF5 -------------------------------------------------------------------------------------

template <class T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
  if constexpr (std::is_same_v<T, std::int64_t>) return H5T_NATIVE_INT64;
  return H5T_NATIVE_INT32;
}

// Rank 0 opens the file with the HDF5 library alone (its default driver, none of hitmap++'s
// code) and checks the dataset's type, extents and every element; the verdict is shared.
template <class T>
void expect_dataset_holds(const std::string& file, const std::string& dataset, const Shape& g) {
  int ok = 1;
  if (my_rank() == 0) {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t d = f >= 0 ? H5Dopen2(f, dataset.c_str(), H5P_DEFAULT) : -1;
    EXPECT_GE(d, 0) << file << ":" << dataset;
    if (d >= 0) {
      const hid_t type = H5Dget_type(d);
      EXPECT_GT(H5Tequal(type, native_type<T>()), 0) << "element type of " << dataset;
      H5Tclose(type);
      const hid_t space = H5Dget_space(d);
      std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
      H5Sget_simple_extent_dims(space, dims.data(), nullptr);
      H5Sclose(space);
      std::vector<hsize_t> expected;
      for (int k = 0; k < g.rank(); ++k) expected.push_back(static_cast<hsize_t>(g.extent(k)));
      EXPECT_EQ(dims, expected) << dataset;
      std::vector<T> data(static_cast<std::size_t>(g.size()));
      EXPECT_GE(H5Dread(d, native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
      std::size_t n = 0, bad = 0;
      g.for_each([&](const Index& i) {
        if (data[n++] != value_of<T>(i) && bad++ < 5) ADD_FAILURE() << dataset << " at " << i;
      });
      H5Dclose(d);
    }
    if (f >= 0) H5Fclose(f);
    ok = !::testing::Test::HasFailure();
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm());
  EXPECT_TRUE(ok) << "rank 0 found a bad dataset " << file << ":" << dataset;
}

// As write_and_read_back, through the dataset `dataset` of `file`.
template <class T>
void hdf5_write_and_read_back(const std::string& file, const std::string& dataset,
                              const Shape& global, std::size_t a, std::size_t shift) {
  const auto& ds = distributions();
  const std::string name = file + ":" + dataset;
  auto written = make_tiles<T>(ds[a].fn(global, my_rank(), procs()), static_cast<Storage>(a % 3));
  fill_parts(written);
  hit::write(name, global, parts_of(written), comm());
  expect_dataset_holds<T>(file, dataset, global);
  for (const std::size_t b : {(a + 1) % ds.size(), (a + shift) % ds.size()}) {
    auto read = make_tiles<T>(ds[b].fn(global, my_rank(), procs()), static_cast<Storage>(b % 3));
    fill_sentinel(read);
    auto parts = parts_of(read);
    hit::read(name, global, parts, comm());
    expect_parts_hold(read, std::string("written under ") + ds[a].name + ", read under " +
                                ds[b].name + " " + global.str());
  }
}

// Every rank gets one Error of `kind` whose text has every one of `words`.
void expect_error_everywhere(const std::function<void()>& call, ErrorKind kind,
                             const std::vector<std::string>& words) {
  try {
    call();
    ADD_FAILURE() << "expected an error with '" << words.front() << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const std::string& w : words) EXPECT_THAT(e.what(), HasSubstr(w));
  }
}

// ---- tests ------------------------------------------------------------------------------------

TEST_F(TileIo, DistributionsArePartitions) {
  for (const Shape& g : {Shape::parse("[0:7][0:10]"), Shape::parse("[0:2][0:3]")}) {
    for (const auto& d : distributions()) expect_partition(g, d.fn);
  }
}

TEST_F(TileIo, EveryDistributionWrittenAndReadBackUnderOthers) {
  const Shape global = Shape::parse("[0:7][0:10]");
  for (std::size_t a = 0; a < distributions().size(); ++a) {
    write_and_read_back<double>(path("a.raw"), global, a, 4);
  }
}

TEST_F(TileIo, GlobalShapeWithOffsetsAndStrides) {
  // File positions are positions of the global shape, whatever its begins and strides.
  const Shape global = Shape::parse("[10:24:2][-3:7]");
  for (std::size_t a : {3, 5, 6}) write_and_read_back<double>(path("s.raw"), global, a, 3);
}

TEST_F(TileIo, ThreeDimensions) {
  const Shape global = Shape::parse("[0:5][0:4][-2:4]");
  for (std::size_t a : {2, 4, 5, 6}) write_and_read_back<double>(path("c.raw"), global, a, 5);
}

TEST_F(TileIo, OtherElementTypes) {
  const Shape global = Shape::parse("[0:6][0:9]");
  for (std::size_t a : {4, 6}) {
    write_and_read_back<float>(path("f.raw"), global, a, 0);
    write_and_read_back<std::int64_t>(path("l.raw"), global, a, 0);
    write_and_read_back<std::int32_t>(path("i.raw"), global, a, 0);
  }
}

TEST_F(TileIo, SingleTileConveniencesWithAnIdleRank) {
  const Shape global = Shape::parse("[0:5][0:8]");
  // One row block per rank except the last, which is idle (null tile) when there are several.
  const int active = std::max(1, procs() - 1);
  Tile<double> part;
  if (my_rank() < active) part = Tile<double>(global.with_sig(0, block_of(5, active, my_rank())));
  part.for_each([](const Index& i, double& x) { x = value_of<double>(i); });
  hit::write_raw(path("one.raw"), global, part, comm());
  expect_file_holds<double>(path("one.raw"), global);
  Tile<double> back;
  if (my_rank() == procs() - 1) back = Tile<double>(global, {.ghost = 2});
  hit::read_raw(path("one.raw"), global, back, comm());
  back.for_each([](const Index& i, double& x) { EXPECT_EQ(x, value_of<double>(i)) << i; });
}

TEST_F(TileIo, WrongSizeFileIsAnErrorOnEveryRank) {
  const Shape global = Shape::parse("[0:7][0:10]");
  if (my_rank() == 0) {
    std::FILE* f = std::fopen(path("short.raw").c_str(), "wb");
    const std::vector<double> ten(10, 1.0);
    std::fwrite(ten.data(), sizeof(double), ten.size(), f);
    std::fclose(f);
  }
  MPI_Barrier(comm());
  auto held = make_tiles<double>(row_blocks(global, my_rank(), procs()), Storage::plain);
  auto parts = parts_of(held);
  try {
    hit::read_raw(path("short.raw"), global, parts, comm());
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_THAT(e.what(), HasSubstr(path("short.raw")));
    EXPECT_THAT(e.what(), HasSubstr("has 80 bytes"));
    EXPECT_THAT(e.what(), HasSubstr("expected 560 bytes"));
    EXPECT_THAT(e.what(), HasSubstr("70 elements of 8 bytes"));
  }
  // The same file is the right size for 10 doubles, or 20 floats.
  const Shape small = Shape::parse("[0:2][0:5]");
  Tile<double> whole(my_rank() == 0 ? small : Shape());
  hit::read_raw(path("short.raw"), small, whole, comm());
  for (double v : whole.to_vector()) EXPECT_EQ(v, 1.0);
  Tile<float> wrong_type(small);
  try {
    hit::read_raw(path("short.raw"), small, wrong_type, comm());
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected 40 bytes"));
    EXPECT_THAT(e.what(), HasSubstr("10 elements of 4 bytes"));
  }
}

// check_finite names the first non-finite element of the file (its index in the global shape,
// offsets and strides included, and its position), whichever rank holds it, on every rank.
TEST_F(TileIo, NonFiniteElementsAreFoundWhereverTheyLie) {
  const Shape global = Shape::parse("[10:24:2][-3:7]");  // 7 x 10, position 23 is [14, 0]
  write_under<double>(path("n.raw"), global, distributions()[0], Storage::plain);
  for (std::size_t a = 0; a < distributions().size(); ++a) {
    auto clean =
        make_tiles<double>(distributions()[a].fn(global, my_rank(), procs()), Storage::plain);
    auto clean_parts = parts_of(clean);
    hit::read_raw(path("n.raw"), global, clean_parts, comm());
    EXPECT_NO_THROW(hit::check_finite(path("n.raw"), global, clean_parts, comm()));
  }
  if (my_rank() == 0) {
    // -inf at position 57, NaN at 23: the NaN is the first.
    std::FILE* f = std::fopen(path("n.raw").c_str(), "r+b");
    const double minus_inf = -std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::fseek(f, 57 * 8, SEEK_SET);
    std::fwrite(&minus_inf, sizeof(double), 1, f);
    std::fseek(f, 23 * 8, SEEK_SET);
    std::fwrite(&nan, sizeof(double), 1, f);
    std::fclose(f);
  }
  MPI_Barrier(comm());
  for (std::size_t a = 0; a < distributions().size(); ++a) {
    auto held =
        make_tiles<double>(distributions()[a].fn(global, my_rank(), procs()), Storage::plain);
    auto parts = parts_of(held);
    hit::read_raw(path("n.raw"), global, parts, comm());
    try {
      hit::check_finite(path("n.raw"), global, parts, comm(), "A (--a)");
      ADD_FAILURE() << "no error under " << distributions()[a].name;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_TRUE(e.everywhere());
      EXPECT_THAT(e.what(), HasSubstr("A (--a) '" + path("n.raw") +
                                      "': element [14, 0] (position 23 of the file) is NaN"))
          << distributions()[a].name;
    }
  }
}

TEST_F(TileIo, MissingFileIsAnErrorOnEveryRank) {
  Tile<double> t(Shape::parse("[0:4]"));
  for (const std::string& bad : {path("missing.raw"), dir_}) {
    try {
      hit::read_raw(bad, Shape::parse("[0:4]"), t, comm());
      ADD_FAILURE() << "expected an error for " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::io);
      EXPECT_THAT(e.what(), HasSubstr("cannot read tile data from '" + bad + "'"));
    }
  }
}

TEST_F(TileIo, UnwritablePathIsAnErrorOnEveryRankAndNoFileAppears) {
  const Shape global = Shape::parse("[0:4][0:4]");
  auto held = make_tiles<double>(row_blocks(global, my_rank(), procs()), Storage::plain);
  fs::create_directories(path("sub"));  // every rank; same folder
  MPI_Barrier(comm());
  const std::vector<std::string> before = listing();
  for (const std::string& bad :
       {path("no/such/folder/x.raw"), path("sub"), path("a-file/x.raw"), std::string()}) {
    if (bad == path("a-file/x.raw") && my_rank() == 0) {
      std::FILE* f = std::fopen(path("a-file").c_str(), "wb");
      std::fclose(f);
    }
    MPI_Barrier(comm());
    try {
      hit::write_raw(bad, global, parts_of(held), comm());
      ADD_FAILURE() << "expected an error for '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::io);
      EXPECT_THAT(e.what(),
                  HasSubstr(bad.empty() ? std::string("file name is empty") : "'" + bad + "'"));
    }
  }
  std::vector<std::string> expected = before;
  expected.push_back("a-file");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(listing(), expected);
  EXPECT_TRUE(fs::is_directory(path("sub")));
  EXPECT_TRUE(fs::is_empty(path("sub")));
}

// A failure in the middle of the write (the file size limit is hit while the temporary grows)
// is an error on every rank, removes the temporary and leaves the existing file untouched.
TEST_F(TileIo, FailedWriteLeavesExistingFileUnchanged) {
  const Shape global = Shape::parse("[0:40][0:50]");  // 16000 bytes
  const std::string file = path("keep.raw");
  if (my_rank() == 0) {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    std::fputs("precious", f);
    std::fclose(f);
  }
  MPI_Barrier(comm());
  auto held = make_tiles<double>(grid_blocks(global, my_rank(), procs()), Storage::plain);
  fill_parts(held);

  std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 4096;
  setrlimit(RLIMIT_FSIZE, &small);
  try {
    hit::write_raw(file, global, parts_of(held), comm());
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_THAT(e.what(), HasSubstr("'" + file + "'"));
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, SIG_DFL);

  EXPECT_EQ(listing(), std::vector<std::string>{"keep.raw"});
  if (my_rank() == 0) {
    std::FILE* f = std::fopen(file.c_str(), "rb");
    char text[32] = {};
    EXPECT_EQ(std::fread(text, 1, sizeof text, f), 8u);
    std::fclose(f);
    EXPECT_STREQ(text, "precious");
  }
  // And the same write without the limit replaces it.
  hit::write_raw(file, global, parts_of(held), comm());
  expect_file_holds<double>(file, global);
  EXPECT_EQ(listing(), std::vector<std::string>{"keep.raw"});
}

TEST_F(TileIo, PartsOutsideTheGlobalArrayAreAnErrorOnEveryRank) {
  const Shape global = Shape::parse("[0:4][0:4]");
  const std::string file = path("out.raw");
  auto held = make_tiles<double>(row_blocks(global, my_rank(), procs()), Storage::plain);
  const int culprit = procs() - 1;
  std::vector<Tile<double>> parts = parts_of(held);
  if (my_rank() == culprit) parts.push_back(Tile<double>(Shape::parse("[3:5][0:4]")));
  try {
    hit::write_raw(file, global, parts, comm());
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::shape);
    EXPECT_THAT(e.what(), HasSubstr("part [3:5][0:4] is not inside the global array [0:4][0:4]"));
    if (culprit != 0) {
      EXPECT_THAT(e.what(), HasSubstr("rank " + std::to_string(culprit)));
    }
  }
  std::vector<Tile<double>> wrong_rank = parts_of(held);
  if (my_rank() == culprit) wrong_rank.push_back(Tile<double>(Shape::parse("[0:4]")));
  try {
    std::vector<Tile<double>> copy = wrong_rank;
    hit::read_raw(file, global, copy, comm());
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::shape);
    EXPECT_THAT(e.what(), HasSubstr("part [0:4] has rank 1"));
  }
  EXPECT_TRUE(listing().empty());
}

// ---- HDF5 tests -------------------------------------------------------------------------------

TEST_F(TileIo, Hdf5EveryDistributionWrittenAndReadBackUnderOthers) {
  const Shape global = Shape::parse("[0:7][0:10]");
  for (std::size_t a = 0; a < distributions().size(); ++a) {
    hdf5_write_and_read_back<double>(path("a.h5"), "/group/inner/A", global, a, 4);
  }
  // Dataset positions are positions of the global shape, whatever its begins and strides.
  const Shape strided = Shape::parse("[10:24:2][-3:7]");
  for (std::size_t a : {3, 5, 6})
    hdf5_write_and_read_back<double>(path("s.h5"), "/S", strided, a, 3);
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.h5", "s.h5"}));
}

TEST_F(TileIo, Hdf5OtherElementTypesAndThreeDimensions) {
  const Shape global = Shape::parse("[0:6][0:9]");
  for (std::size_t a : {4, 6}) {
    hdf5_write_and_read_back<float>(path("t.h5"), "/f", global, a, 0);
    hdf5_write_and_read_back<std::int64_t>(path("t.h5"), "/l", global, a, 0);
    hdf5_write_and_read_back<std::int32_t>(path("t.h5"), "/i", global, a, 0);
  }
  hdf5_write_and_read_back<double>(path("t.h5"), "/cube", Shape::parse("[0:5][0:4][-2:4]"), 2, 5);
  // The datasets written before each other one are still there.
  expect_dataset_holds<float>(path("t.h5"), "/f", global);
  expect_dataset_holds<std::int64_t>(path("t.h5"), "/l", global);
  expect_dataset_holds<std::int32_t>(path("t.h5"), "/i", global);
}

TEST_F(TileIo, Hdf5SingleTilesAndADatasetReplaced) {
  const Shape global = Shape::parse("[0:5][0:8]");
  const int active = std::max(1, procs() - 1);
  Tile<double> part;
  if (my_rank() < active) part = Tile<double>(global.with_sig(0, block_of(5, active, my_rank())));
  part.for_each([](const Index&, double& x) { x = -1; });
  hit::write(path("one.h5") + ":/x", global, part, comm());
  hit::write(path("one.h5") + ":/y", global, part, comm());
  part.for_each([](const Index& i, double& x) { x = value_of<double>(i); });
  hit::write(path("one.h5") + ":/x", global, part, comm());  // replaces /x, keeps /y
  expect_dataset_holds<double>(path("one.h5"), "/x", global);
  Tile<double> back;
  if (my_rank() == procs() - 1) back = Tile<double>(global, {.ghost = 2});
  hit::read(path("one.h5") + ":/x", global, back, comm());
  back.for_each([](const Index& i, double& x) { EXPECT_EQ(x, value_of<double>(i)) << i; });
  if (my_rank() == procs() - 1) back.fill(0.0);
  hit::read(path("one.h5") + ":/y", global, back, comm());
  back.for_each([](const Index& i, double& x) { EXPECT_EQ(x, -1.0) << i; });
  EXPECT_EQ(listing(), std::vector<std::string>{"one.h5"});
}

// Each bad input is one Error on every rank, names the file and the dataset, and leaves the
// files as they were.
TEST_F(TileIo, Hdf5BadInputsAreAnErrorOnEveryRankAndLeaveTheFilesIntact) {
  const Shape global = Shape::parse("[0:4][0:6]");
  auto held = make_tiles<double>(row_blocks(global, my_rank(), procs()), Storage::plain);
  fill_parts(held);
  const std::string file = path("in.h5");
  hit::write(file + ":/g/A", global, parts_of(held), comm());
  if (my_rank() == 0) {
    std::FILE* f = std::fopen(path("raw.h5").c_str(), "wb");
    std::fputs("not hdf5", f);
    std::fclose(f);
  }
  MPI_Barrier(comm());
  auto parts = parts_of(held);
  const auto read = [&](const std::string& name, const Shape& g) {
    return [&, name, g] {
      auto small = make_tiles<double>(row_blocks(g, my_rank(), procs()), Storage::plain);
      auto p = parts_of(small);
      hit::read(name, g, p, comm());
    };
  };
  expect_error_everywhere(read(path("missing.h5") + ":/A", global), ErrorKind::io,
                          {"cannot read tile data from '" + path("missing.h5") + ":/A'"});
  expect_error_everywhere(read(file + ":/g/B", global), ErrorKind::io, {"has no dataset /g/B"});
  expect_error_everywhere(read(file + ":/nothing/A", global), ErrorKind::io,
                          {"has no dataset /nothing/A"});
  expect_error_everywhere(read(file + ":/g", global), ErrorKind::io, {"/g is not a dataset"});
  expect_error_everywhere(read(file + ":/g/A", Shape::parse("[0:6][0:4]")), ErrorKind::io,
                          {"the dataset's extents are [4, 6], expected [6, 4]"});
  expect_error_everywhere(
      [&] {
        Tile<float> t;
        hit::read(file + ":/g/A", global, t, comm());
      },
      ErrorKind::io, {"the dataset holds 64-bit floating point, expected 32-bit floating point"});
  expect_error_everywhere(read(path("raw.h5") + ":/A", global), ErrorKind::io,
                          {"is not an HDF5 file"});
  expect_error_everywhere(read(file, global), ErrorKind::invalid_argument,
                          {"is an HDF5 file: name the dataset too"});
  expect_error_everywhere(read(file + ":A", global), ErrorKind::invalid_argument,
                          {"name the dataset by its absolute path"});
  // Writes that fail: onto a file that is not HDF5, through a dataset where a group is wanted,
  // into a read-only file, into a folder that does not exist.
  const auto write = [&](const std::string& name) {
    return [&, name] { hit::write(name, global, parts, comm()); };
  };
  expect_error_everywhere(write(path("raw.h5") + ":/A"), ErrorKind::io,
                          {"exists and is not an HDF5 file"});
  expect_error_everywhere(write(file + ":/g/A/B"), ErrorKind::io,
                          {"cannot create the dataset /g/A/B"});
  if (my_rank() == 0) fs::permissions(file, fs::perms::owner_read | fs::perms::group_read);
  MPI_Barrier(comm());
  expect_error_everywhere(write(file + ":/g/C"), ErrorKind::io, {"read-only"});
  if (my_rank() == 0) fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  expect_error_everywhere(write(path("no/such/x.h5") + ":/A"), ErrorKind::io, {"does not exist"});
  MPI_Barrier(comm());
  EXPECT_EQ(listing(), (std::vector<std::string>{"in.h5", "raw.h5"}));
  expect_dataset_holds<double>(file, "/g/A", global);
  if (my_rank() == 0) {
    std::FILE* f = std::fopen(path("raw.h5").c_str(), "rb");
    char text[32] = {};
    EXPECT_EQ(std::fread(text, 1, sizeof text, f), 8u);
    std::fclose(f);
    EXPECT_STREQ(text, "not hdf5");
  }
}

}  // namespace
