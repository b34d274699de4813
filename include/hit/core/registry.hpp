#pragma once
// A name registry of plug-ins of one kind (layouts, partitions, topologies). Registries are owned
// by the Environment (see Environment::extension), never global.

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/core/spec.hpp"

namespace hit {

// `Plugin` must provide `name()`, `description()` and `params()` (a std::vector<ParamInfo>).
template <class Plugin>
class Registry {
 public:
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Adds a plug-in; a second plug-in of the same name is an error (names stay unambiguous).
  void add(std::shared_ptr<const Plugin> plugin) {
    const std::string name = plugin->name();
    if (plugins_.count(name) != 0) {
      throw Error(ErrorKind::plugin, kind_ + " plug-in '" + name + "' is registered twice");
    }
    plugins_.emplace(name, std::move(plugin));
  }

  bool contains(const std::string& name) const { return plugins_.count(name) != 0; }

  // The plug-in named by `spec`, with its keys validated; the error lists what exists.
  const Plugin& get(const Spec& spec) const {
    auto it = plugins_.find(spec.name());
    if (it == plugins_.end()) {
      throw Error(ErrorKind::plugin, "unknown " + kind_ + " plug-in '" + spec.name() +
                                         "' (registered: " + names_text() + ")");
    }
    spec.check_keys(it->second->params());
    return *it->second;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, p] : plugins_) out.push_back(name);
    return out;
  }

  std::vector<const Plugin*> all() const {
    std::vector<const Plugin*> out;
    for (const auto& [name, p] : plugins_) out.push_back(p.get());
    return out;
  }

  const std::string& kind() const noexcept { return kind_; }

 private:
  std::string names_text() const {
    std::string out;
    for (const auto& [name, p] : plugins_) out += (out.empty() ? "" : ", ") + name;
    return out;
  }

  std::string kind_;
  std::map<std::string, std::shared_ptr<const Plugin>> plugins_;
};

}  // namespace hit
