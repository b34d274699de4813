// Helpers shared by the device backends.

#include "devices/backends.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/device_params.hpp"

namespace hit::detail {

void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t width, std::size_t rows) noexcept {
  if (width == 0 || rows == 0) return;
  if (dst_pitch == width && src_pitch == width) {
    std::memcpy(dst, src, width * rows);
    return;
  }
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (std::size_t r = 0; r < rows; ++r) std::memcpy(d + r * dst_pitch, s + r * src_pitch, width);
}

void throw_out_of_memory(const Device& device, std::uint64_t asked, std::uint64_t used,
                         std::uint64_t capacity) {
  const std::uint64_t free_bytes = capacity > used ? capacity - used : 0;
  throw Error(
      ErrorKind::out_of_memory,
      fmt::format("device {} is out of memory: asked for {} with {} free of {} ({} in use); "
                  "run with more processes bound to this device (each gets a smaller "
                  "part), use a device with more memory, or the outOfCore partition",
                  device.label(), human_bytes(static_cast<double>(asked)),
                  human_bytes(static_cast<double>(free_bytes)),
                  human_bytes(static_cast<double>(capacity)),
                  human_bytes(static_cast<double>(used))));
}

void limit_blas_threads(int cores) noexcept {
  if (cores >= 1 && openblas_get_num_threads() > cores) openblas_set_num_threads(cores);
}

void parallel_for(std::int64_t n, int threads, const std::function<void(std::int64_t)>& fn) {
  if (n <= 0) return;
  const std::int64_t t = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n));
  if (t == 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Static contiguous chunks: blocks are equal work by construction, and neighbours stay together.
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(t));
  const auto run = [&](std::int64_t w) {
    try {
      for (std::int64_t i = w * n / t; i < (w + 1) * n / t; ++i) fn(i);
    } catch (...) {
      errors[static_cast<std::size_t>(w)] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (std::int64_t w = 1; w < t; ++w) pool.emplace_back(run, w);
  run(0);
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace hit::detail
