#include "hit/runtime/process_flow.hpp"

#include "hit/core/environment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"

namespace hit::runtime {

namespace {

Error bad(const std::string& what) {
  return Error(ErrorKind::invalid_argument, what);
}

// Copies a tile's rows into `out` (dense) or from `in` (dense) back into its rows.
void pack(const HostRows& r, std::byte* out) {
  const auto* src = static_cast<const std::byte*>(r.data);
  for (std::size_t i = 0; i < r.rows; ++i) {
    std::memcpy(out + i * r.row_bytes, src + i * r.pitch_bytes, r.row_bytes);
  }
}
void unpack(const std::byte* in, const HostRows& r) {
  auto* dst = static_cast<std::byte*>(r.data);
  for (std::size_t i = 0; i < r.rows; ++i) {
    std::memcpy(dst + i * r.pitch_bytes, in + i * r.row_bytes, r.row_bytes);
  }
}

}  // namespace

ProcessFlow::ProcessFlow(MPI_Comm comm, std::vector<int> owner, std::vector<HostRows> tiles)
    : owner_(std::move(owner)), tiles_(std::move(tiles)) {
  if (owner_.size() != tiles_.size()) {
    throw bad(fmt::format("ProcessFlow: {} owners for {} tiles", owner_.size(), tiles_.size()));
  }
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int* ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, static_cast<void*>(&ub), &found);
  if (found && ub) tag_limit_ = *ub;
  local_of_.assign(tiles_.size(), -1);
  for (std::size_t g = 0; g < tiles_.size(); ++g) {
    if (owner_[g] < 0 || owner_[g] >= size_) {
      MPI_Comm_free(&comm_);
      throw bad(fmt::format("ProcessFlow: tile {} is owned by process {}, not one of the {}", g,
                            owner_[g], size_));
    }
    if (owner_[g] != rank_) continue;
    local_of_[g] = static_cast<TileId>(rows_.size());
    rows_.push_back(tiles_[g]);
    global_of_.push_back(static_cast<TileId>(g));
  }
  owned_ = rows_.size();
  readers_.resize(tiles_.size());
  next_tag_.assign(static_cast<std::size_t>(2 * size_), 0);
}

ProcessFlow::~ProcessFlow() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

TaskId ProcessFlow::add(std::span<const TileAccess> accesses, double cost) {
  // It runs where the last tile it writes lives; the other processes' tiles it writes come to it
  // as the tiles it reads do, and go back to their owners after it.
  int runner = -1;
  for (const TileAccess& a : accesses) {
    if (a.tile < 0 || static_cast<std::size_t>(a.tile) >= tiles_.size()) {
      throw bad(fmt::format("ProcessFlow: task {} names tile {}, not one of the {}", global_.size(),
                            a.tile, tiles_.size()));
    }
    if (writes(a.mode)) runner = owner_[static_cast<std::size_t>(a.tile)];
  }
  if (runner < 0) throw bad(fmt::format("ProcessFlow: task {} writes no tile", global_.size()));
  const TaskId g = global_.add(accesses, cost);
  runners_.push_back(runner);

  // The tiles it uses from other processes: one message per version and reader.
  std::vector<TileId> local(accesses.size(), -1);
  for (std::size_t i = 0; i < accesses.size(); ++i) {
    const auto tile = static_cast<std::size_t>(accesses[i].tile);
    if (owner_[tile] == runner) {
      local[i] = local_of_[tile];
      continue;
    }
    auto& readers = readers_[tile];
    const auto known = std::find_if(readers.begin(), readers.end(),
                                    [&](const auto& r) { return r.first == runner; });
    if (known != readers.end()) {
      local[i] = known->second;
      continue;
    }
    local[i] = message(accesses[i].tile, owner_[tile], runner, g);
    readers.emplace_back(runner, local[i]);
  }
  if (runner == rank_) {
    std::vector<TileAccess> mine(accesses.begin(), accesses.end());
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i].tile = local[i];
    local_.add(mine, cost);
    local_tasks_.push_back({g, -1});
    local_access_.push_back(local);
    ++computes_;
  }
  // A write starts a new version: its readers elsewhere need it anew. Another's tile written
  // here goes back to its owner, and the runner's replica is that version too.
  for (std::size_t i = 0; i < accesses.size(); ++i) {
    if (!writes(accesses[i].mode)) continue;
    const auto tile = static_cast<std::size_t>(accesses[i].tile);
    readers_[tile].clear();
    if (owner_[tile] == runner) continue;
    message(accesses[i].tile, runner, owner_[tile], g, runner == rank_ ? local[i] : -1);
    readers_[tile].emplace_back(runner, local[i]);
  }
  return g;
}

TileId ProcessFlow::message(TileId tile, int from, int to, TaskId first_reader, TileId replica) {
  if (from != rank_ && to != rank_) return -1;  // a message between two others
  const bool send = from == rank_;
  const int peer = send ? to : from;
  int& count = next_tag_[static_cast<std::size_t>(2 * peer + (send ? 0 : 1))];
  if (count >= tag_limit_) {
    throw bad(
        fmt::format("ProcessFlow: more than {} messages between processes {} and {} "
                    "(MPI_TAG_UB); use larger tiles",
                    tag_limit_, rank_, peer));
  }
  const auto g = static_cast<std::size_t>(tile);
  Message m{.tile = tile,
            .local = 0,
            .peer = peer,
            .tag = count++,
            .send = send,
            .priority = 0,
            .first_reader = first_reader};
  if (owner_[g] == rank_) {
    m.local = local_of_[g];  // the owner sends its tile, or takes its tile back
  } else if (replica >= 0) {
    m.local = replica;  // the runner sends its replica back
  } else {  // a new replica: dense rows and, after them, the poison flag the message carries
    const HostRows& shape = tiles_[g];
    replica_storage_.push_back(std::make_unique<std::byte[]>(shape.bytes() + 1));
    m.local = static_cast<TileId>(rows_.size());
    rows_.push_back({replica_storage_.back().get(), shape.rows, shape.row_bytes, shape.row_bytes});
    global_of_.push_back(tile);
  }
  const TileAccess message_access{m.local, send ? Access::read : Access::write};
  local_.add({message_access}, 0.0);
  local_tasks_.push_back({-1, static_cast<std::int64_t>(messages_.size())});
  local_access_.push_back({m.local});
  messages_.push_back(m);
  return send ? -1 : m.local;
}

TaskId ProcessFlow::global_task(TaskId t) const {
  return local_tasks_.at(static_cast<std::size_t>(t)).global;
}

TileId ProcessFlow::message_tile(TaskId t) const {
  const LocalTask& l = local_tasks_.at(static_cast<std::size_t>(t));
  return l.message < 0 ? -1 : messages_[static_cast<std::size_t>(l.message)].tile;
}

int ProcessFlow::message_peer(TaskId t) const {
  const LocalTask& l = local_tasks_.at(static_cast<std::size_t>(t));
  return l.message < 0 ? -1 : messages_[static_cast<std::size_t>(l.message)].peer;
}

bool ProcessFlow::is_send(TaskId t) const {
  const LocalTask& l = local_tasks_.at(static_cast<std::size_t>(t));
  return l.message >= 0 && messages_[static_cast<std::size_t>(l.message)].send;
}

TileId ProcessFlow::local_tile(TaskId t, std::size_t a) const {
  return local_access_.at(static_cast<std::size_t>(t)).at(a);
}

const HostRows& ProcessFlow::host_rows(TileId local) const {
  return rows_.at(static_cast<std::size_t>(local));
}

TileId ProcessFlow::global_tile(TileId local) const {
  return global_of_.at(static_cast<std::size_t>(local));
}

bool ProcessFlow::poisoned_inputs(TaskId t) const {
  for (const TileAccess& a : local_.accesses(t)) {
    if (poisoned_[static_cast<std::size_t>(a.tile)]) return true;
  }
  return false;
}

void ProcessFlow::poison_outputs(TaskId t) {
  for (const TileAccess& a : local_.accesses(t)) {
    if (writes(a.mode)) poisoned_[static_cast<std::size_t>(a.tile)] = 1;
  }
}

void ProcessFlow::start(TaskId t) {
  const Message& m =
      messages_[static_cast<std::size_t>(local_tasks_[static_cast<std::size_t>(t)].message)];
  const HostRows& r = rows_[static_cast<std::size_t>(m.local)];
  const std::size_t bytes = r.bytes();
  if (bytes + 1 > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("ProcessFlow: a tile of {} bytes is too large for one message", bytes));
  }
  InFlight f{t, {}};
  MPI_Request request = MPI_REQUEST_NULL;
  if (m.send) {
    f.buffer.resize(bytes + 1);
    pack(r, f.buffer.data());
    f.buffer[bytes] =
        std::byte{static_cast<unsigned char>(poisoned_[static_cast<std::size_t>(m.local)])};
    check_mpi(MPI_Isend(f.buffer.data(), static_cast<int>(bytes + 1), MPI_BYTE, m.peer, m.tag,
                        comm_, &request),
              "MPI_Isend");
    ++counters_.sent;
    counters_.bytes_sent += bytes;
  } else if (m.local < static_cast<TileId>(owned_)) {
    // An own tile coming back from the task that wrote it elsewhere: its rows may be strided,
    // and hold no byte for the poison flag after them. Received dense, unpacked when it ends.
    f.buffer.resize(bytes + 1);
    check_mpi(MPI_Irecv(f.buffer.data(), static_cast<int>(bytes + 1), MPI_BYTE, m.peer, m.tag,
                        comm_, &request),
              "MPI_Irecv");
  } else {
    check_mpi(
        MPI_Irecv(r.data, static_cast<int>(bytes + 1), MPI_BYTE, m.peer, m.tag, comm_, &request),
        "MPI_Irecv");
  }
  requests_.push_back(request);
  in_flight_.push_back(std::move(f));
}

void ProcessFlow::poll(std::vector<TaskId>& ended) {
  if (requests_.empty()) return;
  std::vector<int> done(requests_.size());
  int count = 0;
  check_mpi(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, done.data(),
                         MPI_STATUSES_IGNORE),
            "MPI_Testsome");
  if (count <= 0) return;
  for (int i = 0; i < count; ++i) {
    const InFlight& f = in_flight_[static_cast<std::size_t>(done[static_cast<std::size_t>(i)])];
    ended.push_back(f.task);
    const Message& m =
        messages_[static_cast<std::size_t>(local_tasks_[static_cast<std::size_t>(f.task)].message)];
    if (!m.send) {
      const HostRows& r = rows_[static_cast<std::size_t>(m.local)];
      const std::byte* flag = static_cast<const std::byte*>(r.data) + r.bytes();
      if (!f.buffer.empty()) {  // an own tile, received dense
        unpack(f.buffer.data(), r);
        flag = f.buffer.data() + r.bytes();
      }
      poisoned_[static_cast<std::size_t>(m.local)] = *flag != std::byte{0} ? 1 : 0;
      ++counters_.received;
      counters_.bytes_received += r.bytes();
    }
  }
  // Keep the pending ones, in order.
  std::vector<char> finished(requests_.size(), 0);
  for (int i = 0; i < count; ++i)
    finished[static_cast<std::size_t>(done[static_cast<std::size_t>(i)])] = 1;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (finished[i]) continue;
    if (kept != i) {  // a vector moved onto itself may lose its buffer, which MPI still reads
      requests_[kept] = requests_[i];
      in_flight_[kept] = std::move(in_flight_[i]);
    }
    ++kept;
  }
  requests_.resize(kept);
  in_flight_.resize(kept);
}

std::vector<TracedTask> ProcessFlow::traced_graph() const {
  std::vector<TracedTask> out(global_.size());
  for (std::size_t t = 0; t < out.size(); ++t) {
    const auto id = static_cast<TaskId>(t);
    TracedTask& x = out[t];
    x.proc = runners_[t];
    x.flops = global_.cost(id);
    const std::vector<TileAccess>& uses = global_.accesses(id);
    for (const TileAccess& a : uses) {
      x.problem_bytes += static_cast<double>(tiles_[static_cast<std::size_t>(a.tile)].bytes());
    }
    for (const TaskId s : global_.predecessors(id)) {
      const int from = runners_[static_cast<std::size_t>(s)];
      if (from == x.proc) {
        x.waits.push_back({s, 0, -1});
        continue;
      }
      // The tiles s wrote that t uses travel; a tile goes through its owner when neither runs
      // there (its new version goes back to the owner, who sends it on).
      TracedTask::Wait w{s, 0, -1};
      for (const TileAccess& b : global_.accesses(s)) {
        if (!writes(b.mode)) continue;
        const bool used = std::any_of(uses.begin(), uses.end(),
                                      [&](const TileAccess& a) { return a.tile == b.tile; });
        if (!used) continue;
        const auto tile = static_cast<std::size_t>(b.tile);
        w.bytes += static_cast<double>(tiles_[tile].bytes());
        if (owner_[tile] != from && owner_[tile] != x.proc) w.via = owner_[tile];
      }
      if (w.bytes > 0) x.waits.push_back(w);
    }
  }
  return out;
}

ExecutionReport ProcessFlow::run(std::span<const Place> places, int compute_place,
                                 const TaskBody& body, ExecuteOptions options) {
  std::vector<Place> all(places.begin(), places.end());
  message_place_ = static_cast<int>(all.size());
  if (Environment::exists()) {
    if (ProgramTrace* trace = Environment::current().trace()) {
      // Every process's workers, as the places it was given name them.
      std::array<int, 2> mine{0, 0};
      for (const Place& p : places) mine[p.memory == host_memory ? 0 : 1] += p.workers;
      std::vector<int> every(2 * static_cast<std::size_t>(size_));
      check_mpi(MPI_Allgather(mine.data(), 2, MPI_INT, every.data(), 2, MPI_INT, comm_),
                "MPI_Allgather of the workers");
      std::vector<TracedWorkers> workers(static_cast<std::size_t>(size_));
      for (std::size_t q = 0; q < workers.size(); ++q)
        workers[q] = {every[2 * q], every[2 * q + 1]};
      trace->tasks(traced_graph(), std::move(workers));
      failure_ = nullptr;
      counters_ = {};
      return {};
    }
  }
  all.push_back({host_memory, 1});
  std::vector<int> place_of(local_tasks_.size(), compute_place);
  // Priorities from the whole graph: an own task its level there, a message its first reader's.
  const std::vector<double> levels = global_.bottom_levels();
  std::vector<double> priority(local_tasks_.size());
  for (std::size_t t = 0; t < local_tasks_.size(); ++t) {
    const LocalTask& l = local_tasks_[t];
    if (l.global >= 0) {
      priority[t] = levels[static_cast<std::size_t>(l.global)];
    } else {
      place_of[t] = message_place_;
      priority[t] = levels[static_cast<std::size_t>(
          messages_[static_cast<std::size_t>(l.message)].first_reader)];
    }
  }
  poisoned_.assign(rows_.size(), 0);
  failure_ = nullptr;
  counters_ = {};
  requests_.clear();
  in_flight_.clear();
  const TaskCost* user_cost = options.cost;
  const TaskCost cost = [&](TaskId t, int place) -> double {
    if (place == message_place_ || local_tasks_[static_cast<std::size_t>(t)].global < 0) {
      return 0.0;
    }
    return (*user_cost)(t, place);
  };
  if (user_cost) options.cost = &cost;
  const auto fail = [this] {
    const std::lock_guard<std::mutex> lock(failure_mutex_);
    if (!failure_) failure_ = std::current_exception();
    failed_.store(true);
  };
  failed_.store(false);
  // Once a step of this process has failed, its run is lost: its own tasks are skipped and
  // poison what they write (its peers learn of it from the messages) rather than computed.
  const TaskBody guarded = [&](TaskId t, int place) {
    if (failed_.load() || poisoned_inputs(t)) {
      poison_outputs(t);
      return;
    }
    try {
      body(t, place);
    } catch (...) {
      poison_outputs(t);
      fail();
    }
  };
  // A copy that fails (a device out of memory that another process filled) fails the run the same
  // way; thrown to the executor, it would stop this process's graph and its peers would wait for
  // its messages forever.
  const TileMover* user_move = options.move;
  // A poisoned tile's copy can fail as a consequence of another failure (a skipped task never
  // made the device copy its write-back reads): its contents are lost already, and the failure is
  // not this process's own.
  const TileMover move = [&](const Transfer& x) {
    try {
      (*user_move)(x);
    } catch (...) {
      if (!poisoned_[static_cast<std::size_t>(x.tile)]) fail();
    }
  };
  if (user_move) options.move = &move;
  const Messages messages{.place = message_place_,
                          .start = [this](TaskId t) { start(t); },
                          .poll = [this](std::vector<TaskId>& ended) { poll(ended); }};
  options.messages = &messages;
  options.priority = priority;
  return execute(local_, all, place_of, guarded, options);
}

}  // namespace hit::runtime
