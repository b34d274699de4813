#pragma once
// Constructors of the device backends (one folder each) and helpers they share.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "devices/exec_context.hpp"
#include "hit/device.hpp"
#include "topology/device_kind_format.hpp"

namespace hit {
class DeviceShare;
}  // namespace hit

namespace hit::detail {

// Creates the backend for a resolved binding. `share` (may be null): what the ranks bound to the
// same device on one node share, for capacity accounting (see DeviceShare).
[[nodiscard]] std::unique_ptr<Device> make_device(const DeviceBinding& binding, int cores,
                                                  DeviceShare* share = nullptr);
std::unique_ptr<Device> make_cpu_device(const DeviceBinding& binding, int cores);
std::unique_ptr<Device> make_emu_device(const DeviceBinding& binding, int cores,
                                        DeviceShare* share);
#ifdef HIT_HAVE_CUDA
std::unique_ptr<Device> make_cuda_device(const DeviceBinding& binding, int cores,
                                         DeviceShare* share);
#endif

// Host memcpy of `rows` rows of `width` bytes between pitched regions.
void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t width, std::size_t rows) noexcept;

// The ways out of a device's out-of-memory that this program can take, joined ("a, b or c"):
// `ways`, then the outOfCore partition where the program's launches can run out of core
// (Environment::out_of_core_available) and `out_of_core` (the launch's partition already is) is
// false.
[[nodiscard]] std::string memory_remedies(std::initializer_list<std::string_view> ways,
                                          bool out_of_core = false);

// The out-of-memory error of every backend: names the device, the request and what is free, and
// says what to do about it.
[[noreturn]] void throw_out_of_memory(const Device& device, std::uint64_t asked, std::uint64_t used,
                                      std::uint64_t capacity);

// BLAS on the device's cores: lowers OpenBLAS's thread count to `cores` (never raises it, so an
// OPENBLAS_NUM_THREADS the user set still holds).
void limit_blas_threads(int cores) noexcept;

}  // namespace hit::detail
