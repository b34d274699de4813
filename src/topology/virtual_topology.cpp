#include <algorithm>
#include <limits>
#include <string>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/topology.hpp"

namespace hit {

namespace {

std::string dims_text(const std::vector<int>& dims) {
  std::string out;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (k > 0) out += 'x';
    out += std::to_string(dims[k]);
  }
  return out;
}

}  // namespace

Topology::Topology(std::string name, std::vector<int> dims, int procs)
    : name_(std::move(name)), dims_(std::move(dims)), procs_(procs) {
  const std::string what = "topology '" + name_ + "' " + dims_text(dims_);
  require(procs_ >= 1, ErrorKind::topology,
          what + ": the number of processes must be at least 1, got " + std::to_string(procs_));
  require(!dims_.empty() && dims_.size() <= static_cast<std::size_t>(max_rank), ErrorKind::topology,
          what + ": a topology has 1 to 8 axes, got " + std::to_string(dims_.size()));
  long long product = 1;
  for (int d : dims_) {
    require(d >= 1, ErrorKind::topology,
            what + ": every axis needs at least 1 process, got " + std::to_string(d));
    product *= d;
    require(product <= procs_, ErrorKind::topology,
            what + " needs more processes than the " + std::to_string(procs_) + " there are");
  }
  grid_size_ = static_cast<int>(product);
}

int Topology::dim(int axis) const {
  check_axis(axis);
  return dims_[static_cast<std::size_t>(axis)];
}

void Topology::check_proc(int proc) const {
  if (proc < 0 || proc >= procs_) {
    throw Error(ErrorKind::invalid_argument, "process " + std::to_string(proc) +
                                                 " is outside topology " + str() + " (0 to " +
                                                 std::to_string(procs_ - 1) + ")");
  }
}

void Topology::check_axis(int axis) const {
  if (axis < 0 || axis >= axes()) {
    throw Error(ErrorKind::invalid_argument, "axis " + std::to_string(axis) +
                                                 " is outside topology " + str() + " (axes 0 to " +
                                                 std::to_string(axes() - 1) + ")");
  }
}

Index Topology::coords(int proc) const {
  check_proc(proc);
  if (!active(proc)) return Index();
  Index c = Index::zeros(axes());
  int rest = proc;
  for (int k = axes() - 1; k >= 0; --k) {
    const int d = dims_[static_cast<std::size_t>(k)];
    c[k] = rest % d;
    rest /= d;
  }
  return c;
}

int Topology::proc_at(const Index& coords) const {
  if (coords.rank() != axes()) {
    throw Error(ErrorKind::topology, "coordinates " + coords.str() + " have " +
                                         std::to_string(coords.rank()) + " axes, topology " +
                                         str() + " has " + std::to_string(axes()));
  }
  int proc = 0;
  for (int k = 0; k < axes(); ++k) {
    const int d = dims_[static_cast<std::size_t>(k)];
    if (coords[k] < 0 || coords[k] >= d) {
      throw Error(ErrorKind::topology,
                  "coordinates " + coords.str() + " are outside topology " + str());
    }
    proc = proc * d + static_cast<int>(coords[k]);
  }
  return proc;
}

std::optional<int> Topology::neighbor(int proc, int axis, int offset, bool wrap) const {
  check_proc(proc);
  check_axis(axis);
  if (!active(proc)) return std::nullopt;
  Index c = coords(proc);
  const index_t d = dims_[static_cast<std::size_t>(axis)];
  index_t target = c[axis] + offset;
  if (wrap) {
    target = detail::floor_mod(target, d);
  } else if (target < 0 || target >= d) {
    return std::nullopt;
  }
  c[axis] = target;
  return proc_at(c);
}

std::string Topology::str() const {
  std::string out = name_ + " " + dims_text(dims_) + " (" + std::to_string(procs_) + " procs";
  if (procs_ > grid_size_) out += ", " + std::to_string(procs_ - grid_size_) + " inactive";
  return out + ")";
}

namespace {

// Non-increasing factorisations of n into `axes` factors taken from `divisors` (ascending, the
// divisors of the original count); keeps in `best` the one with the smallest largest factor, then
// the largest smallest factor (the most square).
void search_dims(int n, int axes, int max_factor, const std::vector<int>& divisors,
                 std::vector<int>& current, std::vector<int>& best) {
  if (axes == 1) {
    if (n > max_factor) return;
    current.push_back(n);
    const bool better = best.empty() || current.front() < best.front() ||
                        (current.front() == best.front() && current.back() > best.back());
    if (better) best = current;
    current.pop_back();
    return;
  }
  for (int f : divisors) {
    if (f > max_factor || f > n) break;
    // Factors are non-increasing, so the first one is the largest: past the best one, stop.
    if (!best.empty() && f > best.front()) break;
    if (n % f != 0) continue;
    // The other axes-1 factors are at most f each: skip f too small to complete the product.
    long long reach = 1;
    for (int k = 1; k < axes && reach < n / f; ++k) reach *= f;
    if (reach < n / f) continue;
    current.push_back(f);
    search_dims(n / f, axes - 1, f, divisors, current, best);
    current.pop_back();
  }
}

}  // namespace

std::vector<int> balanced_dims(int procs, int axes) {
  require(procs >= 1, ErrorKind::topology,
          "cannot arrange " + std::to_string(procs) + " processes: need at least 1");
  require(axes >= 1 && axes <= max_rank, ErrorKind::topology,
          "a topology has 1 to 8 axes, got " + std::to_string(axes));
  std::vector<int> divisors;
  std::vector<int> large;
  for (int d = 1; static_cast<long long>(d) * d <= procs; ++d) {
    if (procs % d != 0) continue;
    divisors.push_back(d);
    if (d != procs / d) large.push_back(procs / d);
  }
  divisors.insert(divisors.end(), large.rbegin(), large.rend());
  std::vector<int> current;
  std::vector<int> best;
  search_dims(procs, axes, procs, divisors, current, best);
  return best;
}

TopologyRegistry::TopologyRegistry(Environment& /*env*/) : Registry<TopologyPlugin>("topology") {
  detail::register_builtin_topologies(*this);
}

Topology topology(std::string_view spec_text, int procs) {
  Environment& env = Environment::current();
  const Spec spec = Spec::parse(spec_text);
  const TopologyPlugin& plugin = env.extension<TopologyRegistry>().get(spec);
  require(procs >= 1, ErrorKind::topology,
          "topology '" + spec.str() + "' for " + std::to_string(procs) +
              " processes: the number of processes must be at least 1");
  Topology topo = plugin.make(procs, spec);
  if (topo.procs() != procs) {
    throw Error(ErrorKind::plugin, "topology plug-in '" + spec.name() + "' made a topology of " +
                                       std::to_string(topo.procs()) + " processes for " +
                                       std::to_string(procs));
  }
  return topo;
}

Topology topology(std::string_view spec) {
  return topology(spec, Environment::current().size());
}

}  // namespace hit
