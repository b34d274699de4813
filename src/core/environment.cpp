#include "hit/core/environment.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/log.hpp"

namespace hit {
namespace {

// The one global of the library: which Environment is live.
Environment* g_current = nullptr;

// The HIT_* variables of this process, sorted by name.
std::map<std::string, std::string> hit_variables() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (entry.rfind("HIT_", 0) == 0 && eq != std::string::npos) {
      out[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  return out;
}

// Whether the processes of this machine outnumber the cores a process may run on (its affinity
// mask at start, before any pinning). Collective over `comm`; every process of a machine gets the
// same answer. `auto` becomes `sleep` then, so waiting ones leave the cores to the working ones.
bool machine_oversubscribed(MPI_Comm comm) {
  MPI_Comm machine = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine),
            "MPI_Comm_split_type");
  int processes = 1;
  MPI_Comm_size(machine, &processes);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  int cores = sched_getaffinity(0, sizeof(mask), &mask) == 0
                  ? CPU_COUNT(&mask)
                  : static_cast<int>(std::thread::hardware_concurrency());
  allreduce_in_place(&cores, 1, MPI_INT, MPI_MAX, machine);
  MPI_Comm_free(&machine);
  return processes > cores;
}

std::string quoted(const std::map<std::string, std::string>& vars, const std::string& name) {
  const auto it = vars.find(name);
  if (it == vars.end()) return "unset";
  std::string v = it->second.size() > 80 ? it->second.substr(0, 80) + "..." : it->second;
  return "'" + v + "'";
}

// Every process must see the same HIT_* settings (layouts, partitions, devices, plug-ins): one
// that differs would compute another layout and wait for messages that never come. Compared with
// rank 0's at start; a difference is the same error on every process, naming the variables.
void check_same_configuration(MPI_Comm comm) {
  const auto mine = hit_variables();
  std::string text;
  for (const auto& [k, v] : mine) text += k + '=' + v + '\n';
  // Waits through hit::wait_all although the Environment is still being made: it is current and
  // its notice communicator exists by now, and no wait hook can be installed yet.
  std::string root = text;
  broadcast(root, 0, comm);
  collectively(comm, [&] {
    if (root == text) return;
    std::map<std::string, std::string> theirs;
    std::size_t start = 0;
    while (start < root.size()) {
      const auto end = root.find('\n', start);
      const std::string line = root.substr(start, end - start);
      const auto eq = line.find('=');
      theirs[line.substr(0, eq)] = line.substr(eq + 1);
      start = end + 1;
    }
    std::string diff;
    std::map<std::string, std::string> names = mine;
    names.insert(theirs.begin(), theirs.end());
    for (const auto& [name, value] : names) {
      if (quoted(mine, name) == quoted(theirs, name)) continue;
      diff += (diff.empty() ? "" : ", ") + name + " is " + quoted(mine, name) + " here and " +
              quoted(theirs, name) + " on rank 0";
    }
    throw Error(ErrorKind::invalid_argument,
                "the HIT_* variables must be the same on every process: " + diff +
                    " (give them to every process, e.g. mpiexec -genv NAME VALUE)");
  });
}

}  // namespace

Environment::Environment(int& argc, char**& argv) {
  init(&argc, &argv);
}

Environment::Environment() {
  init(nullptr, nullptr);
}

void Environment::init(int* argc, char*** argv) {
  if (g_current != nullptr) {
    throw Error(ErrorKind::internal, "a hit::Environment already exists; create only one");
  }
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised == 0) {
    // After a failure the others abandon messages to and from the failed process; MPICH's UCX
    // layer then lists each one at MPI_Finalize. The run's one-line error says what happened, so
    // only UCX's errors are shown, unless the user asked for more.
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    owns_mpi_ = true;
  }
  // Our own communicator, so library traffic never matches a user's messages on COMM_WORLD.
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  // Errors are returned, not fatal, so they become hit::Error instead of an abort trace.
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Comm_dup(comm_, &notices_);
  MPI_Comm_set_errhandler(notices_, MPI_ERRORS_RETURN);
  g_current = this;
  try {
    check_same_configuration(comm_);
    // Agreed, so a plug-in that fails to load on one process fails the start on all of them,
    // and the run ends normally (finalized) rather than by mpiexec killing the others.
    // Spinning unless asked: with `auto` as the default, one run of the test suite hung in
    // hit-jacobi --balance fpm (docs/architecture.md, "Waiting"), not reproduced since.
    WaitPolicy wait = WaitPolicy::spin;
    collectively(comm_, [&] {
      // A misspelt level would silently hide (or flood) the run's messages.
      if (auto level = config_.get("log-level")) log::parse_level(*level);
      if (auto path = config_.get("plugin-path")) load_plugins(*path);
      if (auto text = config_.get("wait")) wait = parse_wait_policy(*text);
    });
    if (size_ > 1) {
      oversubscribed_ = machine_oversubscribed(comm_);
      wait_policy_ = wait != WaitPolicy::automatic ? wait
                     : oversubscribed_             ? WaitPolicy::sleep
                                                   : WaitPolicy::spin;
    }
  } catch (const Error& e) {
    // Not quiet: the error is reported after this, on the streams.
    const int rank = rank_;
    release(false);
    throw StartError(e, rank);
  } catch (...) {
    release(false);
    throw;
  }
}

namespace {

// After a failure the processes abandoned messages to each other. MPI_Finalize would wait forever
// for some of them: MPICH over UCX completes a large (rendezvous) send only once its receiver
// takes it, and a cancelled send is not withdrawn. So every process takes whatever was sent to it
// on `comm` until all of them are here (a barrier on `sync`) and nothing more arrived for a while;
// then every send has been received. Bounded, in case a process never comes.
void drain_abandoned(MPI_Comm comm, MPI_Comm sync) noexcept {
  constexpr double settle_seconds = 0.05;
  constexpr double give_up_seconds = 10;
  MPI_Request everyone_here = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(sync, &everyone_here) != MPI_SUCCESS) return;
  std::vector<char> sink;
  bool all_here = false;
  const double start = MPI_Wtime();
  double last = start;
  while (MPI_Wtime() - start < give_up_seconds) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &arrived, &status);
    if (arrived != 0) {
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      sink.resize(static_cast<std::size_t>(std::max(bytes, 1)));
      MPI_Recv(sink.data(), std::max(bytes, 0), MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm,
               MPI_STATUS_IGNORE);
      last = MPI_Wtime();
      continue;
    }
    if (!all_here) {
      int done = 0;
      MPI_Test(&everyone_here, &done, MPI_STATUS_IGNORE);
      if (done != 0) {
        all_here = true;
        last = MPI_Wtime();
      }
    } else if (MPI_Wtime() - last > settle_seconds) {
      return;
    }
    std::this_thread::yield();
  }
  // A barrier some process never joined stays pending: the request of a nonblocking collective
  // may not be freed, and MPI_Finalize does not wait for it.
}

}  // namespace

void Environment::release(bool quiet) noexcept {
  // After a failure: every message sent and never received is taken now, so the transfers still
  // using memory of abandoned operations end; that memory (resident tiles among it, whose
  // devices are extensions) is released next, before the extensions.
  if (announced_ && comm_ != MPI_COMM_NULL && notices_ != MPI_COMM_NULL) {
    drain_abandoned(comm_, notices_);
  }
  abandoned_.clear();
  // Plug-in objects live in the registries; drop them before their code is unmapped.
  while (!extension_order_.empty()) extension_order_.pop_back();
  extensions_.clear();
  for (auto it = plugin_handles_.rbegin(); it != plugin_handles_.rend(); ++it) dlclose(*it);
  plugin_handles_.clear();
  // Announcements nobody received (the others ended for another reason) are dropped.
  for (MPI_Request& r : announcement_sends_) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  if (notices_ != MPI_COMM_NULL) MPI_Comm_free(&notices_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && finalized == 0) {
    if (quiet && (announced_ || abandoned_in_isolation_)) {
      // After a failure the processes abandoned messages to and from each other on purpose; the
      // MPI layer (MPICH over UCX) lists each one, on stdout, as it finalizes and as the process
      // exits. The run's one-line error has been printed and the program's output flushed: both
      // streams stay closed to that list from here on.
      std::fflush(stdout);
      std::fflush(stderr);
      const int null = open("/dev/null", O_WRONLY);
      if (null >= 0) {
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        close(null);
      }
      MPI_Finalize();
    } else {
      MPI_Finalize();
    }
  }
  g_current = nullptr;
}

namespace {
constexpr int notice_tag = 1;
constexpr std::size_t notice_max = 1024;  // a one-line message, capped
}  // namespace

void Environment::keep_until_finalize(std::shared_ptr<const void> memory) {
  if (memory) abandoned_.push_back(std::move(memory));
}

void Environment::announce_failure(const std::exception& e) noexcept {
  const auto* error = dynamic_cast<const Error*>(&e);
  if (error != nullptr && error->everywhere()) return;
  announce_failure(error != nullptr ? error->kind() : ErrorKind::internal, e.what());
}

void Environment::announce_failure(ErrorKind kind, const std::string& message) noexcept {
  if (announced_ || size_ == 1 || notices_ == MPI_COMM_NULL) return;
  announced_ = true;
  // [kind][message]: eager-sized, so the sends complete without the receivers' help.
  announcement_.assign(1, static_cast<char>(kind));
  announcement_.insert(
      announcement_.end(), message.begin(),
      message.begin() + static_cast<std::ptrdiff_t>(std::min(message.size(), notice_max)));
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MPI_Request req = MPI_REQUEST_NULL;
    if (MPI_Isend(announcement_.data(), static_cast<int>(announcement_.size()), MPI_CHAR, r,
                  notice_tag, notices_, &req) == MPI_SUCCESS) {
      announcement_sends_.push_back(req);
    }
  }
}

Environment::Isolation::Isolation(Environment& env)
    : env_(env),
      run_comm_(env.comm_),
      run_notices_(env.notices_),
      run_announced_(env.announced_),
      run_notices_taken_(env.notices_taken_) {
  check_mpi(MPI_Comm_dup(run_comm_, &comm_), "MPI_Comm_dup");
  if (run_notices_ != MPI_COMM_NULL)
    check_mpi(MPI_Comm_dup(run_notices_, &notices_), "MPI_Comm_dup");
  env.comm_ = comm_;
  env.notices_ = notices_;
  env.announced_ = false;
  env.notices_taken_ = 0;
  run_announcement_.swap(env.announcement_);
  run_announcement_sends_.swap(env.announcement_sends_);
}

void Environment::Isolation::end() noexcept {
  if (ended_) return;
  ended_ = true;
  announced_here_ = !env_.announcement_.empty();
  notices_taken_ = env_.notices_taken_;
  // The stretch's announcement is eager-sized: its sends complete without their receivers, who
  // may have left the stretch already; its buffer stays until the end all the same.
  for (MPI_Request& r : env_.announcement_sends_) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  if (!env_.announcement_.empty()) {
    env_.keep_until_finalize(std::make_shared<std::vector<char>>(std::move(env_.announcement_)));
  }
  env_.announcement_ = std::move(run_announcement_);
  env_.announcement_sends_ = std::move(run_announcement_sends_);
  env_.announced_ = run_announced_;
  env_.notices_taken_ = run_notices_taken_;
  env_.comm_ = run_comm_;
  env_.notices_ = run_notices_;
}

void Environment::Isolation::settle(int count, bool failed) {
  end();
  if (failed) env_.abandoned_in_isolation_ = true;
  std::vector<char> sink(notice_max + 1);
  for (int i = 0; i < count && notices_ != MPI_COMM_NULL; ++i) {
    check_mpi(MPI_Recv(sink.data(), static_cast<int>(sink.size()), MPI_CHAR, MPI_ANY_SOURCE,
                       notice_tag, notices_, MPI_STATUS_IGNORE),
              "MPI_Recv");
  }
  // A collective a failed process never joined may still be pending on the stretch's
  // communicator: MPI frees it once that completes, which is never, and so never reuses it.
  MPI_Comm_free(&comm_);
  if (notices_ != MPI_COMM_NULL) MPI_Comm_free(&notices_);
}

Environment::Isolation::~Isolation() {
  end();
}

void Environment::progress() noexcept {
  if (size_ == 1 || notices_ == MPI_COMM_NULL) return;
  // A probe on the notices communicator, where no library message travels, runs MPICH's
  // progress engine for every communicator and matches nothing it should not.
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, notices_, &flag, MPI_STATUS_IGNORE);
}

bool Environment::announcement_pending() {
  if (size_ == 1 || notices_ == MPI_COMM_NULL) return false;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, notice_tag, notices_, &flag, MPI_STATUS_IGNORE);
  return flag != 0;
}

void Environment::check_announcements() {
  if (size_ == 1 || notices_ == MPI_COMM_NULL) return;
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, notice_tag, notices_, &flag, &status);
  if (flag == 0) return;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::vector<char> text(static_cast<std::size_t>(std::max(count, 1)));
  MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, notice_tag, notices_,
           MPI_STATUS_IGNORE);
  const auto kind = static_cast<ErrorKind>(text[0]);
  const std::string message(text.begin() + 1, text.begin() + std::max(count, 1));
  // This process learned it: it need not announce the failure again.
  announced_ = true;
  ++notices_taken_;
  throw Error::everywhere(kind, "rank " + std::to_string(status.MPI_SOURCE) + ": " + message);
}

Environment::~Environment() {
  release(true);
}

void Environment::load_plugins(const std::string& path_list) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::size_t start = 0;
  while (start <= path_list.size()) {
    const auto colon = path_list.find(':', start);
    const std::string item =
        path_list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!item.empty()) {
      std::error_code ec;
      if (fs::is_directory(item, ec)) {
        std::vector<fs::path> in_dir;
        for (const auto& entry : fs::directory_iterator(item, ec)) {
          if (entry.path().extension() == ".so") in_dir.push_back(entry.path());
        }
        std::sort(in_dir.begin(), in_dir.end());  // same load order on every rank
        files.insert(files.end(), in_dir.begin(), in_dir.end());
      } else if (fs::exists(item, ec)) {
        files.emplace_back(item);
      } else {
        throw Error(ErrorKind::plugin,
                    "HIT_PLUGIN_PATH entry '" + item + "' is neither a shared object nor a folder");
      }
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  for (const auto& file : files) {
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      throw Error(ErrorKind::plugin, "cannot load plug-in '" + file.string() + "': " + dlerror());
    }
    using RegisterFn = void (*)(Environment&);
    auto fn = reinterpret_cast<RegisterFn>(dlsym(handle, plugin_entry_point));
    if (fn == nullptr) {
      dlclose(handle);
      throw Error(ErrorKind::plugin, "plug-in '" + file.string() + "' does not export " +
                                         plugin_entry_point + "(hit::Environment&)");
    }
    plugin_handles_.push_back(handle);
    plugin_files_.push_back(file.string());
    fn(*this);
  }
}

Environment& Environment::current() {
  if (g_current == nullptr) {
    throw Error(ErrorKind::internal, "no hit::Environment exists; create one at the start of main");
  }
  return *g_current;
}

bool Environment::exists() noexcept {
  return g_current != nullptr;
}

}  // namespace hit
