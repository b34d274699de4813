// One round of work-package dispatch on one rank (dispatch.hpp).

#include "packages/dispatch.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/device.hpp"

namespace hit::detail {

namespace {

// Whether some of `requests` are still running (cleared once all are done).
bool any_pending(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return false;
  int done = 0;
  check_mpi(
      MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
      "MPI_Testall");
  if (done == 0) return true;
  requests.clear();
  return false;
}

}  // namespace

Dispatcher::Dispatcher(PackageEngine& engine, const KernelCall& call, const Round& round,
                       const RmaWindow& queue, PackageReport& report)
    : engine_(engine),
      call_(call),
      round_(round),
      report_(report),
      comm_(engine.env().comm()),
      me_(engine.env().rank()),
      claims_(queue, round.queues, me_) {
  if (!engine_.failed()) {
    for (int i = 0; i <= engine_.depth(); ++i) slots_.push_back(engine_.make_slot(engine_.size()));
  }
  // While the device computes, this rank answers the others' claims and gets (MPI progresses only
  // inside MPI calls).
  const MPI_Comm comm = comm_;
  device(engine_.env()).set_wait_hook([comm] { poke_progress(comm); });
}

Dispatcher::~Dispatcher() {
  claims_.settle();
  for (Slot& x : slots_) {
    if (!x.requests.empty()) {
      MPI_Waitall(static_cast<int>(x.requests.size()), x.requests.data(), MPI_STATUSES_IGNORE);
    }
  }
  device(engine_.env()).set_wait_hook({});
}

void Dispatcher::run() {
  while (true) {
    bool progressed = poll_claim();
    progressed = advance_slots() || progressed;
    progressed = claim_more() || progressed;
    if (Slot* next = next_ready()) {
      compute(*next);
      continue;
    }
    if (progressed) continue;
    if (!busy() && (engine_.failed() || claims_.done())) break;
    back_off();
  }
  report_.wall_s = MPI_Wtime() - round_.t0;
}

int Dispatcher::count(Slot::State state) const {
  return static_cast<int>(
      std::count_if(slots_.begin(), slots_.end(), [&](const Slot& x) { return x.state == state; }));
}

bool Dispatcher::busy() const {
  return claims_.pending() || std::any_of(slots_.begin(), slots_.end(), [](const Slot& x) {
           return x.state != Slot::State::free;
         });
}

bool Dispatcher::poll_claim() {
  if (!claims_.pending() || !claims_.test()) return false;
  take_claimed(true);
  return true;
}

// Packages whose rows arrived go to the device (their copies overlap the next launch); slots
// whose results reached their owners are free again.
bool Dispatcher::advance_slots() {
  bool progressed = false;
  for (Slot& x : slots_) {
    if (x.state == Slot::State::fetching && !any_pending(x.requests)) {
      engine_.prefetch_to_device(x, engine_.package(x.id));
      x.state = Slot::State::ready;
      progressed = true;
    } else if (x.state == Slot::State::returning && !any_pending(x.requests)) {
      x.state = Slot::State::free;
      progressed = true;
    }
  }
  return progressed;
}

// Claims as many packages as there are slots free and room within the depth, from the queue
// tried now (skipping one that was empty from the start).
bool Dispatcher::claim_more() {
  const int room = engine_.depth() + 1 - held();
  if (engine_.failed() || claims_.pending() || claims_.done() || room <= 0) return false;
  if (claims_.victim_empty()) {
    claims_.skip_victim();
    return true;
  }
  const int n = std::min(count(Slot::State::free), room);
  if (n <= 0) return false;
  const bool own = claims_.victim() == me_;
  claims_.start(n);
  int reserved = 0;
  for (Slot& x : slots_) {
    if (x.state == Slot::State::free && reserved < n) {
      x.state = Slot::State::claiming;
      ++reserved;
    }
  }
  // A claim on this rank's own queue completes at once: take its packages and start their
  // transfers now, so they overlap the launch below instead of following it.
  if (own) {
    claims_.wait();
    take_claimed(true);
    advance_slots();
  }
  return true;
}

// Gives the packages a completed claim won to the slots reserved for it (`keep`), or to the
// report's abandoned ones when the device failed meanwhile.
void Dispatcher::take_claimed(bool keep) {
  const Claimed won = claims_.take();
  std::size_t i = 0;
  for (Slot& x : slots_) {
    if (x.state != Slot::State::claiming) continue;
    x.state = Slot::State::free;
    if (i >= won.positions.size()) continue;
    const index_t id = round_.ids[static_cast<std::size_t>(won.positions[i++])];
    if (!keep) {
      report_.abandoned.push_back(id);
      continue;
    }
    x.id = id;
    x.rerouted = round_.rerouted;
    x.sequence = sequence_++;
    if (won.from != me_) ++report_.stolen;
    engine_.fetch(x, engine_.package(id));
    x.state = Slot::State::fetching;
  }
}

// The ready package claimed first.
Slot* Dispatcher::next_ready() {
  Slot* next = nullptr;
  for (Slot& x : slots_) {
    if (x.state == Slot::State::ready && (next == nullptr || x.sequence < next->sequence))
      next = &x;
  }
  return next;
}

void Dispatcher::compute(Slot& slot) {
  // Serve the others before computing: without an asynchronous progress thread, MPI answers
  // their claims and gets on this rank only inside MPI calls, and a launch makes none.
  poke_progress(comm_);
  report_.max_ahead = std::max(report_.max_ahead, held() - 1);
  const Shape pkg = engine_.package(slot.id);
  const double start = MPI_Wtime() - round_.t0;
  LaunchRecord rec;
  try {
    rec = engine_.launch(slot, pkg, call_);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::device_failed) throw;
    engine_.fail(e);
    abandon_all();
    return;
  }
  report_.busy_s += rec.seconds;
  report_.computed.push_back({slot.id, me_, start, MPI_Wtime() - round_.t0, slot.rerouted});
  engine_.give_back(slot, pkg);
  slot.state = slot.requests.empty() ? Slot::State::free : Slot::State::returning;
  idle_spins_ = 0;
}

// The device failed: what this rank holds goes back to the others in the next round (results
// already on their way to their owners still arrive).
void Dispatcher::abandon_all() {
  if (claims_.pending()) {
    claims_.wait();
    take_claimed(false);
  }
  for (Slot& x : slots_) {
    if (x.state != Slot::State::fetching && x.state != Slot::State::ready) continue;
    wait_all(static_cast<int>(x.requests.size()), x.requests.data(), "MPI_Rget", false);
    x.requests.clear();
    report_.abandoned.push_back(x.id);
    x.state = Slot::State::free;
  }
}

// Waiting for a claim or rows from a rank that is computing: poll, leaving the core to the others
// (emulated devices' threads, ranks sharing cores) a little longer each time.
void Dispatcher::back_off() {
  if (++idle_spins_ < 64) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(idle_spins_, 500)));
  }
}

}  // namespace hit::detail
