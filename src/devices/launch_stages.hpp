#pragma once
// The stages a launch on a device with memory of its own goes through, shared by the launch of
// whole tiles (launch.cpp) and the out-of-core pipeline (out_of_core.cpp): running the blocks of
// a partition, staging a whole argument, and bringing a whole result back. Internal to the devices
// layer.

#include <functional>
#include <vector>

#include "devices/exec_context.hpp"
#include "devices/staging.hpp"
#include "hit/launch.hpp"

namespace hit::detail {

using Invoke = std::function<void(const KernelContext&, const std::vector<RawView>&)>;

// Runs the blocks of `p` on the device: once on cuda, block by block on the device's host threads
// elsewhere.
void run_blocks(const Device& dev, const Partition& p, const std::vector<RawView>& views,
                const ExecContext& ec, const Invoke& invoke);

// An argument on the device: its memory and how the region is laid out there.
struct Staged {
  void* data = nullptr;
  DeviceLayout layout;
};

// Argument `a` staged whole on `stream`: a resident tile's device copy (sent when the host side
// is newer and the launch reads it), or a buffer of `buffers` filled from the host (zeroed where
// the kernel may read what the host does not send).
[[nodiscard]] Staged stage_whole(Device& dev, const Partition& p, const LaunchArg& a, int stream,
                                 Buffers& buffers, Packed& packed);

// After the kernel ran over `domain`: an OUT or INOUT argument staged whole comes back (a
// resident one stays on the device, which now holds the newer copy).
void bring_back_whole(Device& dev, const LaunchArg& a, const Staged& s, const Shape& domain,
                      int stream, Packed& packed);

// Out of core: the launch chunk by chunk (out_of_core.cpp). Records the chunks and the bytes
// staged in `rec`; every allocation is counted in `tally`.
void run_chunked(Device& dev, const Partition& p0, const std::vector<LaunchArg>& args,
                 const Invoke& invoke, LaunchRecord& rec, AllocationTally& tally);

}  // namespace hit::detail
