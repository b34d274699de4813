// The type-erased description of memory over a shape (hit/detail/region.hpp).
#include "hit/detail/region.hpp"

#include <algorithm>

namespace hit::detail {

bool Region::contiguous() const noexcept {
  index_t expected = 1;
  for (int k = shape.rank() - 1; k >= 0; --k) {
    const index_t e = shape.extent(k);
    if (e == 0) return true;
    if (e == 1) continue;
    if (steps[static_cast<std::size_t>(k)] != expected) return false;
    expected *= e;
  }
  return true;
}

index_t Region::offset_of(const Shape& sub) const noexcept {
  index_t off = 0;
  for (int k = 0; k < shape.rank(); ++k) {
    off += (sub[k].begin() - shape[k].begin()) / shape[k].stride() *
           steps[static_cast<std::size_t>(k)];
  }
  return off;
}

std::array<index_t, max_rank> Region::steps_over(const Shape& sub) const noexcept {
  std::array<index_t, max_rank> out = steps;
  for (int k = 0; k < shape.rank(); ++k) {
    // A single point keeps the region's step: its stride says nothing of its neighbours.
    if (sub[k].size() > 1) {
      out[static_cast<std::size_t>(k)] *= sub[k].stride() / shape[k].stride();
    }
  }
  return out;
}

Region Region::select(const Shape& sub) const noexcept {
  Region r;
  r.data = data == nullptr ? nullptr : byte_at(offset_of(sub));
  r.element_size = element_size;
  r.shape = sub;
  r.steps = steps_over(sub);
  return r;
}

std::array<index_t, max_rank> dense_steps(const Shape& s) {
  std::array<index_t, max_rank> out{};
  index_t st = 1;
  for (int k = s.rank() - 1; k >= 0; --k) {
    out[static_cast<std::size_t>(k)] = st;
    st *= std::max<index_t>(1, s.extent(k));
  }
  return out;
}

}  // namespace hit::detail
