#pragma once
// The halo of a sparse shape (docs/sparse.md, "Communication"): refreshes the values of the
// vertices a process holds but does not own — the ghosts of its CsrShape, and the halo rows of an
// expansion by more than one edge — from their owners.
//
// Built once, collectively, from the process's CsrShape and the owner of every global vertex
// (SparseLayout::owners()): each process learns which of its own rows every neighbour needs
// (the ghost names go to their owners once, at set-up), and from then on an update moves values
// only: one message to each neighbour, none to any other process (Hitmap's sparse update is an
// all-to-all-v over every process). Two transports, chosen by SparseHaloOptions::transport:
//   neighbour   an MPI distributed-graph communicator of the neighbours
//               (MPI_Dist_graph_create_adjacent) and MPI_Ineighbor_alltoallv per update;
//   persistent  persistent point-to-point requests (MPI_Send_init / MPI_Recv_init, made once per
//               element size) started together (MPI_Startall) per update;
//   automatic   the one measured faster (docs/sparse.md: persistent).
//
// start() packs what leaves into the halo's own buffer and posts the messages; wait() completes
// them and writes the ghost values. Between the two the program may compute with (and even
// change) its own values: MPI touches only the halo's buffers. Every process of the
// communicator calls start()/wait() in the same order (an inactive one too: a neighbourhood
// collective needs them all), one update of a halo in flight at a time.
//
// A device-resident vector (Resident<T> of a 1-D tile over the local vertices) crosses between
// host and device only where the halo needs it: start() downloads the range of own rows that
// are sent (send_range()), wait() uploads the received values (receive_range()); with rows in
// interior_first_order() the first is the boundary rows alone.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hit/comm/comm_traffic.hpp"
#include "hit/resident.hpp"
#include "hit/sparse/csr_rows.hpp"
#include "hit/sparse/csr_shape.hpp"

namespace hit {

enum class SparseTransport { automatic, neighbour, persistent };
std::string_view to_string(SparseTransport transport) noexcept;

struct SparseHaloOptions {
  SparseTransport transport = SparseTransport::automatic;
  // The halo's name in messages; empty: "sparse halo".
  std::string label{};
};

// A range [first, last) of local vertex indices.
struct LocalRange {
  index_t first = 0;
  index_t last = 0;
  [[nodiscard]] index_t size() const noexcept { return last - first; }
  friend bool operator==(const LocalRange&, const LocalRange&) = default;
};

namespace detail {
class SparseHaloPlan;
}

// Copies are handles to the same halo (as hit::Comm's).
class SparseHalo {
 public:
  // The null halo: start() and wait() do nothing.
  SparseHalo() = default;
  // Collective over `comm`: every process passes its shape (an inactive one the empty shape)
  // and the same `owners`, one per global vertex. Error(invalid_argument), on every process,
  // when owners has another size than the graph's vertices or differs in size between
  // processes, names a process outside `comm`, gives a held own row to another process, or
  // gives a ghost to its holder.
  SparseHalo(const CsrShape& shape, std::span<const std::int32_t> owners, MPI_Comm comm,
             const SparseHaloOptions& options = {});

  // `values`: one per local vertex of the shape (own rows, halo rows, ghosts). The values of
  // the rows others need are packed now; the others' are written by wait(), so `values` must
  // stay alive until then.
  template <class T>
  void start(std::span<T> values) {
    static_assert(std::is_trivially_copyable_v<T> && !std::is_const_v<T>,
                  "SparseHalo: values of a trivially copyable, non-const type");
    start_bytes(values.data(), values.size(), sizeof(T), nullptr);
  }
  template <class T>
  void start(std::vector<T>& values) {
    start(std::span<T>(values));
  }
  // A resident vector: its tile is 1-D over [0, vertices) (the null Resident on a process
  // without vertices). Only send_range() leaves the device, only receive_range() enters it.
  template <class T>
  void start(Resident<T>& values) {
    Tile<T>& h = values.host();
    if (h.is_null()) {
      start_bytes(nullptr, 0, sizeof(T), nullptr);
      return;
    }
    check_resident(h.shape(), h.step(0));
    start_bytes(h.data(), static_cast<std::size_t>(h.size()), sizeof(T),
                detail::resident_state(values));
  }
  void wait();
  template <class T>
  void update(std::span<T> values) {
    start(values);
    wait();
  }
  template <class T>
  void update(std::vector<T>& values) {
    start(values);
    wait();
  }
  template <class T>
  void update(Resident<T>& values) {
    start(values);
    wait();
  }

  // ---- what an update moves on this process ---------------------------------------------------
  [[nodiscard]] bool is_null() const noexcept { return !plan_; }
  // The transport in use (automatic resolved).
  [[nodiscard]] SparseTransport transport() const noexcept;
  // Processes this one sends to or receives from (each once).
  [[nodiscard]] int neighbours() const noexcept;
  // Per neighbour, ascending: values sent to it and received from it per update.
  [[nodiscard]] std::vector<PeerTraffic> traffic() const;
  [[nodiscard]] index_t values_sent() const noexcept;
  [[nodiscard]] index_t values_received() const noexcept;
  // Per update, for elements of `element_bytes` bytes (checked arithmetic).
  [[nodiscard]] index_t bytes_sent(std::size_t element_bytes) const;
  [[nodiscard]] index_t bytes_received(std::size_t element_bytes) const;
  // The local indices the sends read (the smallest range holding them: empty when nothing is
  // sent) and those an update writes ([owned, vertices) of the shape).
  [[nodiscard]] LocalRange send_range() const noexcept;
  [[nodiscard]] LocalRange receive_range() const noexcept;
  [[nodiscard]] const std::string& name() const;

 private:
  // Whether an update moves anything (this process has a peer): only such updates are traced.
  bool exchanges() const noexcept;
  void start_bytes(void* data, std::size_t count, std::size_t element_size,
                   std::shared_ptr<detail::ResidentState> state);
  static void check_resident(const Shape& shape, index_t step);
  std::shared_ptr<detail::SparseHaloPlan> plan_;
};

// ---- interior-first order ---------------------------------------------------------------------

// A process's rows in the order that keeps the halo's traffic with a device contiguous.
struct InteriorOrder {
  // Positions of `mine`'s rows (0 .. rows-1): the interior rows first — those no other process
  // needs and that reference no vertex of another process — then the boundary rows; each part
  // in the order of `mine`.
  std::vector<index_t> order;
  index_t interior = 0;
};

// Collective over `comm` (each process passes its own rows, all owned: owners[name] is the
// process): which rows others reference is learnt as SparseHalo learns it. A CsrShape built
// from rows_in_order(mine, order.order) has its sent rows in [interior, rows) and its ghosts in
// [rows, vertices), so a resident vector's halo moves one contiguous range each way.
// Error(invalid_argument) on every process for owners of the wrong size or a row owned elsewhere.
[[nodiscard]] InteriorOrder interior_first_order(const CsrPattern& mine,
                                                 std::span<const std::int32_t> owners,
                                                 MPI_Comm comm);

namespace detail {
// The structure of `rows` with its rows in `order` (positions, a permutation); checked.
CsrPattern pattern_in_order(const CsrPattern& rows, std::span<const index_t> order);
}  // namespace detail

// `rows` with its rows in `order` (a permutation of 0 .. rows-1), values following.
inline CsrPattern rows_in_order(const CsrPattern& rows, std::span<const index_t> order) {
  return detail::pattern_in_order(rows, order);
}
template <class T>
CsrRows<T> rows_in_order(const CsrRows<T>& rows, std::span<const index_t> order) {
  rows.check("rows_in_order");
  CsrRows<T> out;
  static_cast<CsrPattern&>(out) = detail::pattern_in_order(rows, order);
  out.values.reserve(rows.values.size());
  for (const index_t r : order) {
    const std::span<const T> v = rows.row_values(r);
    out.values.insert(out.values.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace hit
