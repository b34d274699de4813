// The set-up of a sparse halo: who owns each ghost, what each neighbour needs of this process
// (one exchange of requested names), and the interior-first order of a process's rows.
#include "hit/sparse/sparse_halo.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <string>
#include <utility>

#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/event_trace.hpp"
#include "hit/core/program_trace.hpp"
#include "sparse/sparse_halo_plan.hpp"

namespace hit {

std::string_view to_string(SparseTransport transport) noexcept {
  switch (transport) {
    case SparseTransport::automatic:
      return "automatic";
    case SparseTransport::neighbour:
      return "neighbour";
    case SparseTransport::persistent:
      return "persistent";
  }
  return "?";
}

namespace detail {

namespace {

int size_of(MPI_Comm comm) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  return n;
}

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

// A duplicate of the caller's communicator, so the halo's messages never match the program's
// (nor another halo's), with errors returned as codes (hit::check_mpi makes them Errors).
class OwnedComm {
 public:
  explicit OwnedComm(MPI_Comm parent) {
    check_mpi(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  ~OwnedComm() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  MPI_Comm get() const noexcept { return comm_; }
  MPI_Comm release() noexcept { return std::exchange(comm_, MPI_COMM_NULL); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

int to_count(index_t n, const char* what) {
  if (n > INT_MAX) {
    throw Error(ErrorKind::invalid_argument, std::string(what) + ": " + std::to_string(n) +
                                                 " names for one process do not fit an MPI count");
  }
  return static_cast<int>(n);
}

}  // namespace

PeerLists exchange_requests(const PeerLists& wanted, MPI_Comm comm) {
  const int procs = size_of(comm);
  std::vector<int> asked_of(static_cast<std::size_t>(procs), 0);
  collectively(comm, [&] {
    for (std::size_t k = 0; k < wanted.size(); ++k) {
      asked_of[static_cast<std::size_t>(wanted.peers[k])] =
          to_count(wanted.count(k), "sparse halo set-up");
    }
  });
  std::vector<int> asking(static_cast<std::size_t>(procs), 0);
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Ialltoall(asked_of.data(), 1, MPI_INT, asking.data(), 1, MPI_INT, comm, &req),
            "MPI_Ialltoall");
  wait_all(1, &req, "MPI_Ialltoall", false);

  PeerLists asked;
  for (int p = 0; p < procs; ++p) {
    if (asking[static_cast<std::size_t>(p)] == 0) continue;
    asked.add_peer(p);
    asked.offsets.back() += asking[static_cast<std::size_t>(p)];
  }
  asked.items.resize(static_cast<std::size_t>(asked.offsets.back()));
  std::vector<MPI_Request> requests;
  for (std::size_t k = 0; k < asked.size(); ++k) {
    check_mpi(MPI_Irecv(asked.items.data() + asked.offsets[k], static_cast<int>(asked.count(k)),
                        MPI_INT64_T, asked.peers[k], 0, comm, &requests.emplace_back()),
              "MPI_Irecv");
  }
  for (std::size_t k = 0; k < wanted.size(); ++k) {
    check_mpi(MPI_Isend(wanted.items.data() + wanted.offsets[k], static_cast<int>(wanted.count(k)),
                        MPI_INT64_T, wanted.peers[k], 0, comm, &requests.emplace_back()),
              "MPI_Isend");
  }
  wait_all(static_cast<int>(requests.size()), requests.data(), "MPI_Waitall");
  return asked;
}

PeerLists group_by_owner(std::span<const index_t> names, std::span<const std::int32_t> owners,
                         int me, int procs, std::vector<index_t>& positions) {
  std::vector<std::pair<std::int32_t, index_t>> keyed;  // (owner, position in names)
  keyed.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const index_t g = names[i];
    if (g < 0 || g >= static_cast<index_t>(owners.size())) {
      throw Error(ErrorKind::invalid_argument, "vertex " + std::to_string(g) + " outside the " +
                                                   std::to_string(owners.size()) +
                                                   " vertices of the owners");
    }
    const std::int32_t o = owners[static_cast<std::size_t>(g)];
    if (o < 0 || o >= procs) {
      throw Error(ErrorKind::invalid_argument, "vertex " + std::to_string(g) + " has owner " +
                                                   std::to_string(o) + ", outside the " +
                                                   std::to_string(procs) + " processes");
    }
    if (o == me) {
      throw Error(
          ErrorKind::invalid_argument,
          "vertex " + std::to_string(g) +
              " is a ghost of this process but owned by it: its shape lacks one of its own rows");
    }
    keyed.emplace_back(o, static_cast<index_t>(i));
  }
  std::sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first
                              : names[static_cast<std::size_t>(a.second)] <
                                    names[static_cast<std::size_t>(b.second)];
  });
  PeerLists lists;
  positions.clear();
  for (const auto& [owner, pos] : keyed) {
    if (lists.peers.empty() || lists.peers.back() != owner) lists.add_peer(owner);
    lists.add_item(names[static_cast<std::size_t>(pos)]);
    positions.push_back(pos);
  }
  return lists;
}

void check_owner_sizes(std::span<const std::int32_t> owners, index_t vertices, MPI_Comm comm,
                       const std::string& what) {
  const std::array<index_t, 2> mine{static_cast<index_t>(owners.size()), vertices};
  const std::vector<std::array<index_t, 2>> all = allgather(mine, comm);
  std::string problem;
  for (std::size_t p = 0; p < all.size() && problem.empty(); ++p) {
    if (all[p][0] != all[0][0]) {
      problem = "owners has " + std::to_string(all[p][0]) + " entries on rank " +
                std::to_string(p) + " but " + std::to_string(all[0][0]) + " on rank 0";
    } else if (all[p][1] >= 0 && all[p][1] != all[p][0]) {
      problem = "owners has " + std::to_string(all[p][0]) + " entries on rank " +
                std::to_string(p) + " for a graph of " + std::to_string(all[p][1]) +
                " vertices (one owner per vertex)";
    }
  }
  if (!problem.empty()) throw Error::everywhere(ErrorKind::invalid_argument, what + ": " + problem);
}

CsrPattern pattern_in_order(const CsrPattern& rows, std::span<const index_t> order) {
  rows.check("rows_in_order");
  const index_t n = rows.rows();
  if (static_cast<index_t>(order.size()) != n) {
    throw Error(ErrorKind::invalid_argument, "rows_in_order: an order of " +
                                                 std::to_string(order.size()) + " positions for " +
                                                 std::to_string(n) + " rows");
  }
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  CsrPattern out;
  out.global_rows = rows.global_rows;
  out.global_cols = rows.global_cols;
  out.names.reserve(rows.names.size());
  out.cols.reserve(rows.cols.size());
  for (const index_t r : order) {
    if (r < 0 || r >= n || seen[static_cast<std::size_t>(r)] != 0) {
      throw Error(ErrorKind::invalid_argument,
                  "rows_in_order: position " + std::to_string(r) +
                      " is outside the rows or given twice (the order must be a permutation)");
    }
    seen[static_cast<std::size_t>(r)] = 1;
    out.names.push_back(rows.names[static_cast<std::size_t>(r)]);
    const std::span<const index_t> c = rows.columns(r);
    out.cols.insert(out.cols.end(), c.begin(), c.end());
    out.row_ptr.push_back(static_cast<index_t>(out.cols.size()));
  }
  return out;
}

}  // namespace detail

namespace {

using detail::PeerLists;

// Every row of `shape` below owned() is owned by `me` under `owners`.
void check_own_rows(const CsrShape& shape, std::span<const std::int32_t> owners, int me) {
  for (index_t r = 0; r < shape.owned(); ++r) {
    const index_t g = shape.names()[static_cast<std::size_t>(r)];
    const std::int32_t o = owners[static_cast<std::size_t>(g)];
    if (o != me) {
      throw Error(ErrorKind::invalid_argument,
                  "row " + std::to_string(g) + " is held as an own row by rank " +
                      std::to_string(me) + " but owned by " + std::to_string(o));
    }
  }
}

}  // namespace

SparseHalo::SparseHalo(const CsrShape& shape, std::span<const std::int32_t> owners, MPI_Comm comm,
                       const SparseHaloOptions& options) {
  const std::string name = options.label.empty() ? "sparse halo" : options.label;
  detail::check_owner_sizes(owners, shape.vertices() > 0 ? shape.global_vertices() : -1, comm,
                            name);
  detail::OwnedComm own(comm);
  const int me = detail::rank_of(own.get());
  const int procs = detail::size_of(own.get());
  const auto owned = static_cast<std::size_t>(shape.owned());
  PeerLists wanted;
  std::vector<index_t> positions;
  collectively(own.get(), [&] {
    try {
      check_own_rows(shape, owners, me);
      wanted = detail::group_by_owner(shape.names().subspan(owned), owners, me, procs, positions);
    } catch (const Error& e) {
      throw Error(e.kind(), name + ": " + e.what());
    }
  });
  // What this process receives, as local indices: the non-owned vertices, by owner.
  PeerLists receives = wanted;
  for (std::size_t k = 0; k < positions.size(); ++k) {
    receives.items[k] = shape.owned() + positions[k];
  }
  PeerLists sends = detail::exchange_requests(wanted, own.get());
  collectively(own.get(), [&] {
    for (index_t& item : sends.items) {
      const index_t l = shape.to_local(item);
      if (l < 0 || l >= shape.owned()) {
        throw Error(
            ErrorKind::invalid_argument,
            name + ": rank " + std::to_string(me) + " is asked for vertex " + std::to_string(item) +
                ", which the owners give it but its shape does not " + "hold as an own row");
      }
      item = l;
    }
  });
  SparseTransport transport = options.transport;
  // Measured (docs/sparse.md, "Two transports"): persistent requests are faster where latency
  // counts (a small boundary) and equal within the noise where the volume does.
  if (transport == SparseTransport::automatic) transport = SparseTransport::persistent;
  plan_ = std::make_shared<detail::SparseHaloPlan>(name, own.release(), transport, std::move(sends),
                                                   std::move(receives),
                                                   LocalRange{shape.owned(), shape.vertices()});
}

bool SparseHalo::exchanges() const noexcept {
  return plan_ && (plan_->sends().size() > 0 || plan_->receives().size() > 0);
}

void SparseHalo::start_bytes(void* data, std::size_t count, std::size_t element_size,
                             std::shared_ptr<detail::ResidentState> state) {
  if (!plan_) return;
  Environment* env = Environment::exists() ? &Environment::current() : nullptr;
  if (ProgramTrace* trace = env ? env->trace() : nullptr) {
    plan_->trace_start(*trace, count, element_size, state != nullptr);
    return;
  }
  plan_->start(data, count, element_size, std::move(state));
  if (env == nullptr || !exchanges()) return;
  if (EventTrace& events = event_trace(*env); events.enabled()) {
    const auto bytes = [&](const detail::PeerLists& l) {
      return static_cast<double>(l.items.size()) * static_cast<double>(element_size);
    };
    events.begin(
        plan_.get(), "messages", "comm", plan_->name(),
        {{"bytes_sent", bytes(plan_->sends())}, {"bytes_received", bytes(plan_->receives())}});
  }
}

void SparseHalo::wait() {
  if (!plan_) return;
  Environment* env = Environment::exists() ? &Environment::current() : nullptr;
  if (ProgramTrace* trace = env ? env->trace() : nullptr) {
    trace->comm_wait(plan_.get());
    return;
  }
  EventTrace* events = env && exchanges() ? &event_trace(*env) : nullptr;
  if (events && !events->enabled()) events = nullptr;
  const double asked = events ? EventTrace::now() : 0;
  plan_->wait();
  if (events) {
    events->span("host", "wait", "wait for " + plan_->name(), asked, EventTrace::now());
    events->finish(plan_.get());
  }
}

void SparseHalo::check_resident(const Shape& shape, index_t step) {
  if (shape.rank() != 1 || shape[0].begin() != 0 || shape[0].stride() != 1 || step != 1) {
    throw Error(
        ErrorKind::shape,
        "sparse halo: a resident vector must be a 1-D tile [0:vertices), got " + shape.str());
  }
}

SparseTransport SparseHalo::transport() const noexcept {
  return plan_ ? plan_->transport() : SparseTransport::automatic;
}

std::vector<PeerTraffic> SparseHalo::traffic() const {
  std::vector<PeerTraffic> out;
  if (!plan_) return out;
  const PeerLists& s = plan_->sends();
  const PeerLists& r = plan_->receives();
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < s.size() || j < r.size()) {
    PeerTraffic t;
    const int ps = i < s.size() ? s.peers[i] : INT_MAX;
    const int pr = j < r.size() ? r.peers[j] : INT_MAX;
    t.peer = std::min(ps, pr);
    if (ps == t.peer) t.sent = s.count(i++);
    if (pr == t.peer) t.received = r.count(j++);
    out.push_back(t);
  }
  return out;
}

int SparseHalo::neighbours() const noexcept {
  if (!plan_) return 0;
  const PeerLists& s = plan_->sends();
  const PeerLists& r = plan_->receives();
  std::vector<int> all(s.peers);
  all.insert(all.end(), r.peers.begin(), r.peers.end());
  std::sort(all.begin(), all.end());
  return static_cast<int>(std::unique(all.begin(), all.end()) - all.begin());
}

index_t SparseHalo::values_sent() const noexcept {
  return plan_ ? static_cast<index_t>(plan_->sends().items.size()) : 0;
}

index_t SparseHalo::values_received() const noexcept {
  return plan_ ? static_cast<index_t>(plan_->receives().items.size()) : 0;
}

index_t SparseHalo::bytes_sent(std::size_t element_bytes) const {
  return checked_mul(values_sent(), static_cast<index_t>(element_bytes), "sparse halo bytes");
}

index_t SparseHalo::bytes_received(std::size_t element_bytes) const {
  return checked_mul(values_received(), static_cast<index_t>(element_bytes), "sparse halo bytes");
}

LocalRange SparseHalo::send_range() const noexcept {
  return plan_ ? plan_->send_range() : LocalRange{};
}

LocalRange SparseHalo::receive_range() const noexcept {
  return plan_ ? plan_->receive_range() : LocalRange{};
}

const std::string& SparseHalo::name() const {
  static const std::string none = "null sparse halo";
  return plan_ ? plan_->name() : none;
}

InteriorOrder interior_first_order(const CsrPattern& mine, std::span<const std::int32_t> owners,
                                   MPI_Comm comm) {
  const std::string what = "interior_first_order";
  collectively(comm, [&] { mine.check(what); });
  detail::check_owner_sizes(
      owners, mine.rows() > 0 ? std::max(mine.global_rows, mine.global_cols) : -1, comm, what);
  detail::OwnedComm own(comm);
  const int me = detail::rank_of(own.get());
  const int procs = detail::size_of(own.get());
  const auto n = static_cast<std::size_t>(mine.rows());
  std::vector<char> boundary(n, 0);
  PeerLists wanted;
  collectively(own.get(), [&] {
    std::vector<index_t> ghosts;
    for (std::size_t r = 0; r < n; ++r) {
      const std::int32_t o = owners[static_cast<std::size_t>(mine.names[r])];
      if (o != me) {
        throw Error(ErrorKind::invalid_argument, what + ": row " + std::to_string(mine.names[r]) +
                                                     " is held by rank " + std::to_string(me) +
                                                     " but owned by " + std::to_string(o));
      }
      for (const index_t c : mine.columns(static_cast<index_t>(r))) {
        if (owners[static_cast<std::size_t>(c)] == me) continue;
        boundary[r] = 1;
        ghosts.push_back(c);
      }
    }
    std::sort(ghosts.begin(), ghosts.end());
    ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
    std::vector<index_t> positions;
    wanted = detail::group_by_owner(ghosts, owners, me, procs, positions);
  });
  const PeerLists asked = detail::exchange_requests(wanted, own.get());
  std::vector<std::pair<index_t, index_t>> by_name(n);  // (name, position)
  for (std::size_t r = 0; r < n; ++r) by_name[r] = {mine.names[r], static_cast<index_t>(r)};
  std::sort(by_name.begin(), by_name.end());
  collectively(own.get(), [&] {
    // A name asked of this process is the row of another process's ghost that the owners give
    // to it: one of its rows, unless its rows lack one of its own.
    for (const index_t g : asked.items) {
      const auto it = std::lower_bound(by_name.begin(), by_name.end(), std::pair{g, index_t{-1}});
      if (it == by_name.end() || it->first != g) {
        throw Error(ErrorKind::invalid_argument,
                    what + ": rank " + std::to_string(me) + " is asked for row " +
                        std::to_string(g) + ", which the owners give it but its rows do not hold");
      }
      boundary[static_cast<std::size_t>(it->second)] = 1;
    }
  });
  InteriorOrder out;
  out.order.reserve(n);
  for (std::size_t r = 0; r < n; ++r) {
    if (boundary[r] == 0) out.order.push_back(static_cast<index_t>(r));
  }
  out.interior = static_cast<index_t>(out.order.size());
  for (std::size_t r = 0; r < n; ++r) {
    if (boundary[r] != 0) out.order.push_back(static_cast<index_t>(r));
  }
  return out;
}

}  // namespace hit
