#pragma once
// hit-packages' irregular workload: escape counts of the Mandelbrot set over an image, whose cost
// per row varies by two orders of magnitude (rows crossing the set run every iteration). Plain
// C++ shared by the cpu body, the cuda body (nvcc) and the serial reference of --check, so the
// three compute the same numbers bit for bit (every operation rounded on its own: mul_rn, add_rn).

#include "hit/view.hpp"

namespace hit::packages {

// The window of the complex plane the image covers: centred on (cx, cy), `span` high and 1.2
// `span` wide (the default shows the whole set).
struct Frame {
  index_t rows = 0;
  index_t cols = 0;
  int iters = 256;  // iterations at most
  double cx = -0.7;
  double cy = 0.0;
  double span = 2.5;
};

// Products and sums rounded one by one on every device. nvcc fuses `x * x - y * y + x0` into
// fused multiply-adds by default, which round once: near the set's edge a few escape counts then
// differed from the host's (seen on an H200, the --check failing at n = 4096). The intrinsics are
// never fused; the host build has no FMA unless built for a CPU that has it (HIT_NATIVE).
HIT_HOST_DEVICE inline double mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
HIT_HOST_DEVICE inline double add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// Iterations before z -> z^2 + c escapes |z| > 2, for pixel (i, j); `iters` when it never does.
HIT_HOST_DEVICE inline int escape_count(const Frame& f, index_t i, index_t j) {
  const double x0 =
      add_rn(f.cx, mul_rn(f.span, add_rn(mul_rn(1.2, add_rn(static_cast<double>(j), 0.5)) /
                                             static_cast<double>(f.cols),
                                         -0.6)));
  const double y0 = add_rn(
      f.cy, mul_rn(f.span, add_rn(add_rn(static_cast<double>(i), 0.5) / static_cast<double>(f.rows),
                                  -0.5)));
  double x = 0;
  double y = 0;
  int k = 0;
  while (k < f.iters && add_rn(mul_rn(x, x), mul_rn(y, y)) <= 4.0) {
    const double t = add_rn(add_rn(mul_rn(x, x), -mul_rn(y, y)), x0);
    y = add_rn(mul_rn(mul_rn(2.0, x), y), y0);
    x = t;
    ++k;
  }
  return k;
}

// The cuda body (mandelbrot_cuda.cu).
void mandelbrot_cuda(const KernelContext& ctx, const Frame& frame, View<double> out);
void mandelbrot_cuda(const KernelContext& ctx, const Frame& frame, View<float> out);

}  // namespace hit::packages
