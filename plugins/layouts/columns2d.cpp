// `columns2d:w=...,b=B` / `columns2d:models=...,b=B`: a 2-D shape over the processes of any
// topology (taken as a list), one rectangle each, with areas in proportion to weights, and the
// smallest sum of half-perimeters among column arrangements (hit/fpm/columns.hpp), realised on a
// grid of B×B blocks.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "builtin.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/columns.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/partition.hpp"

namespace hit::detail {
namespace {

// Integer parts of `n` in proportion to `weights`, each at least 1 (the largest remainder rule,
// then one taken from the largest part for each part left at 0). Needs n >= weights.size().
std::vector<index_t> parts_at_least_one(const std::vector<double>& weights, index_t n) {
  std::vector<index_t> parts = parts_from_weights(weights, n);
  for (index_t& p : parts) {
    if (p > 0) continue;
    auto largest = std::max_element(parts.begin(), parts.end());
    --*largest;
    p = 1;
  }
  return parts;
}

class Columns2dLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "columns2d"; }
  std::string description() const override {
    return "shape axes 0 and 1 cut into one rectangle per process (the topology taken as a "
           "list), areas in proportion to the weights, arranged in columns with the smallest "
           "sum of half-perimeters (Beaumont et al.'s column-based arrangement), on b×b blocks";
  }
  std::vector<ParamInfo> params() const override {
    return {process_weights_param("weights, one per process; default: the models, else the "
                                  "device binding (an emulated device weighs 1/slowdown, "
                                  "others 1)",
                                  false),
            ParamInfo::text("models",
                            "model files (hit-fpm build), one per process: the areas are the "
                            "partition of the b×b blocks by `algorithm` (a model's unit is one "
                            "block)"),
            ParamInfo::text("algorithm", "partitioner of the models", "geometric"),
            model_kind_param(),
            ParamInfo::integer("b", "block size: rectangles are made of whole b×b blocks", "1")
                .at_least(1)
                .named("block size")};
  }

  // Weighed by the binding by default; by the speeds when models say more.
  std::vector<Spec> candidates(const CandidateContext& c) const override {
    if (c.model_files.empty()) return {Spec(name())};
    return {Spec(name()).with("w", c.weights())};
  }
  Layout make(const LayoutRequest& request) const override {
    const std::string spec = request.spec.str();
    const auto fail = [&](const std::string& why) {
      return Error(ErrorKind::plugin, fmt::format("layout '{}': {}", spec, why));
    };
    if (request.shape.rank() < 2) {
      throw Error(ErrorKind::shape, fmt::format("layout '{}' needs a shape of at least 2 axes, "
                                                "got {}",
                                                spec, request.shape.str()));
    }
    const std::int64_t b = request.spec.get_int("b", 1);  // >= 1
    const Topology& topo = request.topology;
    const int q = topo.grid_size();
    const Sig& rows = request.shape[0];
    const Sig& cols = request.shape[1];
    const index_t grid_rows = (rows.size() + b - 1) / b;
    const index_t grid_cols = (cols.size() + b - 1) / b;
    const std::vector<double> w = weights(request, q, grid_rows * grid_cols, fail);

    const fpm::ColumnArrangement arrangement = fpm::arrange_columns(w);
    const auto c = static_cast<index_t>(arrangement.columns.size());
    if (c > grid_cols) {
      throw fail(
          fmt::format("{} columns of rectangles over {} block columns of {} (b={}): use a "
                      "smaller b or fewer processes",
                      c, grid_cols, cols.str(), b));
    }
    std::vector<double> column_weights;
    for (const auto& column : arrangement.columns) {
      double sum = 0;
      for (const int i : column) sum += w[static_cast<std::size_t>(i)];
      column_weights.push_back(sum);
    }
    const std::vector<index_t> widths = parts_at_least_one(column_weights, grid_cols);

    std::vector<std::vector<Shape>> blocks(static_cast<std::size_t>(topo.procs()));
    index_t x = 0;
    for (std::size_t k = 0; k < arrangement.columns.size(); ++k) {
      const auto& column = arrangement.columns[k];
      if (static_cast<index_t>(column.size()) > grid_rows) {
        throw fail(
            fmt::format("a column of {} rectangles over {} block rows of {} (b={}): use "
                        "a smaller b or fewer processes",
                        column.size(), grid_rows, rows.str(), b));
      }
      std::vector<double> member_weights;
      for (const int i : column) member_weights.push_back(w[static_cast<std::size_t>(i)]);
      const std::vector<index_t> heights = parts_at_least_one(member_weights, grid_rows);
      const Sig col_sig = cols.select_tile(x * b, std::min((x + widths[k]) * b, cols.size()));
      index_t y = 0;
      for (std::size_t m = 0; m < column.size(); ++m) {
        const Sig row_sig = rows.select_tile(y * b, std::min((y + heights[m]) * b, rows.size()));
        Shape block = request.shape.with_sig(0, row_sig).with_sig(1, col_sig);
        blocks[static_cast<std::size_t>(column[m])].push_back(std::move(block));
        y += heights[m];
      }
      x += widths[k];
    }
    return Layout(topo, request.shape, request.spec, std::move(blocks));
  }

 private:
  template <class Fail>
  static std::vector<double> weights(const LayoutRequest& request, int q, index_t units,
                                     const Fail& fail) {
    if (request.spec.has("w") && request.spec.has("models")) {
      throw fail("give the weights w or the models, not both");
    }
    if (request.spec.has("w")) return process_weights(request, static_cast<std::size_t>(q));
    if (request.spec.has("models")) {
      const std::vector<std::string> files = request.spec.get_strings("models");
      if (files.size() != static_cast<std::size_t>(q)) {
        throw fail(
            fmt::format("{} model files for {} processes (give one per process)", files.size(), q));
      }
      try {
        const fpm::ModelKind kind =
            fpm::parse_model_kind(request.spec.get_string("kind", "piecewise"));
        std::vector<fpm::Model> models;
        for (const std::string& f : files) models.push_back(fpm::load_model(f, kind));
        const fpm::Distribution dist =
            fpm::partition(request.spec.get_string("algorithm", "geometric"), models, units);
        std::vector<double> w;
        for (const fpm::Part& p : dist.parts) w.push_back(static_cast<double>(p.d));
        return w;
      } catch (const Error& e) {
        throw Error(e.kind(), fmt::format("layout '{}': {}", request.spec.str(), e.what()));
      }
    }
    std::vector<double> w(static_cast<std::size_t>(q), 1.0);
    for (std::size_t p = 0; p < w.size() && p < request.devices.size(); ++p) {
      w[p] = binding_weight(request.devices[p]);
    }
    return w;
  }
};

}  // namespace

void register_columns2d_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<Columns2dLayout>());
}

}  // namespace hit::detail
