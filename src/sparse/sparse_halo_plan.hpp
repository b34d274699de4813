#pragma once
// Internal to the sparse halo (src/sparse/sparse_halo*.cpp): per-peer lists, the set-up
// exchange of requested names, and the plan an update runs. Not part of the API.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hit/core/program_trace.hpp"
#include "hit/sparse/sparse_halo.hpp"

namespace hit::detail {

// Items grouped by peer, in one flat array: peers ascending, each with its slice of `items`.
struct PeerLists {
  std::vector<int> peers;
  std::vector<index_t> offsets{0};  // peers.size() + 1
  std::vector<index_t> items;

  [[nodiscard]] std::size_t size() const noexcept { return peers.size(); }
  [[nodiscard]] index_t count(std::size_t k) const noexcept { return offsets[k + 1] - offsets[k]; }
  void add_peer(int peer) {
    peers.push_back(peer);
    offsets.push_back(offsets.back());
  }
  void add_item(index_t item) {
    items.push_back(item);
    ++offsets.back();
  }
};

// Collective over `comm`. `wanted`: the global names this process asks of each peer (never
// itself). Returns, for every process that asked something of this one, what it asked, in its
// order. Counts travel by MPI_Alltoall (one int per process: set-up only), the names by
// point-to-point messages with the processes concerned alone.
PeerLists exchange_requests(const PeerLists& wanted, MPI_Comm comm);

// The vertices of `names` that `me` does not own, grouped by owner (names ascending within a
// peer); Error(invalid_argument) for an owner outside [0, procs) or a vertex of `me` itself.
// `positions` receives, in the same order, the index of each in `names`.
PeerLists group_by_owner(std::span<const index_t> names, std::span<const std::int32_t> owners,
                         int me, int procs, std::vector<index_t>& positions);

// Agreed check that every process passes owners of one size, equal to its graph's vertex count
// (`vertices`; a process without a graph passes -1).
void check_owner_sizes(std::span<const std::int32_t> owners, index_t vertices, MPI_Comm comm,
                       const std::string& what);

// What one update runs: lists of local indices per peer, and the buffers and requests of each
// element size used (persistent requests point into the buffers, so they live together).
class SparseHaloPlan {
 public:
  // `comm`: the halo's own duplicate, freed with the plan. `sends`/`receives`: local indices.
  SparseHaloPlan(std::string name, MPI_Comm comm, SparseTransport transport, PeerLists sends,
                 PeerLists receives, LocalRange receive_range);
  ~SparseHaloPlan();
  SparseHaloPlan(const SparseHaloPlan&) = delete;
  SparseHaloPlan& operator=(const SparseHaloPlan&) = delete;

  void start(void* data, std::size_t count, std::size_t element_size,
             std::shared_ptr<ResidentState> state);
  void wait();
  // A dry run's update (docs/advisor.md, "Any program"): the arguments checked as start() checks
  // them, then the messages and, for a vector resident on a device (`staged`: it has a device
  // state), the copies of its sent and received ranges recorded; nothing moves.
  void trace_start(ProgramTrace& trace, std::size_t count, std::size_t element_size,
                   bool staged) const;

  const std::string& name() const noexcept { return name_; }
  SparseTransport transport() const noexcept { return transport_; }
  const PeerLists& sends() const noexcept { return sends_; }
  const PeerLists& receives() const noexcept { return receives_; }
  LocalRange send_range() const noexcept { return send_range_; }
  LocalRange receive_range() const noexcept { return receive_range_; }

 private:
  struct Binding {
    std::size_t element_size = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;  // element_size contiguous bytes
    std::vector<std::byte> send;
    std::vector<std::byte> receive;
    std::vector<MPI_Request> persistent;  // receives, then sends
  };
  // Error(invalid_argument) where an update of `count` values may not start now.
  void check_start(std::size_t count) const;
  Binding& bind(std::size_t element_size);
  void make_persistent(Binding& b);
  void free_binding(Binding& b) noexcept;
  void pack(const Binding& b) const;
  void unpack(const Binding& b) const;
  void abandon() noexcept;

  std::string name_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm graph_ = MPI_COMM_NULL;  // neighbour transport
  SparseTransport transport_;
  PeerLists sends_;
  PeerLists receives_;
  std::vector<int> send_counts_, send_displs_, receive_counts_, receive_displs_;
  LocalRange send_range_;
  index_t sent_rows_ = 0;    // distinct rows sent
  bool told_range_ = false;  // the log said once that send_range_ is much wider than them
  LocalRange receive_range_;
  // The received values go to receive_range_ in order: one copy, no scatter.
  bool receive_in_order_ = false;
  std::vector<std::unique_ptr<Binding>> bindings_;
  // The update in flight.
  Binding* active_ = nullptr;
  void* data_ = nullptr;
  std::shared_ptr<ResidentState> state_;
  MPI_Request collective_ = MPI_REQUEST_NULL;
  bool broken_ = false;
};

}  // namespace hit::detail
