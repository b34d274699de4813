#include "hit/balance/network_benchmark.hpp"

#include <mpi.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <string>
#include <thread>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/statistics.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::balance {
namespace {

constexpr std::int64_t largest_message = std::int64_t{1} << 30;  // fits MPI's int count

std::vector<std::int64_t> sorted_sizes(const NetworkOptions& o) {
  std::vector<std::int64_t> sizes = o.sizes;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// A dup of the run's communicator, so that the ping-pongs never match the library's messages.
class OwnComm {
 public:
  explicit OwnComm(MPI_Comm comm) { check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup"); }
  ~OwnComm() { MPI_Comm_free(&comm_); }
  OwnComm(const OwnComm&) = delete;
  OwnComm& operator=(const OwnComm&) = delete;
  MPI_Comm get() const noexcept { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Waits for every rank without spinning: with more ranks than cores (tests, shared nodes), ranks
// polling a barrier would take the cores of the pair being measured. Failures other processes
// announce end the wait.
void quiet_barrier(Environment& env, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &request), "MPI_Ibarrier");
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) return;
    env.check_announcements();
    // Long enough that the waiting ranks rarely take a core from the pair; a pair ends at most
    // a millisecond before the next starts.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void transfer(bool send, std::vector<char>& buffer, std::int64_t bytes, int peer, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  const auto count = static_cast<int>(bytes);  // <= largest_message
  if (send) {
    check_mpi(MPI_Isend(buffer.data(), count, MPI_BYTE, peer, 0, comm, &request), "MPI_Isend");
  } else {
    check_mpi(MPI_Irecv(buffer.data(), count, MPI_BYTE, peer, 0, comm, &request), "MPI_Irecv");
  }
  wait_all(1, &request, send ? "MPI_Isend" : "MPI_Irecv");
}

// The ping-pong of one pair: rank_a sends, rank_b sends back. Returns, on rank_a, the median
// one-way time of each size (half a round trip); on rank_b nothing.
std::vector<double> ping_pong(MPI_Comm comm, int me, const fpm::PairCost& pair,
                              const NetworkOptions& o, const std::vector<std::int64_t>& sizes,
                              std::vector<char>& buffer) {
  const bool initiator = me == pair.rank_a;
  const int peer = initiator ? pair.rank_b : pair.rank_a;
  buffer.resize(static_cast<std::size_t>(sizes.back()));
  std::vector<double> medians;
  std::vector<double> times;
  for (const std::int64_t size : sizes) {
    times.clear();
    for (int i = 0; i < o.warmup + o.reps; ++i) {
      const double start = MPI_Wtime();
      transfer(initiator, buffer, size, peer, comm);
      transfer(!initiator, buffer, size, peer, comm);
      // A clock tick at least: no message takes no time.
      const double one_way = std::max((MPI_Wtime() - start) / 2, MPI_Wtick());
      if (i >= o.warmup) times.push_back(one_way);
    }
    if (initiator) medians.push_back(fpm::median(times));
  }
  return medians;
}

double relative_spread(const std::vector<double>& values, double median) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return median > 0 ? (*hi - *lo) / median : 0.0;
}

// Each class's α and β: the medians over its pairs, with their spreads.
void set_classes(fpm::NetworkModel& model) {
  for (const fpm::LinkClass c : fpm::link_classes) {
    std::vector<double> latencies;
    std::vector<double> bandwidths;
    for (const fpm::PairCost& p : model.pairs()) {
      if (p.link != c) continue;
      latencies.push_back(p.latency);
      bandwidths.push_back(p.bandwidth);
    }
    if (latencies.empty()) continue;  // no pair of the class in this run
    fpm::LinkCost cost;
    cost.latency = fpm::median(latencies);
    cost.bandwidth = fpm::median(bandwidths);
    cost.latency_spread = relative_spread(latencies, cost.latency);
    cost.bandwidth_spread = relative_spread(bandwidths, cost.bandwidth);
    cost.pairs = static_cast<int>(latencies.size());
    model.set(c, cost);
  }
}

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The annotations: what was measured, where and when.
void describe(fpm::NetworkModel& model, const Environment& env, const PhysicalTopology& topo,
              const NetworkOptions& o, const std::vector<std::int64_t>& sizes) {
  std::vector<std::string> hosts;
  for (const NodeDescription& n : topo.node_list()) {
    if (std::find(hosts.begin(), hosts.end(), n.host.hostname) == hosts.end()) {
      hosts.push_back(n.host.hostname);
    }
  }
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(library, &length);
  std::string mpi(library, static_cast<std::size_t>(std::max(length, 0)));
  mpi = mpi.substr(0, mpi.find_first_of("\r\n"));
  std::replace(mpi.begin(), mpi.end(), '\t', ' ');  // MPICH separates its fields with a tab
  std::string date = now_iso();
  broadcast(date, 0, env.comm());  // every rank's model is the same, to the second
  model.set_info("date", date);
  model.set_info("host", fmt::format("{}", fmt::join(hosts, ", ")));
  model.set_info("mpi", mpi);
  model.set_info("processes", std::to_string(env.size()));
  model.set_info("nodes", std::to_string(topo.nodes()));
  if (topo.emulated_nodes()) model.set_info("emulated_nodes", "yes (HIT_NODES)");
  model.set_info("sizes", fmt::format("{}", fmt::join(sizes, " ")));
  model.set_info("reps", fmt::format("{} (median of each size, after {} warm-up round trips)",
                                     o.reps, o.warmup));
}

}  // namespace

void check_network_options(const NetworkOptions& o) {
  for (const std::int64_t s : o.sizes) {
    require(s >= 1 && s <= largest_message, ErrorKind::invalid_argument,
            fmt::format("message size {} bytes (allowed 1 to {})", s, largest_message));
  }
  require(sorted_sizes(o).size() >= 2, ErrorKind::invalid_argument,
          fmt::format("message sizes {}: the fit needs at least 2 different ones (a small one for "
                      "the latency, a large one for the bandwidth)",
                      fmt::join(o.sizes, ",")));
  require(o.reps >= 1 && o.reps <= 1'000'000, ErrorKind::invalid_argument,
          fmt::format("{} repetitions (allowed 1 to 1000000)", o.reps));
  require(o.warmup >= 0 && o.warmup <= 1'000'000, ErrorKind::invalid_argument,
          fmt::format("{} warm-up round trips (allowed 0 to 1000000)", o.warmup));
  require(o.max_pairs >= 1, ErrorKind::invalid_argument,
          fmt::format("at most {} pairs per class (allowed 1 or more)", o.max_pairs));
}

std::vector<fpm::PairCost> network_pairs(const std::vector<int>& node_of_rank, int max_pairs) {
  require(max_pairs >= 1, ErrorKind::invalid_argument,
          fmt::format("at most {} pairs per class (allowed 1 or more)", max_pairs));
  std::vector<fpm::PairCost> chosen;
  const auto processes = static_cast<int>(node_of_rank.size());
  for (const fpm::LinkClass c : fpm::link_classes) {
    std::vector<fpm::PairCost> all;
    for (int a = 0; a < processes; ++a) {
      for (int b = a + 1; b < processes; ++b) {
        const bool same =
            node_of_rank[static_cast<std::size_t>(a)] == node_of_rank[static_cast<std::size_t>(b)];
        if (same == (c == fpm::LinkClass::node)) all.push_back({a, b, c, 0, 0});
      }
    }
    const auto count = static_cast<std::int64_t>(all.size());
    const std::int64_t take = std::min<std::int64_t>(count, max_pairs);
    // Evenly spread: the i-th of `take` is the pair at i·count/take (all of them when take =
    // count).
    for (std::int64_t i = 0; i < take; ++i) {
      chosen.push_back(all[static_cast<std::size_t>(i * count / take)]);
    }
  }
  std::sort(chosen.begin(), chosen.end(), [](const fpm::PairCost& x, const fpm::PairCost& y) {
    return std::pair(x.rank_a, x.rank_b) < std::pair(y.rank_a, y.rank_b);
  });
  return chosen;
}

HockneyFit fit_hockney(std::span<const std::int64_t> sizes, std::span<const double> seconds) {
  require(sizes.size() == seconds.size() && sizes.size() >= 2, ErrorKind::invalid_argument,
          fmt::format("a Hockney fit needs at least 2 sizes with a time each (got {} sizes, {} "
                      "times)",
                      sizes.size(), seconds.size()));
  double mean_s = 0;
  double mean_t = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    require(std::isfinite(seconds[i]) && seconds[i] > 0, ErrorKind::invalid_argument,
            fmt::format("a time of {} s for {} bytes (times must be > 0)", seconds[i], sizes[i]));
    require(sizes[i] >= 1 && (i == 0 || sizes[i] > sizes[i - 1]), ErrorKind::invalid_argument,
            "message sizes must be increasing and >= 1");
    mean_s += static_cast<double>(sizes[i]);
    mean_t += seconds[i];
  }
  mean_s /= static_cast<double>(sizes.size());
  mean_t /= static_cast<double>(sizes.size());
  double covariance = 0;
  double variance = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double ds = static_cast<double>(sizes[i]) - mean_s;
    covariance += ds * (seconds[i] - mean_t);
    variance += ds * ds;
  }
  const double slope = covariance / variance;  // variance > 0: the sizes differ
  HockneyFit fit;
  fit.bandwidth = slope > 0 && std::isfinite(1 / slope)
                      ? 1 / slope
                      : static_cast<double>(sizes.back()) / seconds.back();
  fit.latency = std::max(0.0, seconds.front() - static_cast<double>(sizes.front()) / fit.bandwidth);
  return fit;
}

fpm::NetworkModel measure_network(Environment& env, const NetworkOptions& o) {
  if (env.size() < 2) {
    throw Error(ErrorKind::invalid_argument,
                "a network model needs at least 2 processes (a pair to measure): run it under "
                "mpiexec -n 2 or more");
  }
  check_network_options(o);
  const std::vector<std::int64_t> sizes = sorted_sizes(o);
  const PhysicalTopology& topo = PhysicalTopology::of(env);
  std::vector<int> node_of_rank;
  for (const RankPlacement& r : topo.ranks()) node_of_rank.push_back(r.node);
  std::vector<fpm::PairCost> pairs = network_pairs(node_of_rank, o.max_pairs);

  const OwnComm comm(env.comm());
  const int me = env.rank();
  std::vector<char> buffer;
  // α and β of every pair, filled in by its rank_a and summed over the ranks.
  std::vector<double> fitted(2 * pairs.size(), 0.0);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    quiet_barrier(env, comm.get());  // one pair at a time
    if (me != pairs[i].rank_a && me != pairs[i].rank_b) continue;
    const std::vector<double> times = ping_pong(comm.get(), me, pairs[i], o, sizes, buffer);
    if (me != pairs[i].rank_a) continue;
    const HockneyFit fit = fit_hockney(sizes, times);
    fitted[2 * i] = fit.latency;
    fitted[2 * i + 1] = fit.bandwidth;
  }
  quiet_barrier(env, comm.get());
  allreduce_in_place(fitted.data(), static_cast<int>(fitted.size()), MPI_DOUBLE, MPI_SUM,
                     comm.get());

  fpm::NetworkModel model;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    pairs[i].latency = fitted[2 * i];
    pairs[i].bandwidth = fitted[2 * i + 1];
    model.add_pair(pairs[i]);
  }
  set_classes(model);
  model.set_node_of_rank(std::move(node_of_rank));
  describe(model, env, topo, o, sizes);
  return model;
}

}  // namespace hit::balance
