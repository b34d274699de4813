// Staging between host tiles and device memory (see staging.hpp).

#include "devices/staging.hpp"

#include <algorithm>
#include <cstring>

namespace hit::detail {

index_t round_up(index_t a, index_t m) {
  return m <= 1 ? a : (a + m - 1) / m * m;
}

DeviceLayout device_layout(const Shape& region, std::size_t element_size, const Partition& p,
                           std::size_t row_alignment) {
  DeviceLayout d;
  d.region.shape = region;
  d.region.element_size = element_size;
  const int r = region.rank();
  for (int k = 0; k < r; ++k) {
    index_t e = region.extent(k);
    if (p.pad_to_blocks() && p.rank() == r) e = round_up(e, p.block_extent(k));
    d.alloc[static_cast<std::size_t>(k)] = std::max<index_t>(e, 1);
  }
  // Rows start row_alignment bytes apart when the element size divides it.
  index_t align_elems = 1;
  if (row_alignment > element_size && row_alignment % element_size == 0) {
    align_elems = static_cast<index_t>(row_alignment / element_size);
  }
  if (r >= 2) {
    d.alloc[static_cast<std::size_t>(r - 1)] =
        round_up(d.alloc[static_cast<std::size_t>(r - 1)], align_elems);
  }
  d.pitch = d.alloc[static_cast<std::size_t>(r - 1)];
  index_t s = 1;
  for (int k = r - 1; k >= 0; --k) {
    d.region.steps[static_cast<std::size_t>(k)] = s;
    s *= d.alloc[static_cast<std::size_t>(k)];
  }
  return d;
}

void copy_elements(const Region& to, const Region& from, const Shape& sub) {
  if (sub.empty()) return;
  const int r = sub.rank();
  const auto es = static_cast<index_t>(to.element_size);
  const std::array<index_t, max_rank> ta = to.steps_over(sub);
  const std::array<index_t, max_rank> fa = from.steps_over(sub);
  std::array<index_t, max_rank> ext{};
  for (int k = 0; k < r; ++k) ext[static_cast<std::size_t>(k)] = sub.extent(k);
  unsigned char* tb = to.byte_at(to.offset_of(sub));
  const unsigned char* fb = from.byte_at(from.offset_of(sub));
  const index_t width = sub.extent(r - 1);
  const auto tl = ta[static_cast<std::size_t>(r - 1)], fl = fa[static_cast<std::size_t>(r - 1)];
  detail::for_each_row(r, ext, ta, fa, [&](const detail::Steps&, index_t a, index_t b) {
    for (index_t j = 0; j < width; ++j) {
      std::memcpy(tb + (a + j * tl) * es, fb + (b + j * fl) * es, static_cast<std::size_t>(es));
    }
  });
}

void copy_region(Device& dev, bool to_device, const Region& host, const Region& device,
                 const Shape& sub, int stream, Packed& packed) {
  if (sub.empty()) return;
  const int r = sub.rank();
  const std::size_t es = host.element_size;
  const std::array<index_t, max_rank> hsteps = host.steps_over(sub);
  const std::array<index_t, max_rank> dsteps = device.steps_over(sub);
  const auto last = static_cast<std::size_t>(r - 1);
  if (hsteps[last] != 1 || dsteps[last] != 1) {
    auto buf = std::make_unique<PackedHost>();
    // The device elements from the first to the last of `sub` on every axis.
    Shape box = sub;
    for (int k = 0; k < r; ++k)
      box = box.with_sig(k, Sig(sub[k].begin(), sub[k].last() + 1, device.shape[k].stride()));
    if (to_device && !(box == sub)) {
      throw Error(ErrorKind::internal, "copies into a device cover whole staged rows");
    }
    buf->bytes.resize(static_cast<std::size_t>(box.size()) * es);
    buf->region = Region{buf->bytes.data(), es, box, dense_steps(box)};
    if (to_device) {
      copy_elements(buf->region, host, sub);
    } else {
      buf->scatter = true;
      buf->target = host;
      buf->sub = sub;
    }
    copy_region(dev, to_device, buf->region, device, box, stream, packed);
    packed.push_back(std::move(buf));
    return;
  }
  unsigned char* hbase = host.byte_at(host.offset_of(sub));
  unsigned char* dbase = device.byte_at(device.offset_of(sub));
  const index_t width = sub.extent(r - 1);
  // Merge the outer axes into rows where both sides are evenly spaced.
  int first_row_axis = std::max(0, r - 2);
  index_t rows = r >= 2 ? sub.extent(r - 2) : 1;
  while (first_row_axis > 0) {
    const auto k = static_cast<std::size_t>(first_row_axis - 1);
    const auto k1 = static_cast<std::size_t>(first_row_axis);
    if (hsteps[k] != hsteps[k1] * sub.extent(first_row_axis) ||
        dsteps[k] != dsteps[k1] * sub.extent(first_row_axis)) {
      break;
    }
    rows *= sub.extent(first_row_axis - 1);
    --first_row_axis;
  }
  const std::size_t hp =
      static_cast<std::size_t>(r >= 2 ? hsteps[static_cast<std::size_t>(r - 2)] : width) * es;
  const std::size_t dp =
      static_cast<std::size_t>(r >= 2 ? dsteps[static_cast<std::size_t>(r - 2)] : width) * es;
  const std::size_t wb = static_cast<std::size_t>(width) * es;
  const auto one = [&](index_t ha, index_t da) {
    unsigned char* h = hbase + ha * static_cast<index_t>(es);
    unsigned char* dv = dbase + da * static_cast<index_t>(es);
    if (to_device) {
      dev.copy_in(dv, dp, h, hp, wb, static_cast<std::size_t>(rows), stream);
    } else {
      dev.copy_out(h, hp, dv, dp, wb, static_cast<std::size_t>(rows), stream);
    }
  };
  if (first_row_axis == 0) {
    one(0, 0);
    return;
  }
  // One 2-D copy per combination of the axes before first_row_axis (for_each_row walks all
  // but its last axis: give it those axes and a dummy last one).
  std::array<index_t, max_rank> ext{};
  for (int k = 0; k < first_row_axis; ++k) ext[static_cast<std::size_t>(k)] = sub.extent(k);
  ext[static_cast<std::size_t>(first_row_axis)] = 1;
  detail::for_each_row(first_row_axis + 1, ext, hsteps, dsteps,
                       [&](const detail::Steps&, index_t ha, index_t da) { one(ha, da); });
}

void finish(const Packed& packed) {
  for (const auto& p : packed) {
    if (p->scatter) copy_elements(p->target, p->region, p->sub);
  }
}

Shape copy_back_region(const Shape& own, const Shape& domain) {
  if (own.rank() != domain.rank()) return own;
  const Shape meet = own.intersect(domain);
  return meet.empty() ? own : meet;
}

}  // namespace hit::detail
