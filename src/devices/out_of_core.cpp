// The out-of-core launch (docs/devices.md §8): tiles cut with the domain's rows are staged chunk by
// chunk through `buffers()` device buffers each, copies on one stream overlapping the compute of
// the previous chunk on the other; tiles not cut are staged whole once.

#include <algorithm>
#include <utility>
#include <vector>

#include "devices/launch_stages.hpp"
#include "devices/residency.hpp"

namespace hit::detail {
namespace {

constexpr int compute_stream = 0;
constexpr int copy_stream = 1;

// Which arguments a launch cuts with its domain's rows, and the rows around a chunk each reads.
class Cuts {
 public:
  Cuts(const Shape& domain, const std::vector<LaunchArg>& args)
      : args_(args), cut_(args.size(), false), halo_(args.size(), {0, 0}) {
    const Sig rows = domain[0];
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto& a = args[i];
      const auto reach = a.reads->axis(0);
      cut_[i] = !a.resident && !a.copied_back_whole && a.host.shape.rank() == domain.rank() &&
                !reach.whole && a.host.shape[0].stride() == rows.stride() &&
                a.host.shape[0].includes(rows);
      if (cut_[i]) halo_[i] = {reach.before, reach.after};
    }
  }

  bool operator[](std::size_t i) const { return cut_[i]; }
  index_t halo_rows(std::size_t i) const { return halo_[i].first + halo_[i].second; }
  // The rows of argument i staged for `chunk`: the chunk's, widened by what the kernel reads
  // around them, within the tile.
  Shape staged_region(std::size_t i, const Shape& chunk) const {
    const Shape& hs = args_[i].host.shape;
    const Sig r = chunk[0].expand(halo_[i].first, halo_[i].second).intersect(hs[0]);
    return hs.with_sig(0, r);
  }

 private:
  const std::vector<LaunchArg>& args_;
  std::vector<bool> cut_;
  std::vector<std::pair<index_t, index_t>> halo_;
};

// The partition with its chunks: the plug-in's, or chosen from the launch's footprint when the
// plug-in could not (a cut tile costs its rows and its halo in every buffer, a whole one its
// size once, a resident one nothing more).
Partition chunked(const Partition& p0, const std::vector<LaunchArg>& args, const Cuts& cut) {
  if (!p0.chunks().empty()) return p0;
  const Sig rows = p0.domain()[0];
  Footprint f;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& hs = args[i].host.shape;
    const auto one_row = hs.with_sig(0, Sig(rows.begin(), rows.begin() + 1, rows.stride()));
    const DeviceLayout d =
        device_layout(cut[i] ? one_row : hs, args[i].host.element_size, p0, p0.row_alignment());
    if (cut[i]) {
      f.bytes_per_row += d.bytes();
      f.fixed_bytes += static_cast<std::uint64_t>(cut.halo_rows(i)) * d.bytes() *
                       static_cast<std::uint64_t>(p0.buffers());
    } else if (!args[i].resident) {
      f.fixed_bytes += d.bytes();
    }
  }
  return p0.with_footprint(f);
}

// The device memory and the stages of one out-of-core launch.
class ChunkPipeline {
 public:
  ChunkPipeline(Device& dev, Partition p, const std::vector<LaunchArg>& args, const Cuts& cut,
                AllocationTally& tally)
      : dev_(dev),
        p_(std::move(p)),
        args_(args),
        cut_(cut),
        nbuf_(static_cast<std::size_t>(p_.buffers())),
        buffers_(dev, &tally),
        whole_(args.size()),
        bufs_(args.size()),
        buf_bytes_(args.size(), 0),
        drain_(dev) {}

  std::size_t chunks() const { return p_.chunks().size(); }

  // Stages the whole tiles once and gives each cut tile its buffers, as large as its largest
  // chunk. Returns the bytes the launch holds on the device.
  std::uint64_t stage_whole_tiles() {
    std::uint64_t fixed = 0;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (!cut_[i]) {
        whole_[i] = stage_whole(dev_, p_, args_[i], copy_stream, buffers_, packed_);
        fixed += whole_[i].layout.bytes();
        continue;
      }
      for (const Shape& c : p_.chunks()) {
        const DeviceLayout d = device_layout(cut_.staged_region(i, c), args_[i].host.element_size,
                                             p_, p_.row_alignment());
        buf_bytes_[i] = std::max(buf_bytes_[i], d.bytes());
      }
      for (std::size_t b = 0; b < nbuf_; ++b) bufs_[i].push_back(buffers_.get(buf_bytes_[i]));
    }
    fixed_bytes_ = fixed;
    return buffers_.bytes() + fixed;
  }

  // Chunk c's compute overlaps the copies in of chunk c + 1 (with more than one buffer) and is
  // followed by the copies out of its results.
  void run(const Invoke& invoke) {
    stage_in(0);
    for (std::size_t c = 0; c < chunks(); ++c) {
      compute(c, invoke);
      const bool next = c + 1 < chunks();
      if (nbuf_ == 1) {
        dev_.wait_for(copy_stream, compute_stream);
        stage_out(c);
        if (next) stage_in(c + 1);
      } else {
        if (next) stage_in(c + 1);  // overlaps the compute of chunk c
        dev_.wait_for(copy_stream, compute_stream);
        stage_out(c);
      }
    }
  }

  // Whole OUT/INOUT tiles come back once everything ran.
  void bring_back() {
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (!cut_[i]) {
        bring_back_whole(dev_, args_[i], whole_[i], p_.domain(), copy_stream, packed_);
      }
    }
    dev_.synchronize();
    finish(packed_);
  }

 private:
  void* buffer(std::size_t i, std::size_t c) const { return bufs_[i][c % nbuf_]; }
  DeviceLayout chunk_layout(std::size_t i, std::size_t c) const {
    return device_layout(cut_.staged_region(i, p_.chunks()[c]), args_[i].host.element_size, p_,
                         p_.row_alignment());
  }

  void stage_in(std::size_t c) {
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (!cut_[i]) continue;
      const DeviceLayout d = chunk_layout(i, c);
      if (args_[i].intent == Intent::out || p_.pad_to_blocks()) {
        dev_.fill_zero(buffer(i, c), buf_bytes_[i], copy_stream);
      }
      if (args_[i].intent != Intent::out) {
        copy_region(dev_, true, args_[i].host, d.at(buffer(i, c)), d.region.shape, copy_stream,
                    packed_);
      }
    }
  }

  void stage_out(std::size_t c) {
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (!cut_[i] || args_[i].intent == Intent::in) continue;
      copy_region(dev_, false, args_[i].host, chunk_layout(i, c).at(buffer(i, c)),
                  copy_back_region(args_[i].own, p_.chunks()[c]), copy_stream, packed_);
    }
  }

  // Runs chunk c on the compute stream once its copies in are done. The body is queued: it
  // holds its partition and views by value.
  void compute(std::size_t c, const Invoke& invoke) {
    std::vector<RawView> views;
    std::uint64_t chunk_bytes = fixed_bytes_;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (cut_[i]) {
        views.push_back(view_of<unsigned char>(chunk_layout(i, c).at(buffer(i, c))));
        chunk_bytes += buf_bytes_[i];
      } else {
        views.push_back(view_of<unsigned char>(whole_[i].layout.at(whole_[i].data)));
      }
    }
    const Partition pc = p_.chunk(c);
    dev_.wait_for(compute_stream, copy_stream);
    dev_.execute([dev = &dev_, pc, views, body = &invoke](
                     const ExecContext& ec) { run_blocks(*dev, pc, views, ec, *body); },
                 chunk_bytes, compute_stream);
  }

  Device& dev_;
  const Partition p_;
  const std::vector<LaunchArg>& args_;
  const Cuts& cut_;
  const std::size_t nbuf_;
  // Declared in this order so that the drain (queued work finishes) goes first, then the device
  // memory, and the bounce buffers last.
  Packed packed_;
  Buffers buffers_;
  std::vector<Staged> whole_;
  std::vector<std::vector<void*>> bufs_;
  std::vector<std::size_t> buf_bytes_;
  std::uint64_t fixed_bytes_ = 0;
  Drain drain_;
};

}  // namespace

void run_chunked(Device& dev, const Partition& p0, const std::vector<LaunchArg>& args,
                 const Invoke& invoke, LaunchRecord& rec, AllocationTally& tally) {
  const Cuts cut(p0.domain(), args);
  ChunkPipeline pipeline(dev, chunked(p0, args, cut), args, cut, tally);
  rec.chunks = pipeline.chunks();
  rec.problem_bytes = pipeline.stage_whole_tiles();
  pipeline.run(invoke);
  pipeline.bring_back();
}

}  // namespace hit::detail
