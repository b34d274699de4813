#pragma once
// An in-order queue of work run by one host thread: the stream of an emulated device. Work of one
// stream runs in order; two streams run concurrently (copies overlap compute, as on a GPU). A task
// that throws stops the tasks after it (as a CUDA error is sticky) until synchronize() reports it.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace hit::detail {

class HostStream {
 public:
  HostStream() = default;
  ~HostStream();
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  void submit(std::function<void()> task);
  // Set once every task submitted before it has finished (or been skipped after an error).
  std::shared_future<void> marker();
  // Waits for every task submitted so far; rethrows the first error since the last call.
  void synchronize();
  // The same, waiting at most `timeout`: false when tasks are still pending.
  bool synchronize_for(std::chrono::microseconds timeout);

 private:
  struct Entry {
    std::function<void()> fn;
    bool always = false;  // markers run even after an error
  };
  void push(Entry e);
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Entry> queue_;
  bool busy_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;  // started at the first submit
};

}  // namespace hit::detail
