#pragma once
// Network model files (docs/fpm.md "Network models"): CSV like the performance model files. A
// header `class,latency_s,bandwidth_Bps,latency_spread,bandwidth_spread,pairs`, one line per link
// class (node, network; at least one, each at most once), then optionally the measured pairs under
// their own header `rank_a,rank_b,class,latency_s,bandwidth_Bps`. `#` lines are comments;
// `# key: value` comments are kept as annotations (NetworkModel::info), `# kind: network` marks
// the file, and `# node_of_rank: 0 0 1 1` gives the node of every rank of the measured run.

#include <string>
#include <string_view>

#include "hit/fpm/network_model.hpp"

namespace hit::fpm {

// Reads a network model file. Every problem is an Error naming the file and, for content, the
// line: Error(io) when the file cannot be read, Error(model) when it is malformed (empty, a wrong
// header, non-numeric fields, α < 0, β <= 0, an unknown, repeated or missing class, a pair of a
// class without its line, a bad node_of_rank line, a kind other than network).
NetworkModel load_network_model(const std::string& path);
// The same from text; `name` stands for the file in messages.
NetworkModel parse_network_model(std::string_view text, std::string_view name);

// Writes `model` to a temporary name in the same folder that is renamed over `path` on success
// (a failed write never leaves a truncated model). Error(io).
void save_network_model(const std::string& path, const NetworkModel& model);
std::string format_network_model(const NetworkModel& model);

}  // namespace hit::fpm
