// 2-D Jacobi with hitmap++: the grid's layout by name, two device-resident copies of this
// process's block, halos that exchange the faces only, and the example's own kernel.
#include "jacobi.hpp"

#include <optional>

#include "five_point.hpp"
#include "hit/hit.hpp"
#include "jacobi_io.hpp"

namespace hit::jacobi {
namespace {

template <class T>
int solve(Environment& env, const Options& o) {
  app::Harness harness(env, o.run);
  // The grid, laid on a virtual topology of processes by the layout chosen by name.
  Layout lay = layout(o.layout, topology(o.topology), Shape::extents({o.n, o.n}), "grid");
  check_and_draw(env, o, lay);
  // With --balance, the rows move between the processes as their measured speeds ask.
  std::optional<RowBalancer> balancer;
  if (o.balance.mode != BalanceMode::off) balancer.emplace(env, lay, o.balance, o.iters);

  // Two copies of this process's block with a ghost cell around, kept on its device: each
  // iteration reads one and writes the other.
  Resident<T> u = Resident<T>::of(lay, {.ghost = 1});
  Resident<T> v = Resident<T>::of(lay, {.ghost = 1});
  // Before a copy is read, its ghost cells receive the neighbours' faces.
  Comm halo_u = halo(lay, u);
  Comm halo_v = halo(lay, v);

  // The sweep updates the interior points of the block; the boundary ring never changes.
  const auto sweep = five_point<T>();
  const Shape interior = Shape::extents({o.n - 2, o.n - 2}).displace(Index{1, 1});
  const auto local_part = [&](const Layout& l) {
    const Shape domain = l.local().block().intersect(interior);
    return partition(o.run.partition, domain, sweep.access(), {}, "grid");
  };
  Partition part = local_part(lay);

  harness.repeat(
      [&](int) {
        // Each repetition starts from the layout the last one left; the report covers the last.
        if (balancer) balancer->restart_report();
        initialise(u.host(), o.n);
        initialise(v.host(), o.n);
        u.modified_on_host();
        v.modified_on_host();
      },
      [&](app::Clock& clock) {
        for (int it = 0; it < o.iters; ++it) {
          const bool even = it % 2 == 0;
          clock.comm([&] { (even ? halo_u : halo_v).run(); });
          // INOUT, not OUT: the boundary ring of the copy written must be on the device too.
          const LaunchRecord step = launch(sweep, part, in(even ? u : v), inout(even ? v : u));
          clock.compute(step);
          if (balancer && balancer->after_iteration(it, step.seconds)) {
            // The rows moved: both copies follow, ghosts included, and the patterns are rebuilt.
            lay = balancer->layout();
            balancer->move(u, 1);
            balancer->move(v, 1);
            halo_u = halo(lay, u);
            halo_v = halo(lay, v);
            part = local_part(lay);
          }
        }
        (o.iters % 2 == 0 ? u : v).sync_to_host();
      });
  return finish(env, o, harness, lay, part, o.iters % 2 == 0 ? u : v, o.iters % 2 == 0 ? v : u,
                balancer ? &*balancer : nullptr);
}

}  // namespace

int run(Environment& env, const Options& o) {
  if (o.run.type == "float") return solve<float>(env, o);
  return solve<double>(env, o);
}

}  // namespace hit::jacobi
