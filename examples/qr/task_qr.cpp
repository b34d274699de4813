#include "task_qr.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <type_traits>

#include "hit/core/error.hpp"
#include "hit/device.hpp"

namespace hit::qr {

namespace {

// Every block bound of the layout on `axis`.
std::vector<index_t> block_bounds(const Layout& lay, int axis) {
  std::vector<index_t> out;
  for (int p = 0; p < lay.topology().grid_size(); ++p) {
    for (const Shape& b : lay.blocks(p)) {
      out.push_back(b[axis].begin());
      out.push_back(b[axis].end());
    }
  }
  return out;
}

std::vector<index_t> sorted_unique(std::vector<index_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

blasint blas(index_t v) {
  return static_cast<blasint>(v);
}

}  // namespace

QrTiling::QrTiling(const Layout& lay) {
  const index_t m = lay.shape().extent(0);
  const index_t n = lay.shape().extent(1);
  std::vector<index_t> rows = block_bounds(lay, 0);
  std::vector<index_t> cols = block_bounds(lay, 1);
  // The square part is cut the same on both axes, so that the diagonal tiles are square.
  std::vector<index_t> square = {0, n};
  for (const index_t c : rows) {
    if (c <= n) square.push_back(c);
  }
  for (const index_t c : cols) square.push_back(c);
  col_cuts_ = sorted_unique(square);
  rows.insert(rows.end(), col_cuts_.begin(), col_cuts_.end());
  rows.push_back(m);
  row_cuts_ = sorted_unique(rows);
}

Sig QrTiling::row_range(int i) const {
  return Sig(row_cuts_[static_cast<std::size_t>(i)], row_cuts_[static_cast<std::size_t>(i) + 1]);
}
Sig QrTiling::col_range(int j) const {
  return Sig(col_cuts_[static_cast<std::size_t>(j)], col_cuts_[static_cast<std::size_t>(j) + 1]);
}
index_t QrTiling::max_width() const {
  index_t w = 0;
  for (int j = 0; j < columns(); ++j) w = std::max(w, width(j));
  return w;
}

std::vector<int> rhs_owners(const QrTiling& tiling, const Layout& lay) {
  std::vector<int> o;
  const index_t last = tiling.col_range(tiling.columns() - 1).begin();
  for (int i = 0; i < tiling.rows(); ++i)
    o.push_back(lay.owner(Index{tiling.row_range(i).begin(), last}));
  return o;
}

template <class T>
runtime::TileId TaskQr<T>::a_id(int i, int j) const {
  return static_cast<runtime::TileId>(i) * (tiling_.columns() + 1) + j;
}
template <class T>
runtime::TileId TaskQr<T>::t_id(int i, int k) const {
  return a_id(tiling_.rows(), 0) + static_cast<runtime::TileId>(i) * tiling_.columns() + k;
}
template <class T>
runtime::TileId TaskQr<T>::q_id(int i, int j) const {
  return t_id(tiling_.rows(), 0) + static_cast<runtime::TileId>(i) * tiling_.columns() + j;
}

template <class T>
std::vector<int> TaskQr<T>::owners() const {
  const int mt = tiling_.rows(), nt = tiling_.columns();
  const auto owner = [&](int i, int j) {
    return lay_.owner(Index{tiling_.row_range(i).begin(), tiling_.col_range(j).begin()});
  };
  const std::vector<int> b = rhs_owners(tiling_, lay_);
  std::vector<int> o;
  for (int i = 0; i < mt; ++i) {
    for (int j = 0; j < nt; ++j) o.push_back(owner(i, j));
    o.push_back(b[static_cast<std::size_t>(i)]);
  }
  for (int i = 0; i < mt; ++i) {
    for (int k = 0; k < nt; ++k) o.push_back(owner(i, k));  // T
  }
  for (int i = 0; i < mt; ++i) {
    for (int j = 0; j < nt; ++j) o.push_back(owner(i, j));  // Q
  }
  return o;
}

template <class T>
std::vector<runtime::HostRows> TaskQr<T>::rows(std::vector<Tile<T>>* q) {
  const int mt = tiling_.rows(), nt = tiling_.columns();
  const auto of = [](const Tile<T>* tile, index_t rows, index_t cols) {
    const auto row_bytes = static_cast<std::size_t>(cols) * sizeof(T);
    runtime::HostRows r{nullptr, static_cast<std::size_t>(rows), row_bytes, row_bytes};
    if (tile && !tile->is_null()) {
      r.data = const_cast<T*>(tile->data());
      r.pitch_bytes = static_cast<std::size_t>(tile->step(0)) * sizeof(T);
    }
    return r;
  };
  std::vector<runtime::HostRows> out;
  for (int i = 0; i < mt; ++i) {
    for (int j = 0; j < nt; ++j)
      out.push_back(of(&tiles_[a_id(i, j)], tiling_.height(i), tiling_.width(j)));
    const Tile<T>* b = rhs_ ? &(*rhs_)[static_cast<std::size_t>(i)] : nullptr;
    out.push_back(of(b, has_rhs_ ? tiling_.height(i) : 0, 1));  // b's rows of tile row i
  }
  for (int i = 0; i < mt; ++i) {
    for (int k = 0; k < nt; ++k) {
      const index_t n = i >= k ? tiling_.width(k) : 0;
      const auto row_bytes = static_cast<std::size_t>(inner_block(n)) * sizeof(T);
      runtime::HostRows r{nullptr, static_cast<std::size_t>(n), row_bytes, row_bytes};
      auto& storage = factors_[static_cast<std::size_t>(t_id(i, k) - t_id(0, 0))];
      if (!storage.empty()) r.data = storage.data();
      out.push_back(r);
    }
  }
  for (int i = 0; i < mt; ++i) {
    for (int j = 0; j < nt; ++j) {
      const Tile<T>* t = q ? &(*q)[static_cast<std::size_t>(i * nt + j)] : nullptr;
      out.push_back(of(t, q ? tiling_.height(i) : 0, tiling_.width(j)));
    }
  }
  return out;
}

namespace {

// This process's tiles (i, j) as views of its blocks (null where another process holds one),
// row-major by tile, `per_row` tiles a row (the columns past the tiling's, b's, left null).
template <class T>
std::vector<Tile<T>> own_tiles(const QrTiling& tiling, std::vector<Tile<T>>& blocks,
                               const Layout& lay, int per_row) {
  const int rank = lay.local().rank;
  std::vector<Tile<T>> tiles;
  for (int i = 0; i < tiling.rows(); ++i) {
    for (int j = 0; j < per_row; ++j) {
      tiles.emplace_back();
      if (j >= tiling.columns()) continue;
      const Shape s = tiling.tile(i, j);
      if (lay.owner(s.first()) != rank) continue;
      const auto holder = std::find_if(blocks.begin(), blocks.end(),
                                       [&](const Tile<T>& b) { return b.shape().includes(s); });
      if (holder == blocks.end()) {
        throw Error(ErrorKind::internal, "hit-qr: no block holds tile " + s.str());
      }
      tiles.back() = holder->select(s);
    }
  }
  return tiles;
}

}  // namespace

template <class T>
TaskQr<T>::TaskQr(const QrTiling& tiling, std::vector<Tile<T>>& blocks, std::vector<Tile<T>>* rhs,
                  T tiny, Device& device, const Layout& lay, Environment& env)
    : tiling_(tiling),
      device_(device),
      comm_(env.comm()),
      lay_(lay),
      has_rhs_(rhs != nullptr),
      tiny_(tiny),
      runner_(env, kinds, "hit-qr"),
      owner_(owners()),
      tiles_(own_tiles(tiling, blocks, lay, tiling.columns() + 1)),
      factors_(static_cast<std::size_t>(tiling.rows()) *
               static_cast<std::size_t>(tiling.columns())),
      rhs_(rhs),
      flow_(comm_, owner_, rows_with_factors()) {
  submit_factorisation();
}

template <class T>
std::vector<runtime::HostRows> TaskQr<T>::rows_with_factors() {
  const int rank = lay_.local().rank;
  for (int i = 0; i < tiling_.rows(); ++i) {
    for (int k = 0; k <= std::min(i, tiling_.columns() - 1); ++k) {
      if (owner_[static_cast<std::size_t>(t_id(i, k))] != rank) continue;
      const index_t n = tiling_.width(k);
      factors_[static_cast<std::size_t>(t_id(i, k) - t_id(0, 0))].assign(
          static_cast<std::size_t>(n * inner_block(n)), T(0));
    }
  }
  return rows(nullptr);
}

template <class T>
void TaskQr<T>::submit_factorisation() {
  const int mt = tiling_.rows(), nt = tiling_.columns();
  const int last = has_rhs_ ? nt : nt - 1;  // the last tile column updated (b's with a solve)
  for (int k = 0; k < nt; ++k) {
    submit(flow_, steps_, {Kind::geqrt, k, k, k}, Apply::q_transposed);
    for (int j = k + 1; j <= last; ++j)
      submit(flow_, steps_, {Kind::larfb, k, j, k}, Apply::q_transposed);
    for (int i = k + 1; i < mt; ++i) {
      submit(flow_, steps_, {Kind::tsqrt, i, k, k}, Apply::q_transposed);
      for (int j = k + 1; j <= last; ++j) {
        submit(flow_, steps_, {Kind::ssrfb, i, j, k}, Apply::q_transposed);
      }
    }
  }
  if (!has_rhs_) return;
  // R·x = (Qᵀ·b)[0:n], backwards by tile rows: x_k in b's rows k, then taken from the rows above.
  for (int k = nt - 1; k >= 0; --k) {
    submit(flow_, steps_, {Kind::trsv, k, nt, k}, Apply::q_transposed);
    for (int i = 0; i < k; ++i) submit(flow_, steps_, {Kind::gemv, i, nt, k}, Apply::q_transposed);
  }
}

template <class T>
std::vector<runtime::TileAccess> TaskQr<T>::accesses(const Step& s, Apply apply) const {
  using runtime::Access;
  // The tiles an update writes: A's (or b's, column nt) while factorising, Q's while forming it.
  const auto target = [&](int i, int j) { return apply == Apply::q ? q_id(i, j) : a_id(i, j); };
  switch (s.kind) {
    case Kind::geqrt:
      return {{a_id(s.k, s.k), Access::read_write}, {t_id(s.k, s.k), Access::write}};
    case Kind::larfb:
      return {{a_id(s.k, s.k), Access::read},
              {t_id(s.k, s.k), Access::read},
              {target(s.k, s.j), Access::read_write}};
    case Kind::tsqrt:
      // Where tile (i, k) lives: the diagonal tile comes to it (and goes back) when another's.
      return {{a_id(s.k, s.k), Access::read_write},
              {a_id(s.i, s.k), Access::read_write},
              {t_id(s.i, s.k), Access::write}};
    case Kind::ssrfb:
      return {{a_id(s.i, s.k), Access::read},
              {t_id(s.i, s.k), Access::read},
              {target(s.k, s.j), Access::read_write},
              {target(s.i, s.j), Access::read_write}};
    case Kind::trsv:
      return {{a_id(s.k, s.k), Access::read}, {a_id(s.k, s.j), Access::read_write}};
    case Kind::gemv:
      break;
  }
  return {{a_id(s.i, s.k), Access::read},
          {a_id(s.k, s.j), Access::read},
          {a_id(s.i, s.j), Access::read_write}};
}

template <class T>
double TaskQr<T>::cost(const Step& s) const {
  const auto n = static_cast<double>(tiling_.width(s.k));
  const auto m = static_cast<double>(tiling_.height(s.i));
  const double c = s.j == tiling_.columns() ? 1.0 : static_cast<double>(tiling_.width(s.j));
  switch (s.kind) {
    case Kind::geqrt:
      return geqrt_flops(n);
    case Kind::tsqrt:
      return tsqrt_flops(m, n);
    case Kind::larfb:
      return larfb_flops(n, c);
    case Kind::ssrfb:
      return ssrfb_flops(m, n, c);
    case Kind::trsv:
      return n * n;
    case Kind::gemv:
      break;
  }
  return 2 * m * n;
}

template <class T>
void TaskQr<T>::submit(runtime::ProcessFlow& flow, std::vector<Step>& steps, const Step& s,
                       Apply apply) const {
  flow.add(accesses(s, apply), cost(s));
  steps.push_back(s);
}

template <class T>
const typename TaskQr<T>::Step& TaskQr<T>::step(const runtime::ProcessFlow& flow,
                                                const std::vector<Step>& steps, runtime::TaskId t) {
  const runtime::TaskId g = flow.global_task(t);
  if (g < 0) throw Error(ErrorKind::internal, "hit-qr: a message has no step");
  return steps[static_cast<std::size_t>(g)];
}

template <class T>
Shape TaskQr<T>::shape_of(runtime::TileId g) const {
  const int nt = tiling_.columns();
  if (g < t_id(0, 0)) {
    const auto i = static_cast<int>(g / (nt + 1));
    const auto j = static_cast<int>(g % (nt + 1));
    if (j == nt) {
      const index_t n = tiling_.col_range(nt - 1).end();
      return Shape{tiling_.row_range(i), Sig(n, n + 1)};
    }
    return tiling_.tile(i, j);
  }
  if (g < q_id(0, 0)) {
    const index_t n = tiling_.width(static_cast<int>((g - t_id(0, 0)) % nt));
    return Shape::extents({n, inner_block(n)});
  }
  const runtime::TileId q = g - q_id(0, 0);
  return tiling_.tile(static_cast<int>(q / nt), static_cast<int>(q % nt));
}

template <class T>
void TaskQr<T>::body(const runtime::ProcessFlow& flow, const Step& s, Apply apply,
                     runtime::TaskId t, runtime::DeviceTiles* copies) const {
  const std::vector<runtime::TileAccess> acc = accesses(s, apply);
  // Access a's tile as a kernel parameter: on the device's copy, or the host's.
  const auto view = [&]<class V>(std::size_t a) {
    const Shape shape = shape_of(acc[a].tile);
    const runtime::TileId local = flow.local_tile(t, a);
    if (copies) return copies->view<V>(local, shape);
    const runtime::HostRows& r = flow.host_rows(local);
    return make_view(static_cast<V*>(r.data), shape,
                     static_cast<index_t>(r.pitch_bytes / sizeof(T)));
  };
  const auto in = [&](std::size_t a) { return view.template operator()<const T>(a); };
  const auto out = [&](std::size_t a) { return view.template operator()<T>(a); };
  const DeviceKind kind = copies ? device_.kind() : DeviceKind::cpu;
  // The tiles it writes, for the device's launch geometry.
  const auto run = [&](const std::function<void(const KernelContext&)>& call) {
    if (!copies) return call(KernelContext{});
    runtime::execute_on(device_, to_box(shape_of(acc.back().tile)),
                        app::TileTaskRunner::task_bytes(flow, t), call);
  };
  switch (s.kind) {
    case Kind::geqrt: {
      const View<T> a = out(0), f = out(1);
      return run([&](const KernelContext& ctx) { runner_.body_of(geqrt_, kind)(ctx, a, f); });
    }
    case Kind::tsqrt: {
      const View<T> r = out(0), a = out(1), f = out(2);
      return run([&](const KernelContext& ctx) { runner_.body_of(tsqrt_, kind)(ctx, r, a, f); });
    }
    case Kind::larfb: {
      const View<const T> v = in(0), f = in(1);
      const View<T> c = out(2);
      return run(
          [&](const KernelContext& ctx) { runner_.body_of(larfb_, kind)(ctx, v, f, c, apply); });
    }
    case Kind::ssrfb: {
      const View<const T> v = in(0), f = in(1);
      const View<T> top = out(2), below = out(3);
      return run([&](const KernelContext& ctx) {
        runner_.body_of(ssrfb_, kind)(ctx, v, f, top, below, apply);
      });
    }
    case Kind::trsv: {
      const View<const T> r = in(0);
      const View<T> x = out(1);
      return run([&](const KernelContext&) { solve_diagonal(r, x, s.k); });
    }
    case Kind::gemv: {
      const View<const T> r = in(0), x = in(1);
      const View<T> y = out(2);
      return run([&](const KernelContext&) { subtract_product(r, x, y); });
    }
  }
}

template <class T>
void TaskQr<T>::solve_diagonal(const View<const T>& r, const View<T>& x, int k) const {
  // A diagonal element of R as small as the rounding of A's norm: A's columns are dependent up
  // to rounding, and x would be noise.
  for (index_t d = 0; d < r.rows(); ++d) {
    const T v = r.local(d, d);
    if (!(std::abs(v) > tiny_)) {
      throw Error(
          ErrorKind::invalid_argument,
          fmt::format("A is rank-deficient: R({0},{0}) = {1:.3g}, at most {2:.3g} (n eps "
                      "|A|_F): column {0} depends on the columns before it, and min "
                      "|A*x - b| has no unique solution (tile column {3})",
                      r.origin[0] + d, static_cast<double>(v), static_cast<double>(tiny_), k));
    }
  }
  if constexpr (std::is_same_v<T, double>) {
    cblas_dtrsv(CblasRowMajor, CblasUpper, CblasNoTrans, CblasNonUnit, blas(r.rows()), r.data,
                blas(r.pitch()), x.data, blas(x.pitch()));
  } else {
    cblas_strsv(CblasRowMajor, CblasUpper, CblasNoTrans, CblasNonUnit, blas(r.rows()), r.data,
                blas(r.pitch()), x.data, blas(x.pitch()));
  }
}

template <class T>
void TaskQr<T>::subtract_product(const View<const T>& r, const View<const T>& x,
                                 const View<T>& y) const {
  if constexpr (std::is_same_v<T, double>) {
    cblas_dgemv(CblasRowMajor, CblasNoTrans, blas(r.rows()), blas(r.cols()), -1.0, r.data,
                blas(r.pitch()), x.data, blas(x.pitch()), 1.0, y.data, blas(y.pitch()));
  } else {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, blas(r.rows()), blas(r.cols()), -1.0f, r.data,
                blas(r.pitch()), x.data, blas(x.pitch()), 1.0f, y.data, blas(y.pitch()));
  }
}

template <class T>
runtime::ExecutionReport TaskQr<T>::run() {
  return runner_.run(flow_, comm_, bodies(flow_, steps_, Apply::q_transposed));
}

template <class T>
app::TileTaskBodies TaskQr<T>::bodies(const runtime::ProcessFlow& flow,
                                      const std::vector<Step>& steps, Apply apply) const {
  return {.host = [this, &flow, &steps, apply](
                      runtime::TaskId t) { body(flow, step(flow, steps, t), apply, t, nullptr); },
          .device =
              [this, &flow, &steps, apply](runtime::TaskId t, runtime::DeviceTiles& copies) {
                body(flow, step(flow, steps, t), apply, t, &copies);
              },
          .kind = [&flow, &steps](
                      runtime::TaskId t) { return static_cast<int>(step(flow, steps, t).kind); }};
}

template <class T>
void TaskQr<T>::form_q(std::vector<Tile<T>>& q_blocks) {
  const int mt = tiling_.rows(), nt = tiling_.columns();
  std::vector<Tile<T>> q = own_tiles(tiling_, q_blocks, lay_, nt);
  // Q = Q_first ... Q_last applied to the first n columns of the identity: the block reflectors
  // backwards; columns left of tile column k are still the identity's there, and stay so.
  for (Tile<T>& t : q) {
    t.for_each([](const Index& i, T& v) { v = i[0] == i[1] ? T(1) : T(0); });
  }
  runtime::ProcessFlow flow(comm_, owner_, rows(&q));
  std::vector<Step> steps;
  for (int k = nt - 1; k >= 0; --k) {
    for (int i = mt - 1; i > k; --i) {
      for (int j = k; j < nt; ++j) submit(flow, steps, {Kind::ssrfb, i, j, k}, Apply::q);
    }
    for (int j = k; j < nt; ++j) submit(flow, steps, {Kind::larfb, k, j, k}, Apply::q);
  }
  runner_.run(flow, comm_, bodies(flow, steps, Apply::q));
}

template <class T>
double TaskQr<T>::flops() const {
  return app::TileTaskRunner::flops(flow_);
}

template <class T>
std::string TaskQr<T>::kind_name(runtime::TaskId t) const {
  if (flow_.global_task(t) < 0) return flow_.is_send(t) ? "send" : "receive";
  static const char* names[] = {"geqrt", "tsqrt", "larfb", "ssrfb", "trsv", "gemv"};
  return names[static_cast<std::size_t>(step(flow_, steps_, t).kind)];
}

template <class T>
std::string TaskQr<T>::describe(runtime::TaskId t) const {
  if (flow_.global_task(t) < 0) {
    return fmt::format("{} tile {} {} process {}", flow_.is_send(t) ? "send" : "receive",
                       shape_of(flow_.message_tile(t)).str(), flow_.is_send(t) ? "to" : "from",
                       flow_.message_peer(t));
  }
  const Step& s = step(flow_, steps_, t);
  return fmt::format("task {}: {} of tile ({},{}), column {}", flow_.global_task(t), kind_name(t),
                     s.i, s.j, s.k);
}

template class TaskQr<double>;
template class TaskQr<float>;

}  // namespace hit::qr
