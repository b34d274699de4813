// One round of work-package dispatch on one rank (dispatch.hpp).

#include "packages/dispatch.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/event_trace.hpp"
#include "hit/device.hpp"
#include "packages/placement.hpp"

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
      claims_(queue, round.queues, round.taking_part, me_),
      claims_window_(queue.get()),
      known_cost_s_(round.queues.size(), 0.0),
      progress_(device(engine.env()), comm_) {
  if (!engine_.out_of_rounds()) {
    for (int i = 0; i <= engine_.depth(); ++i)
      slots_.push_back(engine_.make_slot(engine_.size() * engine_.batch()));
  }
}

Dispatcher::~Dispatcher() {
  claims_.settle();
  for (Slot& x : slots_) {
    if (!x.requests.empty()) {
      MPI_Waitall(static_cast<int>(x.requests.size()), x.requests.data(), MPI_STATUSES_IGNORE);
    }
  }
}

void Dispatcher::run() {
  // A device too slow to finish one package before the others finish all claims nothing: it
  // waits for the round's end, answering the others' transfers of its rows meanwhile.
  const bool takes_part = round_.taking_part[static_cast<std::size_t>(me_)];
  while (takes_part) {
    bool progressed = poll_claim();
    progressed = advance_slots() || progressed;
    progressed = claim_more() || progressed;
    if (Slot* next = next_ready()) {
      compute(*next);
      continue;
    }
    if (progressed) continue;
    if (!busy() && (engine_.out_of_rounds() || claims_.done())) break;
    back_off();
  }
  if (report_.depth == 0 && !engine_.out_of_rounds() && takes_part) report_.depth = depth_now();
  report_.wall_s = MPI_Wtime() - round_.t0;
}

int Dispatcher::count(Slot::State state) const {
  return static_cast<int>(
      std::count_if(slots_.begin(), slots_.end(), [&](const Slot& x) { return x.state == state; }));
}

std::int64_t Dispatcher::held_packages() const {
  std::int64_t n = 0;
  for (const Slot& x : slots_) {
    if (x.state == Slot::State::fetching || x.state == Slot::State::ready ||
        x.state == Slot::State::computing)
      n += x.units;
  }
  return n;
}

bool Dispatcher::busy() const {
  return claims_.pending() || std::any_of(slots_.begin(), slots_.end(), [](const Slot& x) {
           return x.state != Slot::State::free;
         });
}

bool Dispatcher::poll_claim() {
  if (!claims_.pending() || !claims_.test()) return false;
  if (claims_.surveyed()) {
    decide();
  } else {
    take_claimed(true, claims_.take());
  }
  return true;
}

// Packages whose rows arrived go to the device (their copies overlap the next launch); slots
// whose results reached their owners are free again.
bool Dispatcher::advance_slots() {
  bool progressed = false;
  for (Slot& x : slots_) {
    if (x.state == Slot::State::fetching && !any_pending(x.requests)) {
      // Rows from other ranks (a copy of this rank's own rows takes no time worth measuring).
      if (x.remote) engine_.fetch_profile().observe(MPI_Wtime() - x.claimed_at);
      engine_.prefetch_to_device(x, engine_.packages(x.id, x.units));
      x.state = Slot::State::ready;
      progressed = true;
    } else if (x.state == Slot::State::returning && !any_pending(x.requests)) {
      x.state = Slot::State::free;
      progressed = true;
    }
  }
  return progressed;
}

// Surveys every rank's queue and outlook when this rank has room for a package (a slot free and
// fewer held than its depth), unless the placement rule left it out a moment ago.
bool Dispatcher::claim_more() {
  if (engine_.out_of_rounds() || claims_.pending() || claims_.done()) return false;
  if (claims_.surveyed()) return decide();
  const int room = std::min(depth_now() + 1 - held(), count(Slot::State::free));
  if (room <= 0) return false;
  const index_t room_packages = room * batch_now();
  // Left out a moment ago: ask again later, unless another rank found the round over meanwhile.
  if (MPI_Wtime() < next_survey_) return claims_.announced();
  // Far from the end of the round, a survey would say "take what you can hold": when this rank
  // would take the packages of `room` launches of its own queue's alone even if every other device
  // were free now (the least it could be given; more packages left or busier devices only give it
  // more), it claims them from its own queue at once, without waiting for the others to answer a
  // survey, so that their transfers overlap the launch that follows.
  const index_t own = surveyed_once_ ? claims_.own_left() : 0;
  if (own >= room_packages) {
    const double now = MPI_Wtime() - round_.t0;
    const std::vector<double> free_now(known_cost_s_.size(), now);
    const std::vector<std::int64_t> nothing(known_cost_s_.size(), 0);
    const auto outlooks = outlooks_of(known_cost_s_, free_now, nothing, now);
    if (packages_to_take(outlooks, static_cast<std::size_t>(me_), own, now) >= room_packages) {
      reserve(room);
      take_claimed(true, claims_.take_own(room_packages));
      advance_slots();
      return true;
    }
  }
  claims_.start_survey();
  return true;
}

// Every rank's time per package for the placement rule: its slowness (the probe) times the cost
// of the packages, the largest typical cost any rank published (the same for all, so the rule
// compares devices, not the rows they happened to get; the largest, so that near the end the
// packages left are not taken to be the cheap ones). This rank's own outlook is as it is now.
std::vector<DeviceOutlook> Dispatcher::outlooks_of(const std::vector<double>& cost_s,
                                                   const std::vector<double>& free_at_s,
                                                   const std::vector<std::int64_t>& held_now,
                                                   double now) const {
  const std::vector<double>& slowness = engine_.slowness();
  const auto slow = [&](std::size_t r) { return r < slowness.size() ? slowness[r] : 1.0; };
  const auto me = static_cast<std::size_t>(me_);
  const PackageProfile& profile = engine_.profile();
  double cost = profile.seconds();
  for (const double c : cost_s) cost = std::max(cost, c);
  std::vector<DeviceOutlook> out(cost_s.size());
  for (std::size_t r = 0; r < out.size(); ++r) {
    DeviceOutlook& o = out[r];
    o.working = cost_s[r] >= 0;
    const bool measured = r == me ? profile.known() : cost_s[r] > 0;
    o.per_package_s = o.working && measured ? slow(r) * cost : 0.0;
    o.free_at_s = free_at_s[r];
    o.held = held_now[r];
  }
  DeviceOutlook& mine = out[me];
  mine.working = !engine_.out_of_rounds();
  mine.cautious_s = slow(me) * std::max(cost, profile.cautious_seconds());
  mine.held = held_packages();
  mine.free_at_s = now + static_cast<double>(mine.held) * mine.per_package_s;
  return out;
}

void Dispatcher::reserve(int n) {
  int reserved = 0;
  for (Slot& x : slots_) {
    if (x.state == Slot::State::free && reserved < n) {
      x.state = Slot::State::claiming;
      ++reserved;
    }
  }
}

// After a survey: claims the packages the placement rule gives this rank (within its room), or
// waits a little and asks again. A claim on this rank's own queue completes at once: its packages
// are taken and their transfers started now, so they overlap the launch that follows.
bool Dispatcher::decide() {
  const Survey& s = claims_.survey();
  const index_t left = s.total_left();
  if (left == 0) {  // every queue is empty: nothing more to claim in this round
    claims_.drop_survey();
    return true;
  }
  const double now = MPI_Wtime() - round_.t0;
  std::vector<double> free_at(s.left.size(), 0.0);
  for (std::size_t r = 0; r < s.left.size(); ++r) {
    known_cost_s_[r] =
        s.per_package_ns[r] < 0 ? -1.0 : static_cast<double>(s.per_package_ns[r]) * 1e-9;
    free_at[r] = static_cast<double>(s.free_at_ns[r]) * 1e-9;
  }
  surveyed_once_ = true;
  const std::vector<DeviceOutlook> outlooks = outlooks_of(known_cost_s_, free_at, s.held, now);
  const index_t want = packages_to_take(outlooks, static_cast<std::size_t>(me_), left, now);
  const int room = std::min(depth_now() + 1 - held(), count(Slot::State::free));
  const index_t batch = batch_now();
  const index_t n = std::min<index_t>(want, room * batch);
  if (n <= 0) {
    // Left out: the others finish what is left sooner. Ask again after a fraction of a package
    // (the others' backlogs change as they compute), at least 0.2 ms, at most 2 ms.
    claims_.drop_survey();
    // The decision changes only when another device's backlog does: wait one of the quickest
    // other device's packages (0.5 to 10 ms), twice as long after each decision the same way,
    // so that devices left out of the end of a run leave the cores to those computing it.
    double quickest = 0;
    for (std::size_t r = 0; r < outlooks.size(); ++r) {
      const double t = outlooks[r].per_package_s;
      if (static_cast<int>(r) != me_ && outlooks[r].working && t > 0)
        quickest = quickest == 0 ? t : std::min(quickest, t);
    }
    declined_ = std::min(declined_ + 1, 5);
    next_survey_ =
        MPI_Wtime() + std::clamp(quickest * static_cast<double>(1 << (declined_ - 1)), 5e-4, 1e-2);
    publish();
    return false;
  }
  declined_ = 0;
  const bool own = claims_.start(n);
  reserve(static_cast<int>((n + batch - 1) / batch));
  if (own) {
    claims_.wait();
    take_claimed(true, claims_.take());
    advance_slots();
  }
  return true;
}

int Dispatcher::depth_now() const {
  // With one package per launch everywhere, a device more than twice as slow as another working
  // one, whose packages take 5 ms or more, holds nothing ahead: it claims its next package when
  // it starts it, so that a package it holds never waits on it while a faster device runs dry. (A
  // claim and a transfer take a fraction of a millisecond; on shorter packages holding one ahead
  // saves more than the tail it risks.) With batches each device's launch is sized for that
  // device, its idle end included, and holding none would leave a slow device idle for a survey
  // and a claim after each of its short launches.
  const std::vector<double>& slowness = engine_.slowness();
  const auto me = static_cast<std::size_t>(me_);
  const double mine = (me < slowness.size() ? slowness[me] : 1.0) * engine_.profile().seconds() *
                      static_cast<double>(engine_.batch());
  if (me < slowness.size() && mine >= 5e-3 && !engine_.batched()) {
    for (std::size_t r = 0; r < slowness.size() && r < known_cost_s_.size(); ++r) {
      if (r != me && known_cost_s_[r] >= 0 && slowness[me] > 2 * slowness[r]) return 0;
    }
  }
  return prefetch_depth(engine_.fetch_profile().seconds(), mine, engine_.depth());
}

void Dispatcher::publish() {
  const double now = MPI_Wtime() - round_.t0;
  const std::vector<double>& slowness = engine_.slowness();
  const auto me = static_cast<std::size_t>(me_);
  const double cost = engine_.profile().seconds();
  const double t = (me < slowness.size() ? slowness[me] : 1.0) * cost;
  const std::int64_t held_now = held_packages();
  published_[0] =
      static_cast<std::int64_t>(std::llround((now + static_cast<double>(held_now) * t) * 1e9));
  published_[1] =
      engine_.out_of_rounds() ? -1 : static_cast<std::int64_t>(std::llround(cost * 1e9));
  published_[2] = held_now;
  const MPI_Win win = claims_window_;
  check_mpi(MPI_Accumulate(published_, 3, MPI_INT64_T, me_, free_at_word, 3, MPI_INT64_T,
                           MPI_REPLACE, win),
            "MPI_Accumulate");
  check_mpi(MPI_Win_flush(me_, win), "MPI_Win_flush");
}

// Gives the packages a completed claim won to the slots reserved for it (`keep`), runs of
// consecutive packages of up to a batch each, or to the report's abandoned ones when the device
// failed meanwhile.
void Dispatcher::take_claimed(bool keep, const Claimed& won) {
  std::vector<index_t> ids;
  for (const index_t position : won.positions)
    ids.push_back(round_.ids[static_cast<std::size_t>(position)]);
  if (!keep) report_.abandoned.insert(report_.abandoned.end(), ids.begin(), ids.end());
  // A claim takes neighbouring positions of one queue (a rerouted round's, whose packages need not
  // be neighbours, launches one at a time): sorted, they are runs of consecutive packages.
  std::sort(ids.begin(), ids.end());
  const index_t batch = batch_now();
  std::size_t next = 0;
  for (Slot& x : slots_) {
    if (x.state != Slot::State::claiming) continue;
    x.state = Slot::State::free;
    if (!keep || next >= ids.size()) continue;
    index_t units = 1;
    while (next + static_cast<std::size_t>(units) < ids.size() && units < batch &&
           ids[next + static_cast<std::size_t>(units)] == ids[next] + units)
      ++units;
    x.id = ids[next];
    x.units = units;
    next += static_cast<std::size_t>(units);
    x.rerouted = round_.rerouted;
    x.sequence = sequence_++;
    x.claimed_at = MPI_Wtime();
    if (won.from != me_) report_.stolen += static_cast<std::uint64_t>(units);
    engine_.fetch(x, engine_.packages(x.id, x.units));
    x.remote = !x.requests.empty();
    x.state = Slot::State::fetching;
  }
  if (keep && next < ids.size()) {
    throw Error(ErrorKind::internal,
                fmt::format("work packages: a claim won {} packages, {} more than its launches "
                            "of up to {} hold",
                            ids.size(), ids.size() - next, batch));
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
  report_.depth = std::max(report_.depth, depth_now());
  const Shape pkg = engine_.packages(slot.id, slot.units);
  slot.state = Slot::State::computing;
  publish();
  const double start = MPI_Wtime() - round_.t0;
  const double traced = EventTrace::now();
  LaunchRecord rec;
  try {
    rec = engine_.launch(slot, pkg, call_);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::device_failed) throw;
    engine_.fail(e);
    abandon_all();
    publish();
    return;
  }
  const double end = MPI_Wtime() - round_.t0;
  event_trace(Environment::current())
      .span(
          "packages", "package",
          slot.units == 1 ? fmt::format("package {}", slot.id)
                          : fmt::format("packages {}-{}", slot.id, slot.id + slot.units - 1),
          traced, EventTrace::now(),
          {{"rows", static_cast<double>(pkg.extent(0))}, {"rerouted", slot.rerouted ? 1.0 : 0.0}});
  report_.busy_s += rec.seconds;
  report_.computed.push_back({slot.id, me_, start, end, slot.rerouted, slot.units});
  // In the quickest device's seconds (comparable with the others' costs).
  const std::vector<double>& slowness = engine_.slowness();
  const auto me = static_cast<std::size_t>(me_);
  const double slow = me < slowness.size() ? slowness[me] : 1.0;
  const auto units = static_cast<double>(slot.units);
  const double expected =
      slow * units * std::max(engine_.profile().seconds(), engine_.profile().cautious_seconds());
  // A package that missed stays out of the profile: with few samples the cautious estimate is
  // the longest, and one late package would make the next look expected. Judged on the launch
  // alone: waiting for a device that other ranks share (while one of them is descheduled on a
  // loaded host, say) does not make this device slow.
  const bool late = missed(end - start - rec.wait_seconds, expected);
  if (!late) engine_.profile().observe((end - start) / slow / units);
  engine_.give_back(slot, pkg);
  slot.state = slot.requests.empty() ? Slot::State::free : Slot::State::returning;
  idle_spins_ = 0;
  // Misses in a row: a device that became slower misses every package from then on, while a host
  // whose cores are shared (ranks oversubscribing a node, other jobs) delays one package now and
  // then, on every device alike.
  missed_ = late ? missed_ + 1 : 0;
  if (missed_ >= misses_to_withdraw && others_working()) {
    // Its packages keep missing: what it holds goes to the others (the next round), and it takes
    // no more in this run.
    engine_.withdraw();
    abandon_all();
  }
  publish();
}

bool Dispatcher::missed(double seconds, double expected) {
  // Far beyond its measured time (costlier rows than usual are within the cautious estimate),
  // and by more than a scheduling hiccup.
  return expected > 0 && seconds > miss_factor * expected && seconds - expected > 0.01;
}

bool Dispatcher::others_working() const {
  for (std::size_t r = 0; r < known_cost_s_.size(); ++r) {
    if (static_cast<int>(r) != me_ && known_cost_s_[r] >= 0) return true;
  }
  return false;
}

// The device failed (or withdrew): what this rank holds goes back to the others in the next
// round (results already on their way to their owners still arrive), and so does what is left in
// its own queue: the others may all be out of this round (placement found them too slow to take
// part), and then nobody would claim it.
void Dispatcher::abandon_all() {
  if (claims_.pending()) {
    const bool claim = claims_.claiming();
    claims_.wait();
    if (claim) take_claimed(false, claims_.take());
  }
  claims_.drop_survey();
  if (const index_t left = claims_.own_left(); left > 0) {
    for (const index_t position : claims_.take_own(left).positions)
      report_.abandoned.push_back(round_.ids[static_cast<std::size_t>(position)]);
  }
  for (Slot& x : slots_) {
    if (x.state != Slot::State::fetching && x.state != Slot::State::ready &&
        x.state != Slot::State::computing)
      continue;
    wait_all(static_cast<int>(x.requests.size()), x.requests.data(), "MPI_Rget", false);
    x.requests.clear();
    for (index_t id = x.id; id < x.id + x.units; ++id) report_.abandoned.push_back(id);
    x.state = Slot::State::free;
  }
}

// Waiting for a claim or rows from a rank that is computing: poll, leaving the core to the others
// (emulated devices' threads, ranks sharing cores) a little longer each time.
void Dispatcher::back_off() {
  if (++idle_spins_ < 16) {
    std::this_thread::yield();
  } else {
    // Answer the others' claims and surveys before sleeping (a survey waits on every rank), and
    // give up idle device copies that a rank sharing the device waits for room for, as every
    // other wait of the library does (env.while_waiting): a rank spinning here holds them
    // otherwise, and that rank waits until its timeout.
    poke_progress(comm_);
    engine_.env().while_waiting();
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(4 * idle_spins_, 250)));
  }
}

}  // namespace hit::detail
