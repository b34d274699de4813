// The cuda backend: device memory from cudaMalloc (never managed memory), asynchronous copies and
// kernels on two CUDA streams, events for ordering between them and for timing, a cuBLAS handle.
// Compiled only when the CUDA toolkit is (HIT_HAVE_CUDA).

#ifdef HIT_HAVE_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "devices/backends.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/device_params.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::detail {
namespace {

// Errors after which the process's CUDA context is unusable (sticky errors): the device has
// failed for this process, and work packages reroute around it.
bool context_lost(cudaError_t status) {
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorAssert:
      return true;
    default:
      return false;
  }
}

void check_cuda(cudaError_t status, const Device& device, const char* what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  throw Error(context_lost(status) ? ErrorKind::device_failed : ErrorKind::device,
              fmt::format("{} on {} failed: {} ({})", what, device.label(),
                          cudaGetErrorString(status), cudaGetErrorName(status)));
}

class CudaDevice final : public Device {
 public:
  CudaDevice(const DeviceBinding& binding, int cores, DeviceShare* share)
      : Device(DeviceKind::cuda, binding, cores),
        budget_(DeviceParams::of(binding).mem),
        share_(share) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || binding.index >= count) {
      (void)cudaGetLastError();
      throw Error(ErrorKind::device,
                  fmt::format("cannot use {}: {}", binding.str(),
                              status != cudaSuccess
                                  ? std::string(cudaGetErrorString(status))
                                  : fmt::format("this machine has {} CUDA GPU(s)", count)));
    }
    select();
    for (auto& s : streams_) {
      check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), *this, "cudaStreamCreate");
    }
    check_cuda(cudaEventCreateWithFlags(&order_, cudaEventDisableTiming), *this, "cudaEventCreate");
  }

  ~CudaDevice() override {
    cudaSetDevice(binding().index);
    for (auto& s : streams_) {
      if (s != nullptr) {
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
      }
    }
    for (auto& t : timings_) {
      cudaEventDestroy(t.start);
      cudaEventDestroy(t.stop);
    }
    if (order_ != nullptr) cudaEventDestroy(order_);
    if (cublas_ != nullptr) cublasDestroy(cublas_);
  }

  // With a budget (mem=), what this run's ranks on the GPU allocate counts against it (in the
  // device page they share), as an emulated device's arena does; without, the GPU's own memory.
  std::uint64_t capacity() const override {
    if (budget_) return *budget_;
    select();
    std::size_t free_b = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free_b, &total), *this, "cudaMemGetInfo");
    return total;
  }
  std::uint64_t used() const override {
    if (budget_) return budgeted().load();
    select();
    std::size_t free_b = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free_b, &total), *this, "cudaMemGetInfo");
    return total - free_b;
  }

  void* allocate(std::size_t bytes) override {
    select();
    if (budget_) {
      auto& used = budgeted();
      std::uint64_t now = used.load();
      do {
        if (bytes > *budget_ || now > *budget_ - bytes) {
          throw_out_of_memory(*this, bytes, now, *budget_);
        }
      } while (!used.compare_exchange_weak(now, now + bytes));
    }
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, std::max<std::size_t>(bytes, 1));
    if (status != cudaSuccess && budget_) budgeted() -= bytes;
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      std::size_t free_b = 0, total = 0;
      cudaMemGetInfo(&free_b, &total);
      throw_out_of_memory(*this, bytes, total - free_b, total);
    }
    check_cuda(status, *this, "cudaMalloc");
    ++counters_.allocations;
    return p;
  }

  bool pin_host(void* p, std::size_t bytes) noexcept override {
    select();
    if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) == cudaSuccess) return true;
    (void)cudaGetLastError();  // not fatal: the copies stay pageable
    return false;
  }
  void unpin_host(void* p) noexcept override {
    select();
    if (cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
  }

  void deallocate(void* p, std::size_t bytes) noexcept override {
    if (p == nullptr) return;
    select_noexcept();
    cudaFree(p);  // synchronises with the device
    if (budget_) budgeted() -= bytes;
    ++counters_.frees;
  }

  void do_fill_zero(void* p, std::size_t bytes, int stream) override {
    select();
    check_cuda(cudaMemsetAsync(p, 0, bytes, stream_of(stream)), *this, "cudaMemsetAsync");
  }

  void copy(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
            std::size_t width, std::size_t rows, int stream, CopyDirection direction) override {
    select();
    const bool in = direction == CopyDirection::to_device;
    check_cuda(
        cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows,
                          in ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream_of(stream)),
        *this, in ? "cudaMemcpy2DAsync (host to device)" : "cudaMemcpy2DAsync (device to host)");
  }

  void do_execute(const std::function<void(const ExecContext&)>& body, std::uint64_t,
                  int stream) override {
    select();
    cudaStream_t s = stream_of(stream);
    if (cublas_ == nullptr) {
      if (cublasCreate(&cublas_) != CUBLAS_STATUS_SUCCESS) {
        throw Error(ErrorKind::device, "cannot create a cuBLAS handle on " + label());
      }
    }
    cublasSetStream(cublas_, s);
    Timing t{stream, nullptr, nullptr};
    check_cuda(cudaEventCreate(&t.start), *this, "cudaEventCreate");
    check_cuda(cudaEventCreate(&t.stop), *this, "cudaEventCreate");
    check_cuda(cudaEventRecord(t.start, s), *this, "cudaEventRecord");
    ExecContext ctx;
    ctx.threads = cores();
    ctx.cuda_stream = s;
    ctx.cublas = cublas_;
    try {
      body(ctx);
      check_cuda(cudaGetLastError(), *this, "a kernel launch");
      check_cuda(cudaEventRecord(t.stop, s), *this, "cudaEventRecord");
    } catch (...) {
      // The stop event was never recorded: drop the pair rather than time it.
      cudaStreamSynchronize(s);
      cudaEventDestroy(t.start);
      cudaEventDestroy(t.stop);
      (void)cudaGetLastError();
      throw;
    }
    timings_.push_back(t);
    ++counters_.executions;
  }

  void do_wait_for(int waiting, int other) override {
    select();
    check_cuda(cudaEventRecord(order_, stream_of(other)), *this, "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(stream_of(waiting), order_, 0), *this, "cudaStreamWaitEvent");
  }

  void do_synchronize(int stream) override {
    select();
    if (wait_hook()) {
      // Polled, so the hook runs while the GPU works (work packages answer other ranks there).
      cudaError_t state = cudaStreamQuery(stream_of(stream));
      while (state == cudaErrorNotReady) {
        wait_hook()();
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        state = cudaStreamQuery(stream_of(stream));
      }
      check_cuda(state, *this, "cudaStreamQuery");
    }
    check_cuda(cudaStreamSynchronize(stream_of(stream)), *this, "cudaStreamSynchronize");
    // Kernel times of that stream are known now.
    std::vector<Timing> pending;
    for (auto& t : timings_) {
      if (t.stream != stream) {
        pending.push_back(t);
        continue;
      }
      float ms = 0;
      if (cudaEventElapsedTime(&ms, t.start, t.stop) == cudaSuccess) {
        const auto ns = static_cast<std::int64_t>(static_cast<double>(ms) * 1e6);
        counters_.execute_ns += ns;
        counters_.execute_host_ns += ns;
      } else {
        (void)cudaGetLastError();  // not a failure of later work
      }
      cudaEventDestroy(t.start);
      cudaEventDestroy(t.stop);
    }
    timings_ = std::move(pending);
  }

 private:
  struct Timing {
    int stream;
    cudaEvent_t start;
    cudaEvent_t stop;
  };

  void select() const { check_cuda(cudaSetDevice(binding().index), *this, "cudaSetDevice"); }
  void select_noexcept() const noexcept { cudaSetDevice(binding().index); }
  cudaStream_t stream_of(int stream) const {
    if (stream < 0 || stream >= streams) {
      throw Error(ErrorKind::invalid_argument,
                  "device stream " + std::to_string(stream) + " does not exist (0 or 1)");
    }
    return streams_[stream];
  }

  std::atomic<std::uint64_t>& budgeted() const {
    return share_ != nullptr ? share_->used_bytes() : local_used_;
  }

  std::optional<std::uint64_t> budget_;
  DeviceShare* share_;
  mutable std::atomic<std::uint64_t> local_used_{0};
  cudaStream_t streams_[streams] = {};
  cudaEvent_t order_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::vector<Timing> timings_;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(const DeviceBinding& binding, int cores,
                                         DeviceShare* share) {
  return std::make_unique<CudaDevice>(binding, cores, share);
}

}  // namespace hit::detail

#endif  // HIT_HAVE_CUDA
