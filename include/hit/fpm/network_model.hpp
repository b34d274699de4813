#pragma once
// A measured communication cost model (docs/fpm.md "Network models"): Hockney's model, a message
// of n bytes takes α + n/β seconds, with one (α, β) per link class, so that a layout's messages can
// be priced as its computation is by the performance models (Hockney, "The communication
// challenge for MPP: Intel Paragon and Meiko CS-2").
//
// Two link classes: `node` (two ranks of one node, real or emulated by HIT_NODES: shared memory)
// and `network` (ranks of different nodes). A rank's messages to itself are copies, not messages
// over a link, and are not modelled. A class the measured run had no pair of (one node: no
// `network`) is absent, and asking its cost is an Error(model): a guess would look like a
// measurement. Pure computation; the measurement is hit::balance::measure_network.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hit::fpm {

enum class LinkClass { node, network };
inline constexpr std::array<LinkClass, 2> link_classes = {LinkClass::node, LinkClass::network};

std::string_view to_string(LinkClass c) noexcept;
// The class named `name` ("node", "network"); nothing for another name.
std::optional<LinkClass> parse_link_class(std::string_view name) noexcept;

// The fitted cost of one link class, over the pairs measured in it.
struct LinkCost {
  double latency = 0;           // α, seconds (>= 0): the median of the pairs' α
  double bandwidth = 0;         // β, bytes per second (> 0): the median of the pairs' β
  double latency_spread = 0;    // (max − min) / median of the pairs' α (0 with one pair)
  double bandwidth_spread = 0;  // (max − min) / median of the pairs' β (0 with one pair)
  int pairs = 0;                // pairs measured (>= 1)

  friend bool operator==(const LinkCost&, const LinkCost&) = default;
};

// What one measured pair of ranks gave.
struct PairCost {
  int rank_a = 0;  // rank_a < rank_b
  int rank_b = 0;
  LinkClass link = LinkClass::node;
  double latency = 0;    // α of this pair, seconds
  double bandwidth = 0;  // β of this pair, bytes per second

  friend bool operator==(const PairCost&, const PairCost&) = default;
};

class NetworkModel {
 public:
  // Sets the cost of class `c`. Error(model) for α < 0, β <= 0, a spread < 0, a value that is not
  // finite, or pairs < 1.
  void set(LinkClass c, const LinkCost& cost);
  bool has(LinkClass c) const noexcept;
  // The cost of class `c`; Error(model) when the model has none (the run had no such pair).
  const LinkCost& cost(LinkClass c) const;

  // Seconds of one message of `bytes` over class `c`: α + bytes/β; 0 bytes is no message (0 s).
  // Error(invalid_argument) for bytes < 0; Error(model) for an absent class.
  double seconds(std::int64_t bytes, LinkClass c) const;
  // Seconds of `messages` messages of `bytes` bytes in all: messages·α + bytes/β. Zero-byte
  // messages still cost their latency. Error(invalid_argument) for negative counts, or bytes
  // without messages.
  double seconds(std::int64_t messages, std::int64_t bytes, LinkClass c) const;

  // The node of every rank of the measured run, in rank order (nodes numbered from 0).
  void set_node_of_rank(std::vector<int> nodes);
  const std::vector<int>& node_of_rank() const noexcept { return node_of_rank_; }
  // k when the measured run's nodes are k consecutive ranks each (the last may hold fewer), as
  // HIT_NODES=k and mpiexec's default placement make them; 0 when they are not, or unknown.
  int ranks_per_node() const noexcept;
  // The class of the link between ranks a and b of the measured run. Error(invalid_argument) for
  // a == b or a rank outside the run (for another process count, use the static link()).
  LinkClass link(int rank_a, int rank_b) const;
  // The class of the link between ranks a and b of any run whose nodes hold `ranks_per_node`
  // consecutive ranks each. Error(invalid_argument) for a == b, a negative rank or
  // ranks_per_node < 1.
  static LinkClass link(int rank_a, int rank_b, int ranks_per_node);

  // The pairs measured, each with its own fit (optional: a model may have only the classes).
  void add_pair(const PairCost& pair);
  const std::vector<PairCost>& pairs() const noexcept { return pairs_; }

  // Annotations: what was measured, where and when (`# key: value` lines of the file).
  void set_info(const std::string& key, const std::string& value) { info_[key] = value; }
  const std::map<std::string, std::string>& info() const noexcept { return info_; }

  friend bool operator==(const NetworkModel&, const NetworkModel&) = default;

 private:
  std::array<std::optional<LinkCost>, link_classes.size()> classes_;
  std::vector<int> node_of_rank_;
  std::vector<PairCost> pairs_;
  std::map<std::string, std::string> info_;
};

}  // namespace hit::fpm
