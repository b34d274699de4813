#include "report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "hit/comm/comm_traffic.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/error.hpp"

namespace hit::tools {

index_t element_bytes(const std::string& type) {
  if (type == "double" || type == "int64") return 8;
  if (type == "float" || type == "int32") return 4;
  throw Error(
      ErrorKind::invalid_argument,
      fmt::format("--type '{}' is not an element type (allowed: double, float, int32, int64)",
                  type));
}

namespace {

// The data of `proc` (its blocks, padded when asked) in elements, without ghosts.
index_t data_elements(const Layout& layout, int proc, const Allocation& alloc) {
  const index_t padded = layout.max_extents().size();
  index_t n = 0;
  for (const Shape& b : layout.blocks(proc)) {
    n = checked_add(n, alloc.pad ? padded : b.size(),
                    "the elements of rank " + std::to_string(proc));
  }
  return n;
}

bool parse_bool(const Spec& spec, const std::string& key, bool fallback) {
  const auto v = spec.get(key);
  if (!v) return fallback;
  if (*v == "true" || *v == "1" || *v == "yes") return true;
  if (*v == "false" || *v == "0" || *v == "no") return false;
  throw Error(ErrorKind::plugin,
              fmt::format("--comm '{}': {}='{}' is not true or false", spec.str(), key, *v));
}

int axis_param(const Layout& layout, const Spec& spec) {
  const auto axes = layout.topology().axes();
  if (!spec.has("axis")) {
    throw Error(
        ErrorKind::plugin,
        fmt::format("--comm '{}' needs axis=A (a topology axis, 0 to {})", spec.str(), axes - 1));
  }
  const auto axis = spec.get_int("axis", 0);
  if (axis < 0 || axis >= axes) {
    throw Error(ErrorKind::plugin,
                fmt::format("--comm '{}': axis={} is not an axis of topology {} (0 to {})",
                            spec.str(), axis, layout.topology().str(), axes - 1));
  }
  return static_cast<int>(axis);
}

std::vector<index_t> shift_bytes(const Layout& layout, const Spec& spec, const Allocation& alloc) {
  const int axis = axis_param(layout, spec);
  const auto offset = spec.get_int("offset", 1);
  const bool wrap = parse_bool(spec, "wrap", true);
  std::vector<index_t> out(static_cast<std::size_t>(layout.procs()), 0);
  for (int p = 0; p < layout.procs(); ++p) {
    const auto q = layout.neighbor(p, axis, static_cast<int>(offset), wrap);
    if (q && *q != p)
      out[static_cast<std::size_t>(p)] = checked_mul(
          data_elements(layout, p, alloc), alloc.element_bytes, "the bytes a shift sends");
  }
  return out;
}

// Every rank's faces matched against the blocks that meet them only (Layout::procs_meeting, a
// binary search per axis for grid layouts): what a rank receives from each peer is what that peer
// sends it. O(P · log P) for the whole run, where matching every face against every block was
// O(P²).
std::vector<index_t> halo_bytes(const Layout& layout, const Spec& spec, const Allocation& alloc) {
  const index_t width = spec.get_int("width", 1);
  if (width < 0) {
    throw Error(ErrorKind::plugin,
                fmt::format("--comm '{}': width={} is negative", spec.str(), width));
  }
  std::vector<index_t> out(static_cast<std::size_t>(layout.procs()), 0);
  for (int q = 0; q < layout.procs(); ++q) {
    for (const PeerTraffic& t : face_traffic(layout, q, width, FaceSides::received)) {
      index_t& sent = out[static_cast<std::size_t>(t.peer)];
      sent =
          checked_add(sent, checked_mul(t.received, alloc.element_bytes, "the bytes a halo sends"),
                      "the bytes a halo sends");
    }
  }
  return out;
}

std::vector<index_t> bcast_bytes(const Layout& layout, const Spec& spec, const Allocation& alloc) {
  const int axis = axis_param(layout, spec);
  const Topology& topo = layout.topology();
  // As hit::bcast: the root is counted among the coordinates that hold data along the axis.
  const auto root = spec.get_int("root", 0);
  const int actives = layout.active_extent(axis);
  std::vector<index_t> out(static_cast<std::size_t>(layout.procs()), 0);
  if (actives == 0) return out;  // nothing to send: the shape is empty
  if (root < 0 || root >= actives) {
    throw Error(ErrorKind::plugin,
                fmt::format("--comm '{}': root={} is not an active coordinate of topology axis {} "
                            "(0 to {})",
                            spec.str(), root, axis, actives - 1));
  }
  const int root_coord = layout.active_coords(axis)[static_cast<std::size_t>(root)];
  for (int p = 0; p < topo.grid_size(); ++p) {
    Index c = topo.coords(p);
    if (c[axis] != root_coord || !layout.active(p)) continue;
    int receivers = 0;
    for (int k = 0; k < topo.dim(axis); ++k) {
      c[axis] = k;
      const int q = topo.proc_at(c);
      if (q != p && layout.active(q)) ++receivers;
    }
    out[static_cast<std::size_t>(p)] =
        checked_mul(receivers,
                    checked_mul(data_elements(layout, p, alloc), alloc.element_bytes,
                                "the bytes a bcast sends"),
                    "the bytes a bcast sends");
  }
  return out;
}

}  // namespace

index_t allocated_bytes(const Layout& layout, int proc, const Allocation& alloc) {
  const Shape max = layout.max_extents();
  const std::string what = "the memory of rank " + std::to_string(proc);
  index_t total = 0;
  for (const Shape& b : layout.blocks(proc)) {
    index_t n = 1;
    for (int k = 0; k < b.rank(); ++k) {
      const index_t extent = alloc.pad ? max.extent(k) : b.extent(k);
      n = checked_mul(n, checked_add(extent, checked_mul(2, alloc.ghost, what), what), what);
    }
    total = checked_add(total, n, what);
  }
  return checked_mul(total, alloc.element_bytes, what);
}

std::string comm_grammar() {
  return "shift:axis=A[,offset=O][,wrap=true|false] | halo[:width=W] | bcast:axis=A[,root=R]";
}

std::vector<index_t> send_bytes(const Layout& layout, const Spec& comm, const Allocation& alloc) {
  if (comm.name() == "shift") {
    comm.check_keys({{"axis", "", ""}, {"offset", "", "1"}, {"wrap", "", "true"}});
    return shift_bytes(layout, comm, alloc);
  }
  if (comm.name() == "halo") {
    comm.check_keys({{"width", "", "1"}});
    return halo_bytes(layout, comm, alloc);
  }
  if (comm.name() == "bcast") {
    comm.check_keys({{"axis", "", ""}, {"root", "", "0"}});
    return bcast_bytes(layout, comm, alloc);
  }
  throw Error(ErrorKind::plugin, fmt::format("unknown communication '{}' in --comm (allowed: {})",
                                             comm.name(), comm_grammar()));
}

std::optional<HalfPerimeters> half_perimeters(const Layout& layout) {
  const Shape& shape = layout.shape();
  if (shape.rank() < 2) return std::nullopt;
  HalfPerimeters h;
  int active = 0;
  for (int p = 0; p < layout.procs(); ++p) {
    const auto& blocks = layout.blocks(p);
    if (blocks.empty()) continue;
    if (blocks.size() != 1) return std::nullopt;
    h.total += blocks.front().extent(0) + blocks.front().extent(1);
    ++active;
  }
  if (active == 0) return std::nullopt;
  const index_t n = shape.extent(0);
  const index_t m = shape.extent(1);
  h.best_grid = -1;
  for (int r = 1; r <= active; ++r) {
    if (active % r != 0) continue;
    const int c = active / r;
    // A grid cannot have more rows (columns) of blocks than the shape has rows (columns).
    if (r > n || c > m) continue;
    const index_t cost = static_cast<index_t>(c) * n + static_cast<index_t>(r) * m;
    if (h.best_grid < 0 || cost < h.best_grid) {
      h.best_grid = cost;
      h.grid_rows = r;
      h.grid_cols = c;
    }
  }
  if (h.best_grid < 0) return std::nullopt;
  return h;
}

nlohmann::ordered_json layout_json(const Layout& layout, const Allocation& alloc,
                                   const std::optional<std::vector<index_t>>& sends) {
  const Topology& topo = layout.topology();
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (int p = 0; p < layout.procs(); ++p) {
    nlohmann::ordered_json coords = nlohmann::ordered_json::array();
    const Index c = topo.coords(p);
    for (int k = 0; k < c.rank(); ++k) coords.push_back(c[k]);
    nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
    for (const Shape& b : layout.blocks(p)) blocks.push_back(b.str());
    nlohmann::ordered_json rank = {{"rank", p},
                                   {"coords", coords},
                                   {"active", layout.active(p)},
                                   {"blocks", blocks},
                                   {"elements", layout.elements(p)},
                                   {"bytes", allocated_bytes(layout, p, alloc)}};
    if (sends) rank["send_bytes"] = (*sends)[static_cast<std::size_t>(p)];
    ranks.push_back(std::move(rank));
  }
  nlohmann::ordered_json out = {{"shape", layout.shape().str()},
                                {"procs", layout.procs()},
                                {"topology", {{"name", topo.name()}, {"dims", topo.dims()}}},
                                {"layout", layout.spec()},
                                {"ranks", ranks}};
  if (const auto h = half_perimeters(layout)) {
    out["half_perimeters"] = {{"total", h->total},
                              {"best_grid", h->best_grid},
                              {"grid", fmt::format("{}x{}", h->grid_rows, h->grid_cols)}};
  }
  return out;
}

std::string layout_table(const Layout& layout, const Allocation& alloc, const std::string& type,
                         const std::optional<std::vector<index_t>>& sends) {
  const Topology& topo = layout.topology();
  struct Row {
    std::string rank, coords, active, blocks, elements, bytes, sends;
  };
  std::vector<Row> rows;
  rows.push_back({"rank", "coords", "active", "blocks", "elements", "bytes", "send_bytes"});
  index_t max_elements = 0;
  for (int p = 0; p < layout.procs(); ++p) {
    const auto& list = layout.blocks(p);
    std::string blocks;
    for (std::size_t i = 0; i < list.size() && i < 4; ++i) {
      if (i > 0) blocks += ' ';
      blocks += list[i].str();
    }
    if (list.size() > 4) blocks += fmt::format(" ... ({} blocks)", list.size());
    if (list.empty()) blocks = "-";
    max_elements = std::max(max_elements, layout.elements(p));
    rows.push_back({std::to_string(p), topo.coords(p).rank() ? topo.coords(p).str() : "-",
                    layout.active(p) ? "yes" : "no", blocks, std::to_string(layout.elements(p)),
                    std::to_string(allocated_bytes(layout, p, alloc)),
                    sends ? std::to_string((*sends)[static_cast<std::size_t>(p)]) : ""});
  }
  std::size_t w[7] = {};
  for (const Row& r : rows) {
    const std::string* cells[] = {&r.rank,     &r.coords, &r.active, &r.blocks,
                                  &r.elements, &r.bytes,  &r.sends};
    for (int i = 0; i < 7; ++i) w[i] = std::max(w[i], cells[i]->size());
  }
  std::string out = fmt::format("layout {} of {} ({} elements of {}) on {}\n", layout.spec(),
                                layout.shape().str(), layout.shape().size(), type, topo.str());
  for (const Row& r : rows) {
    std::string line =
        fmt::format("{:>{}}  {:<{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}", r.rank, w[0], r.coords, w[1],
                    r.active, w[2], r.blocks, w[3], r.elements, w[4], r.bytes, w[5]);
    if (sends) line += fmt::format("  {:>{}}", r.sends, w[6]);
    out += line + "\n";
  }
  const int active = layout.active_count();
  const double mean = active > 0 ? static_cast<double>(layout.shape().size()) / active : 0.0;
  out += fmt::format("active {} of {}; elements max {} mean {:.1f} (imbalance {:.3f}); max part {}",
                     active, layout.procs(), max_elements, mean,
                     mean > 0 ? static_cast<double>(max_elements) / mean : 1.0,
                     layout.max_extents().str());
  if (const auto h = half_perimeters(layout)) {
    out += fmt::format("; half-perimeters {} (best {}x{} grid {})", h->total, h->grid_rows,
                       h->grid_cols, h->best_grid);
  }
  if (alloc.pad) out += "; bytes padded to the max part";
  if (alloc.ghost > 0) out += fmt::format("; bytes with ghost borders of width {}", alloc.ghost);
  return out + "\n";
}

}  // namespace hit::tools

namespace hit::tools {

namespace {

index_t send_bytes_of(const SparseReport& r, const SparsePartStats& s) {
  return checked_mul(s.send_values, r.element_bytes, "the bytes a sparse halo sends");
}

}  // namespace

nlohmann::ordered_json sparse_layout_json(const SparseReport& report) {
  const SparseLayout& layout = report.layout;
  const Topology& topo = layout.topology();
  const auto& stats = layout.stats();
  const auto& predicted = layout.predicted_time();
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (int p = 0; p < layout.procs(); ++p) {
    const SparsePartStats& s = stats[static_cast<std::size_t>(p)];
    nlohmann::ordered_json rank = {{"rank", p},
                                   {"active", layout.active(p)},
                                   {"rows", s.rows},
                                   {"nonzeros", s.nonzeros},
                                   {"ghosts", s.ghosts},
                                   {"send_values", s.send_values},
                                   {"send_bytes", send_bytes_of(report, s)}};
    if (!predicted.empty()) rank["predicted_time"] = predicted[static_cast<std::size_t>(p)];
    ranks.push_back(std::move(rank));
  }
  return {{"matrix", report.matrix},
          {"rows", layout.rows()},
          {"nonzeros", report.nonzeros},
          {"procs", layout.procs()},
          {"topology", {{"name", topo.name()}, {"dims", topo.dims()}}},
          {"layout", layout.spec()},
          {"edge_cut", layout.edge_cut()},
          {"imbalance", layout.imbalance()},
          {"ranks", ranks}};
}

std::string sparse_layout_table(const SparseReport& report, const std::string& type) {
  const SparseLayout& layout = report.layout;
  const auto& stats = layout.stats();
  const auto& predicted = layout.predicted_time();
  constexpr int columns = 8;
  using Row = std::array<std::string, columns>;
  std::vector<Row> rows;
  rows.push_back(
      {"rank", "active", "rows", "nonzeros", "ghosts", "send_values", "send_bytes", "predicted_s"});
  index_t max_rows = 0;
  index_t max_ghosts = 0;
  index_t total_sent = 0;
  for (int p = 0; p < layout.procs(); ++p) {
    const SparsePartStats& s = stats[static_cast<std::size_t>(p)];
    const index_t sent = send_bytes_of(report, s);
    max_rows = std::max(max_rows, s.rows);
    max_ghosts = std::max(max_ghosts, s.ghosts);
    total_sent = checked_add(total_sent, sent, "the bytes a sparse halo sends");
    rows.push_back(
        {std::to_string(p), layout.active(p) ? "yes" : "no", std::to_string(s.rows),
         std::to_string(s.nonzeros), std::to_string(s.ghosts), std::to_string(s.send_values),
         std::to_string(sent),
         predicted.empty() ? "" : fmt::format("{:.4g}", predicted[static_cast<std::size_t>(p)])});
  }
  const int shown = predicted.empty() ? columns - 1 : columns;
  std::array<std::size_t, columns> w{};
  for (const Row& r : rows) {
    for (int i = 0; i < columns; ++i) w[i] = std::max(w[i], r[i].size());
  }
  std::string out = fmt::format(
      "sparse layout {} of {} ({} rows, {} nonzeros; halo values of {}) on {}\n", layout.spec(),
      report.matrix, layout.rows(), report.nonzeros, type, layout.topology().str());
  for (const Row& r : rows) {
    std::string line = fmt::format("{:>{}}  {:<{}}", r[0], w[0], r[1], w[1]);
    for (int i = 2; i < shown; ++i) line += fmt::format("  {:>{}}", r[i], w[i]);
    out += line + "\n";
  }
  const int active = layout.active_count();
  const double mean = active > 0 ? static_cast<double>(layout.rows()) / active : 0.0;
  out += fmt::format(
      "active {} of {}; rows max {} mean {:.1f}; edge cut {}; imbalance {:.3f} (nonzeros + rows); "
      "ghosts max {}; send_bytes total {}\n",
      active, layout.procs(), max_rows, mean, layout.edge_cut(), layout.imbalance(), max_ghosts,
      total_sent);
  return out;
}

}  // namespace hit::tools
