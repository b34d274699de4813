#pragma once
// Internal to the comm layer (src/comm/): MPI datatypes for tile regions, messages, and the
// plan a Comm executes. Not part of the API.

#include <mpi.h>

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hit/comm/detail/comm_tile.hpp"
#include "hit/core/program_trace.hpp"
#include "hit/resident.hpp"
#include "hit/shape.hpp"

namespace hit::detail {

// An owned, committed MPI datatype.
class Datatype {
 public:
  Datatype() = default;
  explicit Datatype(MPI_Datatype type) : type_(type) {}
  ~Datatype();
  Datatype(Datatype&& o) noexcept : type_(o.type_) { o.type_ = MPI_DATATYPE_NULL; }
  Datatype& operator=(Datatype&& o) noexcept;
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;
  MPI_Datatype get() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// A committed datatype of `size` contiguous bytes: one element whose type the layer erased.
Datatype bytes_type(std::size_t size);

// Collects regions bound for (or coming from) one peer, in a fixed order, and builds one datatype
// with displacements relative to the first region (base()), so a message of many regions is one
// MPI call. (Not MPI_BOTTOM: MPICH's MPI_Pack rejects a null input buffer.)
class MessageBuilder {
 public:
  MessageBuilder(MPI_Datatype element, std::size_t element_size)
      : element_(element), element_size_(element_size) {}
  void add(const Region& region);
  bool empty() const noexcept { return regions_.empty(); }
  std::size_t bytes() const noexcept { return bytes_; }
  // The contiguous pieces of memory its regions are made of (what MPI walks to pack them).
  double runs() const noexcept { return runs_; }
  const void* base() const noexcept { return regions_.empty() ? nullptr : regions_.front().data; }
  Datatype build() const;

 private:
  MPI_Datatype element_;
  std::size_t element_size_;
  std::vector<Region> regions_;
  std::size_t bytes_ = 0;
  double runs_ = 0;
};

struct Message {
  int peer = MPI_PROC_NULL;
  int tag = 0;
  std::shared_ptr<Datatype> type;  // displacements relative to `base`
  std::size_t bytes = 0;
  const void* base = nullptr;
  double runs = 1;  // contiguous pieces (MessageBuilder::runs)
};

// A region of a device-resident tile that a phase sends (fetched from the device before the
// sends are posted, when the device side is newer) or receives (published to the device once
// the receives completed, when the device side was current).
struct Staging {
  std::shared_ptr<ResidentState> state;
  Shape region;
};

// One step of a plan: its receives and sends are posted together.
struct Phase {
  std::vector<Message> sends;
  std::vector<Message> recvs;
  std::vector<Staging> fetch;
  std::vector<Staging> publish;
};

// What a Comm runs. Phases run in order; all but the last complete inside start().
class CommPlan {
 public:
  CommPlan(std::string name, MPI_Comm comm) : name_(std::move(name)), comm_(comm) {}
  // A plan destroyed while its messages are in flight (a failure unwound the program) hands what
  // they point into to the Environment, which keeps it until the end of the run.
  virtual ~CommPlan();
  CommPlan(const CommPlan&) = delete;
  CommPlan& operator=(const CommPlan&) = delete;

  virtual void start();
  virtual void wait();
  virtual std::size_t bytes_sent() const;
  virtual std::size_t bytes_received() const;
  // What a run sends and receives, peers as ranks of the run's communicator (a dry run records
  // it in place of running), and the bytes of device-resident tiles it copies to or from the
  // host.
  virtual std::vector<TracedMessage> traffic() const;
  virtual double staged_bytes() const;
  const std::string& name() const noexcept { return name_; }

  // Send buffers overlap receive buffers (a shift in place): sends are packed at start().
  void set_pack_sends(bool pack) noexcept { pack_sends_ = pack; }
  std::vector<Phase>& phases() noexcept { return phases_; }
  // Keeps what the plan's messages point into alive as long as the plan (tile handles).
  void keep(std::shared_ptr<const void> owner) { owners_.push_back(std::move(owner)); }
  // Hooks of a double-buffered shift: before_send runs first in start() (it points the messages
  // at the buffers of the moment), after_receive once the last phase's receives completed, before
  // their regions are published (it swaps the buffers).
  void before_send(std::function<void(CommPlan&)> hook) { before_send_ = std::move(hook); }
  void after_receive(std::function<void(CommPlan&)> hook) { after_receive_ = std::move(hook); }
  // The plan's messages point into the host buffer `data` of a resident tile: start() refuses to
  // run once a double-buffered shift has swapped that buffer away (the data is elsewhere).
  void pin_buffer(std::shared_ptr<ResidentState> state, const void* data) {
    pinned_.push_back({std::move(state), data});
  }

 protected:
  MPI_Comm comm() const noexcept { return comm_; }
  void post(Phase& phase);
  void complete();
  // After a failure: the memory of this plan's messages outlives it (see the destructor).
  void abandon() noexcept;
  // Whether this plan's messages are in flight; the Environment counts the plans that are (its
  // launches make MPI progress while any is).
  bool in_flight() const noexcept { return in_flight_; }
  void set_in_flight(bool in_flight) noexcept;
  static void fetch(const std::vector<Staging>& regions);
  static void publish(const std::vector<Staging>& regions);

 private:
  std::string name_;
  MPI_Comm comm_;
  bool pack_sends_ = false;
  bool in_flight_ = false;
  std::vector<Phase> phases_;
  std::vector<MPI_Request> requests_;
  std::vector<std::vector<char>> pack_buffers_;
  std::vector<std::shared_ptr<const void>> owners_;
  std::function<void(CommPlan&)> before_send_;
  std::function<void(CommPlan&)> after_receive_;
  struct Pinned {
    std::shared_ptr<ResidentState> state;
    const void* data;
  };
  std::vector<Pinned> pinned_;
};

// Broadcast of one region along a line communicator.
class BcastPlan : public CommPlan {
 public:
  // `staging`: the broadcast region of a device-resident tile (fetched on the root, published
  // elsewhere); its state is null for a host tile.
  BcastPlan(std::string name, MPI_Comm parent, int color, int key, int root, Region region,
            MPI_Datatype element, std::size_t element_size, Staging staging = {});
  ~BcastPlan() override;
  void start() override;
  void wait() override;
  std::size_t bytes_sent() const override;
  std::size_t bytes_received() const override;
  std::vector<TracedMessage> traffic() const override;
  double staged_bytes() const override;

 private:
  MPI_Comm line_ = MPI_COMM_NULL;
  int root_ = 0;
  int line_rank_ = -1;
  Datatype type_;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  double runs_ = 1;
  MPI_Request request_ = MPI_REQUEST_NULL;
  Staging staging_;
};

// A block of tags for one Comm, distinct from the Comms built just before it, so messages of
// Comms in flight together never match each other. Collective order: every rank calls it for the
// same Comm in the same order.
int next_tag_base(Environment& env);
inline constexpr int tags_per_comm = 64;

void reduce_in_place(void* data, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);

}  // namespace hit::detail
