// The launch log: what every hit::launch of a run did, as records and totals per kernel.

#include "hit/devices/launch_log.hpp"

#include <iterator>
#include <utility>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"

namespace hit {

void LaunchLog::add(LaunchRecord record) {
  Totals& t = totals_[record.kernel];
  ++t.launches;
  t.seconds += record.seconds;
  t.kernel_seconds += record.kernel_seconds;
  t.bytes_in += record.bytes_in;
  t.bytes_out += record.bytes_out;
  if (capacity_ == 0) return;
  // Drop the older half at once: amortised constant time per launch.
  if (records_.size() >= capacity_) {
    records_.erase(records_.begin(),
                   records_.begin() + static_cast<std::ptrdiff_t>(records_.size() - capacity_ / 2));
  }
  records_.push_back(std::move(record));
}

const LaunchRecord& LaunchLog::last() const {
  if (records_.empty()) throw Error(ErrorKind::invalid_argument, "no launch has been recorded");
  return records_.back();
}

LaunchLog::Totals LaunchLog::totals(const std::string& kernel) const {
  auto it = totals_.find(kernel);
  return it == totals_.end() ? Totals{} : it->second;
}

void LaunchLog::clear() {
  records_.clear();
  totals_.clear();
}

LaunchLog& launch_log(Environment& env) {
  return env.extension<LaunchLog>();
}
LaunchLog& launch_log() {
  return launch_log(Environment::current());
}

}  // namespace hit
