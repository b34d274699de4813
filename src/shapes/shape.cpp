#include "hit/shape.hpp"

#include <cctype>
#include <charconv>
#include <limits>
#include <sstream>
#include <vector>

namespace hit {

void Sig::throw_out_of_range(const std::string& what) const {
  throw Error(ErrorKind::invalid_argument,
              "signature " + str() + " " + what + " leaves the 64-bit index range");
}

std::string Sig::str() const {
  std::string out = "[" + std::to_string(begin_) + ":" + std::to_string(end_);
  if (stride_ != 1) out += ":" + std::to_string(stride_);
  return out + "]";
}

std::string Index::str() const {
  std::string out = "(";
  for (int k = 0; k < rank_; ++k) out += (k ? "," : "") + std::to_string((*this)[k]);
  return out + ")";
}

Shape Shape::extents(std::initializer_list<index_t> ext) {
  if (ext.size() == 0 || ext.size() > max_rank) {
    throw Error(ErrorKind::invalid_argument,
                "a shape has 1 to 8 axes, got " + std::to_string(ext.size()));
  }
  Shape s;
  for (index_t e : ext) s.sigs_[static_cast<std::size_t>(s.rank_++)] = Sig(0, e, 1);
  s.check_size();
  return s;
}

Shape Shape::of_rank(int rank) {
  if (rank < 1 || rank > max_rank) {
    throw Error(ErrorKind::invalid_argument,
                "a shape has 1 to 8 axes, got " + std::to_string(rank));
  }
  Shape s;
  s.rank_ = rank;
  return s;
}

namespace {

[[noreturn]] void parse_error(std::string_view text, const std::string& why) {
  throw Error(ErrorKind::parse, "cannot parse shape '" + std::string(text) + "': " + why +
                                    " (expected one [begin:end] or [begin:end:stride] per axis, "
                                    "1 to 8 axes, e.g. [0:10][0:20:2])");
}

}  // namespace

Shape Shape::parse(std::string_view text) {
  std::size_t pos = 0;
  auto skip_ws = [&] {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  std::vector<Sig> sigs;
  skip_ws();
  if (pos == text.size()) parse_error(text, "it is empty");
  while (pos < text.size()) {
    if (text[pos] != '[') parse_error(text, "expected '[' at position " + std::to_string(pos));
    ++pos;
    std::vector<index_t> numbers;
    for (;;) {
      skip_ws();
      index_t v = 0;
      const char* first = text.data() + pos;
      auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), v);
      if (ec != std::errc())
        parse_error(text, "expected an integer at position " + std::to_string(pos));
      pos += static_cast<std::size_t>(ptr - first);
      numbers.push_back(v);
      skip_ws();
      if (pos < text.size() && text[pos] == ':') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        break;
      }
      parse_error(text, "expected ':' or ']' at position " + std::to_string(pos));
    }
    if (numbers.size() > 3) parse_error(text, "an axis has at most begin:end:stride");
    if (sigs.size() == max_rank) parse_error(text, "more than 8 axes");
    try {
      if (numbers.size() == 1) {
        sigs.emplace_back(0, numbers[0], 1);
      } else {
        sigs.emplace_back(numbers[0], numbers[1], numbers.size() == 3 ? numbers[2] : 1);
      }
    } catch (const Error& e) {
      parse_error(text, "axis " + std::to_string(sigs.size()) + ": " + e.what());
    }
    skip_ws();
  }
  Shape s;
  for (const Sig& sig : sigs) s.sigs_[static_cast<std::size_t>(s.rank_++)] = sig;
  s.check_size();
  return s;
}

const Sig& Shape::sig(int axis) const {
  if (axis < 0 || axis >= rank_) {
    throw Error(
        ErrorKind::invalid_argument,
        "axis " + std::to_string(axis) + " is outside a shape of rank " + std::to_string(rank_));
  }
  return (*this)[axis];
}

Shape Shape::with_sig(int axis, const Sig& s) const {
  (void)sig(axis);
  Shape out = *this;
  out.sigs_[static_cast<std::size_t>(axis)] = s;
  out.check_size();
  return out;
}

void Shape::throw_too_large() const {
  std::string text;
  for (int k = 0; k < rank_; ++k) {
    const Sig& s = (*this)[k];
    text += "[" + std::to_string(s.begin()) + ":" + std::to_string(s.end()) +
            (s.stride() != 1 ? ":" + std::to_string(s.stride()) : "") + "]";
  }
  throw Error(ErrorKind::invalid_argument,
              "shape " + text + " has more than " +
                  std::to_string(std::numeric_limits<index_t>::max()) +
                  " elements (the product of its extents does not fit a 64-bit count)");
}

void Shape::require_same_rank(const Shape& o, const char* op) const {
  if (rank_ != o.rank_) {
    throw Error(ErrorKind::shape, std::string(op) + " of shapes of different ranks: " + str() +
                                      " (rank " + std::to_string(rank_) + ") and " + o.str() +
                                      " (rank " + std::to_string(o.rank_) + ")");
  }
}

bool Shape::includes(const Shape& o) const {
  if (o.rank_ == 0 || (o.empty() && o.rank_ == rank_)) return true;
  if (o.rank_ != rank_) return false;
  for (int k = 0; k < rank_; ++k) {
    if (!(*this)[k].includes(o[k])) return false;
  }
  return true;
}

Shape Shape::intersect(const Shape& o) const {
  if (rank_ == 0 || o.rank_ == 0) return Shape();
  require_same_rank(o, "intersection");
  Shape out = *this;
  for (int k = 0; k < rank_; ++k)
    out.sigs_[static_cast<std::size_t>(k)] = (*this)[k].intersect(o[k]);
  return out;
}

std::vector<Shape> Shape::subtract(const Shape& hole) const {
  if (rank_ == 0 || empty()) return {};
  if (hole.rank_ == 0 || hole.empty()) return {*this};
  require_same_rank(hole, "subtraction");
  std::vector<Shape> out;
  Shape rest = *this;
  for (int k = 0; k < rank_; ++k) {
    const Sig& along = rest[k];
    const Sig below = along.intersect(Sig(along.begin(), std::max(along.begin(), hole[k].begin())));
    const Sig above = along.intersect(Sig(std::min(along.end(), hole[k].last() + 1), along.end()));
    const Sig middle = along.intersect(Sig(hole[k].begin(), hole[k].last() + 1));
    if (!below.empty()) out.push_back(rest.with_sig(k, below));
    if (!above.empty()) out.push_back(rest.with_sig(k, above));
    if (middle.empty()) return out;  // the hole misses this shape: the slabs are all of it
    rest = rest.with_sig(k, middle);
  }
  return out;
}

Shape Shape::bounding(const Shape& o) const {
  if (rank_ == 0) return o;
  if (o.rank_ == 0) return *this;
  // Checked before the empty cases, so an empty operand of another rank is still an error.
  require_same_rank(o, "bounding union");
  if (empty()) return o;
  if (o.empty()) return *this;
  Shape out = *this;
  for (int k = 0; k < rank_; ++k)
    out.sigs_[static_cast<std::size_t>(k)] = (*this)[k].bounding(o[k]);
  out.check_size();
  return out;
}

Shape Shape::expand(index_t width) const {
  Shape out = *this;
  for (int k = 0; k < rank_; ++k) {
    out.sigs_[static_cast<std::size_t>(k)] = (*this)[k].expand(width, width);
  }
  out.check_size();
  return out;
}

Shape Shape::expand(int axis, index_t before, index_t after) const {
  return with_sig(axis, sig(axis).expand(before, after));
}

Shape Shape::displace(const Index& offset) const {
  if (offset.rank() != rank_) {
    throw Error(ErrorKind::shape, "displacement " + offset.str() + " has rank " +
                                      std::to_string(offset.rank()) + ", shape " + str() +
                                      " has rank " + std::to_string(rank_));
  }
  Shape out = *this;
  for (int k = 0; k < rank_; ++k) {
    out.sigs_[static_cast<std::size_t>(k)] = (*this)[k].displace(offset[k]);
  }
  return out;
}

Shape Shape::select_tile(const Shape& positions) const {
  require_same_rank(positions, "tile selection");
  Shape out = *this;
  for (int k = 0; k < rank_; ++k) {
    const Sig& p = positions[k];
    try {
      out.sigs_[static_cast<std::size_t>(k)] =
          (*this)[k].select_tile(p.begin(), p.end(), p.stride());
    } catch (const Error& e) {
      throw Error(e.kind(), "selecting " + positions.str() + " in tile coordinates of " + str() +
                                ": axis " + std::to_string(k) + ": " + e.what());
    }
  }
  return out;
}

Shape Shape::select_array(const Shape& sub) const {
  require_same_rank(sub, "array selection");
  if (!includes(sub)) {
    throw Error(ErrorKind::shape, "selection " + sub.str() + " is not inside " + str());
  }
  return sub;
}

Index Shape::first() const {
  Index i = Index::zeros(rank_);
  for (int k = 0; k < rank_; ++k) i[k] = (*this)[k].begin();
  return i;
}

namespace {

void require_index_rank(const Shape& s, const Index& i, const char* what) {
  if (i.rank() != s.rank()) {
    throw Error(ErrorKind::shape, std::string(what) + " " + i.str() + " has rank " +
                                      std::to_string(i.rank()) + ", shape " + s.str() +
                                      " has rank " + std::to_string(s.rank()));
  }
}

}  // namespace

Index Shape::to_tile(const Index& a) const {
  require_index_rank(*this, a, "array index");
  Index t = Index::zeros(rank_);
  for (int k = 0; k < rank_; ++k) t[k] = (*this)[k].to_tile(a[k]);
  return t;
}

Index Shape::to_array(const Index& t) const {
  require_index_rank(*this, t, "tile index");
  Index a = Index::zeros(rank_);
  for (int k = 0; k < rank_; ++k) a[k] = (*this)[k].to_array(t[k]);
  return a;
}

std::string Shape::str() const {
  if (rank_ == 0) return "[]";
  std::string out;
  for (int k = 0; k < rank_; ++k) out += (*this)[k].str();
  return out;
}

std::ostream& operator<<(std::ostream& os, const Sig& s) {
  return os << s.str();
}
std::ostream& operator<<(std::ostream& os, const Shape& s) {
  return os << s.str();
}
std::ostream& operator<<(std::ostream& os, const Index& i) {
  return os << i.str();
}

}  // namespace hit
