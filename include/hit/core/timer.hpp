#pragma once
// Wall-clock timing for launches, communications and benchmarks.

#include <chrono>

namespace hit {

class Timer {
 public:
  Timer() : start_(clock::now()) {}
  void restart() { start_ = clock::now(); }
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_;
};

// Accumulates the time of scoped regions into a total (per-rank compute and comm time).
class TimeAccumulator {
 public:
  class Scope {
   public:
    explicit Scope(double& total) : total_(total) {}
    ~Scope() { total_ += timer_.seconds(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    double& total_;
    Timer timer_;
  };
  Scope measure() { return Scope(total_); }
  double total() const noexcept { return total_; }
  void reset() noexcept { total_ = 0; }

 private:
  double total_ = 0;
};

}  // namespace hit
