// The state ranks bound to one device share: a lock file with a page of counters (DeviceShare).

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "hit/core/error.hpp"
#include "hit/physical_topology.hpp"

namespace hit {

struct DeviceShare::State {
  std::atomic<std::uint64_t> used_bytes;
  std::atomic<std::uint64_t> peak_bytes;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "device accounting needs lock-free 64-bit atomics in shared memory");

namespace {
constexpr std::size_t share_bytes = 4096;
}

DeviceShare::DeviceShare(int fd, int ranks) : fd_(fd), ranks_(ranks) {
  void* page = mmap(nullptr, share_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (page == MAP_FAILED) {
    const int err = errno;
    close(fd_);
    throw Error(ErrorKind::io,
                std::string("cannot map the device lock file: ") + std::strerror(err));
  }
  // The file starts zero-filled (ftruncate), which is a valid value of lock-free atomics.
  state_ = static_cast<State*>(page);
}

DeviceShare::~DeviceShare() {
  if (state_ != nullptr) munmap(state_, share_bytes);
  if (fd_ >= 0) close(fd_);
}

void DeviceShare::lock() {
  // Alone on the device, nobody can hold the lock: its two system calls were most of the cost of a
  // launch on cpu. (Threads of one process never excluded each other through it: flock locks
  // belong to the open file, which they share.)
  if (ranks_ <= 1) return;
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      throw Error(ErrorKind::io,
                  std::string("cannot take the device lock: ") + std::strerror(errno));
    }
  }
}

void DeviceShare::unlock() noexcept {
  if (ranks_ <= 1) return;
  flock(fd_, LOCK_UN);
}

std::atomic<std::uint64_t>& DeviceShare::used_bytes() noexcept {
  return state_->used_bytes;
}
std::atomic<std::uint64_t>& DeviceShare::peak_bytes() noexcept {
  return state_->peak_bytes;
}

namespace detail {

int create_share_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw Error(ErrorKind::io,
                "cannot create the device lock file " + path + ": " + std::strerror(errno));
  }
  if (ftruncate(fd, static_cast<off_t>(share_bytes)) != 0) {
    const int err = errno;
    close(fd);
    unlink(path.c_str());
    throw Error(ErrorKind::io,
                "cannot size the device lock file " + path + ": " + std::strerror(err));
  }
  return fd;
}

int open_share_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    throw Error(ErrorKind::io,
                "cannot open the device lock file " + path + ": " + std::strerror(errno));
  }
  return fd;
}

void remove_share_file(const std::string& path) noexcept {
  unlink(path.c_str());
}

}  // namespace detail
}  // namespace hit
