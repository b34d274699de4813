// hit-test-procs: 1 2 3 4
// Matrix Market files and raw vectors read and written collectively (hit/sparse/matrix_market.hpp).
// Files are written here by rank 0 as text, and what every rank reads is gathered and compared
// with the entries the text was built from; each malformed file must fail on every rank with the
// file and the line the test counted while building the text. Large files spread their lines over
// every process's byte range, so line numbers cross ranges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/sparse/generate.hpp"
#include "hit/sparse/matrix_market.hpp"

namespace {

namespace fs = std::filesystem;
using hit::CsrRows;
using hit::ErrorKind;
using hit::index_t;
using ::testing::HasSubstr;

using Entries = std::map<std::pair<index_t, index_t>, double>;  // 0-based (row, col) -> value

MPI_Comm world() {
  return hit::Environment::current().comm();
}
int my_rank() {
  return hit::Environment::current().rank();
}
int procs() {
  return hit::Environment::current().size();
}

// A folder made by rank 0, known to all, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    if (my_rank() == 0) {
      char name[] = "/tmp/hit-mm-XXXXXX";
      path_ = ::mkdtemp(name);
    }
    hit::broadcast(path_, 0, world());
  }
  ~TempDir() {
    hit::barrier(world());
    std::error_code ec;
    if (my_rank() == 0) fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Rank 0 writes the text; everyone waits until it is there.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = file(name);
    if (my_rank() == 0) std::ofstream(p, std::ios::binary) << text;
    hit::barrier(world());
    return p;
  }
  std::vector<std::string> listing() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

struct Triplet {
  index_t row;
  index_t col;
  double value;
};

// Every rank's rows, gathered on every rank; also checks that each rank holds its block rows.
template <class T>
Entries gathered(const CsrRows<T>& mine, MPI_Comm comm, index_t rows_expected) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  mine.check("read rows");
  EXPECT_EQ(mine.global_rows, rows_expected);
  // Block rows, computed here: the first N mod P ranks get one more.
  const index_t base = rows_expected / size;
  const index_t extra = rows_expected % size;
  const index_t first = rank * base + std::min<index_t>(rank, extra);
  const index_t count = base + (rank < extra ? 1 : 0);
  EXPECT_EQ(mine.rows(), count);
  for (index_t r = 0; r < mine.rows(); ++r) EXPECT_EQ(mine.names[r], first + r);
  std::vector<Triplet> local;
  for (index_t r = 0; r < mine.rows(); ++r) {
    for (std::size_t k = 0; k < mine.columns(r).size(); ++k) {
      local.push_back(
          {mine.names[r], mine.columns(r)[k], static_cast<double>(mine.row_values(r)[k])});
    }
  }
  const int bytes = static_cast<int>(local.size() * sizeof(Triplet));
  std::vector<int> counts(size);
  MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  std::vector<int> at(size + 1, 0);
  for (int p = 0; p < size; ++p) at[p + 1] = at[p] + counts[p];
  std::vector<Triplet> all(at[size] / sizeof(Triplet));
  MPI_Allgatherv(local.data(), bytes, MPI_BYTE, all.data(), counts.data(), at.data(), MPI_BYTE,
                 comm);
  Entries out;
  for (const auto& t : all) {
    EXPECT_TRUE(out.emplace(std::pair{t.row, t.col}, t.value).second)
        << "twice: " << t.row << "," << t.col;
  }
  return out;
}

// The error every rank gets from `fn` (the test fails on a rank that gets none).
template <class F>
hit::Error error_from(F&& fn) {
  try {
    fn();
  } catch (const hit::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error on rank " << my_rank();
  return hit::Error(ErrorKind::internal, "(no error)");
}

TEST(MatrixMarketRead, GeneralWithCommentsBlankLinesAndAnyOrder) {
  TempDir dir;
  const std::string path = dir.write("a.mtx",
                                     "%%MatrixMarket matrix coordinate real general\n"
                                     "% a comment\n"
                                     "\n"
                                     "   \t\n"
                                     "4 5 6\n"
                                     "% between entries\n"
                                     "3 5 -2.5e+1\n"
                                     "1 1 1.0\n"
                                     "\n"
                                     "  4   2 0.125\n"
                                     "1 5 +3\n"
                                     "   % indented comment\n"
                                     "2 3\t-7\n"
                                     "3 1 1e-3\n"
                                     "% trailing comment\n");
  const Entries expected = {{{2, 4}, -25.0}, {{0, 0}, 1.0},  {{3, 1}, 0.125},
                            {{0, 4}, 3.0},   {{1, 2}, -7.0}, {{2, 0}, 1e-3}};
  const auto rows = hit::read_matrix_market<double>(path, world());
  EXPECT_EQ(rows.global_cols, 5);
  EXPECT_EQ(gathered(rows, world(), 4), expected);
}

TEST(MatrixMarketRead, SymmetricIsExpandedAndOddSpellingsRead) {
  TempDir dir;
  // Upper-case banner, CRLF line ends, no newline after the last line.
  const std::string path = dir.write("s.mtx",
                                     "%%MATRIXMARKET Matrix Coordinate REAL Symmetric\r\n"
                                     "3 3 4\r\n"
                                     "1 1 2\r\n"
                                     "3 1 -1\r\n"
                                     "2 2 5\r\n"
                                     "3 2 0.5");
  const Entries expected = {{{0, 0}, 2}, {{2, 0}, -1},  {{0, 2}, -1},
                            {{1, 1}, 5}, {{2, 1}, 0.5}, {{1, 2}, 0.5}};
  EXPECT_EQ(gathered(hit::read_matrix_market<float>(path, world()), world(), 3), expected);
}

TEST(MatrixMarketRead, PatternIntegerEmptyRowsAndMoreProcessesThanRows) {
  TempDir dir;
  const std::string pattern = dir.write("p.mtx",
                                        "%%MatrixMarket matrix coordinate pattern general\n"
                                        "2 3 3\n1 3\n2 1\n1 1\n");
  EXPECT_EQ(gathered(hit::read_matrix_market<double>(pattern, world()), world(), 2),
            (Entries{{{0, 2}, 1}, {{1, 0}, 1}, {{0, 0}, 1}}));
  const std::string integer = dir.write("i.mtx",
                                        "%%MatrixMarket matrix coordinate integer symmetric\n"
                                        "5 5 2\n5 1 -12\n3 3 +7\n");
  EXPECT_EQ(gathered(hit::read_matrix_market<double>(integer, world()), world(), 5),
            (Entries{{{4, 0}, -12}, {{0, 4}, -12}, {{2, 2}, 7}}));
  const std::string none =
      dir.write("z.mtx", "%%MatrixMarket matrix coordinate real general\n6 6 0\n");
  EXPECT_EQ(gathered(hit::read_matrix_market<double>(none, world()), world(), 6), Entries{});
  const std::string one =
      dir.write("one.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 3\n");
  EXPECT_EQ(gathered(hit::read_matrix_market<double>(one, world()), world(), 1),
            (Entries{{{0, 0}, 3}}));
}

// A file of k diagonal entries (i, i, i + 0.5) with comments and blank lines between them, with
// `bad` (when not empty) in place of entry `at`; `line` gets the line number of that entry.
std::string big_file(int k, int at, const std::string& bad, std::int64_t& line,
                     const std::string& size_line = "", const std::string& symmetry = "general") {
  std::ostringstream out;
  out << "%%MatrixMarket matrix coordinate real " << symmetry << "\n% made by the test\n";
  out << (size_line.empty() ? std::to_string(k) + " " + std::to_string(k) + " " + std::to_string(k)
                            : size_line)
      << "\n";
  std::int64_t number = 3;
  for (int i = 1; i <= k; ++i) {
    if (i % 7 == 0) {
      out << "% comment before entry " << i << "\n";
      ++number;
    }
    if (i % 11 == 0) {
      out << "\n";
      ++number;
    }
    ++number;
    if (i == at) line = number;
    out << (i == at && !bad.empty()
                ? bad
                : std::to_string(i) + " " + std::to_string(i) + " " + std::to_string(i) + ".5")
        << "\n";
  }
  return out.str();
}

TEST(MatrixMarketRead, LargeFileSpreadOverEveryRange) {
  TempDir dir;
  std::int64_t unused = 0;
  const std::string path = dir.write("big.mtx", big_file(3000, 0, "", unused));
  Entries expected;
  for (int i = 1; i <= 3000; ++i) expected[{i - 1, i - 1}] = i + 0.5;
  EXPECT_EQ(gathered(hit::read_matrix_market<double>(path, world()), world(), 3000), expected);
}

struct Bad {
  std::string name;
  std::string text;
  std::int64_t line;  // the line the message must name
  std::string says;
};

void expect_refused(const TempDir& dir, const Bad& bad, bool as_float = false) {
  const std::string path = dir.write(bad.name + ".mtx", bad.text);
  const hit::Error e = error_from([&] {
    if (as_float) {
      (void)hit::read_matrix_market<float>(path, world());
    } else {
      (void)hit::read_matrix_market<double>(path, world());
    }
  });
  EXPECT_EQ(e.kind(), ErrorKind::parse) << bad.name << ": " << e.what();
  EXPECT_THAT(e.what(), HasSubstr("'" + path + "', line " + std::to_string(bad.line) + ":"))
      << bad.name;
  EXPECT_THAT(e.what(), HasSubstr(bad.says)) << bad.name;
  EXPECT_TRUE(e.everywhere()) << bad.name;
}

TEST(MatrixMarketRead, MalformedHeadersNameFileAndLine) {
  TempDir dir;
  const std::string general = "%%MatrixMarket matrix coordinate real general\n";
  const std::vector<Bad> cases = {
      {"empty", "", 1, "empty"},
      {"not_mm", "hello world\n1 1 1\n", 1, "not a Matrix Market file"},
      {"short_banner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "has 4 words"},
      {"vector", "%%MatrixMarket vector coordinate real general\n", 1, "'vector' object"},
      {"array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1,
       "array (dense) format is not supported"},
      {"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1,
       "complex values are not supported"},
      {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 1,
       "hermitian matrices are not supported"},
      {"skew", "%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", 1,
       "skew-symmetric matrices are not supported"},
      {"field", "%%MatrixMarket matrix coordinate quaternion general\n", 1, "unknown field"},
      {"size_two", general + "% c\n\n3 3\n1 1 1\n", 4, "bad size line"},
      {"size_word", general + "3 x 2\n", 2, "bad size line"},
      {"size_negative", general + "3 3 -1\n", 2, "bad size line"},
      {"size_extra", general + "3 3 1 9\n1 1 1\n", 2, "bad size line"},
      {"no_size", general + "% only\n% comments\n", 3, "ends before the size line"},
      {"not_square", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", 2,
       "must be square"},
  };
  for (const Bad& bad : cases) expect_refused(dir, bad);
}

TEST(MatrixMarketRead, MalformedEntriesNameFileAndLine) {
  TempDir dir;
  const std::string general = "%%MatrixMarket matrix coordinate real general\n% c\n3 3 2\n";
  const std::string symmetric = "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n";
  const std::string pattern = "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n";
  const std::vector<Bad> cases = {
      {"fewer", general + "1 1 1\n% the end\n", 3, "announces 2 entries but the file has only 1"},
      {"more", general + "1 1 1\n\n2 2 1\n% x\n3 3 1\n", 8,
       "entry 3 of a file whose size line (line 3)"},
      {"row_high", general + "1 1 1\n4 1 1\n", 5, "row index 4 is outside 1..3"},
      {"row_zero", general + "0 1 1\n2 2 1\n", 4, "row index 0 is outside 1..3"},
      {"col_high", general + "1 1 1\n\n2 9 1\n", 6, "column index 9 is outside 1..3"},
      {"duplicate", general + "2 1 1\n% again:\n2 1 5\n", 6,
       "duplicate entry (2, 1), given before on line 4"},
      {"sym_duplicate", symmetric + "3 1 1\n3 1 2\n", 4,
       "duplicate entry (3, 1), given before on line 3"},
      {"sym_duplicate_diagonal", symmetric + "2 2 1\n2 2 2\n", 4,
       "duplicate entry (2, 2), given before on line 3"},
      {"above_diagonal", symmetric + "1 1 1\n1 3 2\n", 4, "entry (1, 3) lies above the diagonal"},
      {"nan", general + "1 1 nan\n2 2 1\n", 4, "not finite"},
      {"inf", general + "1 1 1\n2 2 -inf\n", 5, "not finite"},
      {"huge", general + "1 1 1\n2 2 1e999\n", 5, "not finite"},
      {"word", general + "1 1 abc\n2 2 1\n", 4, "value 'abc' is not a number"},
      {"trailing", general + "1 1 1.5x\n2 2 1\n", 4, "value '1.5x' is not a number"},
      {"index_real", general + "1.0 1 1\n2 2 1\n", 4, "row index '1.0' is not an integer"},
      {"missing_value", general + "1 1\n2 2 1\n", 4, "expected 'row column value'"},
      {"extra_value", general + "1 1 1 1\n2 2 1\n", 4, "expected 'row column value'"},
      {"pattern_value", pattern + "1 1 1\n2 2\n", 3, "a pattern file has no values"},
      {"integer_real", "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n", 3,
       "value '1.5' is not an integer"},
  };
  for (const Bad& bad : cases) expect_refused(dir, bad);
  expect_refused(dir, {"float_big", general + "1 1 1e300\n2 2 1\n", 4, "too large for float"},
                 true);
}

TEST(MatrixMarketRead, MalformedLinesDeepInLargeFiles) {
  TempDir dir;
  const int k = 2000;
  for (const int at : {1, 333, 1000, 1777, 2000}) {
    std::int64_t line = 0;
    const std::string text = big_file(k, at, "1 " + std::to_string(k + 1) + " 1", line);
    expect_refused(dir, {"range" + std::to_string(at), text, line, "column index 2001 is outside"});
    const std::string nan =
        big_file(k, at, std::to_string(at) + " " + std::to_string(at) + " NaN", line);
    expect_refused(dir, {"nan" + std::to_string(at), nan, line, "not finite"});
    const std::string above = big_file(k, at, "1 2 1", line, "", "symmetric");
    expect_refused(dir, {"above" + std::to_string(at), above, line, "above the diagonal"});
  }
  // One entry more than announced: the last entry's line is named.
  std::int64_t last = 0;
  const std::string more = big_file(k, k, "", last, "2000 2000 1999");
  expect_refused(dir, {"more", more, last, "entry 2000 of a file whose size line (line 3)"});
  const std::string fewer = big_file(k, k, "", last, "2000 2000 2001");
  expect_refused(dir, {"fewer", fewer, 3,
                       "announces 2001 entries but the file has only 2000 (it ends at line " +
                           std::to_string(last) + ")"});
  // A duplicate far from its first appearance.
  std::int64_t first = 0;
  (void)big_file(k, 17, "", first);
  std::int64_t second = 0;
  const std::string dup = big_file(k, 1900, "17 17 3", second);
  expect_refused(dir, {"dup", dup, second,
                       "duplicate entry (17, 17), given before on line " + std::to_string(first)});
}

TEST(MatrixMarketRead, MissingFileIsAnIoErrorEverywhere) {
  TempDir dir;
  const std::string path = dir.file("absent.mtx");
  const hit::Error e = error_from([&] { (void)hit::read_matrix_market<double>(path, world()); });
  EXPECT_EQ(e.kind(), ErrorKind::io);
  EXPECT_THAT(e.what(), HasSubstr(path));
  const hit::Error folder =
      error_from([&] { (void)hit::read_matrix_market<double>("/tmp", world()); });
  EXPECT_EQ(folder.kind(), ErrorKind::io);
  EXPECT_THAT(folder.what(), HasSubstr("folder"));
}

// The entries of generated rows, gathered (the independent side of the round trips).
Entries generated(const hit::GeneratorSpec& spec, MPI_Comm comm) {
  return gathered(hit::generate_rows<double>(spec, comm), comm, hit::generated_rows(spec));
}

TEST(MatrixMarketWrite, RoundTripsGeneralSymmetricAndPattern) {
  TempDir dir;
  for (const char* text : {"poisson2d:n=9,permute=3", "poisson3d:n=4"}) {
    const auto spec = hit::GeneratorSpec::parse(text);
    const index_t n = hit::generated_rows(spec);
    const auto mine = hit::generate_rows<double>(spec, world());
    const Entries expected = generated(spec, world());
    const std::string general = dir.file("g.mtx");
    hit::write_matrix_market(general, mine, world());
    EXPECT_EQ(gathered(hit::read_matrix_market<double>(general, world()), world(), n), expected)
        << text;
    const std::string symmetric = dir.file("s.mtx");
    hit::write_matrix_market(symmetric, mine, world(), {.symmetric = true});
    EXPECT_EQ(gathered(hit::read_matrix_market<double>(symmetric, world()), world(), n), expected)
        << text;
    if (my_rank() == 0) {
      // Half the off-diagonal entries (and every diagonal one) are in the symmetric file.
      std::ifstream in(symmetric);
      std::string banner;
      std::getline(in, banner);
      EXPECT_EQ(banner, "%%MatrixMarket matrix coordinate real symmetric");
      std::int64_t lines = 0;
      for (std::string l; std::getline(in, l);) ++lines;
      EXPECT_EQ(lines, 2 + (static_cast<std::int64_t>(expected.size()) + n) / 2) << text;
    }
    const std::string pattern = dir.file("p.mtx");
    hit::write_matrix_market(pattern, mine, world(), {.pattern = true});
    Entries ones = expected;
    for (auto& [where, value] : ones) value = 1;
    EXPECT_EQ(gathered(hit::read_matrix_market<double>(pattern, world()), world(), n), ones)
        << text;
  }
  EXPECT_EQ(dir.listing(), (std::vector<std::string>{"g.mtx", "p.mtx", "s.mtx"}));
}

TEST(MatrixMarketWrite, ValuesReadBackExactly) {
  TempDir dir;
  // Rows in any order and any set per rank: rank p holds rows p, p + P, ... of a 10 x 7 matrix.
  CsrRows<double> mine;
  mine.global_rows = 10;
  mine.global_cols = 7;
  Entries expected;
  for (index_t r = 0; r < 10; ++r) {
    for (index_t c = r % 3; c < 7; c += 2) {
      const double v =
          1.0 / (3.0 + static_cast<double>(r * 7 + c)) * (c % 2 == 0 ? 1e-300 : -1e300);
      expected[{r, c}] = v;
      if (r % procs() != my_rank()) continue;
      if (mine.names.empty() || mine.names.back() != r) {
        mine.names.push_back(r);
        mine.row_ptr.push_back(mine.row_ptr.back());
      }
      mine.cols.push_back(c);
      mine.values.push_back(v);
      ++mine.row_ptr.back();
    }
  }
  std::reverse(mine.names.begin(), mine.names.end());  // held in descending order: fine too
  CsrRows<double> reversed = mine;
  reversed.cols.clear();
  reversed.values.clear();
  reversed.row_ptr = {0};
  for (auto r = mine.rows(); r-- > 0;) {
    for (std::size_t k = 0; k < mine.columns(r).size(); ++k) {
      reversed.cols.push_back(mine.columns(r)[k]);
      reversed.values.push_back(mine.row_values(r)[k]);
    }
    reversed.row_ptr.push_back(static_cast<index_t>(reversed.cols.size()));
  }
  for (const int precision : {17, 0}) {
    const std::string path = dir.file("v.mtx");
    hit::write_matrix_market(path, reversed, world(), {.precision = precision});
    EXPECT_EQ(gathered(hit::read_matrix_market<double>(path, world()), world(), 10), expected);
  }
}

TEST(MatrixMarketWrite, ReadAtAnotherProcessCount) {
  TempDir dir;
  const auto spec = hit::GeneratorSpec::parse("poisson2d:n=31,permute");
  const index_t n = hit::generated_rows(spec);
  // Written by all, read by the first max(1, P-1) ranks; then written by those, read by all.
  const int part = std::max(1, procs() - 1);
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(world(), my_rank() < part ? 0 : MPI_UNDEFINED, my_rank(), &sub);
  const std::string path = dir.file("m.mtx");
  hit::write_matrix_market(path, hit::generate_rows<double>(spec, world()), world(),
                           {.symmetric = true});
  const std::string again = dir.file("again.mtx");
  if (sub != MPI_COMM_NULL) {
    const auto read = hit::read_matrix_market<double>(path, sub);
    EXPECT_EQ(gathered(read, sub, n), generated(spec, sub));
    hit::write_matrix_market(again, read, sub);
    MPI_Comm_free(&sub);
  }
  hit::barrier(world());
  EXPECT_EQ(gathered(hit::read_matrix_market<double>(again, world()), world(), n),
            generated(spec, world()));
}

TEST(MatrixMarketWrite, FailuresLeaveNothing) {
  TempDir dir;
  const auto mine = hit::generate_rows<double>(hit::GeneratorSpec::parse("poisson2d:n=5"), world());
  const hit::Error missing =
      error_from([&] { hit::write_matrix_market(dir.file("no/such/folder.mtx"), mine, world()); });
  EXPECT_EQ(missing.kind(), ErrorKind::io);
  EXPECT_THAT(missing.what(), HasSubstr("no/such/folder.mtx"));
  auto bad = mine;
  if (my_rank() == procs() - 1 && !bad.values.empty()) bad.values.back() = std::nan("");
  const hit::Error nan =
      error_from([&] { hit::write_matrix_market(dir.file("nan.mtx"), bad, world()); });
  EXPECT_THAT(nan.what(), HasSubstr("NaN"));
  if (procs() > 1) {  // with one process there is nobody to disagree with
    auto wide = mine;
    if (my_rank() == 0) wide.global_cols = 26;
    const hit::Error extents =
        error_from([&] { hit::write_matrix_market(dir.file("w.mtx"), wide, world()); });
    EXPECT_THAT(extents.what(), HasSubstr("disagree on the global extents"));
  }
  auto rect = mine;
  rect.global_cols = 30;
  const hit::Error square = error_from(
      [&] { hit::write_matrix_market(dir.file("r.mtx"), rect, world(), {.symmetric = true}); });
  EXPECT_THAT(square.what(), HasSubstr("square"));
  hit::barrier(world());
  if (my_rank() == 0) {
    EXPECT_TRUE(dir.listing().empty());
  }
}

// A NaN or an infinity in a raw vector is refused on every process, naming the file and the index
// of the first (the lowest rank holding one reports), wherever the block boundaries fall.
TEST(RawVector, NonFiniteValuesAreNamedByIndex) {
  TempDir dir;
  const index_t n = 11;
  const std::string path = dir.file("b.bin");
  for (const index_t bad : {index_t{0}, index_t{5}, n - 1}) {
    for (const double value :
         {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()}) {
      if (my_rank() == 0) {
        std::vector<double> all(static_cast<std::size_t>(n), 1.0);
        all[static_cast<std::size_t>(bad)] = value;
        all[static_cast<std::size_t>(n - 1)] = bad == n - 1 ? value : 2.0;  // one bad value only
        std::FILE* f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(std::fwrite(all.data(), sizeof(double), all.size(), f), all.size());
        std::fclose(f);
      }
      hit::barrier(world());
      const hit::Error e = error_from([&] { (void)hit::read_vector<double>(path, n, world()); });
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_THAT(e.what(),
                  HasSubstr("'" + path + "' holds " + (std::isnan(value) ? "NaN" : "an infinity") +
                            " at index " + std::to_string(bad) + " (0-based)"));
      hit::barrier(world());
    }
  }
}

TEST(RawVector, RoundTripAndSizes) {
  TempDir dir;
  for (const index_t n : {0, 1, 13, 1000}) {
    const index_t base = n / procs();
    const index_t extra = n % procs();
    const index_t first = my_rank() * base + std::min<index_t>(my_rank(), extra);
    const index_t count = base + (my_rank() < extra ? 1 : 0);
    std::vector<double> mine;
    for (index_t i = first; i < first + count; ++i)
      mine.push_back(0.5 * static_cast<double>(i) - 3.0);
    const std::string path = dir.file("x.bin");
    hit::write_vector<double>(path, n, mine, world());
    if (my_rank() == 0) {
      std::FILE* f = std::fopen(path.c_str(), "rb");
      ASSERT_NE(f, nullptr);
      std::vector<double> all(static_cast<std::size_t>(n) + 1);
      EXPECT_EQ(std::fread(all.data(), sizeof(double), all.size(), f), static_cast<std::size_t>(n));
      std::fclose(f);
      for (index_t i = 0; i < n; ++i) EXPECT_EQ(all[i], 0.5 * static_cast<double>(i) - 3.0);
    }
    EXPECT_EQ(hit::read_vector<double>(path, n, world()), mine) << n;
    if (n > 0) {
      const hit::Error e =
          error_from([&] { (void)hit::read_vector<double>(path, n + 1, world()); });
      EXPECT_EQ(e.kind(), ErrorKind::io);
      EXPECT_THAT(e.what(), HasSubstr("'" + path + "' has " + std::to_string(n * 8) + " bytes"));
    }
    // Floats: the same file is 2n floats.
    EXPECT_EQ(hit::read_vector<float>(path, 2 * n, world()).size(),
              static_cast<std::size_t>(2 * n / procs() + (my_rank() < (2 * n) % procs() ? 1 : 0)));
  }
  std::vector<double> wrong(my_rank() == 0 ? 3 : 0);
  const hit::Error e =
      error_from([&] { hit::write_vector<double>(dir.file("y.bin"), 2, wrong, world()); });
  EXPECT_THAT(e.what(), HasSubstr("block rows"));
  hit::barrier(world());
  if (my_rank() == 0) {
    EXPECT_EQ(dir.listing(), std::vector<std::string>{"x.bin"});
  }
}

}  // namespace
