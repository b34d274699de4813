#include "hit/core/environment.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

#include "hit/core/error.hpp"

namespace hit {
namespace {

// The one global of the library: which Environment is live.
Environment* g_current = nullptr;

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
  g_current = this;
  try {
    if (auto path = config_.get("plugin-path")) load_plugins(*path);
  } catch (...) {
    g_current = nullptr;
    throw;
  }
}

Environment::~Environment() {
  // Plug-in objects live in the registries; drop them before their code is unmapped.
  while (!extension_order_.empty()) extension_order_.pop_back();
  extensions_.clear();
  for (auto it = plugin_handles_.rbegin(); it != plugin_handles_.rend(); ++it) dlclose(*it);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && finalized == 0) MPI_Finalize();
  g_current = nullptr;
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
