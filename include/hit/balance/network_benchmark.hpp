#pragma once
// Measuring the network model of a run (docs/fpm.md "Network models"): ping-pong between pairs of
// ranks, one pair at a time, fitted to Hockney's model α + n/β per link class (node: two ranks of
// one node; network: ranks of different nodes, real or emulated by HIT_NODES).

#include <cstdint>
#include <span>
#include <vector>

#include "hit/fpm/network_model.hpp"

namespace hit {
class Environment;
}

namespace hit::balance {

struct NetworkOptions {
  // Message sizes in bytes, at least two different ones from 1 to 1 GiB: α comes from the
  // smallest, β from the slope of the times over all of them (fit_hockney).
  std::vector<std::int64_t> sizes = {8, 4096, 65536, 1 << 20, 4 << 20};
  int reps = 20;       // timed round trips per size and pair (>= 1); their median counts
  int warmup = 3;      // untimed round trips first, per size and pair (connections, page faults)
  int max_pairs = 16;  // pairs measured per link class at most (>= 1)
};

// Error(invalid_argument) unless `o` is valid as NetworkOptions says.
void check_network_options(const NetworkOptions& o);

// The pairs of ranks to measure, with their link class by `node_of_rank` (the node of each rank),
// in order of (rank_a, rank_b): every pair of a class that has at most `max_pairs`, else
// `max_pairs` of them evenly spread over the class's pairs in that order. Deterministic, so every
// rank computes the same list. Latency and bandwidth are left 0.
[[nodiscard]] std::vector<fpm::PairCost> network_pairs(const std::vector<int>& node_of_rank,
                                                       int max_pairs);

struct HockneyFit {
  double latency = 0;    // α, seconds (>= 0)
  double bandwidth = 0;  // β, bytes per second (> 0)
};
// α and β from one-way times `seconds` of messages of `sizes` bytes (increasing, at least two):
// β = 1/slope of the least-squares line through the points, which the large messages dominate;
// α = the time of the smallest message less its bytes/β (the intercept of the line is a small
// difference of large numbers, so noise could make it negative). When the times do not grow with
// size (sizes too small to tell a transfer from noise) β = largest size / its time, the bandwidth
// a message of that size gets with its latency included. Error(invalid_argument) for mismatched or
// too few points, or a time that is not > 0.
[[nodiscard]] HockneyFit fit_hockney(std::span<const std::int64_t> sizes,
                                     std::span<const double> seconds);

// Collective over env.comm(): measures every pair of network_pairs (one at a time, the other
// ranks waiting without spinning, so that nothing disturbs the pair), fits each pair, and gives
// each class the median α and β of its pairs with their spread. The model holds the pairs, the
// node of every rank and the annotations date, host, mpi, processes, nodes, emulated_nodes (with
// HIT_NODES), sizes and reps.
// Error(invalid_argument) with fewer than 2 processes (no pair to measure) or bad options, on every
// rank alike.
[[nodiscard]] fpm::NetworkModel measure_network(Environment& env, const NetworkOptions& o = {});

}  // namespace hit::balance
