#include "hit/fpm/network_model.hpp"

#include <fmt/format.h>
#include <cmath>
#include <utility>

#include "hit/core/error.hpp"

namespace hit::fpm {
namespace {

std::size_t index_of(LinkClass c) noexcept {
  return static_cast<std::size_t>(c);
}

// α and β as every cost needs them: a negative latency or a bandwidth of 0 would price messages
// at nothing or at infinity, and a NaN would make every prediction NaN.
void check_alpha_beta(double latency, double bandwidth, const std::string& what) {
  if (!std::isfinite(latency) || latency < 0) {
    throw Error(ErrorKind::model,
                fmt::format("{}: latency {} s must be a finite number >= 0", what, latency));
  }
  if (!std::isfinite(bandwidth) || bandwidth <= 0) {
    throw Error(ErrorKind::model,
                fmt::format("{}: bandwidth {} B/s must be a finite number > 0", what, bandwidth));
  }
}

void check_rank(int rank, const char* name) {
  if (rank < 0) {
    throw Error(ErrorKind::invalid_argument, fmt::format("{} {} must be >= 0", name, rank));
  }
}

}  // namespace

std::string_view to_string(LinkClass c) noexcept {
  return c == LinkClass::node ? "node" : "network";
}

std::optional<LinkClass> parse_link_class(std::string_view name) noexcept {
  for (LinkClass c : link_classes) {
    if (to_string(c) == name) return c;
  }
  return std::nullopt;
}

void NetworkModel::set(LinkClass c, const LinkCost& cost) {
  const std::string what = fmt::format("link class '{}'", to_string(c));
  check_alpha_beta(cost.latency, cost.bandwidth, what);
  if (!std::isfinite(cost.latency_spread) || cost.latency_spread < 0 ||
      !std::isfinite(cost.bandwidth_spread) || cost.bandwidth_spread < 0) {
    throw Error(ErrorKind::model, fmt::format("{}: spreads {} and {} must be finite numbers >= 0",
                                              what, cost.latency_spread, cost.bandwidth_spread));
  }
  if (cost.pairs < 1) {
    throw Error(ErrorKind::model,
                fmt::format("{}: {} pairs (a cost needs a measured pair)", what, cost.pairs));
  }
  classes_[index_of(c)] = cost;
}

bool NetworkModel::has(LinkClass c) const noexcept {
  return classes_[index_of(c)].has_value();
}

const LinkCost& NetworkModel::cost(LinkClass c) const {
  const auto& entry = classes_[index_of(c)];
  if (!entry) {
    throw Error(
        ErrorKind::model,
        fmt::format("the network model has no cost for link class '{}': the measured run "
                    "had no pair of ranks {} (measure with ranks on at least two nodes, or "
                    "emulated ones: HIT_NODES)",
                    to_string(c), c == LinkClass::network ? "on different nodes" : "on one node"));
  }
  return *entry;
}

double NetworkModel::seconds(std::int64_t bytes, LinkClass c) const {
  if (bytes < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("a message of {} bytes (bytes must be >= 0)", bytes));
  }
  const LinkCost& k = cost(c);  // an absent class is an error even for 0 bytes
  if (bytes == 0) return 0;
  return k.latency + static_cast<double>(bytes) / k.bandwidth;
}

double NetworkModel::seconds(std::int64_t messages, std::int64_t bytes, LinkClass c) const {
  if (messages < 0 || bytes < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{} messages of {} bytes (counts must be >= 0)", messages, bytes));
  }
  if (messages == 0 && bytes > 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{} bytes in no message (bytes travel in at least one)", bytes));
  }
  const LinkCost& k = cost(c);
  return static_cast<double>(messages) * k.latency + static_cast<double>(bytes) / k.bandwidth;
}

void NetworkModel::set_node_of_rank(std::vector<int> nodes) {
  for (std::size_t r = 0; r < nodes.size(); ++r) {
    if (nodes[r] < 0) {
      throw Error(ErrorKind::model,
                  fmt::format("rank {} is on node {} (nodes are numbered from 0)", r, nodes[r]));
    }
  }
  node_of_rank_ = std::move(nodes);
}

int NetworkModel::ranks_per_node() const noexcept {
  if (node_of_rank_.empty()) return 0;
  // The size of the first node, then every rank r must be on node r / k.
  std::size_t k = 0;
  while (k < node_of_rank_.size() && node_of_rank_[k] == node_of_rank_[0]) ++k;
  if (node_of_rank_[0] != 0) return 0;
  for (std::size_t r = 0; r < node_of_rank_.size(); ++r) {
    if (node_of_rank_[r] != static_cast<int>(r / k)) return 0;
  }
  return static_cast<int>(k);
}

LinkClass NetworkModel::link(int rank_a, int rank_b) const {
  const auto processes = static_cast<int>(node_of_rank_.size());
  if (rank_a < 0 || rank_b < 0 || rank_a >= processes || rank_b >= processes) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("ranks {} and {}: the measured run had {} processes (ranks 0 to {}); "
                            "for another run give its ranks per node: link(a, b, ranks_per_node)",
                            rank_a, rank_b, processes, processes - 1));
  }
  if (rank_a == rank_b) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("rank {} with itself: a rank's messages to itself cross no link", rank_a));
  }
  return node_of_rank_[static_cast<std::size_t>(rank_a)] ==
                 node_of_rank_[static_cast<std::size_t>(rank_b)]
             ? LinkClass::node
             : LinkClass::network;
}

LinkClass NetworkModel::link(int rank_a, int rank_b, int ranks_per_node) {
  check_rank(rank_a, "rank");
  check_rank(rank_b, "rank");
  if (ranks_per_node < 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("ranks_per_node {} must be >= 1", ranks_per_node));
  }
  if (rank_a == rank_b) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("rank {} with itself: a rank's messages to itself cross no link", rank_a));
  }
  return rank_a / ranks_per_node == rank_b / ranks_per_node ? LinkClass::node : LinkClass::network;
}

void NetworkModel::add_pair(const PairCost& pair) {
  if (pair.rank_a < 0 || pair.rank_b <= pair.rank_a) {
    throw Error(ErrorKind::model, fmt::format("pair of ranks {} and {}: expected 0 <= rank_a < "
                                              "rank_b",
                                              pair.rank_a, pair.rank_b));
  }
  check_alpha_beta(pair.latency, pair.bandwidth,
                   fmt::format("pair of ranks {} and {}", pair.rank_a, pair.rank_b));
  pairs_.push_back(pair);
}

}  // namespace hit::fpm
