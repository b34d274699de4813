#include <algorithm>
#include <cmath>

#include "hit/comm.hpp"
#include "hit/comm/detail/comm_plan.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/event_trace.hpp"

namespace hit {

MPI_Op to_mpi(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return MPI_SUM;
    case ReduceOp::prod:
      return MPI_PROD;
    case ReduceOp::min:
      return MPI_MIN;
    case ReduceOp::max:
      return MPI_MAX;
  }
  return MPI_SUM;
}

namespace detail {

Datatype::~Datatype() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (type_ != MPI_DATATYPE_NULL && finalized == 0) MPI_Type_free(&type_);
}

Datatype& Datatype::operator=(Datatype&& o) noexcept {
  if (this != &o) {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
    type_ = o.type_;
    o.type_ = MPI_DATATYPE_NULL;
  }
  return *this;
}

Datatype bytes_type(std::size_t size) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(static_cast<int>(size), MPI_BYTE, &type), "MPI_Type_contiguous");
  if (const int rc = MPI_Type_commit(&type); rc != MPI_SUCCESS) {
    MPI_Type_free(&type);
    check_mpi(rc, "MPI_Type_commit");
  }
  return Datatype(type);
}

void MessageBuilder::add(const Region& region) {
  if (region.elements() == 0) return;
  regions_.push_back(region);
  bytes_ += static_cast<std::size_t>(region.elements()) * element_size_;
  // Axes dense over the next one merge into one run, as region_type merges them.
  double runs = 1;
  index_t run = 1;  // elements of the dense run that ends at the last axis
  bool dense = true;
  for (int k = region.rank() - 1; k >= 0; --k) {
    const index_t extent = region.shape.extent(k);
    if (dense && (region.steps[static_cast<std::size_t>(k)] == run || extent == 1)) {
      run *= extent;
    } else {
      dense = false;
      runs *= double(extent);
    }
  }
  runs_ += runs;
}

namespace {

// The datatype of one region, relative to its first element. Axes whose elements are adjacent in
// memory are merged so a dense block is one contiguous run (the fast path of every MPI).
MPI_Datatype region_type(const Region& r, MPI_Datatype element, std::size_t element_size) {
  // Merge trailing dense axes: axis k is dense over k+1 when step[k] == extent[k+1]*step[k+1].
  std::vector<index_t> ext;
  std::vector<index_t> step;
  for (int k = 0; k < r.rank(); ++k) {
    ext.push_back(r.shape.extent(k));
    step.push_back(r.steps[static_cast<std::size_t>(k)]);
  }
  for (std::size_t k = ext.size() - 1; k > 0; --k) {
    if (step[k - 1] == ext[k] * step[k] || ext[k - 1] == 1) {
      ext[k - 1] *= ext[k];
      step[k - 1] = step[k];
      ext.erase(ext.begin() + static_cast<std::ptrdiff_t>(k));
      step.erase(step.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  MPI_Datatype inner = MPI_DATATYPE_NULL;
  const std::size_t last = ext.size() - 1;
  if (step[last] == 1) {
    check_mpi(MPI_Type_contiguous(static_cast<int>(ext[last]), element, &inner),
              "MPI_Type_contiguous");
  } else {
    check_mpi(MPI_Type_vector(static_cast<int>(ext[last]), 1, static_cast<int>(step[last]), element,
                              &inner),
              "MPI_Type_vector");
  }
  for (std::size_t k = last; k-- > 0;) {
    MPI_Datatype outer = MPI_DATATYPE_NULL;
    const auto stride_bytes = static_cast<MPI_Aint>(step[k]) * static_cast<MPI_Aint>(element_size);
    check_mpi(MPI_Type_create_hvector(static_cast<int>(ext[k]), 1, stride_bytes, inner, &outer),
              "MPI_Type_create_hvector");
    MPI_Type_free(&inner);
    inner = outer;
  }
  return inner;
}

}  // namespace

Datatype MessageBuilder::build() const {
  std::vector<MPI_Datatype> types;
  std::vector<int> lengths(regions_.size(), 1);
  std::vector<MPI_Aint> addresses;
  MPI_Aint base_address = 0;
  if (!regions_.empty()) MPI_Get_address(regions_.front().data, &base_address);
  for (const Region& r : regions_) {
    types.push_back(region_type(r, element_, element_size_));
    MPI_Aint address = 0;
    MPI_Get_address(r.data, &address);
    addresses.push_back(MPI_Aint_diff(address, base_address));
  }
  MPI_Datatype out = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_create_struct(static_cast<int>(types.size()), lengths.data(), addresses.data(),
                                   types.data(), &out),
            "MPI_Type_create_struct");
  for (MPI_Datatype& t : types) MPI_Type_free(&t);
  check_mpi(MPI_Type_commit(&out), "MPI_Type_commit");
  return Datatype(out);
}

void CommPlan::post(Phase& phase) {
  requests_.clear();
  pack_buffers_.clear();
  // In-place transfers pack what leaves *before* any receive is posted: a posted receive may
  // complete at once from an already-arrived message and overwrite the data still to be sent.
  std::vector<int> packed_sizes;
  if (pack_sends_) {
    for (const Message& m : phase.sends) {
      int size = 0;
      check_mpi(MPI_Pack_size(1, m.type->get(), comm_, &size), "MPI_Pack_size");
      std::vector<char>& buffer = pack_buffers_.emplace_back(static_cast<std::size_t>(size));
      int position = 0;
      check_mpi(MPI_Pack(m.base, 1, m.type->get(), buffer.data(), size, &position, comm_),
                "MPI_Pack");
      packed_sizes.push_back(position);
    }
  }
  for (const Message& m : phase.recvs) {
    MPI_Request req = MPI_REQUEST_NULL;
    check_mpi(MPI_Irecv(const_cast<void*>(m.base), 1, m.type->get(), m.peer, m.tag, comm_, &req),
              "MPI_Irecv");
    requests_.push_back(req);
  }
  for (std::size_t i = 0; i < phase.sends.size(); ++i) {
    const Message& m = phase.sends[i];
    MPI_Request req = MPI_REQUEST_NULL;
    if (pack_sends_) {
      check_mpi(MPI_Isend(pack_buffers_[i].data(), packed_sizes[i], MPI_PACKED, m.peer, m.tag,
                          comm_, &req),
                "MPI_Isend");
    } else {
      check_mpi(MPI_Isend(m.base, 1, m.type->get(), m.peer, m.tag, comm_, &req), "MPI_Isend");
    }
    requests_.push_back(req);
  }
}

void CommPlan::complete() {
  if (!requests_.empty()) {
    try {
      wait_all(static_cast<int>(requests_.size()), requests_.data(), "MPI_Waitall");
    } catch (...) {
      abandon();
      throw;
    }
  }
  requests_.clear();
  pack_buffers_.clear();
}

void CommPlan::set_in_flight(bool in_flight) noexcept {
  if (in_flight == in_flight_) return;
  in_flight_ = in_flight;
  if (!Environment::exists()) return;
  Environment& env = Environment::current();
  if (in_flight) {
    env.comm_started();
  } else {
    env.comm_finished();
  }
}

void CommPlan::abandon() noexcept {
  set_in_flight(false);
  if (!Environment::exists()) return;
  try {
    Environment& env = Environment::current();
    for (const auto& owner : owners_) env.keep_until_finalize(owner);
    env.keep_until_finalize(
        std::make_shared<std::vector<std::vector<char>>>(std::move(pack_buffers_)));
    // The requests themselves: MPI continues them without a handle.
    for (MPI_Request& r : requests_) {
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    }
    requests_.clear();
  } catch (...) {
  }
}

CommPlan::~CommPlan() {
  if (in_flight_) abandon();
}

void CommPlan::fetch(const std::vector<Staging>& regions) {
  for (const Staging& s : regions) {
    if (s.state) resident_fetch(*s.state, s.region);
  }
}

void CommPlan::publish(const std::vector<Staging>& regions) {
  for (const Staging& s : regions) {
    if (s.state) resident_publish(*s.state, s.region);
  }
}

void CommPlan::start() {
  if (in_flight_) {
    throw Error(ErrorKind::invalid_argument, "comm '" + name_ + "' started twice without wait()");
  }
  for (const Pinned& p : pinned_) {
    if (p.state->host.data != p.data) {
      throw Error(ErrorKind::invalid_argument,
                  "comm '" + name_ +
                      "' was built over a resident tile's host buffer that a double-buffered "
                      "shift has since swapped away; build it again (or make it a "
                      "double-buffered shift too)");
    }
  }
  if (before_send_) before_send_(*this);
  set_in_flight(true);
  for (std::size_t p = 0; p < phases_.size(); ++p) {
    fetch(phases_[p].fetch);
    post(phases_[p]);
    if (p + 1 < phases_.size()) {
      complete();
      publish(phases_[p].publish);
    }
  }
}

void CommPlan::wait() {
  if (!in_flight_) return;
  complete();
  set_in_flight(false);
  if (phases_.empty()) return;
  if (after_receive_) after_receive_(*this);
  publish(phases_.back().publish);
}

std::size_t CommPlan::bytes_sent() const {
  std::size_t n = 0;
  for (const Phase& p : phases_) {
    for (const Message& m : p.sends) n += m.bytes;
  }
  return n;
}

std::size_t CommPlan::bytes_received() const {
  std::size_t n = 0;
  for (const Phase& p : phases_) {
    for (const Message& m : p.recvs) n += m.bytes;
  }
  return n;
}

namespace {

// `rank` of `comm` as a rank of the run's communicator.
int run_rank(MPI_Comm comm, int rank) {
  const MPI_Comm run = Environment::current().comm();
  if (comm == run) return rank;
  MPI_Group from = MPI_GROUP_NULL, to = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &from);
  MPI_Comm_group(run, &to);
  int out = MPI_UNDEFINED;
  MPI_Group_translate_ranks(from, 1, &rank, to, &out);
  MPI_Group_free(&from);
  MPI_Group_free(&to);
  return out;
}

double region_bytes(const std::vector<Staging>& regions) {
  double bytes = 0;
  for (const Staging& s : regions) {
    if (s.state) bytes += double(s.region.size()) * double(s.state->host.element_size);
  }
  return bytes;
}

}  // namespace

std::vector<TracedMessage> CommPlan::traffic() const {
  std::vector<TracedMessage> out;
  for (const Phase& p : phases_) {
    for (const Message& m : p.recvs) {
      out.push_back({run_rank(comm_, m.peer), double(m.bytes), m.runs, true, 1.0});
    }
    for (const Message& m : p.sends) {
      out.push_back({run_rank(comm_, m.peer), double(m.bytes), m.runs, false, 0.0});
    }
  }
  return out;
}

double CommPlan::staged_bytes() const {
  double bytes = 0;
  for (const Phase& p : phases_) bytes += region_bytes(p.fetch) + region_bytes(p.publish);
  return bytes;
}

BcastPlan::BcastPlan(std::string name, MPI_Comm parent, int color, int key, int root, Region region,
                     MPI_Datatype element, std::size_t element_size, Staging staging)
    : CommPlan(std::move(name), parent), root_(root), staging_(std::move(staging)) {
  check_mpi(MPI_Comm_split(parent, color, key, &line_), "MPI_Comm_split");
  if (line_ == MPI_COMM_NULL) return;
  MPI_Comm_rank(line_, &line_rank_);
  MessageBuilder builder(element, element_size);
  builder.add(region);
  bytes_ = builder.bytes();
  runs_ = builder.runs();
  base_ = const_cast<void*>(builder.base());
  if (!builder.empty()) type_ = builder.build();
}

BcastPlan::~BcastPlan() {
  // In flight after a failure: its tile must outlive the broadcast (the request stays with MPI).
  if (request_ != MPI_REQUEST_NULL) abandon();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (line_ != MPI_COMM_NULL && finalized == 0) MPI_Comm_free(&line_);
}

void BcastPlan::start() {
  if (line_ == MPI_COMM_NULL || type_.get() == MPI_DATATYPE_NULL) return;
  if (line_rank_ == root_) fetch({staging_});
  check_mpi(MPI_Ibcast(base_, 1, type_.get(), root_, line_, &request_), "MPI_Ibcast");
  set_in_flight(true);
}

void BcastPlan::wait() {
  if (request_ == MPI_REQUEST_NULL) return;
  wait_all(1, &request_, "MPI_Ibcast", false);
  set_in_flight(false);
  if (line_rank_ != root_) publish({staging_});
}

std::size_t BcastPlan::bytes_sent() const {
  if (line_ == MPI_COMM_NULL || line_rank_ != root_) return 0;
  int size = 1;
  MPI_Comm_size(line_, &size);
  return bytes_ * static_cast<std::size_t>(size - 1);
}

std::size_t BcastPlan::bytes_received() const {
  return (line_ == MPI_COMM_NULL || line_rank_ == root_) ? 0 : bytes_;
}

std::vector<TracedMessage> BcastPlan::traffic() const {
  if (line_ == MPI_COMM_NULL || type_.get() == MPI_DATATYPE_NULL) return {};
  int size = 1;
  MPI_Comm_size(line_, &size);
  if (size < 2) return {};
  // A binomial tree: its root sends in every round, the others wait for that many at most.
  const double rounds = std::ceil(std::log2(double(size)));
  if (line_rank_ == root_) {
    return {{run_rank(line_, (root_ + 1) % size), double(bytes_), runs_, false, rounds}};
  }
  return {{run_rank(line_, root_), double(bytes_), runs_, true, rounds}};
}

double BcastPlan::staged_bytes() const {
  return staging_.state ? double(staging_.region.size()) * double(staging_.state->host.element_size)
                        : 0.0;
}

namespace {

// Per-environment tag counter (Environment::extension), so no global state.
struct TagCounter {
  explicit TagCounter(Environment& /*env*/) {}
  int next = 0;
};

}  // namespace

int next_tag_base(Environment& env) {
  auto& counter = env.extension<TagCounter>();
  // 32767 is the smallest MPI_TAG_UB the standard allows.
  const int blocks = 32767 / tags_per_comm;
  const int base = (counter.next % blocks) * tags_per_comm;
  ++counter.next;
  return base;
}

void reduce_in_place(void* data, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  if (root < 0) {
    allreduce_in_place(data, count, type, op, comm);
    return;
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Request req = MPI_REQUEST_NULL;
  if (rank == root) {
    check_mpi(MPI_Ireduce(MPI_IN_PLACE, data, count, type, op, root, comm, &req), "MPI_Ireduce");
  } else {
    check_mpi(MPI_Ireduce(data, nullptr, count, type, op, root, comm, &req), "MPI_Ireduce");
  }
  wait_all(1, &req, "MPI_Ireduce", false);
}

}  // namespace detail

void Comm::start() {
  if (!plan_) return;
  if (ProgramTrace* trace = Environment::current().trace()) {
    trace->comm_start(plan_.get(), plan_->traffic(), plan_->staged_bytes());
    return;
  }
  EventTrace& events = event_trace(Environment::current());
  if (events.enabled()) {
    events.begin(plan_.get(), "messages", "comm", plan_->name(),
                 {{"bytes_sent", static_cast<double>(plan_->bytes_sent())},
                  {"bytes_received", static_cast<double>(plan_->bytes_received())}});
  }
  plan_->start();
}
void Comm::wait() {
  if (!plan_) return;
  if (ProgramTrace* trace = Environment::current().trace()) {
    trace->comm_wait(plan_.get());
    return;
  }
  EventTrace& events = event_trace(Environment::current());
  const double asked = events.enabled() ? EventTrace::now() : 0;
  plan_->wait();
  if (events.enabled()) {
    events.span("host", "wait", "wait for " + plan_->name(), asked, EventTrace::now());
    events.finish(plan_.get());
  }
}
std::size_t Comm::bytes_sent() const {
  return plan_ ? plan_->bytes_sent() : 0;
}
std::size_t Comm::bytes_received() const {
  return plan_ ? plan_->bytes_received() : 0;
}
const std::string& Comm::name() const {
  static const std::string none = "null";
  return plan_ ? plan_->name() : none;
}

void Pattern::start() {
  if (order_ == Order::ordered) {
    for (Comm& c : comms_) c.run();
  } else {
    for (Comm& c : comms_) c.start();
  }
  started_ = true;
}

void Pattern::wait() {
  if (!started_) return;
  if (order_ == Order::unordered) {
    for (Comm& c : comms_) c.wait();
  }
  started_ = false;
}

std::size_t Pattern::bytes_sent() const {
  std::size_t n = 0;
  for (const Comm& c : comms_) n += c.bytes_sent();
  return n;
}

}  // namespace hit
