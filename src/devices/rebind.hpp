#pragma once
// A helper for tests that compare devices within one process: not part of the public API (tests
// include it through their include path on src/).

#include "hit/device.hpp"

namespace hit {

// Replaces the device of this rank by a new one for `binding` (resolved: a concrete index), and
// returns it. The device lock and the accounting shared with other ranks stay those of the rank's
// bound device, and partitions made before must be made again. Not collective: the other ranks
// do not learn of it.
Device& rebind_device(Environment& env, const DeviceBinding& binding);

}  // namespace hit
