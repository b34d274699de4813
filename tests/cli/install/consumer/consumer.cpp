// heat.cpp: heat spreading from one hot edge of a plate, on every process of the run.
#include <hit/hit.hpp>

#include <cstdio>
#include <string>

#include "smooth.hpp"

// hit::run_program starts MPI and turns any hit::Error, on any process, into one line and a
// non-zero exit on every process.
int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "heat", [](hit::Environment& env, int, char**) {
    const hit::index_t n = 256;
    const int sweeps = 100;
    // The plate over a 2-D grid of processes, by the layout named here unless HIT_LAYOUT_PLATE
    // names another: the override resolved where it applies, and reported by plate.set_by().
    const hit::Layout plate = hit::layout(hit::layout_setting(env, "plate", "blocks"),
                                          hit::topology("mesh2d"), hit::Shape::extents({n, n}));
    // This process's block with a ring of ghost cells, twice, kept on its device.
    auto u = hit::Resident<double>::of(plate, {.ghost = 1});
    auto v = hit::Resident<double>::of(plate, {.ghost = 1});
    for (auto* t : {&u, &v}) {
      t->host().for_each([](const hit::Index& i, double& x) { x = i[0] == 0 ? 100.0 : 0.0; });
      t->modified_on_host();
    }
    // The neighbours' faces into the ghost cells: communication derived from the layout.
    hit::Comm halo_u = hit::halo(plate, u);
    hit::Comm halo_v = hit::halo(plate, v);
    // The interior points of this process's block, split over its device.
    const auto kernel = smooth();
    const hit::Shape interior = hit::Shape::extents({n - 2, n - 2}).displace(hit::Index{1, 1});
    const hit::Partition part = hit::partition("threads", plate.local().block().intersect(interior),
                                               {.access = kernel.access()});

    const hit::Timer timer;
    for (int s = 0; s < sweeps; ++s) {
      (s % 2 == 0 ? halo_u : halo_v).run();
      hit::launch(kernel, part, hit::in(s % 2 == 0 ? u : v), hit::inout(s % 2 == 0 ? v : u));
    }
    v.sync_to_host();  // an even number of sweeps ends in v
    double mine = 0;
    v.host().for_each([&](const hit::Index&, const double& x) { mine += x; });
    const double heat = hit::allreduce(mine, hit::ReduceOp::sum);
    const double seconds = hit::allreduce(timer.seconds(), hit::ReduceOp::max);

    hit::log::info("plate " + plate.spec() + " over " + std::to_string(env.size()) + " processes");
    if (env.rank() == 0) {
      std::printf("heat %.6e after %d sweeps of %lldx%lld, %d processes, %.3f s\n", heat, sweeps,
                  static_cast<long long>(n), static_cast<long long>(n), env.size(), seconds);
    }
    return 0;
  });
}
