// Cannon's algorithm with hitmap++. Beside Hitmap's Fig. 2 line for line: docs/examples.md.
#include "cannon.hpp"

#include "cannon_io.hpp"
#include "hit/devices/builtin_kernels.hpp"
#include "hit/hit.hpp"

namespace hit::cannon {
namespace {

template <class T>
int multiply(Environment& env, const Options& o) {
  app::Harness harness(env, o.run);
  // The three matrices, laid on a square grid of processes by the layouts chosen by name.
  const Topology grid = topology("square");
  const Layout la = layout(o.layout_a, grid, Shape::extents({o.n, o.m}));
  const Layout lb = layout(o.layout_b, grid, Shape::extents({o.m, o.k}));
  const Layout lc = layout(o.layout_c, grid, Shape::extents({o.n, o.k}));
  check_and_draw(env, o, la, lb, lc);

  // This process's blocks, kept on its device. A and B are padded to their layout's largest
  // block, so every block a shift brings in fits.
  Resident<T> a = Resident<T>::of(la, {.padded = true});
  Resident<T> b = Resident<T>::of(lb, {.padded = true});
  Resident<T> c = Resident<T>::of(lc);
  const Inputs<T> inputs(env, o, la, lb, a, b);

  // Communication, built once from the layouts: the initial alignment (block row i of A moves
  // i places left, block column j of B j places up), then one place per step. Each shift
  // receives into a second buffer and swaps it in when it completes, so a step's shift can run
  // during the product that reads the first buffer.
  const Index me = lc.local().coords;
  const ShiftOptions swap{.double_buffered = true};
  Pattern align;
  align.add(shift(la, a, 1, -me[0], swap)).add(shift(lb, b, 0, -me[1], swap));
  Pattern step;
  step.add(shift(la, a, 1, -1, swap)).add(shift(lb, b, 0, -1, swap));

  // The local product C += A·B on the process's device.
  const auto gemm = gemm_accumulate<T>();
  const Partition part = partition(o.run.partition, c.host().shape(), {.access = gemm.access()});
  const int steps = la.active_extent(1);

  harness.repeat(
      [&](int) {
        inputs.restore(a, b);
        c.host().fill(T(0));
        c.modified_on_host();
      },
      [&](app::Clock& clock) {
        clock.comm([&] { align.run(); });
        for (int s = 0; s < steps; ++s) {
          // The next blocks travel into the second buffers while this product reads the first
          // ones; none after the last product.
          const bool more = s + 1 < steps;
          if (more) clock.comm([&] { step.start(); });
          clock.compute(launch(gemm, part, in(a), in(b), inout(c)));
          if (more) clock.comm([&] { step.wait(); });
        }
        c.sync_to_host();
      });
  return finish(env, o, harness, la, lb, lc, part, c.host());
}

}  // namespace

int run(Environment& env, const Options& o) {
  return app::with_element_type(o.run.type, [&]<class T>() { return multiply<T>(env, o); });
}

}  // namespace hit::cannon
