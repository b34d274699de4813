#pragma once
// Comm (one reusable communication) and Pattern (a group of Comms run together).

#include <memory>
#include <string>
#include <vector>

#include "hit/comm_types.hpp"

namespace hit {

// A reusable communication. Copies are handles to the same plan.
class Comm {
 public:
  Comm() = default;
  explicit Comm(std::shared_ptr<detail::CommPlan> plan) : plan_(std::move(plan)) {}

  void start();  // posts the transfers and returns
  void wait();   // completes them; received data is in the tiles
  void run() {
    start();
    wait();
  }
  bool is_null() const noexcept { return !plan_; }
  // Bytes this rank sends per run (what hit-layout's dry run predicts).
  std::size_t bytes_sent() const;
  std::size_t bytes_received() const;
  const std::string& name() const;

 private:
  std::shared_ptr<detail::CommPlan> plan_;
};

// A group of Comms run together: `ordered` runs them one after another (needed when one fills
// data the next sends, as halo corners do); `unordered` starts all then waits for all.
class Pattern {
 public:
  enum class Order { ordered, unordered };
  explicit Pattern(Order order = Order::unordered) : order_(order) {}
  Pattern& add(Comm comm) {
    comms_.push_back(std::move(comm));
    return *this;
  }
  void start();
  void wait();
  void run() {
    start();
    wait();
  }
  std::size_t size() const noexcept { return comms_.size(); }
  std::size_t bytes_sent() const;

 private:
  Order order_;
  std::vector<Comm> comms_;
  bool started_ = false;
};

}  // namespace hit
