#include "sparse/matrix_market_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <new>

#include "hit/core/collective.hpp"
#include "hit/core/file.hpp"

namespace hit::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t scan_block = std::size_t{4} << 20;     // bytes read at once by a scanner
constexpr std::int64_t write_round = std::int64_t{1} << 30;  // bytes a write_at_all call moves

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

void check_io(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw Error(ErrorKind::io, what + ": " + mpi_error_text(code));
}

}  // namespace

ReadOnlyFile::ReadOnlyFile(const std::string& path, std::string_view what)
    : path_(path), what_(what) {
  const std::string cannot = "cannot read " + what_ + " '" + path_ + "'";
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(ErrorKind::io, cannot + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || S_ISDIR(st.st_mode)) {
    const std::string why = S_ISDIR(st.st_mode) ? "it is a folder" : std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    throw Error(ErrorKind::io, cannot + ": " + why);
  }
  size_ = static_cast<std::int64_t>(st.st_size);
}

ReadOnlyFile::~ReadOnlyFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t ReadOnlyFile::read_at(std::int64_t offset, char* into, std::size_t bytes) const {
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::pread(fd_, into + done, bytes - done,
                                static_cast<off_t>(offset) + static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      throw Error(ErrorKind::io, "cannot read " + what_ + " '" + path_ + "' at byte " +
                                     std::to_string(offset) + ": " + std::strerror(errno));
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

LineScanner::LineScanner(const ReadOnlyFile& file, std::int64_t region_start, std::int64_t begin,
                         std::int64_t end)
    : file_(file), end_(std::min(end, file.size())), pos_(begin) {
  if (begin <= region_start || begin >= end_) return;
  // The line holding byte begin-1 belongs to the range before, unless that byte ends it.
  pos_ = begin - 1;
  buffer_start_ = pos_;
  const auto [length, ended] = locate_line();
  pos_ += static_cast<std::int64_t>(length) + (ended ? 1 : 0);
}

std::pair<std::size_t, bool> LineScanner::locate_line() {
  std::size_t from = static_cast<std::size_t>(pos_ - buffer_start_);
  std::size_t searched = from;
  for (;;) {
    const char* begin = buffer_.data() + from;
    const char* stop = buffer_.data() + buffer_len_;
    const char* found = std::find(buffer_.data() + searched, buffer_.data() + buffer_len_, '\n');
    if (found != stop) return {static_cast<std::size_t>(found - begin), true};
    const std::int64_t file_end = buffer_start_ + static_cast<std::int64_t>(buffer_len_);
    if (file_end >= file_.size()) return {buffer_len_ - from, false};
    // Keep the partial line, read more after it (a line longer than the buffer grows it).
    const std::size_t kept = buffer_len_ - from;
    // An empty buffer's data() may be null, which memmove must not get even for no bytes.
    if (kept > 0) std::memmove(buffer_.data(), buffer_.data() + from, kept);
    buffer_start_ = pos_;
    if (buffer_.size() < kept + scan_block) buffer_.resize(kept + scan_block);
    buffer_len_ = kept + file_.read_at(file_end, buffer_.data() + kept, buffer_.size() - kept);
    from = 0;
    searched = kept;
    if (buffer_len_ == kept) return {kept, false};  // the file shrank under us
  }
}

bool LineScanner::next(std::string_view& line) {
  if (pos_ >= end_) return false;
  if (pos_ < buffer_start_ || pos_ > buffer_start_ + static_cast<std::int64_t>(buffer_len_)) {
    buffer_start_ = pos_;  // the first line: start the buffer here
    buffer_len_ = 0;
  }
  const auto [length, ended] = locate_line();
  const char* begin = buffer_.data() + (pos_ - buffer_start_);
  std::size_t shown = length;
  if (shown > 0 && begin[shown - 1] == '\r') --shown;
  line = std::string_view(begin, shown);
  pos_ += static_cast<std::int64_t>(length) + (ended ? 1 : 0);
  return true;
}

void agree_first(MPI_Comm comm, const std::optional<Failure>& mine) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first = mine ? rank : size;
  allreduce_in_place(&first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int kind = mine ? static_cast<int>(mine->kind) : 0;
  std::string message = mine ? mine->message : std::string();
  broadcast(kind, first, comm);
  broadcast(message, first, comm);
  throw Error::everywhere(static_cast<ErrorKind>(kind), message);
}

std::optional<Failure> failure_of(const std::exception_ptr& e) {
  if (!e) return std::nullopt;
  try {
    std::rethrow_exception(e);
  } catch (const Error& error) {
    return Failure{error.kind(), error.what()};
  } catch (const std::bad_alloc&) {
    return Failure{ErrorKind::out_of_memory, "out of memory"};
  } catch (const std::exception& other) {
    return Failure{ErrorKind::internal, other.what()};
  } catch (...) {
    return Failure{ErrorKind::internal, "unknown failure"};
  }
}

void write_pieces(const std::string& path, std::string_view what, std::int64_t offset,
                  const char* data, std::size_t bytes, MPI_Comm comm) {
  const int me = rank_of(comm);
  collectively(comm, [&] {
    if (me == 0) check_output_path(path, what);
  });
  std::string temporary;
  if (me == 0) temporary = path + temporary_suffix();
  broadcast(temporary, 0, comm);
  const std::string cannot = "cannot write " + std::string(what) + " '" + path + "'";
  auto remove_temporary = [&] {
    std::error_code ec;
    if (me == 0) fs::remove(temporary, ec);
  };

  MPI_File fh = MPI_FILE_NULL;
  try {
    collectively(comm, [&] {
      check_io(MPI_File_open(comm, temporary.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY,
                             MPI_INFO_NULL, &fh),
               cannot + ": cannot create '" + temporary + "'");
    });
  } catch (...) {
    remove_temporary();  // a process that did open it keeps a handle; the name goes all the same
    throw;
  }
  try {
    auto rounds = static_cast<std::int64_t>((bytes + write_round - 1) / write_round);
    allreduce_in_place(&rounds, 1, MPI_INT64_T, MPI_MAX, comm);
    for (std::int64_t r = 0; r < rounds; ++r) {
      collectively(comm, [&] {
        const std::int64_t at = std::min<std::int64_t>(r * write_round, bytes);
        const auto count = static_cast<int>(std::min<std::int64_t>(write_round, bytes - at));
        MPI_Status status;
        check_io(MPI_File_write_at_all(fh, offset + at, data + at, count, MPI_BYTE, &status),
                 cannot);
        int done = 0;
        MPI_Get_count(&status, MPI_BYTE, &done);
        if (done != count) {
          throw Error(ErrorKind::io, cannot + ": wrote " + std::to_string(done) + " of " +
                                         std::to_string(count) + " bytes (is the disk full?)");
        }
      });
    }
    collectively(comm, [&] { check_io(MPI_File_close(&fh), cannot + " (closing it)"); });
    collectively(comm, [&] {
      if (me == 0) rename_into_place(temporary, path, what, cannot);
    });
  } catch (...) {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);  // every process is here: the failure was agreed
    remove_temporary();
    throw;
  }
}

}  // namespace hit::detail
