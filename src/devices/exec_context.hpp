#pragma once
// What a device backend gives a body it executes (Device::execute); the launch turns it into the
// KernelContext a kernel body receives. Private to the devices layer: only the backends and the
// launch make or read one, and the host pool it carries is their business.

namespace hit {

namespace detail {
class HostPool;
}

struct ExecContext {
  int threads = 1;
  void* cuda_stream = nullptr;
  void* cublas = nullptr;
  // cpu and emu: the device's persistent host threads, which run the blocks of a partition.
  detail::HostPool* host_pool = nullptr;
};

}  // namespace hit
