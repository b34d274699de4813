#pragma once
// hit::Environment: the RAII owner of a hitmap++ run (MPI, configuration, plug-in registries).
//
// Exactly one Environment exists at a time; it is the only global state of the library. A program
// run without mpiexec is a valid 1-process run (MPI singleton initialisation).

#include <mpi.h>

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hit/core/config.hpp"
#include "hit/core/error.hpp"
#include "hit/core/wait_policy.hpp"

namespace hit {

class ProgramTrace;  // hit/core/program_trace.hpp

// An Environment that could not start (a plug-in that does not load, HIT_* variables that differ
// between processes): MPI is finalized already; `rank` says which process this was, so that one
// process reports an error every process shares.
class StartError : public Error {
 public:
  StartError(const Error& e, int rank) : Error(e), rank_(rank) {}
  int rank() const noexcept { return rank_; }

 private:
  int rank_;
};

class Environment {
 public:
  Environment(int& argc, char**& argv);
  Environment();
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm comm() const noexcept { return comm_; }
  Config& config() noexcept { return config_; }
  const Config& config() const noexcept { return config_; }

  // A per-environment service of type T (a registry, a device table, ...), constructed on first use
  // as T(Environment&). This is how later layers attach state without core naming them.
  template <class T>
  T& extension() {
    auto it = extensions_.find(std::type_index(typeid(T)));
    if (it == extensions_.end()) {
      auto owned = std::make_shared<T>(*this);
      it = extensions_.emplace(std::type_index(typeid(T)), owned).first;
      extension_order_.push_back(owned);
    }
    return *static_cast<T*>(it->second.get());
  }

  // Loads third-party plug-ins: every shared object named in HIT_PLUGIN_PATH (a ':'-separated list
  // of files or folders) exporting `extern "C" void hit_plugin_register(hit::Environment&)`.
  // Called by the constructor; exposed for programs that set the path late.
  void load_plugins(const std::string& path_list);
  const std::vector<std::string>& loaded_plugins() const noexcept { return plugin_files_; }

  // Failure notices: a process that fails where the others cannot know (a device out of memory
  // in a launch, an allocation, a file it alone reads) tells them, so they stop waiting for it.
  // announce_failure sends `message` to every other process (once; later calls do nothing);
  // check_announcements throws, as an Error known everywhere, the first failure another process
  // announced ("rank r: message"), and returns when none arrived. The library's waits
  // (hit::wait_all) call it while they wait.
  void announce_failure(ErrorKind kind, const std::string& message) noexcept;
  // This process's failure `e`, announced unless it is an Error every process raises alike
  // (Error::everywhere()): any other exception as an internal error.
  void announce_failure(const std::exception& e) noexcept;
  void check_announcements();
  // Whether an announcement is waiting (it is not taken).
  bool announcement_pending();
  bool announced() const noexcept { return announced_; }
  // Memory of operations abandoned after a failure (a plan destroyed, or its wait given up, while
  // its messages were in flight): MPI may still write into it or read from it, so it is released
  // only once every process has taken the messages sent to it, at the end (before MPI_Finalize).
  void keep_until_finalize(std::shared_ptr<const void> memory);

  // Communication started and not yet completed (hit::Comm start()/wait()). MPICH moves a large
  // message between processes of a node only while both of them call into MPI, so a transfer
  // started before a long computation would wait for its end. While some is in flight, launches
  // call progress() between kernels and while they wait for a device.
  void comm_started() noexcept { ++comms_in_flight_; }
  void comm_finished() noexcept {
    if (comms_in_flight_ > 0) --comms_in_flight_;
  }
  int comms_in_flight() const noexcept { return comms_in_flight_; }
  // Lets MPI move what is in flight (it takes no message).
  void progress() noexcept;

  // Work a process does while it waits for others (hit::wait_all calls it as it polls): a later
  // layer sets it to answer what other processes ask of this one meanwhile (the device layer: give
  // up idle device copies that a rank sharing the device waits for). Empty: nothing. Must not
  // wait for other processes itself. Returns the previous one.
  std::function<void()> set_while_waiting(std::function<void()> work) {
    std::swap(while_waiting_, work);
    return work;
  }
  void while_waiting() {
    if (while_waiting_ && !in_while_waiting_) {
      in_while_waiting_ = true;
      try {
        while_waiting_();
      } catch (...) {
        in_while_waiting_ = false;
        throw;
      }
      in_while_waiting_ = false;
    }
  }

  // Whether an out-of-memory error may advise the outOfCore partition: only where this program's
  // launches can run out of core and none does yet. A program whose kernels reduce over their
  // whole domain at once (hit-cg's dot products) says it cannot; hit::partition() notes an
  // outOfCore partition made.
  void set_out_of_core_available(bool available) noexcept { out_of_core_available_ = available; }
  void note_out_of_core_partition() noexcept { out_of_core_in_use_ = true; }
  bool out_of_core_advisable() const noexcept {
    return out_of_core_available_ && !out_of_core_in_use_;
  }

  // How hit::wait_all waits: the `wait` setting (HIT_WAIT), `auto` resolved at start from the
  // processes on this machine and the cores this process may run on. `sleep` or `spin`.
  WaitPolicy wait_policy() const noexcept { return wait_policy_; }
  // For a stretch of waits known to be long on an oversubscribed machine (a rank done with its
  // share waiting for the others'): the policy until it is set back. Returns the one it replaces.
  WaitPolicy set_wait_policy(WaitPolicy policy) noexcept {
    const WaitPolicy before = wait_policy_;
    wait_policy_ = policy;
    return before;
  }
  // Whether the processes of this machine outnumber the cores a process may run on (its
  // affinity mask at start); false with one process.
  bool oversubscribed() const noexcept { return oversubscribed_; }

  // The dry run in progress (`--hit-advise`): launches and communications record what they would
  // do there instead of doing it. Null while the program runs. Returns the one it replaces.
  ProgramTrace* trace() const noexcept { return trace_; }
  ProgramTrace* set_trace(ProgramTrace* trace) noexcept {
    std::swap(trace_, trace);
    return trace;
  }

  // A stretch of the run whose failures stay in it (the advisor's dry runs, which a candidate
  // may fail on one process alone). While it lasts, comm() and the failure notices are fresh
  // duplicates of the run's: a process that fails announces it there, releasing the others from
  // the collectives it will not join, and those collectives and the announcements stay with the
  // duplicates instead of reaching the run's.
  class Isolation {
   public:
    // Collective over the run's communicator.
    explicit Isolation(Environment& env);
    // Ends the stretch; the duplicates are freed only once settled (else kept until
    // MPI_Finalize, as a message still on its way could match a later communicator that reuses
    // their context).
    ~Isolation();
    Isolation(const Isolation&) = delete;
    Isolation& operator=(const Isolation&) = delete;

    // The run's communicators back (idempotent). What the stretch left is still counted.
    void end() noexcept;
    // Whether this process announced a failure in the stretch, and how many announcements of
    // others it took.
    bool announced() const noexcept { return announced_here_; }
    int notices_taken() const noexcept { return notices_taken_; }
    // After end(), once every process has told how many it announced: takes the `count`
    // announcements still addressed to this process, so nothing is left on the duplicates, and
    // frees them. `failed`: the stretch failed on some process, which abandoned messages on
    // purpose (MPI_Finalize is then as quiet as after a failed run).
    void settle(int count, bool failed);

   private:
    Environment& env_;
    MPI_Comm run_comm_;
    MPI_Comm run_notices_;
    MPI_Comm comm_ = MPI_COMM_NULL;     // the stretch's
    MPI_Comm notices_ = MPI_COMM_NULL;  // the stretch's
    bool run_announced_;
    int run_notices_taken_;
    bool ended_ = false;
    bool announced_here_ = false;
    int notices_taken_ = 0;
    std::vector<char> run_announcement_;
    std::vector<MPI_Request> run_announcement_sends_;
  };

  // The live Environment; throws Error(internal) when there is none.
  static Environment& current();
  static bool exists() noexcept;

 private:
  void init(int* argc, char*** argv);
  // Plug-ins, communicators, MPI itself; `quiet`: after a failure already reported, the MPI
  // layer's list of abandoned messages is not shown.
  void release(bool quiet) noexcept;

  bool owns_mpi_ = false;
  int rank_ = 0;
  int size_ = 1;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm notices_ = MPI_COMM_NULL;  // failure notices only (never matches library traffic)
  bool announced_ = false;
  bool abandoned_in_isolation_ = false;  // an Isolation failed somewhere and was settled
  int notices_taken_ = 0;                // announcements of others received (check_announcements)
  int comms_in_flight_ = 0;
  std::function<void()> while_waiting_;
  bool in_while_waiting_ = false;
  bool out_of_core_available_ = true;
  bool out_of_core_in_use_ = false;
  WaitPolicy wait_policy_ = WaitPolicy::spin;
  bool oversubscribed_ = false;
  ProgramTrace* trace_ = nullptr;
  std::vector<char> announcement_;
  std::vector<MPI_Request> announcement_sends_;
  std::vector<std::shared_ptr<const void>> abandoned_;
  Config config_;
  std::vector<void*> plugin_handles_;
  std::vector<std::string> plugin_files_;
  std::unordered_map<std::type_index, std::shared_ptr<void>> extensions_;
  std::vector<std::shared_ptr<void>> extension_order_;  // destroyed in reverse creation order
};

// Entry point name third-party plug-in libraries export.
inline constexpr const char* plugin_entry_point = "hit_plugin_register";

}  // namespace hit
