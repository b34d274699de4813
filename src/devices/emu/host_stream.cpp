#include "devices/emu/host_stream.hpp"

namespace hit::detail {

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void HostStream::push(Entry e) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(e));
    if (!worker_.joinable()) worker_ = std::thread([this] { loop(); });
  }
  wake_.notify_one();
}

void HostStream::submit(std::function<void()> task) {
  push(Entry{std::move(task), false});
}

std::shared_future<void> HostStream::marker() {
  auto done = std::make_shared<std::promise<void>>();
  std::shared_future<void> f = done->get_future().share();
  push(Entry{[done] { done->set_value(); }, true});
  return f;
}

void HostStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

bool HostStream::synchronize_for(std::chrono::microseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!idle_.wait_for(lock, timeout, [this] { return queue_.empty() && !busy_; })) return false;
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
  return true;
}

void HostStream::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping with nothing left to do
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    const bool skip = error_ && !e.always;
    busy_ = true;
    lock.unlock();
    std::exception_ptr failure;
    if (!skip) {
      try {
        e.fn();
      } catch (...) {
        failure = std::current_exception();
      }
    }
    lock.lock();
    if (failure && !error_) error_ = failure;
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace hit::detail
