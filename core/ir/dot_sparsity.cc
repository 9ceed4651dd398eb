#include "core/ir/dot_sparsity.h"

#include "core/support/strings.h"

namespace hlowb {
namespace {

bool ParseNumber(std::string_view s, int64_t* v) {
  if (s.empty() || s.size() > 9) return false;
  int64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    x = x * 10 + (c - '0');
  }
  *v = x;
  return true;
}

}  // namespace

std::string DotSparsity::ToString() const {
  return StrCat(operand == 0 ? "L." : "R.", dimension, "@", n, ":", m);
}

int64_t DotSparsity::BitsPerIndex() const {
  int64_t bits = 0;
  while ((int64_t{1} << bits) < m) ++bits;
  return bits;
}

absl::StatusOr<std::vector<DotSparsity>> ParseDotSparsity(std::string_view text) {
  std::vector<DotSparsity> out;
  auto bad = [&](std::string_view item, std::string_view why) {
    return absl::InvalidArgumentError(StrCat("sparsity descriptor '", item, "' in '", text,
                                             "': ", why));
  };
  if (text.empty()) return absl::InvalidArgumentError("empty sparsity descriptor");
  size_t pos = 0;
  while (true) {
    const size_t end = text.find('_', pos);
    const std::string_view item =
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    const size_t at = item.find('@');
    const size_t colon = item.find(':');
    DotSparsity d;
    if (item.size() < 7 || (item[0] != 'L' && item[0] != 'R') || item[1] != '.' ||
        at == std::string_view::npos || colon == std::string_view::npos || colon < at ||
        !ParseNumber(item.substr(2, at - 2), &d.dimension) ||
        !ParseNumber(item.substr(at + 1, colon - at - 1), &d.n) ||
        !ParseNumber(item.substr(colon + 1), &d.m)) {
      return bad(item, "expected L.<dimension>@<N>:<M> or R.<dimension>@<N>:<M>");
    }
    d.operand = item[0] == 'L' ? 0 : 1;
    for (const DotSparsity& o : out) {
      if (o.operand == d.operand) return bad(item, "the operand is sparse twice");
    }
    if (d.m < 2 || (d.m & (d.m - 1)) != 0 || d.n < 1 || d.n >= d.m) {
      return bad(item, "N:M needs M a power of two >= 2 and 0 < N < M");
    }
    if (d.n * d.BitsPerIndex() > 16) {
      return bad(item, StrCat("a group of ", d.n, ":", d.m, " needs ", d.n * d.BitsPerIndex(),
                              " index bits, more than a u16 metadata word holds"));
    }
    out.push_back(d);
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return out;
}

absl::StatusOr<int64_t> DenseSparseDimension(const DotSparsity& s, int64_t compressed) {
  if (compressed < 0 || compressed % s.n != 0) {
    return absl::InvalidArgumentError(StrCat("the sparse dimension ", s.dimension, " of size ",
                                             compressed, " is not a multiple of N = ", s.n,
                                             " (", s.ToString(), ")"));
  }
  return compressed / s.n * s.m;
}

int64_t MetadataDimension(const DotSparsity& s, int64_t compressed) {
  const int64_t per_word = s.KeptPerWord();
  return (compressed + per_word - 1) / per_word;
}

}  // namespace hlowb
