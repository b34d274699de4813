// The advisor's predictions against cases computed by hand (a 2×2 Cannon on equal devices, a 1-D
// split on a 1 : 3 binding), the sharing of a device and its memory, the calibration's fit, and
// the enumeration of every registered plug-in.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "advisor/costs.hpp"
#include "hit/advisor/calibration.hpp"
#include "hit/advisor/candidates.hpp"
#include "hit/advisor/prediction.hpp"
#include "hit/advisor/program_advice.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/kernel.hpp"
#include "hit/layout.hpp"
#include "hit/topology.hpp"

namespace hit::advisor {
namespace {

fpm::NetworkModel one_node_network(double latency, double bandwidth) {
  fpm::NetworkModel net;
  fpm::LinkCost c;
  c.latency = latency;
  c.bandwidth = bandwidth;
  c.pairs = 1;
  net.set(fpm::LinkClass::node, c);
  return net;
}

Machine machine_of(const std::string& devices, int procs) {
  return Machine(parse_device_spec(devices, procs), 0);
}

Layout layout_of(const std::string& spec, const std::string& topo, const Shape& shape,
                 const Machine& m) {
  return layout(spec, topology(topo, m.procs()), shape, {.devices = m.devices()});
}

// 100×100 matrices in 50×50 blocks on 2×2 processes at 1 Gflop/s, messages of α = 10 µs and
// β = 1 GB/s. A step's product is 2·50³ = 250 000 flops: 250 µs. A block is 20 000 bytes: 30 µs
// a message. The alignment moves nothing on process (0,0) and both blocks of (1,1): 60 µs.
// Step 0 receives the next A and B blocks (60 µs) during its product; step 1 sends nothing. Each
// step's product is one launch, 1 µs on a host process.
TEST(Predict, CannonTwoByTwoOnEqualDevices) {
  Machine m = machine_of("cpu*4", 4);
  m.set_network(one_node_network(1e-5, 1e9));
  m.set_host_flops(Kernel::gemm, 1e9);
  const Shape s = Shape::extents({100, 100});
  const Layout l = layout_of("blocks", "square", s, m);
  const Prediction p = predict_cannon(l, l, l, m, RunShape{});
  EXPECT_NEAR(p.predicted_s, 60e-6 + 251e-6 + 251e-6, 1e-12);
  EXPECT_NEAR(p.compute_s, 502e-6, 1e-12);
  EXPECT_NEAR(p.comm_s, 60e-6 + 60e-6, 1e-12);
  EXPECT_DOUBLE_EQ(p.imbalance, 1.0);
  ASSERT_EQ(p.procs.size(), 4u);
  for (const ProcessCost& c : p.procs) {
    EXPECT_DOUBLE_EQ(c.flops, 2 * 250000.0);
    EXPECT_EQ(c.bytes, 100000u);  // A and B twice (the shift's second buffer), C once
    EXPECT_NEAR(c.launch_s, 2e-6, 1e-15);
  }
  EXPECT_NEAR(p.procs[0].comm_s, 60e-6, 1e-12);  // no alignment, one step's shifts
  EXPECT_NEAR(p.procs[3].comm_s, 120e-6, 1e-12);
}

// A 10×6 grid on a device 3× slower than the host and a host process, at 1000 flop/s: the split
// 1 : 3 gives rows [0:3] and [3:10], whose interiors are 2×4 and 6×4 cells (32 and 96 flops):
// 96 ms each. A halo row is 6 values, 48 bytes: α + 48 B / 48 kB/s = 2 ms. Each process sweeps in
// two launches (its inner rows, then the face next to its one neighbour): 2 × 50 µs an iteration
// on the emulated device, 2 × 1 µs on the host, so the device's 96.1 ms make the step.
TEST(Predict, OneDimensionalSplitOnAOneToThreeBinding) {
  Machine m = machine_of("emu:0(slowdown=3),cpu", 2);
  m.set_network(one_node_network(1e-3, 48000));
  m.set_host_flops(Kernel::stencil, 1000);
  RunShape run;
  run.iterations = 10;
  const Shape s = Shape::extents({10, 6});
  const Layout weighted = layout_of("weighted:w=1,3", "array", s, m);
  ASSERT_EQ(weighted.block(0), Shape::extents({3, 6}));
  const Prediction p = predict_jacobi(weighted, m, run);
  EXPECT_NEAR(p.predicted_s, 10 * 0.0961, 1e-9);
  EXPECT_NEAR(p.compute_s, 10 * 0.0961, 1e-9);
  EXPECT_NEAR(p.comm_s, 10 * 0.002, 1e-9);
  EXPECT_NEAR(p.procs[0].launch_s, 10 * 100e-6, 1e-12);
  EXPECT_NEAR(p.procs[1].launch_s, 10 * 2e-6, 1e-12);
  EXPECT_NEAR(p.imbalance, 0.0961 / ((0.0961 + 0.096002) / 2), 1e-9);
  // Even blocks give the slow device 4×4 cells: 64 flops at 333 flop/s, 192 ms an iteration.
  const Prediction even = predict_jacobi(layout_of("blocks", "array", s, m), m, run);
  EXPECT_NEAR(even.predicted_s, 10 * 0.1921, 1e-9);
  EXPECT_GT(even.imbalance, 1.4);
}

// The same 2×2 Cannon on 1000×1000 matrices: a block is 2 MB, more than MPI sends eagerly, so
// its shift moves in a rendezvous after the product instead of during it. A product is 0.25 s
// (and a 1 µs launch); a block's message 10 µs + 2 ms. Process (1,1) receives both blocks in the
// alignment and every process both at the end of step 0.
TEST(Predict, CannonRendezvousShiftsFollowTheProduct) {
  Machine m = machine_of("cpu*4", 4);
  m.set_network(one_node_network(1e-5, 1e9));
  m.set_host_flops(Kernel::gemm, 1e9);
  const Layout l = layout_of("blocks", "square", Shape::extents({1000, 1000}), m);
  const Prediction p = predict_cannon(l, l, l, m, RunShape{});
  const double message = 1e-5 + 2e6 / 1e9, product = 0.25 + 1e-6;
  EXPECT_NEAR(p.predicted_s, 2 * message + product + 2 * message + product, 1e-12);
}

// SUMMA on 8×8 matrices, one panel of 8, on a 2×2 grid. `cyclic` gives each process every other
// row and column: the pieces of A's panel it receives (one from itself) are 4×4 elements that lie
// apart in its 4×8 panel, 16 runs each; B's are 4 rows of 4 side by side, 4 runs each. `blocks`
// receives A's pieces as 4 rows of 4 and B's whole. Each run costs default_run_seconds, each
// byte 1 / default_pack_bandwidth, on the receiving process's CPU; the owners send whole blocks.
TEST(Predict, SummaPaysForTheRunsOfStridedPanelPieces) {
  Machine m = machine_of("cpu*4", 4);
  const Shape s = Shape::extents({8, 8});
  RunShape run;
  run.panel = 8;
  const Layout cyclic = layout_of("cyclic", "mesh2d", s, m);
  const Layout blocks = layout_of("blocks", "mesh2d", s, m);
  const Prediction pc = predict_summa(cyclic, cyclic, cyclic, m, run);
  const Prediction pb = predict_summa(blocks, blocks, blocks, m, run);
  const double piece = 16 * 8 / default_pack_bandwidth(), r = default_run_seconds();
  const double cyclic_gather = 2 * (16 * r + piece) + 2 * (4 * r + piece);
  const double blocks_gather = 2 * (4 * r + piece);
  for (int proc = 0; proc < 4; ++proc) {
    EXPECT_NEAR(pc.procs[std::size_t(proc)].compute_s - pb.procs[std::size_t(proc)].compute_s,
                cyclic_gather - blocks_gather, 1e-15)
        << "process " << proc;
  }
  EXPECT_GT(pc.predicted_s, pb.predicted_s);
}

// Jacobi on 102×102 in 51×51 blocks of a 2×2 grid at 1 Gflop/s, one iteration: process 0's
// interior is 50×50 cells (10 µs), its sweep three launches (3 µs), and of its two faces the one
// across columns is 51 single values, packed to send and unpacked on receipt, and swept a row at
// a time (51 strided rows). On a device 4× slower the sweep's rows slow down with its cells, the
// packing (by the process's CPU) does not, and its three launches cost an emulated device's.
TEST(Predict, JacobiPacksAndSweepsTheFacesThatAreStrided) {
  RunShape run;
  run.iterations = 1;
  const Shape s = Shape::extents({102, 102});
  const double face = 51 * default_run_seconds() + 51 * 8 / default_pack_bandwidth();
  const double sweep = 10e-6 + 51 * default_strided_row_seconds();
  Machine m = machine_of("cpu*4", 4);
  m.set_host_flops(Kernel::stencil, 1e9);
  const Prediction p = predict_jacobi(layout_of("blocks", "mesh2d", s, m), m, run);
  EXPECT_NEAR(p.procs[0].compute_s, sweep + 3e-6 + 2 * face, 1e-12);
  Machine slow = machine_of("emu:0(slowdown=4),cpu*3", 4);
  slow.set_host_flops(Kernel::stencil, 1e9);
  const Prediction q = predict_jacobi(layout_of("blocks", "mesh2d", s, slow), slow, run);
  EXPECT_NEAR(q.procs[0].compute_s,
              4 * sweep + 3 * default_launch_seconds(DeviceKind::emu) + 2 * face, 1e-12);
  // Split into row blocks the faces are rows: nothing strided to pack or sweep.
  const Prediction rows = predict_jacobi(layout_of("blocks", "array", s, m), m, run);
  EXPECT_NEAR(rows.procs[0].compute_s, 4 * 25 * 100 * 1e-9 + 2e-6, 1e-12);  // rows 1-25
}

// Jacobi on 404×102 split into four row blocks, one iteration at 1 Gflop/s on two host cores.
// Process 1 updates 101×100 cells (40.4 µs alone) in three launches (3 µs). Beside a `clock=cpu`
// device 6× slower (240 µs for its 100×100 cells, 100 µs for its two launches), the host
// kernels (43.4, 43.4 and 42 µs) run one after the other on the second core while the device's
// 140 µs of CPU take the first: the step lasts the device's 340 µs and process 1 keeps its time.
// Four host processes on two cores run two kernels each, one after the other (their kernels are
// far shorter than the scheduler's slice): 42 + 43.4 µs, each kernel its own length.
TEST(Predict, AProcessThatWaitsForASlowerOneKeepsItsCores) {
  RunShape run;
  run.iterations = 1;
  const Shape s = Shape::extents({404, 102});
  Machine beside = machine_of("emu:0(slowdown=6,clock=cpu),cpu*3", 4);
  beside.set_host_flops(Kernel::stencil, 1e9);
  beside.set_host_cores(2);
  const Prediction slack = predict_jacobi(layout_of("blocks", "array", s, beside), beside, run);
  EXPECT_NEAR(slack.procs[1].compute_s, 40.4e-6 + 3e-6, 1e-12);
  EXPECT_NEAR(slack.procs[0].compute_s, 240e-6 + 100e-6, 1e-12);
  Machine equal = machine_of("cpu*4", 4);
  equal.set_host_flops(Kernel::stencil, 1e9);
  equal.set_host_cores(2);
  const Prediction busy = predict_jacobi(layout_of("blocks", "array", s, equal), equal, run);
  EXPECT_NEAR(slack.predicted_s, 340e-6, 1e-12);
  EXPECT_NEAR(busy.procs[1].compute_s, 40.4e-6 + 3e-6, 1e-12);
  EXPECT_NEAR(busy.predicted_s, 42e-6 + 43.4e-6, 1e-12);
}

// The node's scheduler by hand: kernels shorter than the slice run to their end once they have a
// core, longer ones take turns of a slice; an emulated device with `clock=cpu` waits for a core
// within its slowed time, one that counts elapsed time stretches what it waited; a GPU needs no
// host core.
TEST(SharedCores, ShortKernelsRunToTheirEndLongOnesTakeTurns) {
  using detail::CoreJob;
  using detail::shared_cores_spans;
  const auto last_end = [](const std::vector<detail::CoreSpan>& spans) {
    double end = 0;
    for (const auto& s : spans) end = std::max(end, s.end);
    return end;
  };
  // Three 1 ms kernels on two cores, 1.5 ms slices: two of their lengths, not 1.5.
  const std::vector<CoreJob> short_ones(3, CoreJob{.cpu = 1e-3, .wall = 1e-3});
  const auto run_through = shared_cores_spans(short_ones, 2, 1.5e-3);
  EXPECT_DOUBLE_EQ(last_end(run_through), 2e-3);
  EXPECT_DOUBLE_EQ(run_through[2].start, 1e-3);
  EXPECT_DOUBLE_EQ(run_through[2].end - run_through[2].start, 1e-3);
  // Three 3 ms kernels in 0.5 ms turns keep both cores busy to the end: 9 ms over 2 cores.
  const std::vector<CoreJob> long_ones(3, CoreJob{.cpu = 3e-3, .wall = 3e-3});
  EXPECT_NEAR(last_end(shared_cores_spans(long_ones, 2, 0.5e-3)), 4.5e-3, 1e-15);
  // Enough cores: every kernel its own length.
  EXPECT_DOUBLE_EQ(last_end(shared_cores_spans(long_ones, 3, 0.5e-3)), 3e-3);
  EXPECT_DOUBLE_EQ(last_end(shared_cores_spans(long_ones, 0, 0.5e-3)), 3e-3);
  // One core: a clock=cpu device (1 ms of CPU, 6 ms slowed) first, two host kernels after it.
  const std::vector<CoreJob> beside = {CoreJob{.cpu = 1e-3, .wall = 6e-3, .cpu_clock = true},
                                       CoreJob{.cpu = 1e-3, .wall = 1e-3},
                                       CoreJob{.cpu = 1e-3, .wall = 1e-3}};
  const auto b = shared_cores_spans(beside, 1, 1.5e-3);
  EXPECT_DOUBLE_EQ(b[0].end, 6e-3);
  EXPECT_DOUBLE_EQ(b[2].start, 2e-3);
  EXPECT_DOUBLE_EQ(b[2].end, 3e-3);
  // The same device counting elapsed time, after a host kernel: it starts at 1 ms and its 1 ms
  // of CPU, slowed 6x, ends at 7 ms.
  const std::vector<CoreJob> after = {CoreJob{.cpu = 1e-3, .wall = 1e-3},
                                      CoreJob{.cpu = 1e-3, .wall = 6e-3}};
  EXPECT_DOUBLE_EQ(shared_cores_spans(after, 1, 1.5e-3)[1].end, 7e-3);
  // A GPU's kernel takes no core from the host kernels.
  const std::vector<CoreJob> gpu = {CoreJob{.cpu = 0, .wall = 5e-3},
                                    CoreJob{.cpu = 1e-3, .wall = 1e-3}};
  const auto g = shared_cores_spans(gpu, 1, 1.5e-3);
  EXPECT_DOUBLE_EQ(g[0].end, 5e-3);
  EXPECT_DOUBLE_EQ(g[1].end, 1e-3);
  // Kernels a million slices long: the turns grow to keep the schedule short, and the cores
  // still share them fluidly.
  const std::vector<CoreJob> very_long(3, CoreJob{.cpu = 1500.0, .wall = 1500.0});
  EXPECT_NEAR(last_end(shared_cores_spans(very_long, 2, 1.5e-3)), 2250.0, 2250.0 * 1e-3);
  // Linux's slice on two cores: 0.75 ms times 1 + log2 2.
  EXPECT_DOUBLE_EQ(default_scheduler_slice_seconds(2), 1.5e-3);
  EXPECT_DOUBLE_EQ(default_scheduler_slice_seconds(64), 3e-3);
}

TEST(Predict, RanksSharingADeviceShareItsSpeedAndMemory) {
  Machine m = machine_of("emu:0(slowdown=2,mem=1MiB)*2,cpu*2", 4);
  EXPECT_EQ(m.sharers(0), 2);
  EXPECT_EQ(m.sharers(2), 1);
  EXPECT_EQ(m.device_group(0), m.device_group(1));
  EXPECT_NE(m.device_group(2), m.device_group(3));
  // Half the device each, at half the host's speed: four times the host's time.
  EXPECT_DOUBLE_EQ(m.compute_seconds(0, Kernel::stencil, 1e9, 0),
                   4 * m.compute_seconds(2, Kernel::stencil, 1e9, 0));
  // Two grids of about 103×404 doubles each: 0.67 MB a process, 1.3 MB on the 1 MiB device.
  const Prediction p =
      predict_jacobi(layout_of("blocks", "array", Shape::extents({402, 402}), m), m, RunShape{});
  EXPECT_FALSE(p.fits);
  EXPECT_NE(p.fit_note.find("emu:0"), std::string::npos) << p.fit_note;
  EXPECT_NE(p.fit_note.find("1.00 MiB"), std::string::npos) << p.fit_note;
  const Prediction small =
      predict_jacobi(layout_of("blocks", "array", Shape::extents({102, 102}), m), m, RunShape{});
  EXPECT_TRUE(small.fits);
}

TEST(Predict, HostCoresSharedByMoreProcessesSlowEach) {
  Machine m = machine_of("cpu*4", 4);
  const double alone = m.compute_seconds(0, Kernel::gemm, 1e9, 0);
  m.set_host_cores(2);
  EXPECT_DOUBLE_EQ(m.compute_seconds(0, Kernel::gemm, 1e9, 0), 2 * alone);
  m.set_host_cores(8);
  EXPECT_DOUBLE_EQ(m.compute_seconds(0, Kernel::gemm, 1e9, 0), alone);
}

// Cores are wanted while kernels run: a host process wants one, an emulated device 1/slowdown of
// one (it sleeps out the rest), once for the ranks that take turns on it. Hand-computed:
// `cpu*2,emu:0(slowdown=4)*2` wants 2 + 1/4 cores; on 1 core everything stretches 2.25x, on 2
// 1.125x, on 3 nothing. With clock=cpu the device's slowdown of 4 covers a stretch below 4.
TEST(Machine, ContentionCountsTheCoresKernelsKeepBusy) {
  Machine m = machine_of("cpu*2,emu:0(slowdown=4)*2", 4);
  Machine cpu_clock = machine_of("cpu*2,emu:0(slowdown=4,clock=cpu)*2", 4);
  for (int cores : {1, 2, 3}) {
    m.set_host_cores(cores);
    cpu_clock.set_host_cores(cores);
    const double stretch = std::max(1.0, 2.25 / cores);
    for (int p = 0; p < 4; ++p) EXPECT_DOUBLE_EQ(m.contention_factor(p, 0), stretch) << cores;
    EXPECT_DOUBLE_EQ(cpu_clock.contention_factor(0, 0), stretch) << cores;
    EXPECT_DOUBLE_EQ(cpu_clock.contention_factor(2, 0), 1.0) << cores;
  }
  // Eight host processes on two cores: a clock=cpu device of slowdown 2 loses the other 2x.
  Machine crowded = machine_of("cpu*7,emu:0(slowdown=2,clock=cpu)", 8);
  crowded.set_host_cores(2);
  EXPECT_DOUBLE_EQ(crowded.contention_factor(0, 0), 7.5 / 2);
  EXPECT_DOUBLE_EQ(crowded.contention_factor(7, 0), 7.5 / 2 / 2);
  // The factor is what compute_seconds applies.
  const double alone = machine_of("cpu*7,emu:0(slowdown=2,clock=cpu)", 8)
                           .compute_seconds(7, Kernel::stencil, 1e9, 0);
  EXPECT_DOUBLE_EQ(crowded.compute_seconds(7, Kernel::stencil, 1e9, 0), alone * 7.5 / 4);
}

// Three ranks take turns on one device: a step lasts the sum of their own kernel times (1, 2 and
// 0.5 s: 3.5 s), not three times the largest (6 s); a host process beside them counts alone.
TEST(Predict, ASharedDeviceRunsItsRanksKernelsOneAfterTheOther) {
  const Machine m = machine_of("emu:0(slowdown=2)*3,cpu", 4);
  ASSERT_DOUBLE_EQ(m.sharing_factor(0), 3.0);
  detail::StepMax step;
  step.add(m, 0, 3 * 1.0, 0.1);
  step.add(m, 1, 3 * 2.0, 0.2);
  step.add(m, 2, 3 * 0.5, 0.0);
  EXPECT_DOUBLE_EQ(step.compute, 3.5);
  EXPECT_DOUBLE_EQ(step.comm, 0.2);
  step.add(m, 3, 4.0, 0.0);
  EXPECT_DOUBLE_EQ(step.compute, 4.0);
  // Equal shares: the sum is sharers × each, as before.
  detail::StepMax equal;
  for (int p = 0; p < 3; ++p) equal.add(m, p, 3 * 1.0, 0);
  EXPECT_DOUBLE_EQ(equal.compute, 3.0);
}

// A tiled factorisation's kernels add up to n³/3 flops whatever the layout deals them.
TEST(Predict, CholeskyCountsEveryFlopOnce) {
  Machine m = machine_of("cpu*4", 4);
  for (const std::string spec : {"blockCyclic:b=64", "blocks"}) {
    const Prediction p =
        predict_cholesky(layout_of(spec, "mesh2d", Shape::extents({256, 256}), m), m, RunShape{});
    double flops = 0;
    for (const ProcessCost& c : p.procs) flops += c.flops;
    EXPECT_NEAR(flops, 256.0 * 256 * 256 / 3, 1) << spec;
    EXPECT_GT(p.predicted_s, 0);
    EXPECT_LE(p.predicted_s, p.compute_s + p.comm_s + 1e-12) << spec;
  }
}

TEST(Predict, CannonRefusesSeveralBlocksAndNonSquareGrids) {
  Machine m = machine_of("cpu*4", 4);
  const Shape s = Shape::extents({64, 64});
  const Layout cyclic = layout_of("blockCyclic:b=8", "square", s, m);
  EXPECT_THROW((void)predict_cannon(cyclic, cyclic, cyclic, m, RunShape{}), Error);
  const Layout line = layout_of("blocks", "array", s, m);
  EXPECT_THROW((void)predict_cannon(line, line, line, m, RunShape{}), Error);
}

// A correction fitted with factors applied multiplies them: a key the applied calibration lacks
// starts from its factor for other devices; a launch factor the correction does not refit stays.
TEST(Calibration, ACorrectionMultipliesTheFactorsItWasFittedWith) {
  Calibration applied;
  applied.runs = 3;
  applied.compute = {{"cpu", 0.5}};
  applied.compute_other = 0.6;
  applied.launch = {{"emu(slowdown=4)", 2.0}};
  Calibration correction;
  correction.runs = 3;
  correction.compute = {{"cpu", 1.2}, {"emu(slowdown=4)", 0.9}};
  correction.compute_other = 1.1;
  correction.message_s = 1e-6;
  const Calibration c = refined(applied, correction);
  EXPECT_DOUBLE_EQ(c.compute.at("cpu"), 0.6);
  EXPECT_DOUBLE_EQ(c.compute.at("emu(slowdown=4)"), 0.54);
  EXPECT_DOUBLE_EQ(c.compute_other, 0.66);
  EXPECT_DOUBLE_EQ(c.launch.at("emu(slowdown=4)"), 2.0);
  EXPECT_DOUBLE_EQ(c.message_s, 1e-6);
  // Nothing applied yet: the correction is the calibration.
  EXPECT_DOUBLE_EQ(refined(Calibration{}, correction).compute.at("cpu"), 1.2);
  EXPECT_FALSE(settled(correction, 0.005));
  Calibration small;
  small.compute = {{"cpu", 1.004}};
  small.compute_other = 0.996;
  EXPECT_TRUE(settled(small, 0.005));
  small.launch = {{"cpu", 1.01}};
  EXPECT_FALSE(settled(small, 0.005));
}

// Two shares whose launches weigh differently relative to the kernels tell the launches'
// factor from the kernels': measured = 0.5 · kernels + 2 · launches exactly.
TEST(Calibration, FitsLaunchesApartWhereSharesTellThemApart) {
  RunSample even, small;
  even.device_keys = small.device_keys = {"emu(slowdown=4)", "cpu"};
  even.predicted_compute = {10e-3, 10e-3};
  even.predicted_launch = {1e-3, 1e-5};  // a tenth of the kernels
  small.predicted_compute = {2e-3, 20e-3};
  small.predicted_launch = {1e-3, 1e-5};  // half of them
  even.measured_compute = {0.5 * 10e-3 + 2 * 1e-3, 0.3 * 10e-3 + 1e-5};
  small.measured_compute = {0.5 * 2e-3 + 2 * 1e-3, 0.3 * 20e-3 + 1e-5};
  const RunSample both[] = {even, small};
  const Calibration c = fit_calibration(both);
  EXPECT_NEAR(c.compute.at("emu(slowdown=4)"), 0.5, 1e-12);
  EXPECT_NEAR(c.launch.at("emu(slowdown=4)"), 2.0, 1e-9);
  // The host's launches are a thousandth of its kernels: the ratio alone, launches left as assumed.
  EXPECT_NEAR(c.compute.at("cpu"), 0.3, 1e-12);
  EXPECT_EQ(c.launch.count("cpu"), 0U);

  // One share cannot tell them apart: the ratio, the launches taken out of the measured.
  const Calibration one = fit_calibration(std::span(&small, 1));
  EXPECT_EQ(one.launch.count("emu(slowdown=4)"), 0U);
  EXPECT_NEAR(one.compute.at("emu(slowdown=4)"), (3e-3 - 1e-3) / 2e-3, 1e-12);

  // A fit that would make the launches free (the small share relatively faster) is refused.
  RunSample odd = small;
  odd.measured_compute[0] = 1e-3;  // 10 f + g = 7 and 2 f + g = 1: g = -0.5
  const RunSample mixed[] = {even, odd};
  EXPECT_EQ(fit_calibration(mixed).launch.count("emu(slowdown=4)"), 0U);

  // The launch factor scales the device's launches, not its kernels.
  Machine m = machine_of("emu:0(slowdown=4),cpu", 2);
  const double launch = m.launch_seconds(0), kernel = m.compute_seconds(0, Kernel::gemm, 1e9, 0);
  m.set_calibration(c);
  EXPECT_DOUBLE_EQ(m.launch_seconds(0), 2.0 * launch);
  EXPECT_DOUBLE_EQ(m.compute_seconds(0, Kernel::gemm, 1e9, 0), 0.5 * kernel);
  EXPECT_DOUBLE_EQ(m.launch_seconds(1), default_launch_seconds(DeviceKind::cpu));
}

TEST(Calibration, FitsComputePerDevice) {
  RunSample r;
  r.device_keys = {"cpu", "cpu", "emu(slowdown=2)"};
  r.predicted_compute = {1, 1, 2};
  r.measured_compute = {2, 2.5, 3};
  const Calibration c = fit_calibration(std::span(&r, 1));
  EXPECT_EQ(c.runs, 1);
  EXPECT_DOUBLE_EQ(c.compute.at("cpu"), 2.25);
  EXPECT_DOUBLE_EQ(c.compute.at("emu(slowdown=2)"), 1.5);
  EXPECT_DOUBLE_EQ(c.compute_other, 2.0);  // the median of 2, 2.5 and 1.5
  EXPECT_DOUBLE_EQ(c.message_s, 0.0);

  Machine m = machine_of("cpu,emu:0(slowdown=2),cuda:0", 3);
  const double cpu = m.compute_seconds(0, Kernel::gemm, 1e9, 0);
  const double emu = m.compute_seconds(1, Kernel::gemm, 1e9, 0);
  const double cuda = m.compute_seconds(2, Kernel::gemm, 1e9, 0);
  const double message = m.message_seconds(0, 1, 1, 1e6);
  Calibration with_comm = c;
  with_comm.message_s = 2e-3;
  m.set_calibration(with_comm);
  EXPECT_DOUBLE_EQ(m.compute_seconds(0, Kernel::gemm, 1e9, 0), 2.25 * cpu);
  EXPECT_DOUBLE_EQ(m.compute_seconds(1, Kernel::gemm, 1e9, 0), 1.5 * emu);
  EXPECT_DOUBLE_EQ(m.compute_seconds(2, Kernel::gemm, 1e9, 0), 2 * cuda);  // not measured
  EXPECT_DOUBLE_EQ(m.message_seconds(0, 1, 1, 1e6), message + 2e-3);
  EXPECT_THROW((void)fit_calibration({}), Error);
  r.measured_compute.pop_back();
  EXPECT_THROW((void)fit_calibration(std::span(&r, 1)), Error);
}

// The measured makespan beyond the prediction, over the critical path's messages: 2 s
// predicted, 3 s measured, 4 messages: 0.25 s each. A run no slower than predicted gives 0.
TEST(Calibration, MessageOverheadFromTheMakespanBeyondThePrediction) {
  EXPECT_DOUBLE_EQ(
      fit_message_overhead({.predicted_s = 2, .messages = 4, .measured_s = 3, .procs = {}}), 0.25);
  EXPECT_DOUBLE_EQ(
      fit_message_overhead({.predicted_s = 2, .messages = 4, .measured_s = 1.5, .procs = {}}), 0.0);
  EXPECT_DOUBLE_EQ(
      fit_message_overhead({.predicted_s = 2, .messages = 0, .measured_s = 3, .procs = {}}), 0.0);
  // The slowest process computed 0.6 s beyond the slowest predicted (1.6 against 1.0, though
  // its device's median matched): that is compute, and 0.4 s of the 1 s is left to 4 messages.
  MessageSample run{.predicted_s = 2, .messages = 4, .measured_s = 3, .procs = {}};
  run.procs = {{.measured_compute = 1.0,
                .measured_comm = 2.0,
                .predicted_compute = 1.0,
                .predicted_comm = 1.0,
                .messages = 4},
               {.measured_compute = 1.6,
                .measured_comm = 1.4,
                .predicted_compute = 1.0,
                .predicted_comm = 1.0,
                .messages = 4}};
  EXPECT_DOUBLE_EQ(fit_message_overhead(run), 0.1);
  // A process that spent 0.2 s beyond its predicted communication on its 4 messages bounds a
  // message's overhead by 0.05 s, whatever the makespan left.
  run.procs[1].measured_comm = 1.2;
  EXPECT_DOUBLE_EQ(fit_message_overhead(run), 0.05);
  // One that communicated less than predicted leaves nothing to messages.
  run.procs[0].measured_comm = 0.9;
  EXPECT_DOUBLE_EQ(fit_message_overhead(run), 0.0);
  // On a prediction: Cannon 2x2 sends 2 messages per step on its critical path (one step of
  // shifts, and the alignment's two), so one second more per message adds 4 s of communication.
  Machine m = machine_of("cpu*4", 4);
  const Layout l = layout_of("blocks", "square", Shape::extents({100, 100}), m);
  const double before = predict_cannon(l, l, l, m, RunShape{}).comm_s;
  Calibration c;
  c.runs = 1;
  c.message_s = 1;
  m.set_calibration(c);
  EXPECT_NEAR(predict_cannon(l, l, l, m, RunShape{}).comm_s - before, 4.0, 1e-9);
}

// Every layout plug-in of the run is either a candidate or rejected with its reason, and on a
// device four times slower than the others the best layout is not the even split.
TEST(Advise, EveryRegisteredPluginIsCandidateOrRejected) {
  Environment& env = Environment::current();
  const Machine m = machine_of("emu:0(slowdown=4),cpu*3", 4);
  DenseProblem problem;
  problem.app = App::jacobi;
  problem.shape = Shape::extents({514, 514});
  const Advice a = advise_dense(problem, m, dense_candidates(env, App::jacobi, m, {}));
  ASSERT_FALSE(a.candidates.empty());
  for (const auto* plugin : env.extension<LayoutRegistry>().all()) {
    const auto named = [&](const CandidateSpec& s) {
      return Spec::parse(s.layout).name() == plugin->name();
    };
    const bool listed = std::any_of(a.candidates.begin(), a.candidates.end(),
                                    [&](const Candidate& c) { return named(c.spec); }) ||
                        std::any_of(a.rejected.begin(), a.rejected.end(), [&](const Rejection& r) {
                          return named(r.spec) && !r.reason.empty();
                        });
    EXPECT_TRUE(listed) << plugin->name();
  }
  EXPECT_NE(a.candidates.front().spec.layout, "blocks");
  for (std::size_t i = 1; i < a.candidates.size(); ++i) {
    EXPECT_LE(a.candidates[i - 1].prediction.predicted_s, a.candidates[i].prediction.predicted_s);
  }
}

TEST(Advise, RelativeSpeedsFollowTheBinding) {
  const Machine m = machine_of("emu:0(slowdown=4),cpu*3", 4);
  const std::vector<double> s = relative_speeds(m, Kernel::gemm, 1e9);
  EXPECT_DOUBLE_EQ(s[0], 0.25);
  EXPECT_DOUBLE_EQ(s[1], 1.0);
}

// Without models a GPU is priced at its assumed rate for the kernel, not a host core's: on a GPU
// beside three cores the best Jacobi split gives the GPU most of the grid.
TEST(Advise, AGpuWithoutModelsIsFasterThanAHostCore) {
  Environment& env = Environment::current();
  const Machine m = machine_of("cuda:0,cpu*3", 4);
  for (Kernel k : {Kernel::gemm, Kernel::stencil, Kernel::spmv}) {
    EXPECT_DOUBLE_EQ(m.compute_seconds(0, k, 1e9, 0) * m.gpu_flops(k),
                     m.compute_seconds(1, k, 1e9, 0) * m.host_flops(k));
    EXPECT_GT(m.gpu_flops(k), 10 * m.host_flops(k)) << to_string(k);
  }
  const std::vector<double> s = relative_speeds(m, Kernel::stencil, 1e9);
  EXPECT_DOUBLE_EQ(s[0], 1.0);
  EXPECT_DOUBLE_EQ(s[1], default_host_flops(Kernel::stencil) / default_gpu_flops(Kernel::stencil));

  DenseProblem problem;
  problem.app = App::jacobi;
  problem.shape = Shape::extents({1026, 1026});
  const Advice a = advise_dense(problem, m, dense_candidates(env, App::jacobi, m, {}));
  ASSERT_FALSE(a.candidates.empty());
  const Candidate& best = a.candidates.front();
  const Layout l = layout_of(best.spec.layout, best.spec.topology, problem.shape, m);
  EXPECT_GT(l.block(0).size(), 1026 * 1026 / 2) << best.spec.layout;
}

// Jacobi on four equal host processes whose messages cost 2 ms each: `blocks` on `mesh2d` and
// on `array` give every process the same work and at most two neighbours, so their makespans
// differ by the bytes and the square's strided faces alone (under the tie tolerance); the line
// sends 6 messages an iteration where the square sends 8, so its total cost is smaller and it
// ranks first.
TEST(Advise, NearlyEqualMakespansRankByTotalCost) {
  auto& env = Environment::current();
  Machine m = machine_of("cpu*4", 4);
  m.set_network(one_node_network(2e-3, 5e9));
  DenseProblem problem;
  problem.app = App::jacobi;
  problem.shape = Shape::extents({1026, 1026});
  const Advice a = advise_dense(problem, m, dense_candidates(env, App::jacobi, m, {}));
  const auto find = [&](const std::string& layout, const std::string& topo) {
    for (std::size_t i = 0; i < a.candidates.size(); ++i) {
      if (a.candidates[i].spec.layout == layout && a.candidates[i].spec.topology == topo) return i;
    }
    ADD_FAILURE() << layout << " on " << topo << " was not ranked";
    return a.candidates.size();
  };
  const std::size_t line = find("blocks", "array"), square = find("blocks", "mesh2d");
  ASSERT_LT(line, a.candidates.size());
  ASSERT_LT(square, a.candidates.size());
  const Prediction& pl = a.candidates[line].prediction;
  const Prediction& ps = a.candidates[square].prediction;
  ASSERT_GE(pl.predicted_s, ps.predicted_s);  // the square's makespan is the smaller one
  ASSERT_LE(pl.predicted_s, ps.predicted_s * (1 + tie_tolerance));
  EXPECT_LT(line, square);
  // Outside a tie the makespan orders: no candidate beats an earlier one by more than the
  // tolerance.
  for (std::size_t i = 0; i < a.candidates.size(); ++i) {
    for (std::size_t j = i + 1; j < a.candidates.size(); ++j) {
      EXPECT_GE(a.candidates[j].prediction.predicted_s * (1 + tie_tolerance),
                a.candidates[i].prediction.predicted_s)
          << a.candidates[i].spec.layout << " before " << a.candidates[j].spec.layout;
    }
  }
}

TEST(Machine, RefusesBadInput) {
  EXPECT_THROW(Machine({}, 0), Error);
  Machine m = machine_of("cpu*2", 2);
  EXPECT_THROW(m.set_host_cores(-1), Error);
  EXPECT_THROW(m.set_host_flops(Kernel::gemm, 0), Error);
  EXPECT_THROW(m.set_gpu_flops(Kernel::spmv, -1), Error);
  EXPECT_THROW(m.set_models({fpm::Model::constant_speed(1)}), Error);  // one for two
  // A model without flops_per_unit cannot price flops.
  EXPECT_THROW(m.set_models({fpm::Model::constant_speed(1), fpm::Model::constant_speed(1)}), Error);
  EXPECT_THROW((void)parse_app("lu"), Error);
  // A network model without the class a pair needs is an error, not a guess.
  Machine two_nodes(parse_device_spec("cpu*4", 4), 2);
  two_nodes.set_network(one_node_network(1e-6, 1e9));
  EXPECT_GT(two_nodes.message_seconds(0, 1, 1, 100), 0);
  EXPECT_THROW((void)two_nodes.message_seconds(0, 2, 1, 100), Error);
}

// ---- any program, priced from the steps of its dry run -----------------------------------------

TEST(ProgramTrace, LaunchesAfterAStartOverlapItsMessages) {
  const Machine m = machine_of("cpu*2", 2);
  ProgramTrace trace;
  const int comm = 0;  // any address names the communication
  trace.launch({.flops = 4e6, .problem_bytes = 1e6});
  trace.comm_start(
      &comm, {{.peer = 1, .bytes = 8e3}, {.peer = 1, .bytes = 8e3, .received = false, .rounds = 0}},
      0);
  trace.launch({.flops = 2e6, .problem_bytes = 1e6});
  trace.comm_wait(&comm);
  trace.launch({.flops = 1e6, .problem_bytes = 1e6});  // after the last wait: a step of its own
  const std::vector<TraceStep> steps = trace_steps(trace, m, 0);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_DOUBLE_EQ(steps[0].pre_kernel_s, m.own_seconds(0, Kernel::stencil, 4e6, 1000000));
  EXPECT_DOUBLE_EQ(steps[0].post_kernel_s, m.own_seconds(0, Kernel::stencil, 2e6, 1000000));
  EXPECT_DOUBLE_EQ(steps[0].pre_launch_s, m.launch_seconds(0));
  // The message received costs its time on the wire; the one sent costs its sender nothing.
  EXPECT_DOUBLE_EQ(steps[0].comm_s, m.message_seconds(1, 0, 1, 8e3));
  EXPECT_DOUBLE_EQ(steps[1].pre_flops, 1e6);
  EXPECT_EQ(steps[1].comm_s, 0);
}

TEST(ProgramTrace, AStepLastsUntilItsSlowestProcessIsDone) {
  const Machine m = machine_of("cpu*2", 2);
  // Process 0: 1 s before its messages, 2 s overlapping 0.5 s of them: 3 s. Process 1: nothing
  // before, 1 s overlapping 2.5 s of messages: 2.5 s.
  const std::vector<std::vector<TraceStep>> steps = {
      {{.pre_kernel_s = 1, .post_kernel_s = 2, .comm_s = 0.5}},
      {{.post_kernel_s = 1, .comm_s = 2.5}}};
  const Prediction p = predict_steps(steps, m);
  EXPECT_DOUBLE_EQ(p.predicted_s, 3.0);
  EXPECT_DOUBLE_EQ(p.compute_s, 3.0);  // the slowest process's launches
  EXPECT_DOUBLE_EQ(p.comm_s, 2.5);     // the slowest process's messages
  EXPECT_DOUBLE_EQ(p.procs[1].compute_s, 1.0);
  // Sequential where nothing overlaps: a process whose messages come after all its launches.
  const Prediction q = predict_steps({{{.pre_kernel_s = 1, .comm_s = 0.5}}, {}}, m);
  EXPECT_DOUBLE_EQ(q.predicted_s, 1.5);
  EXPECT_THROW((void)predict_steps({{}}, m), Error);  // one process's steps for two
}

TEST(ProgramTrace, AReductionEndsAStepWithARoundPerDoubling) {
  const Machine m = machine_of("cpu*5", 5);
  ProgramTrace trace;
  trace.launch({.flops = 1e6, .problem_bytes = 1e5});
  trace.reduction(8, 1, 5);  // partners 0, 3 and (1 ^ 4 = 5 is past the end) 1 + 4 = 0
  trace.launch({.flops = 1e6, .problem_bytes = 1e5});
  ASSERT_EQ(trace.events().size(), 4u);
  const auto& start = trace.events()[1];
  ASSERT_EQ(start.kind, ProgramTrace::Event::Kind::comm_start);
  ASSERT_EQ(start.messages.size(), 3u);
  EXPECT_EQ(start.messages[0].peer, 0);
  EXPECT_EQ(start.messages[1].peer, 3);
  EXPECT_EQ(start.messages[2].peer, 0);
  const std::vector<TraceStep> steps = trace_steps(trace, m, 1);
  ASSERT_EQ(steps.size(), 2u);  // the launch after the reduction waits for it
  EXPECT_DOUBLE_EQ(steps[0].comm_s, 2 * m.message_seconds(0, 1, 1, 8) +
                                        m.message_seconds(3, 1, 1, 8) +
                                        3 * m.gather_seconds(1, 1, 8));
  EXPECT_EQ(steps[0].post_flops, 0);
  EXPECT_EQ(steps[1].pre_flops, 1e6);
  // Alone, nothing to receive.
  ProgramTrace alone;
  alone.reduction(8, 0, 1);
  EXPECT_TRUE(alone.events()[0].messages.empty());
}

TEST(ProgramTrace, AKernelsCostIsAFiniteCount) {
  hit::Kernel<hit::View<double>> k("k");
  EXPECT_THROW(k.cost({.flops_per_point = -1}), Error);
  EXPECT_THROW(k.cost({.flops_per_point = std::numeric_limits<double>::infinity()}), Error);
  k.cost({.flops_per_point = 3, .compute_bound = true});
  EXPECT_EQ(k.cost().flops_per_point, 3);
  EXPECT_TRUE(k.cost().compute_bound);
}

}  // namespace
}  // namespace hit::advisor
