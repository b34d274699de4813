// smooth.hpp: our own kernel, each point the mean of its four neighbours. One body per device
// kind; the cpu body also runs on emulated devices, block by block.
#pragma once
#include <hit/hit.hpp>

using Grid = hit::View<double>;
using ConstGrid = hit::View<const double>;

inline hit::Kernel<ConstGrid, Grid> smooth() {
  hit::Kernel<ConstGrid, Grid> k("smooth");
  k.cpu([](const hit::KernelContext& ctx, ConstGrid in, Grid out) {
    // Each view re-based on this block: position (r, c) is the block's point (r, c), and its
    // neighbours are r +- 1, c +- 1, whatever the ghost rings of the views.
    const ConstGrid src = in.around(ctx.block);
    const Grid dst = out.around(ctx.block);
    for (hit::index_t r = 0; r < ctx.block.extent(0); ++r) {
      for (hit::index_t c = 0; c < ctx.block.extent(1); ++c) {
        dst.local(r, c) = 0.25 * (src.local(r - 1, c) + src.local(r + 1, c) + src.local(r, c - 1) +
                                  src.local(r, c + 1));
      }
    }
  });
  k.reads({hit::AccessPattern::stencil(2, 1), hit::AccessPattern::parse("0,0")});
  k.cost({.flops_per_point = 4});  // three additions and a product: what --hit-advise prices
  return k;
}
