#pragma once
// Internals of the physical topology shared by its source files.

#include <vector>

namespace hit::detail {

// Binds the calling process to the given cores of its machine (hwloc); a warning when it cannot.
void pin_to_cores(const std::vector<int>& cores);

}  // namespace hit::detail

#include <string>

namespace hit::detail {

// The device lock files (see DeviceShare): created by one rank, opened by the others, removed once
// all have opened it. Error(io) on failure.
int create_share_file(const std::string& path);
int open_share_file(const std::string& path);
void remove_share_file(const std::string& path) noexcept;

}  // namespace hit::detail
