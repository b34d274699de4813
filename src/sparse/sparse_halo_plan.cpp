// What a sparse halo runs per update: pack the sent values, move them by one of the two
// transports, unpack the received ones (docs/sparse.md, "Communication").
#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/log.hpp"
#include "hit/core/program_trace.hpp"
#include "sparse/sparse_halo_plan.hpp"

namespace hit::detail {

namespace {

// Copies of `n` elements of S bytes, gathered from or scattered to local indices. A constant S
// lets the compiler make each copy one load and one store.
template <std::size_t S>
void gather(std::byte* out, const std::byte* in, const index_t* index, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(out + i * S, in + static_cast<std::size_t>(index[i]) * S, S);
  }
}
template <std::size_t S>
void scatter(std::byte* out, const std::byte* in, const index_t* index, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(out + static_cast<std::size_t>(index[i]) * S, in + i * S, S);
  }
}
template <bool Gather>
void move_indexed(std::byte* out, const std::byte* in, const std::vector<index_t>& index,
                  std::size_t size) {
  const std::size_t n = index.size();
  const index_t* ix = index.data();
  switch (size) {
    case 4:
      return Gather ? gather<4>(out, in, ix, n) : scatter<4>(out, in, ix, n);
    case 8:
      return Gather ? gather<8>(out, in, ix, n) : scatter<8>(out, in, ix, n);
    case 16:
      return Gather ? gather<16>(out, in, ix, n) : scatter<16>(out, in, ix, n);
    default:
      for (std::size_t i = 0; i < n; ++i) {
        const auto at = static_cast<std::size_t>(ix[i]) * size;
        if (Gather) {
          std::memcpy(out + i * size, in + at, size);
        } else {
          std::memcpy(out + at, in + i * size, size);
        }
      }
  }
}

// Counts and displacements of one side, as the MPI calls take them (ints). Local indices are
// 32-bit, but one row may go to many peers, so the sum is checked. One element more than the
// peers, so that data() is never null for a process without neighbours.
void counts_of(const PeerLists& lists, std::vector<int>& counts, std::vector<int>& displs,
               const std::string& name) {
  if (lists.offsets.back() > INT_MAX) {
    throw Error(ErrorKind::invalid_argument,
                name + ": " + std::to_string(lists.offsets.back()) +
                    " values per update exceed an MPI count; use more processes");
  }
  for (std::size_t k = 0; k < lists.size(); ++k) {
    counts.push_back(static_cast<int>(lists.count(k)));
    displs.push_back(static_cast<int>(lists.offsets[k]));
  }
  counts.push_back(0);
  displs.push_back(0);
}

const int* peers_or_dummy(const std::vector<int>& peers, const std::vector<int>& dummy) {
  return peers.empty() ? dummy.data() : peers.data();
}

bool finalized() {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}

}  // namespace

SparseHaloPlan::SparseHaloPlan(std::string name, MPI_Comm comm, SparseTransport transport,
                               PeerLists sends, PeerLists receives, LocalRange receive_range)
    : name_(std::move(name)),
      comm_(comm),
      transport_(transport),
      sends_(std::move(sends)),
      receives_(std::move(receives)),
      receive_range_(receive_range) {
  try {
    collectively(comm_, [&] {
      counts_of(sends_, send_counts_, send_displs_, name_);
      counts_of(receives_, receive_counts_, receive_displs_, name_);
    });
  } catch (...) {
    // No destructor runs for a plan that failed to build: the communicator is freed here.
    MPI_Comm_free(&comm_);
    throw;
  }
  if (!sends_.items.empty()) {
    std::vector<index_t> rows = sends_.items;
    std::sort(rows.begin(), rows.end());
    sent_rows_ = std::unique(rows.begin(), rows.end()) - rows.begin();
    send_range_ = {rows.front(), rows[static_cast<std::size_t>(sent_rows_) - 1] + 1};
  }
  receive_in_order_ = static_cast<index_t>(receives_.items.size()) == receive_range_.size();
  for (std::size_t k = 0; k < receives_.items.size() && receive_in_order_; ++k) {
    receive_in_order_ = receives_.items[k] == receive_range_.first + static_cast<index_t>(k);
  }
  if (transport_ == SparseTransport::neighbour) {
    // Sources: the owners of this process's ghosts; destinations: the processes that need its
    // rows; in the order of the lists, so counts line up (no reordering of ranks).
    const std::vector<int> dummy{0};
    check_mpi(MPI_Dist_graph_create_adjacent(
                  comm_, static_cast<int>(receives_.size()), peers_or_dummy(receives_.peers, dummy),
                  MPI_UNWEIGHTED, static_cast<int>(sends_.size()),
                  peers_or_dummy(sends_.peers, dummy), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph_),
              "MPI_Dist_graph_create_adjacent");
    MPI_Comm_set_errhandler(graph_, MPI_ERRORS_RETURN);
  }
}

SparseHaloPlan::~SparseHaloPlan() {
  if (active_ != nullptr) abandon();
  if (finalized()) return;
  for (auto& b : bindings_) {
    if (b) free_binding(*b);
  }
  if (graph_ != MPI_COMM_NULL) MPI_Comm_free(&graph_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void SparseHaloPlan::free_binding(Binding& b) noexcept {
  for (MPI_Request& r : b.persistent) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  if (b.type != MPI_DATATYPE_NULL) MPI_Type_free(&b.type);
}

SparseHaloPlan::Binding& SparseHaloPlan::bind(std::size_t element_size) {
  for (auto& b : bindings_) {
    if (b->element_size == element_size) return *b;
  }
  auto b = std::make_unique<Binding>();
  b->element_size = element_size;
  const auto size = static_cast<index_t>(element_size);
  b->send.resize(static_cast<std::size_t>(
      checked_mul(static_cast<index_t>(sends_.items.size()), size, name_ + " send buffer")));
  b->receive.resize(static_cast<std::size_t>(
      checked_mul(static_cast<index_t>(receives_.items.size()), size, name_ + " receive buffer")));
  check_mpi(MPI_Type_contiguous(static_cast<int>(element_size), MPI_BYTE, &b->type),
            "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&b->type), "MPI_Type_commit");
  if (transport_ == SparseTransport::persistent) make_persistent(*b);
  bindings_.push_back(std::move(b));
  return *bindings_.back();
}

void SparseHaloPlan::make_persistent(Binding& b) {
  const std::size_t size = b.element_size;
  for (std::size_t k = 0; k < receives_.size(); ++k) {
    check_mpi(MPI_Recv_init(b.receive.data() + static_cast<std::size_t>(receive_displs_[k]) * size,
                            receive_counts_[k], b.type, receives_.peers[k], 0, comm_,
                            &b.persistent.emplace_back()),
              "MPI_Recv_init");
  }
  for (std::size_t k = 0; k < sends_.size(); ++k) {
    check_mpi(MPI_Send_init(b.send.data() + static_cast<std::size_t>(send_displs_[k]) * size,
                            send_counts_[k], b.type, sends_.peers[k], 0, comm_,
                            &b.persistent.emplace_back()),
              "MPI_Send_init");
  }
}

void SparseHaloPlan::check_start(std::size_t count) const {
  if (broken_) {
    throw Error(ErrorKind::invalid_argument,
                name_ + ": an update of this halo was abandoned after a failure; build it again");
  }
  if (active_ != nullptr) {
    throw Error(ErrorKind::invalid_argument, name_ + ": started twice without wait()");
  }
  if (static_cast<index_t>(count) != receive_range_.last) {
    throw Error(ErrorKind::invalid_argument,
                name_ + ": " + std::to_string(count) + " values for a shape of " +
                    std::to_string(receive_range_.last) + " local vertices");
  }
}

void SparseHaloPlan::trace_start(ProgramTrace& trace, std::size_t count, std::size_t element_size,
                                 bool staged) const {
  check_start(count);
  const auto bytes = [&](index_t values) {
    return static_cast<double>(values) * static_cast<double>(element_size);
  };
  std::vector<TracedMessage> messages;
  // A value received waits for its message; a value sent is gathered from its own place.
  for (std::size_t k = 0; k < receives_.size(); ++k) {
    const double runs = receive_in_order_ ? 1.0 : static_cast<double>(receives_.count(k));
    messages.push_back({receives_.peers[k], bytes(receives_.count(k)), runs, true, 1});
  }
  for (std::size_t k = 0; k < sends_.size(); ++k) {
    messages.push_back(
        {sends_.peers[k], bytes(sends_.count(k)), static_cast<double>(sends_.count(k)), false, 0});
  }
  const double copied = staged ? bytes(send_range_.size() + receive_range_.size()) : 0;
  trace.comm_start(this, std::move(messages), copied);
}

void SparseHaloPlan::start(void* data, std::size_t count, std::size_t element_size,
                           std::shared_ptr<ResidentState> state) {
  check_start(count);
  Binding& b = bind(element_size);
  if (state && send_range_.size() > 0) {
    if (!told_range_ && send_range_.size() > 2 * sent_rows_) {
      told_range_ = true;
      log::rank(log::Level::info,
                name_ + ": the " + std::to_string(sent_rows_) + " rows sent lie spread over " +
                    std::to_string(send_range_.size()) +
                    " local rows, all copied from the device per update; order the rows with "
                    "hit::interior_first_order() to copy the boundary alone");
    }
    resident_fetch(*state, Shape{Sig(send_range_.first, send_range_.last)});
  }
  move_indexed<true>(b.send.data(), static_cast<const std::byte*>(data), sends_.items,
                     element_size);
  active_ = &b;
  data_ = data;
  state_ = std::move(state);
  if (Environment::exists()) Environment::current().comm_started();
  try {
    if (transport_ == SparseTransport::persistent) {
      if (!b.persistent.empty()) {
        check_mpi(MPI_Startall(static_cast<int>(b.persistent.size()), b.persistent.data()),
                  "MPI_Startall");
      }
    } else {
      check_mpi(MPI_Ineighbor_alltoallv(b.send.data(), send_counts_.data(), send_displs_.data(),
                                        b.type, b.receive.data(), receive_counts_.data(),
                                        receive_displs_.data(), b.type, graph_, &collective_),
                "MPI_Ineighbor_alltoallv");
    }
  } catch (...) {
    abandon();
    throw;
  }
}

void SparseHaloPlan::wait() {
  if (active_ == nullptr) return;
  Binding& b = *active_;
  try {
    if (transport_ == SparseTransport::persistent) {
      wait_all(static_cast<int>(b.persistent.size()), b.persistent.data(), "MPI_Waitall");
    } else {
      wait_all(1, &collective_, "MPI_Ineighbor_alltoallv", false);
    }
  } catch (...) {
    abandon();
    throw;
  }
  if (Environment::exists()) Environment::current().comm_finished();
  auto* out = static_cast<std::byte*>(data_);
  if (receive_in_order_) {
    if (!b.receive.empty()) {
      std::memcpy(out + static_cast<std::size_t>(receive_range_.first) * b.element_size,
                  b.receive.data(), b.receive.size());
    }
  } else {
    move_indexed<false>(out, b.receive.data(), receives_.items, b.element_size);
  }
  if (state_ && receive_range_.size() > 0) {
    resident_publish(*state_, Shape{Sig(receive_range_.first, receive_range_.last)});
  }
  active_ = nullptr;
  data_ = nullptr;
  state_.reset();
}

void SparseHaloPlan::abandon() noexcept {
  // MPI may still read the send buffers and write the receive buffers of the update in flight:
  // they stay with the Environment until the end of the run, and the halo refuses to run again.
  if (active_ != nullptr && Environment::exists()) {
    Environment& env = Environment::current();
    env.comm_finished();
    try {
      for (auto& b : bindings_) {
        // MPI keeps what is still active of a freed request (and a freed type) until done.
        free_binding(*b);
        env.keep_until_finalize(std::shared_ptr<const void>(std::move(b)));
      }
    } catch (...) {
    }
    bindings_.clear();
  }
  active_ = nullptr;
  data_ = nullptr;
  state_.reset();
  broken_ = true;
}

}  // namespace hit::detail
