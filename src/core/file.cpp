#include "hit/core/file.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <system_error>

#include "hit/core/error.hpp"

namespace hit {

namespace {

namespace fs = std::filesystem;

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// FNV-1a: a short, stable tag of the host name for file names.
std::uint32_t host_tag() {
  std::uint32_t h = 2166136261U;
  for (const char c : host_name()) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619U;
  }
  return h;
}

std::string errno_text() {
  return std::error_code(errno, std::generic_category()).message();
}

}  // namespace

std::string temporary_suffix() {
  std::random_device random;
  return fmt::format(".tmp-{:08x}.{}.{:08x}", host_tag(), static_cast<long>(::getpid()),
                     static_cast<std::uint32_t>(random()));
}

int remove_stale_temporaries(const std::string& path) noexcept {
  try {
    const fs::path file(path);
    const fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
    const std::string prefix = file.filename().string() + ".tmp-";
    const std::string here = fmt::format("{:08x}.", host_tag());
    int removed = 0;
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(prefix, 0) != 0) continue;
      // <host>.<pid>.<random>, made on this host: is its writer still alive?
      const std::string rest = name.substr(prefix.size());
      if (rest.rfind(here, 0) != 0) continue;
      const std::string tail = rest.substr(here.size());
      const auto dot = tail.find('.');
      if (dot == std::string::npos || dot == 0) continue;
      long pid = 0;
      const auto [ptr, parsed] = std::from_chars(tail.data(), tail.data() + dot, pid);
      if (parsed != std::errc() || ptr != tail.data() + dot || pid <= 0) continue;
      if (pid == static_cast<long>(::getpid())) continue;
      if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
      std::error_code ignored;
      if (fs::remove(entry.path(), ignored)) ++removed;
    }
    return removed;
  } catch (...) {
    return 0;
  }
}

void check_not_read_only(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (::access(path.c_str(), W_OK) == 0 && (st.st_mode & 0222) != 0) return;
  throw Error(ErrorKind::io, fmt::format("cannot write {} '{}': the file exists and is read-only "
                                         "(make it writable, or remove it, to replace it)",
                                         what, path));
}

void check_output_path(const std::string& path, std::string_view what) {
  if (path.empty()) throw Error(ErrorKind::io, fmt::format("{}: the file name is empty", what));
  const std::string cannot = fmt::format("cannot write {} '{}'", what, path);
  std::error_code ec;
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::exists(folder, ec)) {
    throw Error(ErrorKind::io,
                fmt::format("{}: folder '{}' does not exist", cannot, folder.string()));
  }
  if (!fs::is_directory(folder, ec)) {
    throw Error(ErrorKind::io, fmt::format("{}: '{}' is not a folder", cannot, folder.string()));
  }
  if (fs::is_directory(path, ec)) throw Error(ErrorKind::io, cannot + ": it is a folder");
  check_not_read_only(path, what);
  // A probe file says it all (permissions, read-only or pseudo file systems, quotas on creation).
  const std::string probe = path + temporary_suffix();
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::io, fmt::format("{}: {}", cannot, errno_text()));
  }
  std::error_code ignored;
  fs::remove(probe, ignored);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  check_not_read_only(path, "file");
  const std::string tmp = path + temporary_suffix();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", path, errno_text()));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw Error(ErrorKind::io, fmt::format("cannot write '{}' (disk full?)", path));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", path, ec.message()));
  }
  remove_stale_temporaries(path);
}

void rename_into_place(const std::string& temporary, const std::string& path, std::string_view what,
                       const std::string& cannot) {
  check_not_read_only(path, what);
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) {
    throw Error(ErrorKind::io,
                fmt::format("{}: cannot rename '{}' to it: {}", cannot, temporary, ec.message()));
  }
  remove_stale_temporaries(path);
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace hit
