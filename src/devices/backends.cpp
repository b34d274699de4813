// Helpers shared by the device backends.

#include "devices/backends.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/device_params.hpp"

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

std::string memory_remedies(std::initializer_list<std::string_view> ways, bool out_of_core) {
  std::vector<std::string> all(ways.begin(), ways.end());
  const bool offered = !Environment::exists() || Environment::current().out_of_core_advisable();
  if (offered && !out_of_core)
    all.emplace_back("use the outOfCore partition (--partition outOfCore)");
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out += i + 1 == all.size() ? (all.size() > 2 ? ", or " : " or ") : ", ";
    out += all[i];
  }
  return out;
}

void throw_out_of_memory(const Device& device, std::uint64_t asked, std::uint64_t used,
                         std::uint64_t capacity) {
  const std::uint64_t free_bytes = capacity > used ? capacity - used : 0;
  throw Error(ErrorKind::out_of_memory,
              fmt::format("device {} is out of memory: asked for {} with {} free of {} ({} in "
                          "use); {}",
                          device.label(), human_bytes(static_cast<double>(asked)),
                          human_bytes(static_cast<double>(free_bytes)),
                          human_bytes(static_cast<double>(capacity)),
                          human_bytes(static_cast<double>(used)),
                          memory_remedies({"run with more processes bound to this device (each "
                                           "gets a smaller part)",
                                           "use a device with more memory"})));
}

void limit_blas_threads(int cores) noexcept {
  if (cores >= 1 && openblas_get_num_threads() > cores) openblas_set_num_threads(cores);
}

}  // namespace hit::detail
