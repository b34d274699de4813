// hit-layout --advise (docs/advisor.md): the machine from --devices, --models, --network,
// --nodes and --host-cores; the candidates of the application; their predictions, corrected by
// the runs given to --calibrate; a ranked table or JSON on rank 0, and the best layout's picture.
#include "advise.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "../common/cli.hpp"
#include "advise_checks.hpp"
#include "hit/advisor/calibration.hpp"
#include "hit/advisor/candidates.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/network_model_file.hpp"
#include "hit/fpm/statistics.hpp"
#include "hit/layouts/layout_svg.hpp"
#include "hit/sparse/generate.hpp"
#include "hit/sparse/matrix_market.hpp"
#include "hit/sparse/sparse_layout_svg.hpp"
#include "hit/topology.hpp"
#include "hit/topology/device_params.hpp"
#include "report.hpp"

namespace hit::tools {
namespace {

using advisor::App;
using json = nlohmann::ordered_json;

std::string shell_quote(const std::string& s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_.:=,/-+").find(c) != std::string_view::npos;
  });
  if (plain && !s.empty()) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, fmt::format("--calibrate {}: cannot read the file", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The model files of --models: one per process, or one name with {rank}.
std::vector<std::string> model_files(const std::string& text, int procs) {
  if (text.empty()) return {};
  std::vector<std::string> files;
  if (text.find("{rank}") != std::string::npos) {
    for (int p = 0; p < procs; ++p) {
      std::string f = text;
      f.replace(f.find("{rank}"), 6, std::to_string(p));
      files.push_back(f);
    }
    return files;
  }
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    files.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (files.size() != static_cast<std::size_t>(procs)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--models: {} files for {} processes: give one per process, or one "
                            "name with {{rank}}",
                            files.size(), procs));
  }
  return files;
}

// Everything the advisor's machine is made of, as the options give it.
struct MachineSetup {
  const AdviseOptions& o;
  std::vector<fpm::Model> models;
  std::optional<fpm::NetworkModel> network;

  advisor::Machine make(std::vector<DeviceBinding> devices) const {
    advisor::Machine m(std::move(devices), o.nodes);
    if (!models.empty()) m.set_models(models);
    if (network) m.set_network(*network);
    m.set_host_cores(o.host_cores);
    return m;
  }
};

// The devices a result reports ("emu:0(slowdown=2) [emulated]") as a binding list.
std::vector<DeviceBinding> result_devices(const json& result, const std::string& file) {
  std::vector<std::string> items;
  for (const auto& d : result.at("devices")) {
    std::string text = d.get<std::string>();
    if (const auto cut = text.find(" ["); cut != std::string::npos) text.resize(cut);
    items.push_back(text);
  }
  if (items.empty()) {
    throw Error(ErrorKind::invalid_argument, fmt::format("--calibrate {}: no devices", file));
  }
  return parse_device_spec(fmt::format("{}", fmt::join(items, ",")), int(items.size()));
}

std::string result_layout(const json& r, App app) {
  if (app == App::cannon || app == App::summa) return r.at("layouts").at("c").get<std::string>();
  if (app == App::cg) return r.at("layout").at("spec").get<std::string>();
  return r.at("layout").get<std::string>();
}

// The app a result is of: its "app" field (hit-cg's result has a "matrix" instead).
std::string result_app(const json& r) {
  if (r.contains("app")) return r.at("app").get<std::string>();
  return r.contains("matrix") && r.contains("iterations") ? "cg" : "";
}

struct Inputs {
  App app;
  advisor::DenseProblem dense;
  std::optional<CsrRows<double>> rows;  // cg
  std::string matrix;                   // cg: the file or generator spec
};

// One --calibrate result, with what re-predicts it on the layout it ran for any calibration.
struct Measured {
  advisor::Machine machine;  // its devices, not calibrated
  std::function<advisor::Prediction(const advisor::Machine&)> predict;
  double time_s = 0;
  std::vector<double> compute_s;  // per process
  std::vector<double> comm_s;     // per process
  int iterations = -1;            // jacobi and cg: the run's
};

advisor::CandidateSpec result_spec(const json& r, App app) {
  return {result_layout(r, app), r.contains("topology")
                                     ? r.at("topology").at("name").get<std::string>()
                                     : std::string(app == App::cannon ? "square" : "array")};
}

Measured measured_run(const json& r, const std::string& file, const Inputs& in,
                      const MachineSetup& setup) {
  const std::string app = result_app(r);
  if (app != to_string(in.app)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--calibrate {}: a result of {}, not of --app {}", file,
                            app.empty() ? "an unknown program" : "hit-" + app, to_string(in.app)));
  }
  Measured m{setup.make(result_devices(r, file)), {}, r.at("time_s").get<double>(), {}, {}, -1};
  for (const auto& rank : r.at("per_rank")) {
    m.compute_s.push_back(rank.at("compute_s"));
    m.comm_s.push_back(rank.at("comm_s"));
  }
  advisor::RunShape run = in.dense.run;
  run.element_bytes = element_bytes(r.value("type", "double"));
  const advisor::CandidateSpec spec = result_spec(r, in.app);
  if (in.app == App::cg) {
    if (r.at("matrix").get<std::string>() != in.matrix) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--calibrate {}: a run on {}, not on {}", file,
                              r.at("matrix").get<std::string>(), in.matrix));
    }
    run.iterations = m.iterations = r.at("iterations").get<int>();
    // The layout and its halo are built once (collectively); the fit re-predicts them often.
    const Topology topo = topology(spec.topology, m.machine.procs());
    auto layout = std::make_shared<SparseLayout>(
        sparse_layout(spec.layout, topo, *in.rows, {.devices = m.machine.devices()}));
    auto halo = std::make_shared<std::vector<std::vector<PeerTraffic>>>(
        advisor::sparse_halo_traffic(*layout, *in.rows, Environment::current().comm()));
    m.predict = [layout, halo, run](const advisor::Machine& machine) {
      return advisor::predict_cg(*layout, *halo, machine, run);
    };
    return m;
  }
  advisor::DenseProblem p = in.dense;
  p.run = run;
  const index_t n = r.at("n").get<index_t>();
  if (in.app == App::cannon || in.app == App::summa) {
    p.shape = Shape::extents({n, r.at("k").get<index_t>()});
    p.inner = r.at("m").get<index_t>();
    if (in.app == App::summa) p.run.panel = r.at("panel").get<index_t>();
  } else {
    p.shape = Shape::extents({n, n});
    if (in.app == App::jacobi) p.run.iterations = m.iterations = r.at("iters").get<int>();
  }
  m.predict = [p, spec](const advisor::Machine& machine) {
    return advisor::predict_dense(p, machine, spec);
  };
  return m;
}

// A measured run re-predicted on the layout it ran, `calibration` applied (none: runs == 0).
advisor::Prediction predicted_with(const Measured& m, const advisor::Calibration& calibration) {
  advisor::Machine machine = m.machine;
  machine.set_calibration(calibration);
  return m.predict(machine);
}

// A process's predicted kernels as a result's compute_s measures them: without the turns on a
// shared device (compute_s leaves out the wait for it) and without the launches' overhead.
double kernels_alone(const advisor::Machine& machine, const advisor::ProcessCost& cost, int proc) {
  return (cost.compute_s - cost.launch_s) / machine.sharing_factor(proc);
}

// At most this many fits of the --calibrate results (calibrate): four settled them to half a
// percent on the benchmark's runs.
constexpr int calibration_rounds = 8;

// The fit of the --calibrate results: the compute factors from every process's compute, then
// each message's overhead from each result's makespan beyond its prediction (the median over
// the results). `iterations` becomes the first result's count (jacobi, cg) when
// --iters was not given, so the candidates are predicted for the run measured.
advisor::Calibration calibrate(const AdviseOptions& o, const Inputs& in, const MachineSetup& setup,
                               int& iterations) {
  std::vector<Measured> runs;
  for (const std::string& file : o.calibrate) {
    const std::string prefix = "--calibrate " + file + ":";
    try {
      const json result = json::parse(read_text(file));
      validate_result(result, file);
      runs.push_back(measured_run(result, file, in, setup));
      // What the result names (its layout and topology) is built here, so that its errors come
      // with the file, not later in the fit.
      (void)runs.back().predict(runs.back().machine);
    } catch (const json::exception& e) {
      throw Error(
          ErrorKind::parse,
          fmt::format("--calibrate {}: not a program's --json result ({})", file, e.what()));
    } catch (const Error& e) {
      // What the result names (a layout, a topology, devices) is checked by the code that
      // builds it: its message gains the file.
      if (std::string_view(e.what()).starts_with(prefix)) throw;
      throw Error(e.kind(), prefix + " " + e.what());
    }
  }
  // The factors scale the kernels, and what contention for cores makes of a kernel depends on
  // its length: fit again with the factors found so far applied until they settle.
  advisor::Calibration c;
  for (int round = 0; round < calibration_rounds; ++round) {
    std::vector<advisor::RunSample> samples;
    for (const Measured& m : runs) {
      const advisor::Machine& machine = m.machine;
      const advisor::Prediction predicted = predicted_with(m, c);
      advisor::RunSample s;
      for (int q = 0; q < machine.procs(); ++q) {
        // The factor scales the kernels: the launches' overhead, which a smaller share does
        // not shrink, is kept apart (fit_calibration).
        const advisor::ProcessCost& cost = predicted.procs.at(std::size_t(q));
        s.device_keys.push_back(machine.device_key(q));
        s.predicted_compute.push_back(kernels_alone(machine, cost, q));
        s.predicted_launch.push_back(cost.launch_s);
        s.measured_compute.push_back(m.compute_s.at(std::size_t(q)));
      }
      samples.push_back(std::move(s));
    }
    const advisor::Calibration correction = advisor::fit_calibration(samples);
    c = advisor::refined(c, correction);
    if (advisor::settled(correction, 0.005)) break;
  }
  std::vector<double> factors;
  for (const Measured& m : runs) {
    const auto predicted = [&](double message_s) {
      advisor::Calibration with = c;
      with.message_s = message_s;
      return predicted_with(m, with);
    };
    const advisor::Prediction base = predicted(0);
    const advisor::Prediction one = predicted(1);
    advisor::MessageSample sample{.predicted_s = base.predicted_s,
                                  .messages = one.comm_s - base.comm_s,
                                  .measured_s = m.time_s,
                                  .procs = {}};
    for (std::size_t q = 0; q < base.procs.size(); ++q) {
      const advisor::ProcessCost& cost = base.procs[q];
      sample.procs.push_back(
          {.measured_compute = m.compute_s.at(q),
           .measured_comm = m.comm_s.at(q),
           .predicted_compute = kernels_alone(m.machine, cost, int(q)) + cost.launch_s,
           .predicted_comm = cost.comm_s,
           .messages = one.procs[q].comm_s - cost.comm_s});
    }
    factors.push_back(advisor::fit_message_overhead(sample));
  }
  c.message_s = fpm::median(factors);
  if (o.iters < 0 && runs.front().iterations >= 0) iterations = runs.front().iterations;
  return c;
}

std::string command_of(const AdviseOptions& o, const AdviseInput& in, const Inputs& x,
                       const advisor::CandidateSpec& c, const std::string& devices, int procs) {
  std::string cmd = o.nodes > 0 ? fmt::format("HIT_NODES={} ", o.nodes) : std::string();
  cmd += fmt::format("mpiexec.mpich -n {} hit-{}", procs, to_string(x.app));
  const Shape& s = x.dense.shape;
  switch (x.app) {
    case App::cannon:
    case App::summa:
      cmd += fmt::format(" --n {} --m {} --k {}", s.extent(0),
                         x.dense.inner > 0 ? x.dense.inner : s.extent(0), s.extent(1));
      if (x.app == App::summa) {
        cmd += fmt::format(" --panel {} --topology {}", x.dense.run.panel, shell_quote(c.topology));
      }
      break;
    case App::jacobi:
      cmd += fmt::format(" --n {} --iters {} --topology {}", s.extent(0), x.dense.run.iterations,
                         shell_quote(c.topology));
      break;
    case App::cholesky:
      cmd += fmt::format(" --n {} --topology {}", s.extent(0), shell_quote(c.topology));
      break;
    case App::cg:
      cmd += in.generate.empty() ? " --matrix " + shell_quote(in.matrix)
                                 : " --generate " + shell_quote(in.generate);
      break;
  }
  cmd += " --layout " + shell_quote(c.layout) + " --devices " + shell_quote(devices);
  if (in.type != "double") cmd += " --type " + in.type;
  return cmd;
}

json calibration_json(const advisor::Calibration& c) {
  // A map of device key -> factor is a JSON object, empty or not.
  const auto object = [](const std::map<std::string, double>& factors) {
    json out = json::object();
    for (const auto& [key, f] : factors) out[key] = f;
    return out;
  };
  return {{"runs", c.runs},
          {"compute", object(c.compute)},
          {"launch", object(c.launch)},
          {"compute_other", c.compute_other},
          {"message_s", c.message_s}};
}

struct Report {
  const AdviseOptions& o;
  const AdviseInput& in;
  const Inputs& x;
  const advisor::Machine& machine;
  const advisor::Advice& advice;
  std::string devices;
};

json advice_json(const Report& r) {
  json candidates = json::array();
  for (const auto& c : r.advice.candidates) {
    const advisor::Prediction& p = c.prediction;
    json item = {{"layout", c.spec.layout},      {"topology", c.spec.topology},
                 {"predicted_s", p.predicted_s}, {"compute_s", p.compute_s},
                 {"comm_s", p.comm_s},           {"imbalance", p.imbalance},
                 {"max_bytes", p.max_bytes},     {"fits", p.fits}};
    if (!p.fits) item["fit_note"] = p.fit_note;
    if (r.o.per_process) {
      json procs = json::array();
      for (const advisor::ProcessCost& q : p.procs) {
        procs.push_back({{"compute_s", q.compute_s},
                         {"launch_s", q.launch_s},
                         {"comm_s", q.comm_s},
                         {"bytes", q.bytes}});
      }
      item["procs"] = std::move(procs);
    }
    item["command"] = command_of(r.o, r.in, r.x, c.spec, r.devices, r.machine.procs());
    candidates.push_back(std::move(item));
  }
  json rejected = json::array();
  for (const auto& j : r.advice.rejected) {
    rejected.push_back(
        {{"layout", j.spec.layout}, {"topology", j.spec.topology}, {"reason", j.reason}});
  }
  return {{"app", to_string(r.x.app)},
          {"problem", r.x.app == App::cg ? r.x.matrix : r.x.dense.shape.str()},
          {"procs", r.machine.procs()},
          {"devices", r.devices},
          {"models", r.machine.has_models()},
          {"network", r.o.network.empty() ? "assumed" : r.o.network},
          {"calibration", calibration_json(r.machine.calibration())},
          {"candidates", std::move(candidates)},
          {"rejected", std::move(rejected)}};
}

// A spec cut to the table's column (the JSON has it whole).
std::string shortened(const std::string& spec) {
  return spec.size() <= 44 ? spec : spec.substr(0, 41) + "...";
}

std::string advice_table(const Report& r) {
  const auto& c = r.machine.calibration();
  std::string out = fmt::format(
      "hit-layout --advise: {} on {}, {} processes ({}); network {}; {}\n", to_string(r.x.app),
      r.x.app == App::cg ? r.x.matrix : r.x.dense.shape.str(), r.machine.procs(), r.devices,
      r.o.network.empty() ? "assumed" : "from " + r.o.network,
      c.runs > 0 ? fmt::format("calibrated by {} run(s)", c.runs) : std::string("not calibrated"));
  out += fmt::format("{:>4}  {:<44} {:<8} {:>11} {:>10} {:>10} {:>9} {:>11}  {}\n", "rank",
                     "layout", "topology", "predicted_s", "compute_s", "comm_s", "imbalance",
                     "max memory", "fits");
  int shown = 0;
  for (const auto& cand : r.advice.candidates) {
    if (r.o.top > 0 && shown == r.o.top) break;
    const advisor::Prediction& p = cand.prediction;
    out += fmt::format("{:>4}  {:<44} {:<8} {:>11.4g} {:>10.4g} {:>10.4g} {:>9.3f} {:>11}  {}\n",
                       ++shown, shortened(cand.spec.layout), cand.spec.topology, p.predicted_s,
                       p.compute_s, p.comm_s, p.imbalance, human_bytes(double(p.max_bytes)),
                       p.fits ? "yes" : "no: " + p.fit_note);
  }
  if (!r.advice.rejected.empty()) {
    out += fmt::format("not applicable ({}):\n", r.advice.rejected.size());
    for (const auto& j : r.advice.rejected) {
      out += fmt::format("  {} on {}: {}\n", j.spec.layout, j.spec.topology, j.reason);
    }
  }
  if (!r.advice.candidates.empty()) {
    out +=
        "run the best:\n  " +
        command_of(r.o, r.in, r.x, r.advice.candidates.front().spec, r.devices, r.machine.procs()) +
        "\n";
  }
  return out;
}

}  // namespace

void add_advise_options(CLI::App& app, AdviseOptions& o) {
  app.add_flag("--advise", o.advise,
               "rank every applicable layout of --app by predicted makespan (docs/advisor.md)");
  app.add_option("--app", o.app, "with --advise: cannon, summa, jacobi, cg or cholesky");
  app.add_option("--models", o.models,
                 "with --advise: performance models (hit-fpm build), one file per process, "
                 "comma-separated, or one name with {rank}");
  app.add_option("--network", o.network, "with --advise: a network model (hit-fpm network)");
  constexpr long long int_most = std::numeric_limits<int>::max();
  app.add_option("--nodes", o.nodes, "with --advise: ranks per node (default: one node)")
      ->check(cli::count(1, int_most));
  app.add_option("--host-cores", o.host_cores,
                 "with --advise: host cores per node shared by the cpu and emu processes "
                 "(default: one each)")
      ->check(cli::count(1, int_most));
  app.add_option("--iters", o.iters,
                 "with --advise: iterations of jacobi and cg (default: the --calibrate results' "
                 "count, else 100)")
      ->check(cli::count(1, int_most));
  app.add_option("--inner", o.inner,
                 "with --advise: cannon and summa: the inner dimension m (A is n×m; default n)")
      ->check(cli::count(1));
  app.add_option("--panel", o.panel, "with --advise: summa's panel width")
      ->capture_default_str()
      ->check(cli::count(1));
  app.add_option("--top", o.top, "with --advise: rows of the table (default: all)")
      ->check(cli::count(1, int_most));
  app.add_flag("--per-process", o.per_process,
               "with --advise --json: each candidate's predicted compute, launches, "
               "communication and memory per process");
  app.add_option("--calibrate", o.calibrate,
                 "with --advise: results (a program's --json output) of runs on this machine, "
                 "to correct the predictions")
      ->expected(1, -1);
}

int advise(Environment& env, const AdviseOptions& o, const AdviseInput& in, int nprocs) {
  if (o.app.empty()) {
    throw Error(ErrorKind::invalid_argument,
                "--advise needs --app cannon|summa|jacobi|cg|cholesky");
  }
  Inputs x{advisor::parse_app(o.app), {}, {}, {}};
  const bool sparse = !in.matrix.empty() || !in.generate.empty();
  if ((x.app == App::cg) != sparse) {
    throw Error(ErrorKind::invalid_argument,
                x.app == App::cg ? std::string("--app cg needs --matrix or --generate")
                                 : fmt::format("--app {} needs --shape (--matrix and --generate "
                                               "are for cg)",
                                               o.app));
  }
  if (nprocs > max_layout_blocks) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("--procs {}: hitmap++ allows at most {} processes", nprocs, max_layout_blocks));
  }
  require_room_for_dry_runs(x.app, 0, nprocs, env.comm());
  std::string devices_text = in.devices;
  if (devices_text.empty()) devices_text = env.config().get("devices").value_or("cpu");
  const std::vector<DeviceBinding> devices = parse_device_spec(devices_text, nprocs);
  const std::string devices_shown = format_device_spec(devices);

  const std::vector<std::string> files = model_files(o.models, nprocs);
  MachineSetup setup{o, {}, {}};
  for (const auto& f : files) setup.models.push_back(fpm::load_model(f));
  if (!o.network.empty()) setup.network = fpm::load_network_model(o.network);
  advisor::Machine machine = setup.make(devices);
  if (setup.network) require_link_classes(*setup.network, o.network, machine, o.nodes);

  x.dense.run.element_bytes = element_bytes(in.type);
  x.dense.run.iterations = o.iters >= 0 ? o.iters : 100;
  x.dense.run.panel = o.panel;
  if (sparse) {
    const auto generator =
        in.generate.empty() ? std::nullopt : std::optional(GeneratorSpec::parse(in.generate));
    x.matrix = generator ? generator->str() : in.matrix;
    x.rows = generator ? generate_rows<double>(*generator, env.comm())
                       : read_matrix_market<double>(in.matrix, env.comm());
    if (x.rows->global_rows != x.rows->global_cols) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--advise --app cg: hit-cg solves square matrices, {} is {} x {}",
                              x.matrix, x.rows->global_rows, x.rows->global_cols));
    }
  } else {
    x.dense.app = x.app;
    x.dense.shape = Shape::parse(in.shape);
    require_runnable_shape(x.app, x.dense.shape, in.shape);
    x.dense.inner = o.inner;
  }
  if (!o.calibrate.empty()) {
    int iterations = x.dense.run.iterations;
    machine.set_calibration(calibrate(o, x, setup, iterations));
    x.dense.run.iterations = iterations;
  }

  advisor::CandidateOptions copts{files, 0};
  const double eb = double(x.dense.run.element_bytes);
  if (sparse) {
    // The matrix's values and column indices, over every rank's rows.
    double nonzeros = double(x.rows->nonzeros());
    allreduce_in_place(&nonzeros, 1, MPI_DOUBLE, MPI_SUM, env.comm());
    copts.share_bytes = nonzeros * (eb + 8) / nprocs;
  } else {
    // The arrays an even share holds: Jacobi's two grids, the products' three matrices.
    const double arrays = x.app == App::jacobi ? 2 : x.app == App::cholesky ? 1 : 3;
    copts.share_bytes = double(x.dense.shape.size()) * eb * arrays / nprocs;
  }
  const std::vector<advisor::CandidateSpec> specs =
      sparse ? advisor::sparse_candidates(env, machine, copts)
             : advisor::dense_candidates(env, x.app, machine, copts);
  require_room_for_dry_runs(x.app, specs.size(), nprocs, env.comm());
  const advisor::Advice advice = sparse
                                     ? advisor::advise_sparse(*x.rows, machine, x.dense.run, specs)
                                     : advisor::advise_dense(x.dense, machine, specs);
  require_candidates(advice, x.app);
  const Report report{o, in, x, machine, advice, devices_shown};
  hit::collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    if (!in.svg.empty() && !advice.candidates.empty()) {
      const auto& best = advice.candidates.front().spec;
      const Topology topo = topology(best.topology, nprocs);
      if (sparse) {
        throw Error(ErrorKind::invalid_argument, "--svg with --advise draws dense layouts only");
      }
      const Layout l = layout(best.layout, topo, x.dense.shape, {.devices = devices});
      write_file_atomically(
          in.svg, layout_svg(l, "hit-layout --advise: the best " + o.app + " layout", devices));
    }
    if (in.json) {
      fmt::print("{}\n", advice_json(report).dump());
    } else {
      fmt::print("{}", advice_table(report));
    }
    std::fflush(stdout);
  });
  return 0;
}

}  // namespace hit::tools
