#pragma once
// The options of the communication builders (hit/comm.hpp) and of their traffic figures
// (hit/comm/comm_traffic.hpp). Each builder takes its options last, as one struct, so calls name
// what they set: hit::halo(lay, u, {.width = 2, .corners = true}). Every struct has a `label`: the
// Comm's name (Comm::name(), what traces and error messages show); empty: the builder's own
// description, e.g. "halo(width=2)".

#include <string>

#include "hit/shape.hpp"

namespace hit {

// The options of bcast, redistribute, fetch_regions, fetch, gather and scatter.
struct CommOptions {
  std::string label{};
};

struct ShiftOptions {
  // Receive into a second buffer and swap it with the first when the shift completes: no copy of
  // the whole block before the sends. Needs a Resident tile (whose host() is then the other
  // buffer after every run).
  bool double_buffered = false;
  std::string label{};
};

struct HaloOptions {
  // How deep the exchanged boundary is; the tile needs ghost() >= width.
  index_t width = 1;
  // Fill the diagonal ghost cells too (the axes are then exchanged one after another).
  bool corners = false;
  // Wrap around at the ends of the process grid.
  bool periodic = false;
  std::string label{};
};

}  // namespace hit
