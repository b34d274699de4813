#pragma once
// A name registry of plug-ins of one kind (layouts, partitions, topologies). Registries are owned
// by the Environment (see Environment::extension), never global.

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/core/param.hpp"
#include "hit/core/spec.hpp"

namespace hit {

// `Plugin` must provide `name()`, `description()` and `params()` (a std::vector<ParamInfo>, the
// typed declarations of hit/core/param.hpp).
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

  [[nodiscard]] bool contains(const std::string& name) const { return plugins_.count(name) != 0; }

  // The plug-in of that name, for its declarations (params(), description()): nothing is
  // checked but the name.
  [[nodiscard]] const Plugin& find(const std::string& name) const { return *lookup(name); }

  // The plug-in named by `spec`, with its parameters checked against its declarations (keys,
  // required ones, types and ranges: check_params); the error for an unknown name lists what
  // exists.
  const Plugin& get(const Spec& spec) const {
    const Plugin* plugin = lookup(spec.name());
    check_params(spec, plugin->params(), kind_);
    return *plugin;
  }

  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, p] : plugins_) out.push_back(name);
    return out;
  }

  [[nodiscard]] std::vector<const Plugin*> all() const {
    std::vector<const Plugin*> out;
    for (const auto& [name, p] : plugins_) out.push_back(p.get());
    return out;
  }

  const std::string& kind() const noexcept { return kind_; }

 private:
  const Plugin* lookup(const std::string& name) const {
    auto it = plugins_.find(name);
    if (it == plugins_.end()) {
      throw Error(ErrorKind::plugin, "unknown " + kind_ + " plug-in '" + name +
                                         "' (registered: " + names_text() + ")");
    }
    return it->second.get();
  }

  std::string names_text() const {
    std::string out;
    for (const auto& [name, p] : plugins_) out += (out.empty() ? "" : ", ") + name;
    return out;
  }

  std::string kind_;
  std::map<std::string, std::shared_ptr<const Plugin>> plugins_;
};

}  // namespace hit
