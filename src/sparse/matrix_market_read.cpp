// Collective reading of Matrix Market files (hit/sparse/matrix_market.hpp): rank 0 reads the
// header, every process parses the lines starting in its byte range of the data, the entries go to
// the owners of their rows in one all-to-all, and each owner sorts and checks its rows. Failures
// found while parsing carry a line number local to the range until a prefix sum of the line
// counts makes it global; duplicates and surplus entries are found later, so their lines are
// looked up by scanning the ranges once more (only on that failure path).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <numeric>
#include <tuple>

#include "hit/core/collective.hpp"
#include "hit/core/host_memory_budget.hpp"
#include "hit/sparse/matrix_market.hpp"
#include "sparse/csr_block_rows.hpp"
#include "sparse/matrix_market_file.hpp"

namespace hit {
namespace {

using detail::Failure;
using detail::LineScanner;
using detail::ReadOnlyFile;

constexpr const char* banner_form =
    "'%%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric>'";

enum Field : int { real_field, integer_field, pattern_field };

struct Header {
  index_t rows = 0;
  index_t cols = 0;
  index_t entries = 0;
  int field = real_field;
  int symmetric = 0;
  std::int64_t data_offset = 0;  // the byte after the size line
  std::int64_t size_line = 0;    // its line number (1-based)
};

template <class T>
struct Entry {
  index_t row;  // 0-based
  index_t col;
  T value;
};

std::string at_line(const std::string& path, std::int64_t line) {
  return "Matrix Market file '" + path + "', line " + std::to_string(line) + ": ";
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// The first whitespace-separated words of a line, at most `most` + 1 of them (enough to tell
// that there are too many), without allocating: this runs once per line of the file.
struct Words {
  std::array<std::string_view, 6> word;
  std::size_t count = 0;
  [[nodiscard]] std::size_t size() const noexcept { return count; }
  [[nodiscard]] bool empty() const noexcept { return count == 0; }
  std::string_view operator[](std::size_t i) const noexcept { return word[i]; }
};

Words words(std::string_view line, std::size_t most = 5) {
  Words out;
  std::size_t i = 0;
  while (out.count <= most) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    out.word[out.count++] = line.substr(start, i - start);
  }
  return out;
}

// Blank or a comment: nothing but whitespace before the end or a '%'.
bool skipped(std::string_view line) {
  for (const char c : line) {
    if (!is_space(c)) return c == '%';
  }
  return true;
}

std::string lower(std::string_view word) {
  std::string out(word);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <class I>
bool parse_integer(std::string_view word, I& out) {
  if (word.size() > 1 && word.front() == '+') word.remove_prefix(1);
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  return ec == std::errc() && end == word.data() + word.size();
}

void parse_banner(const std::string& path, std::string_view line, Header& h) {
  const auto w = words(line);
  auto fail = [&](const std::string& why) {
    return Error(ErrorKind::parse, at_line(path, 1) + why);
  };
  if (w.empty() || lower(w[0]) != "%%matrixmarket") {
    throw fail("not a Matrix Market file: the first line must be the banner " +
               std::string(banner_form) + ", found '" + excerpt(line) + "'");
  }
  if (w.size() != 5) {
    throw fail("the banner '" + excerpt(line) + "' has " + std::to_string(w.size()) +
               " words, expected 5: " + banner_form);
  }
  if (lower(w[1]) != "matrix") {
    throw fail("a Matrix Market '" + excerpt(w[1]) + "' object is not supported: only 'matrix'");
  }
  const std::string format = lower(w[2]);
  if (format == "array") {
    throw fail("the array (dense) format is not supported: only coordinate (sparse) files");
  }
  if (format != "coordinate")
    throw fail("unknown format '" + excerpt(w[2]) + "': expected coordinate");
  const std::string field = lower(w[3]);
  if (field == "real" || field == "double") {
    h.field = real_field;
  } else if (field == "integer") {
    h.field = integer_field;
  } else if (field == "pattern") {
    h.field = pattern_field;
  } else if (field == "complex") {
    throw fail("complex values are not supported: only real, integer and pattern files");
  } else {
    throw fail("unknown field '" + excerpt(w[3]) + "': expected real, integer or pattern");
  }
  const std::string symmetry = lower(w[4]);
  if (symmetry == "general" || symmetry == "symmetric") {
    h.symmetric = symmetry == "symmetric" ? 1 : 0;
  } else if (symmetry == "hermitian" || symmetry == "skew-symmetric") {
    throw fail(symmetry + " matrices are not supported: only general and symmetric");
  } else {
    throw fail("unknown symmetry '" + excerpt(w[4]) + "': expected general or symmetric");
  }
}

void parse_size_line(const std::string& path, std::string_view line, std::int64_t number,
                     Header& h) {
  const auto w = words(line);
  if (w.size() != 3 || !parse_integer(w[0], h.rows) || !parse_integer(w[1], h.cols) ||
      !parse_integer(w[2], h.entries) || h.rows < 0 || h.cols < 0 || h.entries < 0) {
    throw Error(ErrorKind::parse, at_line(path, number) + "bad size line '" + excerpt(line) +
                                      "': expected 'rows columns entries', three integers >= 0");
  }
  if (h.symmetric != 0 && h.rows != h.cols) {
    throw Error(ErrorKind::parse, at_line(path, number) +
                                      "a symmetric matrix must be square, the "
                                      "size line says " +
                                      std::to_string(h.rows) + " x " + std::to_string(h.cols));
  }
}

// Rank 0: the banner (line 1), comments and blank lines, the size line.
Header read_header(const std::string& path, const ReadOnlyFile& file) {
  LineScanner lines(file, 0, 0, file.size());
  std::string_view line;
  if (!lines.next(line)) {
    throw Error(ErrorKind::parse,
                at_line(path, 1) + "the file is empty: expected the banner " + banner_form);
  }
  Header h;
  parse_banner(path, line, h);
  std::int64_t number = 1;
  while (lines.next(line)) {
    ++number;
    if (skipped(line)) continue;
    parse_size_line(path, line, number, h);
    h.size_line = number;
    h.data_offset = lines.position();
    return h;
  }
  throw Error(ErrorKind::parse,
              at_line(path, number) + "the file ends before the size line 'rows columns entries'");
}

// One value of a real or integer file as T, or why not.
template <class T>
std::optional<std::string> parse_value(std::string_view word, int field, T& out) {
  double value = 0;
  if (field == integer_field) {
    std::int64_t integer = 0;
    if (!parse_integer(word, integer)) return "value '" + excerpt(word) + "' is not an integer";
    value = static_cast<double>(integer);
  } else {
    std::string_view digits = word;
    if (digits.size() > 1 && digits.front() == '+' && digits[1] != '-') digits.remove_prefix(1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (end != digits.data() + digits.size() || ec == std::errc::invalid_argument) {
      return "value '" + excerpt(word) + "' is not a number";
    }
    if (ec == std::errc::result_out_of_range) {  // underflows read as 0 or subnormal, overflows inf
      value = std::strtod(std::string(digits).c_str(), nullptr);
    }
    if (!std::isfinite(value)) return "value '" + excerpt(word) + "' is not finite (NaN or inf)";
  }
  out = static_cast<T>(value);
  if (!std::isfinite(out)) return "value '" + excerpt(word) + "' is too large for float";
  return std::nullopt;
}

// One entry line: 1-based indices inside the size line's extents, the value (1 for pattern).
template <class T>
std::optional<std::string> parse_entry(std::string_view line, const Header& h, Entry<T>& e) {
  const std::size_t want = h.field == pattern_field ? 2 : 3;
  const auto w = words(line, want);
  if (w.size() != want) {
    return "expected '" + std::string(want == 2 ? "row column" : "row column value") +
           "', found '" + excerpt(line) + "'" +
           (want == 2 && w.size() == 3 ? " (a pattern file has no values)" : "");
  }
  index_t i = 0;
  index_t j = 0;
  if (!parse_integer(w[0], i)) return "row index '" + excerpt(w[0]) + "' is not an integer";
  if (!parse_integer(w[1], j)) return "column index '" + excerpt(w[1]) + "' is not an integer";
  if (i < 1 || i > h.rows) {
    return "row index " + std::to_string(i) + " is outside 1.." + std::to_string(h.rows);
  }
  if (j < 1 || j > h.cols) {
    return "column index " + std::to_string(j) + " is outside 1.." + std::to_string(h.cols);
  }
  if (h.symmetric != 0 && j > i) {
    return "entry (" + std::to_string(i) + ", " + std::to_string(j) +
           ") lies above the diagonal of a symmetric file (which lists column <= row only)";
  }
  e.row = i - 1;
  e.col = j - 1;
  e.value = T(1);
  if (h.field != pattern_field) return parse_value(w[2], h.field, e.value);
  return std::nullopt;
}

// The byte range of the data that this process parses.
std::pair<std::int64_t, std::int64_t> my_range(const Header& h, std::int64_t file_size,
                                               MPI_Comm comm) {
  const auto [first, last] = detail::block_rows(file_size - h.data_offset, comm);
  return {h.data_offset + first, h.data_offset + last};
}

template <class T>
struct Scan {
  std::vector<Entry<T>> entries;  // symmetric files expanded
  std::int64_t lines = 0;         // lines started in the range (up to a failure)
  std::int64_t stored = 0;        // entry lines among them
  std::optional<Failure> failure;
  std::int64_t failure_line = -1;  // 0-based within the range; -1: no line (a read failure)
};

template <class T>
void scan_range(const ReadOnlyFile& file, const Header& h, MPI_Comm comm, Scan<T>& out) {
  const auto [begin, end] = my_range(h, file.size(), comm);
  LineScanner lines(file, h.data_offset, begin, end);
  std::string_view line;
  Entry<T> e{};
  while (lines.next(line)) {
    ++out.lines;
    if (skipped(line)) continue;
    if (auto why = parse_entry(line, h, e)) {
      out.failure = Failure{ErrorKind::parse, *why};
      out.failure_line = out.lines - 1;
      --out.lines;  // the lines before the failing one are counted, not it
      return;
    }
    ++out.stored;
    out.entries.push_back(e);
    if (h.symmetric != 0 && e.row != e.col) out.entries.push_back({e.col, e.row, e.value});
  }
}

// 0-based lines in this process's range whose entry is `target` (1-based indices), or the
// line of the k-th entry (0-based) when k >= 0: the failure paths' second look at the text.
std::vector<std::int64_t> find_lines(const ReadOnlyFile& file, const Header& h, MPI_Comm comm,
                                     std::pair<index_t, index_t> target, std::int64_t k) {
  const auto [begin, end] = my_range(h, file.size(), comm);
  LineScanner lines(file, h.data_offset, begin, end);
  std::vector<std::int64_t> found;
  std::string_view line;
  std::int64_t number = -1;
  std::int64_t entry = -1;
  while (lines.next(line)) {
    ++number;
    if (skipped(line)) continue;
    ++entry;
    if (k >= 0) {
      if (entry == k) return {number};
      continue;
    }
    const auto w = words(line, 2);
    index_t i = 0;
    index_t j = 0;
    if (w.size() >= 2 && parse_integer(w[0], i) && parse_integer(w[1], j) &&
        std::pair{i, j} == target) {
      found.push_back(number);
      if (found.size() == 2) break;
    }
  }
  return found;
}

struct Counts {
  std::int64_t lines;
  std::int64_t stored;
};

// After the scan: a surplus entry (the one past the size line's count, looked up in the text) or
// the first parse failure, with global line numbers, agreed; then a shortfall of entries.
template <class T>
std::int64_t agree_on_scan(const std::string& path, const ReadOnlyFile& file, const Header& h,
                           const Scan<T>& scan, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const auto all = allgather(Counts{scan.lines, scan.stored}, comm);
  std::int64_t lines_before = 0;
  std::int64_t stored_before = 0;
  std::int64_t lines = 0;
  std::int64_t stored = 0;
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (static_cast<int>(p) < rank) {
      lines_before += all[p].lines;
      stored_before += all[p].stored;
    }
    lines += all[p].lines;
    stored += all[p].stored;
  }
  const std::int64_t first_line = h.size_line + 1 + lines_before;
  std::optional<Failure> failure;
  try {
    if (stored_before <= h.entries && h.entries < stored_before + scan.stored) {
      const auto line = find_lines(file, h, comm, {}, h.entries - stored_before).at(0);
      failure =
          Failure{ErrorKind::parse,
                  at_line(path, first_line + line) + "entry " + std::to_string(h.entries + 1) +
                      " of a file whose size line (line " + std::to_string(h.size_line) +
                      ") announces " + std::to_string(h.entries) + " entries"};
    } else if (scan.failure) {
      failure = scan.failure;
      if (scan.failure_line >= 0) {
        failure->message = at_line(path, first_line + scan.failure_line) + failure->message;
      }
    }
  } catch (...) {
    failure = detail::failure_of(std::current_exception());
  }
  detail::agree_first(comm, failure);
  if (stored < h.entries) {
    throw Error::everywhere(ErrorKind::parse,
                            at_line(path, h.size_line) + "the size line announces " +
                                std::to_string(h.entries) + " entries but the file has only " +
                                std::to_string(stored) + " (it ends at line " +
                                std::to_string(h.size_line + lines) + ")");
  }
  return first_line;
}

// Every entry to the process whose block holds its row, in one all-to-all.
template <class T>
std::vector<Entry<T>> exchange(std::vector<Entry<T>>& mine, index_t rows, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size == 1) return std::move(mine);  // every row is this process's: nothing to sort by owner
  const auto parts = static_cast<std::size_t>(size);
  std::vector<std::int64_t> send_counts(parts, 0);
  for (const auto& e : mine) {
    ++send_counts[static_cast<std::size_t>(detail::block_owner(rows, size, e.row))];
  }
  std::vector<std::int64_t> recv_counts(parts, 0);
  check_mpi(
      MPI_Alltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1, MPI_INT64_T, comm),
      "MPI_Alltoall of Matrix Market entry counts");
  std::int64_t received_total = 0;
  for (const auto c : recv_counts) received_total += c;
  std::int64_t most =
      std::max<std::int64_t>(static_cast<std::int64_t>(mine.size()), received_total);
  allreduce_in_place(&most, 1, MPI_INT64_T, MPI_MAX, comm);
  if (most > std::numeric_limits<int>::max()) {
    throw Error::everywhere(ErrorKind::invalid_argument,
                            "Matrix Market read: a process would send or receive " +
                                std::to_string(most) +
                                " entries, more than one all-to-all moves (2^31 - 1): use more "
                                "processes");
  }
  std::vector<int> send_n(send_counts.begin(), send_counts.end());
  std::vector<int> recv_n(recv_counts.begin(), recv_counts.end());
  std::vector<int> send_at(parts + 1, 0);
  std::vector<int> recv_at(parts + 1, 0);
  for (std::size_t p = 0; p < parts; ++p) {
    send_at[p + 1] = send_at[p] + send_n[p];
    recv_at[p + 1] = recv_at[p] + recv_n[p];
  }
  std::vector<Entry<T>> send(mine.size());
  std::vector<int> next(send_at.begin(), send_at.end() - 1);
  for (const auto& e : mine) {
    const auto to = static_cast<std::size_t>(detail::block_owner(rows, size, e.row));
    send[static_cast<std::size_t>(next[to]++)] = e;
  }
  std::vector<Entry<T>>().swap(mine);  // the unsorted copy goes before the received one comes
  std::vector<Entry<T>> received(static_cast<std::size_t>(received_total));
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(sizeof(Entry<T>)), MPI_BYTE, &type);
  MPI_Type_commit(&type);
  const int code = MPI_Alltoallv(send.data(), send_n.data(), send_at.data(), type, received.data(),
                                 recv_n.data(), recv_at.data(), type, comm);
  MPI_Type_free(&type);
  check_mpi(code, "MPI_Alltoallv of Matrix Market entries");
  return received;
}

// This process's block rows from the entries it received: a counting sort by row, then each row
// sorted by column. The first duplicate (row, col) seen, if any, is left in `duplicate`.
template <class T>
CsrRows<T> build_rows(std::vector<Entry<T>>& received, const Header& h, MPI_Comm comm,
                      std::optional<std::pair<index_t, index_t>>& duplicate) {
  const auto [first, last] = detail::block_rows(h.rows, comm);
  CsrRows<T> out;
  out.global_rows = h.rows;
  out.global_cols = h.cols;
  const auto held = static_cast<std::size_t>(last - first);
  out.names.resize(held);
  for (std::size_t r = 0; r < held; ++r) out.names[r] = first + static_cast<index_t>(r);
  out.row_ptr.assign(held + 1, 0);
  for (const auto& e : received) ++out.row_ptr[static_cast<std::size_t>(e.row - first) + 1];
  for (std::size_t r = 0; r < held; ++r) out.row_ptr[r + 1] += out.row_ptr[r];
  out.cols.resize(received.size());
  out.values.resize(received.size());
  {
    std::vector<index_t> next(out.row_ptr.begin(), out.row_ptr.end() - 1);
    for (const auto& e : received) {
      const auto k = static_cast<std::size_t>(next[static_cast<std::size_t>(e.row - first)]++);
      out.cols[k] = e.col;
      out.values[k] = e.value;
    }
  }
  std::vector<Entry<T>>().swap(received);
  std::vector<std::pair<index_t, T>> row;
  for (std::size_t r = 0; r < held; ++r) {
    const auto b = static_cast<std::size_t>(out.row_ptr[r]);
    const auto e = static_cast<std::size_t>(out.row_ptr[r + 1]);
    if (!std::is_sorted(out.cols.begin() + b, out.cols.begin() + e)) {
      row.clear();
      for (std::size_t k = b; k < e; ++k) row.emplace_back(out.cols[k], out.values[k]);
      std::sort(row.begin(), row.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      for (std::size_t k = b; k < e; ++k) std::tie(out.cols[k], out.values[k]) = row[k - b];
    }
    const auto same = std::adjacent_find(out.cols.begin() + b, out.cols.begin() + e);
    if (!duplicate && same != out.cols.begin() + e) duplicate = std::pair{out.names[r], *same};
  }
  return out;
}

struct Duplicate {
  std::int64_t has;
  index_t row;
  index_t col;
};

// Agrees on the duplicate entry of the lowest rank that found one, and names its two lines.
void agree_on_duplicates(const std::string& path, const ReadOnlyFile& file, const Header& h,
                         std::int64_t first_line,
                         const std::optional<std::pair<index_t, index_t>>& mine, MPI_Comm comm) {
  const auto all =
      allgather(Duplicate{mine ? 1 : 0, mine ? mine->first : 0, mine ? mine->second : 0}, comm);
  const auto found = std::find_if(all.begin(), all.end(), [](const auto& d) { return d.has != 0; });
  if (found == all.end()) return;
  // As the file lists it: a symmetric file's entry lies on or below the diagonal.
  index_t i = found->row + 1;
  index_t j = found->col + 1;
  if (h.symmetric != 0 && j > i) std::swap(i, j);
  struct Two {
    std::int64_t a;
    std::int64_t b;
  };
  Two lines{-1, -1};
  try {
    const auto local = find_lines(file, h, comm, {i, j}, -1);
    if (!local.empty()) lines.a = first_line + local[0];
    if (local.size() > 1) lines.b = first_line + local[1];
  } catch (const Error&) {
    // A read failure here leaves the lines unnamed; the duplicate is reported all the same.
  }
  std::vector<std::int64_t> seen;
  for (const Two& t : allgather(lines, comm)) {
    if (t.a >= 0) seen.push_back(t.a);
    if (t.b >= 0) seen.push_back(t.b);
  }
  std::sort(seen.begin(), seen.end());
  const std::string entry = "(" + std::to_string(i) + ", " + std::to_string(j) + ")";
  if (seen.size() < 2) {
    throw Error::everywhere(ErrorKind::parse,
                            "Matrix Market file '" + path + "': duplicate entry " + entry);
  }
  throw Error::everywhere(ErrorKind::parse, at_line(path, seen[1]) + "duplicate entry " + entry +
                                                ", given before on line " +
                                                std::to_string(seen[0]));
}

// The size line decides what the block rows allocate (a name and an offset per row); the entries
// are at most what the data holds (a line of at least 4 bytes, "1 1\n"), twice for a symmetric
// file. Refused before any of it is allocated when the largest block exceeds the host.
void require_room(const std::string& path, const ReadOnlyFile& file, const Header& h,
                  std::size_t value_bytes, MPI_Comm comm) {
  int procs = 1;
  MPI_Comm_size(comm, &procs);
  const double rows = std::ceil(double(h.rows) / procs);
  const double data_lines = double(file.size() - h.data_offset) / 4;
  const double entries =
      std::min(double(h.entries), data_lines) * (h.symmetric != 0 ? 2 : 1) / procs;
  require_host_memory(detail::block_rows_bytes(rows, entries, value_bytes),
                      at_line(path, h.size_line) + "the size line announces " +
                          std::to_string(h.rows) + " rows and " + std::to_string(h.entries) +
                          " entries: the block rows of the largest of " + std::to_string(procs) +
                          " processes",
                      comm);
}

}  // namespace

template <class T>
CsrRows<T> read_matrix_market(const std::string& path, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::unique_ptr<ReadOnlyFile> file;
  Header h;
  std::optional<Failure> failure;
  try {
    file = std::make_unique<ReadOnlyFile>(path, "Matrix Market file");
    if (rank == 0) h = read_header(path, *file);
  } catch (...) {
    failure = detail::failure_of(std::current_exception());
  }
  detail::agree_first(comm, failure);
  broadcast(h, 0, comm);
  require_room(path, *file, h, sizeof(T), comm);

  Scan<T> scan;
  try {
    scan_range(*file, h, comm, scan);
  } catch (...) {
    scan.failure = detail::failure_of(std::current_exception());
    scan.failure_line = -1;
  }
  const std::int64_t first_line = agree_on_scan(path, *file, h, scan, comm);
  auto received = exchange(scan.entries, h.rows, comm);
  std::optional<std::pair<index_t, index_t>> duplicate;
  CsrRows<T> out = build_rows(received, h, comm, duplicate);
  agree_on_duplicates(path, *file, h, first_line, duplicate, comm);
  return out;
}

template CsrRows<float> read_matrix_market<float>(const std::string&, MPI_Comm);
template CsrRows<double> read_matrix_market<double>(const std::string&, MPI_Comm);

}  // namespace hit
