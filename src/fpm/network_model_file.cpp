#include "hit/fpm/network_model_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/core/file.hpp"

#include "text_fields.hpp"

namespace hit::fpm {
namespace {

using detail::parse_double;
using detail::parse_int;
using detail::split_fields;
using detail::trim;

constexpr std::string_view class_header =
    "class,latency_s,bandwidth_Bps,latency_spread,bandwidth_spread,pairs";
constexpr std::string_view pair_header = "rank_a,rank_b,class,latency_s,bandwidth_Bps";

class Reader {
 public:
  explicit Reader(std::string_view name) : name_(name) {}

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw Error(ErrorKind::model,
                fmt::format("network model file '{}', line {}: {}", name_, line, what));
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::model, fmt::format("network model file '{}': {}", name_, what));
  }

 private:
  std::string_view name_;
};

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Whether the fields of a line are the columns of `header` (case aside).
bool is_header(const std::vector<std::string_view>& fields, std::string_view header) {
  const auto columns = split_fields(header);
  if (fields.size() != columns.size()) return false;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (lowered(fields[i]) != lowered(columns[i])) return false;
  }
  return true;
}

// What the lines read so far say.
struct ParseState {
  NetworkModel model;
  bool header_seen = false;
  bool in_pairs = false;
  std::array<int, link_classes.size()> class_line{};  // 0: not seen
  int node_line = 0;
  std::vector<int> pair_lines;
};

// `# node_of_rank: 0 0 1 1` (blanks or commas between the nodes).
void parse_node_of_rank(const Reader& reader, int line, std::string_view value, ParseState& s) {
  if (s.node_line != 0) {
    reader.fail(line,
                fmt::format("a second node_of_rank line (the first is line {})", s.node_line));
  }
  std::string text(value);
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream words(text);
  std::vector<int> nodes;
  for (std::string word; words >> word;) {
    std::int64_t node = 0;
    if (!parse_int(word, node) || node < 0 || node > 1'000'000'000) {
      reader.fail(line, fmt::format("node_of_rank: '{}' is not a node number >= 0", excerpt(word)));
    }
    nodes.push_back(static_cast<int>(node));
  }
  if (nodes.empty()) reader.fail(line, "node_of_rank lists no node (expected one per rank)");
  s.model.set_node_of_rank(std::move(nodes));
  s.node_line = line;
}

void parse_comment(const Reader& reader, int line, std::string_view body, ParseState& s) {
  const auto colon = body.find(':');
  if (colon == body.npos) return;  // free text
  const std::string_view key = trim(body.substr(0, colon));
  const std::string_view value = trim(body.substr(colon + 1));
  if (key.empty() || !std::all_of(key.begin(), key.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == '-' || c == '.';
      })) {
    return;
  }
  const std::string name = lowered(key);
  if (name == "kind") {
    if (lowered(value) != "network") {
      reader.fail(line, fmt::format("kind '{}': not a network model (expected '# kind: network'; "
                                    "performance models are read by load_model)",
                                    excerpt(value)));
    }
    return;
  }
  if (name == "node_of_rank") return parse_node_of_rank(reader, line, value, s);
  s.model.set_info(std::string(key), std::string(value));
}

double number(const Reader& reader, int line, std::string_view column, std::string_view field) {
  double v = 0;
  if (!parse_double(field, v) || !std::isfinite(v)) {
    reader.fail(line, fmt::format("{} = '{}' is not a number", column, excerpt(field)));
  }
  return v;
}

LinkClass link_class(const Reader& reader, int line, std::string_view field) {
  const auto c = parse_link_class(lowered(field));
  if (!c) {
    reader.fail(line,
                fmt::format("unknown link class '{}' (classes: node, network)", excerpt(field)));
  }
  return *c;
}

// α and β of a class or pair line, checked as NetworkModel needs them.
void check_cost(const Reader& reader, int line, double latency, double bandwidth) {
  if (latency < 0) reader.fail(line, fmt::format("latency_s = {} must be >= 0 seconds", latency));
  if (bandwidth <= 0) {
    reader.fail(line, fmt::format("bandwidth_Bps = {} must be > 0 bytes per second", bandwidth));
  }
}

void parse_class_line(const Reader& reader, int line, const std::vector<std::string_view>& f,
                      ParseState& s) {
  if (f.size() != 6) {
    reader.fail(
        line, fmt::format("{} fields, but the header '{}' has 6 columns", f.size(), class_header));
  }
  const LinkClass c = link_class(reader, line, f[0]);
  int& seen = s.class_line[static_cast<std::size_t>(c)];
  if (seen != 0) {
    reader.fail(line, fmt::format("link class '{}' repeats line {} (one line per class)",
                                  to_string(c), seen));
  }
  LinkCost cost;
  cost.latency = number(reader, line, "latency_s", f[1]);
  cost.bandwidth = number(reader, line, "bandwidth_Bps", f[2]);
  check_cost(reader, line, cost.latency, cost.bandwidth);
  cost.latency_spread = number(reader, line, "latency_spread", f[3]);
  cost.bandwidth_spread = number(reader, line, "bandwidth_spread", f[4]);
  if (cost.latency_spread < 0 || cost.bandwidth_spread < 0) {
    reader.fail(line, "a spread is negative (spreads are (max - min) / median, >= 0)");
  }
  std::int64_t pairs = 0;
  if (!parse_int(f[5], pairs) || pairs < 1 || pairs > 1'000'000'000) {
    reader.fail(line, fmt::format("pairs = '{}' is not a whole number >= 1", excerpt(f[5])));
  }
  cost.pairs = static_cast<int>(pairs);
  s.model.set(c, cost);
  seen = line;
}

void parse_pair_line(const Reader& reader, int line, const std::vector<std::string_view>& f,
                     ParseState& s) {
  if (f.size() != 5) {
    reader.fail(line,
                fmt::format("{} fields, but the header '{}' has 5 columns", f.size(), pair_header));
  }
  std::int64_t ranks[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    if (!parse_int(f[static_cast<std::size_t>(i)], ranks[i]) || ranks[i] < 0 ||
        ranks[i] > 1'000'000'000) {
      reader.fail(
          line, fmt::format("{} = '{}' is not a rank (a whole number >= 0)",
                            i == 0 ? "rank_a" : "rank_b", excerpt(f[static_cast<std::size_t>(i)])));
    }
  }
  if (ranks[0] >= ranks[1]) {
    reader.fail(line, fmt::format("ranks {} and {}: expected rank_a < rank_b", ranks[0], ranks[1]));
  }
  PairCost p;
  p.rank_a = static_cast<int>(ranks[0]);
  p.rank_b = static_cast<int>(ranks[1]);
  p.link = link_class(reader, line, f[2]);
  if (!s.model.has(p.link)) {
    reader.fail(
        line, fmt::format("a pair of link class '{}', which has no class line", to_string(p.link)));
  }
  p.latency = number(reader, line, "latency_s", f[3]);
  p.bandwidth = number(reader, line, "bandwidth_Bps", f[4]);
  check_cost(reader, line, p.latency, p.bandwidth);
  s.model.add_pair(p);
  s.pair_lines.push_back(line);
}

// One line that is not a comment.
void parse_line(const Reader& reader, int line_no, std::string_view line, ParseState& s) {
  const auto fields = split_fields(line);
  if (!s.header_seen) {
    if (!is_header(fields, class_header)) {
      reader.fail(line_no, fmt::format("expected the header '{}' before the classes, got '{}'",
                                       class_header, excerpt(line)));
    }
    s.header_seen = true;
    return;
  }
  if (!s.in_pairs && is_header(fields, pair_header)) {
    if (std::all_of(s.class_line.begin(), s.class_line.end(), [](int l) { return l == 0; })) {
      reader.fail(line_no, "the pairs come before any link class line");
    }
    s.in_pairs = true;
    return;
  }
  if (s.in_pairs) return parse_pair_line(reader, line_no, fields, s);
  parse_class_line(reader, line_no, fields, s);
}

// The pairs agree with node_of_rank: their ranks are of the run, their class that of their nodes.
void check_pairs_against_nodes(const Reader& reader, const ParseState& s) {
  const NetworkModel& m = s.model;
  if (m.node_of_rank().empty()) return;
  const auto processes = static_cast<int>(m.node_of_rank().size());
  for (std::size_t i = 0; i < m.pairs().size(); ++i) {
    const PairCost& p = m.pairs()[i];
    if (p.rank_b >= processes) {
      reader.fail(s.pair_lines[i], fmt::format("rank {} is not of the run: node_of_rank (line {}) "
                                               "lists {} ranks",
                                               p.rank_b, s.node_line, processes));
    }
    if (m.link(p.rank_a, p.rank_b) != p.link) {
      reader.fail(s.pair_lines[i],
                  fmt::format("ranks {} and {} are of class '{}' by node_of_rank (line {}), not "
                              "'{}'",
                              p.rank_a, p.rank_b, to_string(m.link(p.rank_a, p.rank_b)),
                              s.node_line, to_string(p.link)));
    }
  }
}

}  // namespace

NetworkModel parse_network_model(std::string_view text, std::string_view name) {
  const Reader reader(name);
  ParseState s;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto nl = text.find('\n', pos);
    const std::string_view raw =
        text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (line.front() == '#') {
      parse_comment(reader, line_no, line.substr(1), s);
    } else {
      parse_line(reader, line_no, line, s);
    }
  }
  if (!s.header_seen) {
    reader.fail(
        fmt::format("no link class: the file is empty (expected the header '{}' and one "
                    "line per measured link class: node, network)",
                    class_header));
  }
  if (std::all_of(s.class_line.begin(), s.class_line.end(), [](int l) { return l == 0; })) {
    reader.fail(
        "no link class after the header (expected one line per measured link class: "
        "node, network)");
  }
  check_pairs_against_nodes(reader, s);
  return std::move(s.model);
}

NetworkModel load_network_model(const std::string& path) {
  std::error_code folder_check;
  if (std::filesystem::is_directory(path, folder_check)) {
    throw Error(ErrorKind::io, fmt::format("cannot read network model file '{}': it is a folder, "
                                           "not a file",
                                           path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorKind::io,
                fmt::format("cannot read network model file '{}': {}", path,
                            std::error_code(errno, std::generic_category()).message()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw Error(ErrorKind::io, fmt::format("cannot read network model file '{}'", path));
  return parse_network_model(text.str(), path);
}

std::string format_network_model(const NetworkModel& model) {
  std::string out =
      "# hitmap++ network model: a message of n bytes over a link class takes latency_s + "
      "n / bandwidth_Bps seconds\n# kind: network\n";
  for (const auto& [k, v] : model.info()) {
    // Kept apart: the parser reads these two itself.
    if (lowered(k) != "kind" && lowered(k) != "node_of_rank")
      out += fmt::format("# {}: {}\n", k, v);
  }
  if (!model.node_of_rank().empty()) {
    out += fmt::format("# node_of_rank: {}\n", fmt::join(model.node_of_rank(), " "));
  }
  out += fmt::format("{}\n", class_header);
  for (LinkClass c : link_classes) {
    if (!model.has(c)) continue;
    const LinkCost& k = model.cost(c);
    out += fmt::format("{},{},{},{},{},{}\n", to_string(c), k.latency, k.bandwidth,
                       k.latency_spread, k.bandwidth_spread, k.pairs);
  }
  if (model.pairs().empty()) return out;
  out += fmt::format("{}\n", pair_header);
  for (const PairCost& p : model.pairs()) {
    out += fmt::format("{},{},{},{},{}\n", p.rank_a, p.rank_b, to_string(p.link), p.latency,
                       p.bandwidth);
  }
  return out;
}

void save_network_model(const std::string& path, const NetworkModel& model) {
  write_file_atomically(path, format_network_model(model));
}

}  // namespace hit::fpm
