#pragma once
// hit::Environment: the RAII owner of a hitmap++ run (MPI, configuration, plug-in registries).
//
// Exactly one Environment exists at a time; it is the only global state of the library. A program
// run without mpiexec is a valid 1-process run (MPI singleton initialisation).

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "hit/core/config.hpp"

namespace hit {

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

  // The live Environment; throws Error(internal) when there is none.
  static Environment& current();
  static bool exists() noexcept;

 private:
  void init(int* argc, char*** argv);

  bool owns_mpi_ = false;
  int rank_ = 0;
  int size_ = 1;
  MPI_Comm comm_ = MPI_COMM_NULL;
  Config config_;
  std::vector<void*> plugin_handles_;
  std::vector<std::string> plugin_files_;
  std::unordered_map<std::type_index, std::shared_ptr<void>> extensions_;
  std::vector<std::shared_ptr<void>> extension_order_;  // destroyed in reverse creation order
};

// Entry point name third-party plug-in libraries export.
inline constexpr const char* plugin_entry_point = "hit_plugin_register";

}  // namespace hit
