#pragma once
// The sequential task flow over processes, as StarPU-MPI and PaRSEC's dynamic task discovery
// run it: every process submits the same tasks in the same order, each tile has an owner, and a
// task runs on the process that owns the tiles it writes. A task that reads a tile another
// process owns reads a replica: the owner sends that version of the tile once to each process
// that reads it, however many of that process's tasks read it, as soon as it is written (the
// send is a task of the owner that reads the tile; the receive a task of the reader that writes
// the replica). A task that writes tiles of several processes (a tile QR's update of two tile
// rows) runs where the last tile it writes lives: the others come to it as read tiles do, and
// their new versions go back to their owners after it, as messages of their own. Each process
// so runs a graph of its own tasks, sends and receives, inferred as any TaskGraph is; the
// messages are the edges between the processes' graphs (docs/runtime.md).
//
// A task that fails does not stop its process, whose peers wait for its messages: the tiles it
// writes are poisoned, a task that reads a poisoned tile is skipped and poisons what it writes,
// and messages carry the poison on. After the run, failure() holds this process's first failure
// (never a consequence of another's), for agree(). A tile copy that fails (ExecuteOptions::move)
// fails the process's run alike, and once its run has failed, a process skips its own tasks left
// (each poisons what it writes) and only serves its messages.

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "hit/core/program_trace.hpp"
#include "hit/runtime/executor.hpp"
#include "hit/runtime/host_rows.hpp"
#include "hit/runtime/task_graph.hpp"

namespace hit::runtime {

// What the messages of one run moved, for this process.
struct MessageCounters {
  std::int64_t sent = 0;
  std::int64_t received = 0;
  std::uint64_t bytes_sent = 0;  // the tiles' bytes (the poison flag not counted)
  std::uint64_t bytes_received = 0;
};

class ProcessFlow {
 public:
  // Global tile g is owned by process owner[g] of `comm` and has the geometry tiles[g] (its host
  // rows on the owner; only the sizes count elsewhere). `comm` is duplicated (the messages'
  // tags are the flow's own). Error(invalid_argument) for sizes that differ or an owner outside
  // the communicator.
  ProcessFlow(MPI_Comm comm, std::vector<int> owner, std::vector<HostRows> tiles);
  ~ProcessFlow();
  ProcessFlow(const ProcessFlow&) = delete;
  ProcessFlow& operator=(const ProcessFlow&) = delete;

  // Submits global task number size() in program order (the same on every process; `cost` as
  // in TaskGraph::add). It runs on the owner of the last tile it writes. Error(invalid_argument)
  // when it writes no tile or names a tile that does not exist.
  TaskId add(std::span<const TileAccess> accesses, double cost = 1.0);
  TaskId add(std::initializer_list<TileAccess> accesses, double cost = 1.0) {
    return add(std::span<const TileAccess>(accesses.begin(), accesses.size()), cost);
  }

  int rank() const noexcept { return rank_; }
  std::size_t global_tasks() const noexcept { return global_.size(); }
  const TaskGraph& global_graph() const noexcept { return global_; }
  // This process's graph: its tasks, sends and receives (local ids, in submission order).
  const TaskGraph& graph() const noexcept { return local_; }
  std::size_t tasks() const noexcept { return computes_; }  // this process's own tasks
  // For local task t: the global task it runs, or -1 for a send or a receive.
  TaskId global_task(TaskId t) const;
  // For a send or a receive: the global tile it carries and the other process; -1 otherwise.
  TileId message_tile(TaskId t) const;
  int message_peer(TaskId t) const;
  bool is_send(TaskId t) const;
  // Local tiles: this process's own tiles in global order, then its replicas. The local tile a
  // local task uses for its access number `a` (the order of its global task's accesses).
  std::size_t local_tiles() const noexcept { return rows_.size(); }
  TileId local_tile(TaskId t, std::size_t a) const;
  const HostRows& host_rows(TileId local) const;
  TileId global_tile(TileId local) const;

  // Runs this process's graph on `places` (the message place is added after them, served by the
  // calling thread): each own task t at `compute_place` (a place, or any_place with
  // options.cost), body(t, place) with local ids. `options.cost`, if given, is asked only for
  // own tasks; `options.messages` and `options.priority` are the flow's (the whole graph's bottom
  // levels). A body or a copy that throws poisons (above) instead of stopping the run. Collective
  // in effect: every process of the communicator runs its share.
  ExecutionReport run(std::span<const Place> places, int compute_place, const TaskBody& body,
                      ExecuteOptions options = {});
  // The whole graph as the advisor's dry run records it (hit/core/program_trace.hpp): per global
  // task its process, flops (its cost) and tiles, and the tasks it waits for with the bytes that
  // travel from their process (the tiles one writes and the other uses; none for an order between
  // two processes, which replicas do not impose). In a dry run, run() records it and runs nothing.
  std::vector<TracedTask> traced_graph() const;
  // After run(): this process's first failure (null when none), and what it moved.
  const std::exception_ptr& failure() const noexcept { return failure_; }
  const MessageCounters& counters() const noexcept { return counters_; }
  // The index of the message place in the last run's places.
  int message_place() const noexcept { return message_place_; }

 private:
  struct LocalTask {
    TaskId global = -1;  // an own task; -1 for a message
    std::int64_t message = -1;
  };
  struct Message {
    TileId tile = 0;   // global
    TileId local = 0;  // the owned tile (send) or the replica (receive)
    int peer = 0;
    int tag = 0;
    bool send = false;
    double priority = 0;  // the first reader's bottom level
    TaskId first_reader = 0;
  };
  // Submits the message that carries the current version of global `tile` from process `from`
  // to `to`, as this process takes part in it (nothing when it is neither), for a task whose
  // priority it takes. The local tile it sends or receives: the owner's own tile; on the runner
  // of a task that wrote another's tile, that `replica` (sent back); else a new replica. Returns
  // the local tile a receive writes, else -1.
  TileId message(TileId tile, int from, int to, TaskId first_reader, TileId replica = -1);
  void start(TaskId t);
  void poll(std::vector<TaskId>& ended);
  bool poisoned_inputs(TaskId t) const;
  void poison_outputs(TaskId t);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int tag_limit_ = 32767;
  std::vector<int> owner_;
  std::vector<HostRows> tiles_;   // global geometry
  std::vector<TileId> local_of_;  // global tile -> own local tile, -1 when another's
  // Per global tile, the processes that have its current version (a write starts a new one)
  // from a message, with the replica's local tile where this process is the reader.
  std::vector<std::vector<std::pair<int, TileId>>> readers_;
  std::vector<int> next_tag_;      // per peer: messages submitted between this process and it
  std::vector<HostRows> rows_;     // per local tile: the own ones first, then the replicas
  std::size_t owned_ = 0;          // the own tiles among them
  std::vector<TileId> global_of_;  // per local tile
  std::vector<std::unique_ptr<std::byte[]>> replica_storage_;
  TaskGraph global_;
  std::vector<int> runners_;  // per global task, the process that runs it
  TaskGraph local_;
  std::vector<LocalTask> local_tasks_;
  std::vector<std::vector<TileId>> local_access_;  // per local task, by access number
  std::vector<Message> messages_;
  std::size_t computes_ = 0;
  // The run's state.
  std::vector<char> poisoned_;  // per local tile
  struct InFlight {
    TaskId task;
    std::vector<std::byte> buffer;  // a send's packed tile and flag
  };
  std::vector<MPI_Request> requests_;
  std::vector<InFlight> in_flight_;
  std::mutex failure_mutex_;
  std::exception_ptr failure_;
  std::atomic<bool> failed_{false};  // failure_ is set: the own tasks left are skipped
  MessageCounters counters_;
  int message_place_ = -1;
};

}  // namespace hit::runtime
