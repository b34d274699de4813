// The state ranks bound to one device share: a lock file with a page of counters (DeviceShare).

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "hit/core/error.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit {

struct DeviceShare::State {
  std::atomic<std::uint64_t> used_bytes;
  std::atomic<std::uint64_t> peak_bytes;
  std::atomic<std::uint64_t> wanted_bytes;
  std::atomic<std::uint64_t> time_sharing;
  std::atomic<std::uint64_t> resident[DeviceShare::max_published];
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "device accounting needs lock-free 64-bit atomics in shared memory");

namespace {
constexpr std::size_t share_bytes = 4096;
}

DeviceShare::DeviceShare(int fd, std::vector<int> sharers, int me)
    : fd_(fd), sharers_(std::move(sharers)), me_(std::min(me, max_published - 1)) {
  static_assert(sizeof(State) <= share_bytes, "the device page holds the shared state");
  if (sharers_.empty()) sharers_.push_back(0);
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
  if (ranks() > 1) {
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        throw Error(ErrorKind::io,
                    std::string("cannot take the device lock: ") + std::strerror(errno));
      }
    }
  }
  held_ = true;
}

void DeviceShare::unlock() noexcept {
  held_ = false;
  if (ranks() > 1) flock(fd_, LOCK_UN);
}

void DeviceShare::publish_resident(std::uint64_t bytes) noexcept {
  state_->resident[me_].store(bytes);
}
std::uint64_t DeviceShare::resident_of(int sharer) const noexcept {
  if (sharer < 0) return 0;
  return state_->resident[std::min(sharer, max_published - 1)].load();
}
std::atomic<std::uint64_t>& DeviceShare::wanted_bytes() noexcept {
  return state_->wanted_bytes;
}
bool DeviceShare::start_time_sharing() noexcept {
  std::uint64_t expected = 0;
  return state_->time_sharing.compare_exchange_strong(expected, 1);
}
bool DeviceShare::time_sharing() const noexcept {
  return state_->time_sharing.load() != 0;
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
