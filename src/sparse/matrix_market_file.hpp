#pragma once
// What the Matrix Market reader and writer and the raw vector files share: reading the lines of
// one byte range of a file, agreeing on the first failure, and writing every process's piece of
// a new file through a temporary.

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hit/core/error.hpp"

namespace hit::detail {

// A file opened for plain reads (pread), closed when it goes. Error(io) naming `path` when it
// cannot be opened, is a folder, or cannot be read.
class ReadOnlyFile {
 public:
  ReadOnlyFile(const std::string& path, std::string_view what);
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  ~ReadOnlyFile();

  [[nodiscard]] std::int64_t size() const noexcept { return size_; }
  // Reads up to `bytes` at `offset` (fewer only at the end of the file); returns how many.
  std::size_t read_at(std::int64_t offset, char* into, std::size_t bytes) const;

 private:
  std::string path_;
  std::string what_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

// The lines that start in [begin, end) of a file whose lines may start at `region_start` or after
// a '\n': a range that begins inside a line leaves that line to the range before it, and the last
// line is read to its end even past `end`, so consecutive ranges see every line once. Reads in
// blocks (a line longer than a block grows the buffer), so a range is never held whole.
class LineScanner {
 public:
  LineScanner(const ReadOnlyFile& file, std::int64_t region_start, std::int64_t begin,
              std::int64_t end);
  // The next line, without its '\n' (and a '\r' before it); false after the last. The view
  // lives until the next call.
  bool next(std::string_view& line);
  // The file offset just past the line returned last (past its '\n').
  [[nodiscard]] std::int64_t position() const noexcept { return pos_; }

 private:
  // Makes the bytes from pos_ to the next '\n' (or the end of the file) lie in the buffer;
  // returns the length of the line without the '\n' and whether a '\n' ends it.
  std::pair<std::size_t, bool> locate_line();

  const ReadOnlyFile& file_;
  std::int64_t end_;
  std::int64_t pos_;
  std::vector<char> buffer_;
  std::int64_t buffer_start_ = 0;  // file offset of buffer_[0]
  std::size_t buffer_len_ = 0;
};

// The failure of one process, or none.
struct Failure {
  ErrorKind kind = ErrorKind::internal;
  std::string message;
};

// Collective: when any process has a failure, every process throws (Error::everywhere) that of
// the lowest such rank, unprefixed: the readers order the file by rank, so the lowest rank's is
// the first in the file, and its message names the file and line already.
void agree_first(MPI_Comm comm, const std::optional<Failure>& mine);
// The same for the exception in flight (call inside a catch block) or none.
std::optional<Failure> failure_of(const std::exception_ptr& e);

// Collective over `comm`: writes `bytes` bytes at `offset` of a new file `path` from every
// process (pieces must not overlap; together they make the file), through a temporary beside it
// renamed by rank 0 once every process succeeded. rank 0 checks the output path first. Every
// failure is agreed; nothing is left under either name.
void write_pieces(const std::string& path, std::string_view what, std::int64_t offset,
                  const char* data, std::size_t bytes, MPI_Comm comm);

}  // namespace hit::detail
