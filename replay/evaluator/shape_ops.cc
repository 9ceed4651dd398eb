// Data movement: broadcast, reshape, bitcast, transpose, slice, concatenate, pad, reverse,
// dynamic-slice, dynamic-update-slice, dynamic-reshape. All are type-agnostic copies of element
// bytes through one strided-copy kernel typed by element width.
#include <algorithm>

#include "replay/evaluator/eval_internal.h"

namespace hlowb::eval {
namespace {

template <typename T>
void StridedCopyT(const T* src, T* dst, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& sstrides, int64_t base) {
  int rank = static_cast<int>(dims.size());
  if (Product(dims) == 0) return;
  if (rank == 0) {
    dst[0] = src[base];
    return;
  }
  std::vector<int64_t> idx(rank, 0);
  int64_t inner = dims[rank - 1], is = sstrides[rank - 1];
  int64_t off = base, o = 0;
  while (true) {
    const T* s = src + off;
    if (is == 1) {
      std::memcpy(dst + o, s, inner * sizeof(T));
    } else {
      for (int64_t j = 0; j < inner; ++j) dst[o + j] = s[j * is];
    }
    o += inner;
    int d = rank - 2;
    for (; d >= 0; --d) {
      off += sstrides[d];
      if (++idx[d] < dims[d]) break;
      off -= sstrides[d] * dims[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

// dst (row-major over `dims`) [i] = src[base + sum idx[d] * sstrides[d]].
void StridedCopy(const Literal& src, Literal* dst, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& sstrides, int64_t base) {
  switch (src.element_bytes()) {
    case 1: StridedCopyT(src.data_as<uint8_t>(), dst->mutable_data_as<uint8_t>(), dims, sstrides, base); break;
    case 2: StridedCopyT(src.data_as<uint16_t>(), dst->mutable_data_as<uint16_t>(), dims, sstrides, base); break;
    case 4: StridedCopyT(src.data_as<uint32_t>(), dst->mutable_data_as<uint32_t>(), dims, sstrides, base); break;
    case 8: StridedCopyT(src.data_as<uint64_t>(), dst->mutable_data_as<uint64_t>(), dims, sstrides, base); break;
    case 16: StridedCopyT(src.data_as<c128>(), dst->mutable_data_as<c128>(), dims, sstrides, base); break;
  }
}

Shape ArrayOf(PrimitiveType t, const std::vector<int64_t>& dims) { return Shape::Array(t, dims); }

// Major-to-minor physical order of an array shape's dimensions.
std::vector<int64_t> PhysicalOrder(const Shape& s) {
  std::vector<int64_t> order;
  if (s.has_layout() && static_cast<int>(s.layout().minor_to_major.size()) == s.rank()) {
    order.assign(s.layout().minor_to_major.rbegin(), s.layout().minor_to_major.rend());
  } else {
    for (int i = 0; i < s.rank(); ++i) order.push_back(i);
  }
  return order;
}

bool IsIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace

Literal TransposeLiteral(const Literal& x, const std::vector<int64_t>& perm) {
  const auto& in_dims = x.shape().dimensions();
  std::vector<int64_t> out_dims(perm.size());
  std::vector<int64_t> in_strides = RowMajorStrides(in_dims), s(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out_dims[i] = in_dims[perm[i]];
    s[i] = in_strides[perm[i]];
  }
  Literal out(ArrayOf(x.shape().element_type(), out_dims));
  if (IsIdentity(perm)) {
    *out.mutable_data() = x.data();
  } else {
    StridedCopy(x, &out, out_dims, s, 0);
  }
  return out;
}

absl::StatusOr<Literal> EvalBroadcast(const Instruction& instr, const Literal& x) {
  const Shape& rs = instr.shape();
  const auto& map = instr.dimensions();
  if (static_cast<int>(map.size()) != x.shape().rank()) {
    return Invalid(instr, "broadcast dimensions do not match the operand's rank");
  }
  auto out = NewLiteral(ArrayOf(rs.element_type(), rs.dimensions()));
  if (!out.ok()) return out.status();
  std::vector<int64_t> in_strides = RowMajorStrides(x.shape().dimensions());
  std::vector<int64_t> s(rs.rank(), 0);
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i] < 0 || map[i] >= rs.rank() || rs.dimension(map[i]) != x.shape().dimension(i)) {
      return Invalid(instr, "broadcast dimension mapping is inconsistent");
    }
    s[map[i]] = in_strides[i];
  }
  StridedCopy(x, &*out, rs.dimensions(), s, 0);
  return out;
}

absl::StatusOr<Literal> Relabel(const Instruction& instr, const Literal& x) {
  const Shape& rs = instr.shape();
  if (!rs.IsArray()) return Unimplemented(instr, "reshape/bitcast to a non-array shape");
  Shape plain = ArrayOf(rs.element_type(), rs.dimensions());
  const PrimitiveType from = x.shape().element_type(), to = rs.element_type();
  if (from == to) {
    if (plain.ElementCount() != x.element_count()) {
      return Invalid(instr, "result and operand differ in element count");
    }
  } else {
    // After layout assignment XLA folds a bitcast-convert between types of one width into a
    // bitcast, so a bitcast may retype the buffer as long as the bytes stay the same. Sub-byte
    // types are held one per byte here, so their bits cannot be reinterpreted through bytes.
    const bool whole_bytes =
        BitWidth(from) == 8 * ByteWidth(from) && BitWidth(to) == 8 * ByteWidth(to);
    if (instr.opcode() != Opcode::kBitcast || !whole_bytes ||
        int64_t{ByteWidth(from)} * x.element_count() !=
            int64_t{ByteWidth(to)} * plain.ElementCount()) {
      return Invalid(instr, StrCat("result (", PrimitiveTypeName(to), ") and operand (",
                                   PrimitiveTypeName(from),
                                   ") differ in element type; only a bitcast between whole-byte "
                                   "types of the same total size may retype"));
    }
  }
  // A bitcast reinterprets the physical buffer: go through both layouts' physical orders.
  std::vector<int64_t> in_order = PhysicalOrder(x.shape());
  std::vector<int64_t> out_order =
      instr.opcode() == Opcode::kBitcast ? PhysicalOrder(rs) : std::vector<int64_t>{};
  if (instr.opcode() != Opcode::kBitcast) {
    for (int i = 0; i < rs.rank(); ++i) out_order.push_back(i);
    in_order.clear();
    for (int i = 0; i < x.shape().rank(); ++i) in_order.push_back(i);
  }
  Literal phys = TransposeLiteral(x, in_order);
  Literal out(plain);
  if (IsIdentity(out_order)) {
    *out.mutable_data() = std::move(*phys.mutable_data());
    return out;
  }
  std::vector<int64_t> phys_dims(out_order.size());
  for (size_t i = 0; i < out_order.size(); ++i) phys_dims[i] = rs.dimension(out_order[i]);
  Literal as_phys(ArrayOf(rs.element_type(), phys_dims));
  *as_phys.mutable_data() = std::move(*phys.mutable_data());
  std::vector<int64_t> inverse(out_order.size());
  for (size_t i = 0; i < out_order.size(); ++i) inverse[out_order[i]] = i;
  return TransposeLiteral(as_phys, inverse);
}

absl::StatusOr<Literal> EvalReshape(const Instruction& instr, const Literal& x) {
  return Relabel(instr, x);
}

absl::StatusOr<Literal> EvalTranspose(const Instruction& instr, const Literal& x) {
  const auto& perm = instr.dimensions();
  if (static_cast<int>(perm.size()) != x.shape().rank()) {
    return Invalid(instr, "transpose permutation does not match the operand's rank");
  }
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) {
      return Invalid(instr, "transpose dimensions are not a permutation");
    }
    seen[p] = true;
  }
  return TransposeLiteral(x, perm);
}

absl::StatusOr<Literal> EvalSlice(const Instruction& instr, const Literal& x) {
  const auto& sl = instr.attrs_or_default().slice;
  int rank = x.shape().rank();
  if (static_cast<int>(sl.size()) != rank) return Invalid(instr, "slice rank mismatch");
  std::vector<int64_t> dims(rank), s(rank);
  std::vector<int64_t> in_strides = RowMajorStrides(x.shape().dimensions());
  int64_t base = 0;
  for (int d = 0; d < rank; ++d) {
    const SliceDimension& sd = sl[d];
    if (sd.stride <= 0 || sd.start < 0 || sd.limit > x.shape().dimension(d) ||
        sd.start > sd.limit) {
      return Invalid(instr, StrCat("slice bounds out of range in dimension ", d));
    }
    dims[d] = (sd.limit - sd.start + sd.stride - 1) / sd.stride;
    s[d] = in_strides[d] * sd.stride;
    base += sd.start * in_strides[d];
  }
  Literal out(ArrayOf(x.shape().element_type(), dims));
  StridedCopy(x, &out, dims, s, base);
  return out;
}

absl::StatusOr<Literal> EvalConcatenate(const Instruction& instr, const Operands& ops) {
  if (instr.dimensions().size() != 1) return Invalid(instr, "concatenate needs one dimension");
  int64_t dim = instr.dimensions()[0];
  const Shape& rs = instr.shape();
  if (dim < 0 || dim >= rs.rank()) return Invalid(instr, "concatenate dimension out of range");
  auto out = NewLiteral(ArrayOf(rs.element_type(), rs.dimensions()));
  if (!out.ok()) return out.status();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= rs.dimension(d);
  for (int d = dim + 1; d < rs.rank(); ++d) inner *= rs.dimension(d);
  int eb = out->element_bytes();
  int64_t out_row = rs.dimension(dim) * inner * eb;
  int64_t offset = 0, total = 0;
  for (const Literal* op : ops) total += op->shape().rank() == rs.rank() ? op->shape().dimension(dim) : -1;
  if (total != rs.dimension(dim)) return Invalid(instr, "concatenate sizes do not add up");
  for (const Literal* op : ops) {
    int64_t row = op->shape().dimension(dim) * inner * eb;
    if (op->element_count() != outer * op->shape().dimension(dim) * inner) {
      return Invalid(instr, "concatenate operand shapes do not match");
    }
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out->mutable_data()->data() + o * out_row + offset,
                  op->data().data() + o * row, row);
    }
    offset += row;
  }
  return out;
}

absl::StatusOr<Literal> EvalPad(const Instruction& instr, const Literal& x, const Literal& pad) {
  const Shape& rs = instr.shape();
  const auto& cfg = instr.attrs_or_default().padding;
  int rank = x.shape().rank();
  if (!cfg || static_cast<int>(cfg->size()) != rank) return Invalid(instr, "pad config rank");
  auto out = NewLiteral(ArrayOf(rs.element_type(), rs.dimensions()));
  if (!out.ok()) return out.status();
  int eb = x.element_bytes();
  for (int64_t i = 0; i < out->element_count(); ++i) {
    std::memcpy(out->mutable_data()->data() + i * eb, pad.data().data(), eb);
  }
  if (x.element_count() == 0) return out;
  std::vector<int64_t> out_strides = RowMajorStrides(rs.dimensions());
  std::vector<int64_t> idx(rank, 0);
  int64_t i = 0;
  do {
    int64_t o = 0;
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      const PaddingDimension& p = (*cfg)[d];
      int64_t pos = p.low + idx[d] * (p.interior + 1);
      if (pos < 0 || pos >= rs.dimension(d)) {
        inside = false;
        break;
      }
      o += pos * out_strides[d];
    }
    if (inside) CopyElement(x, i, &*out, o);
    ++i;
  } while (NextIndex(idx, x.shape().dimensions()));
  return out;
}

absl::StatusOr<Literal> EvalReverse(const Instruction& instr, const Literal& x) {
  const auto& dims = x.shape().dimensions();
  std::vector<int64_t> s = RowMajorStrides(dims);
  int64_t base = 0;
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= x.shape().rank()) return Invalid(instr, "reverse dimension out of range");
    if (dims[d] == 0) continue;
    base += (dims[d] - 1) * s[d];
    s[d] = -s[d];
  }
  Literal out(ArrayOf(x.shape().element_type(), dims));
  StridedCopy(x, &out, dims, s, base);
  return out;
}

namespace {

// Start indices of dynamic-slice / dynamic-update-slice: one scalar per dimension (or a legacy
// rank-1 vector), clamped to [0, dim - size].
absl::StatusOr<std::vector<int64_t>> ClampedStarts(const Instruction& instr, const Operands& ops,
                                                   size_t first, const Shape& operand,
                                                   const std::vector<int64_t>& sizes) {
  int rank = operand.rank();
  std::vector<int64_t> starts(rank, 0);
  if (ops.size() == first + 1 && ops[first]->shape().rank() == 1) {
    if (ops[first]->element_count() != rank) return Invalid(instr, "start index vector size");
    for (int d = 0; d < rank; ++d) starts[d] = IndexValue(*ops[first], d);
  } else {
    if (ops.size() != first + rank) return Invalid(instr, "expected one start index per dimension");
    for (int d = 0; d < rank; ++d) starts[d] = IndexValue(*ops[first + d], 0);
  }
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] > operand.dimension(d) || sizes[d] < 0) {
      return Invalid(instr, StrCat("slice size exceeds the operand in dimension ", d));
    }
    starts[d] = std::clamp<int64_t>(starts[d], 0, operand.dimension(d) - sizes[d]);
  }
  return starts;
}

}  // namespace

absl::StatusOr<Literal> EvalDynamicSlice(const Instruction& instr, const Operands& ops) {
  const Literal& x = *ops[0];
  const auto& sizes = instr.attrs_or_default().slice_sizes;
  if (static_cast<int>(sizes.size()) != x.shape().rank()) {
    return Invalid(instr, "dynamic_slice_sizes rank mismatch");
  }
  auto starts = ClampedStarts(instr, ops, 1, x.shape(), sizes);
  if (!starts.ok()) return starts.status();
  std::vector<int64_t> s = RowMajorStrides(x.shape().dimensions());
  int64_t base = 0;
  for (size_t d = 0; d < sizes.size(); ++d) base += (*starts)[d] * s[d];
  Literal out(ArrayOf(x.shape().element_type(), sizes));
  StridedCopy(x, &out, sizes, s, base);
  return out;
}

absl::StatusOr<Literal> EvalDynamicUpdateSlice(const Instruction& instr, const Operands& ops) {
  const Literal& x = *ops[0];
  Literal out(ArrayOf(x.shape().element_type(), x.shape().dimensions()));
  *out.mutable_data() = x.data();
  Operands in_place = ops;
  in_place[0] = &out;
  if (absl::Status st = EvalDynamicUpdateSliceInPlace(instr, in_place, &out); !st.ok()) return st;
  return out;
}

absl::Status EvalDynamicUpdateSliceInPlace(const Instruction& instr, const Operands& ops,
                                           Literal* operand) {
  if (ops.size() < 2 || ops[0] != operand || !operand->shape().IsArray() || operand->elided()) {
    return Invalid(instr, "the updated operand is not an array with data");
  }
  const Literal& x = *operand;
  const Literal& upd = *ops[1];
  if (upd.shape().rank() != x.shape().rank() ||
      upd.shape().element_type() != x.shape().element_type()) {
    return Invalid(instr, "update does not match the operand's rank or type");
  }
  auto starts = ClampedStarts(instr, ops, 2, x.shape(), upd.shape().dimensions());
  if (!starts.ok()) return starts.status();
  if (upd.element_count() == 0) return absl::OkStatus();
  // Rows of the update's last dimension are contiguous in both.
  const std::vector<int64_t> s = RowMajorStrides(x.shape().dimensions());
  const int rank = upd.shape().rank();
  const int64_t row = rank == 0 ? 1 : upd.shape().dimension(rank - 1);
  const int64_t eb = x.element_bytes();
  std::vector<int64_t> idx(std::max(rank - 1, 0), 0);
  std::vector<int64_t> outer(upd.shape().dimensions().begin(),
                             rank == 0 ? upd.shape().dimensions().end()
                                       : upd.shape().dimensions().end() - 1);
  const uint8_t* from = upd.data().data();
  uint8_t* to = operand->mutable_data()->data();
  do {
    int64_t o = rank == 0 ? 0 : (*starts)[rank - 1] * s[rank - 1];
    for (size_t d = 0; d < idx.size(); ++d) o += ((*starts)[d] + idx[d]) * s[d];
    std::memcpy(to + o * eb, from, static_cast<size_t>(row * eb));
    from += row * eb;
  } while (NextIndex(idx, outer));
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvalDynamicReshape(const Instruction& instr, const Operands& ops) {
  // The result's static bounds hold the data row-major; sizes beyond the runtime sizes are
  // padding (XLA leaves them unspecified; here they are whatever the row-major copy puts there).
  const Literal& x = *ops[0];
  const Shape& rs = instr.shape();
  Literal out(ArrayOf(rs.element_type(), rs.dimensions()));
  int64_t n = 1;
  for (size_t k = 1; k < ops.size(); ++k) n *= IndexValue(*ops[k], 0);
  if (n != x.element_count() && out.element_count() != x.element_count()) {
    return Unimplemented(instr, "dynamic-reshape whose runtime sizes differ from the operand's");
  }
  int eb = x.element_bytes();
  std::memcpy(out.mutable_data()->data(), x.data().data(),
              std::min(out.element_count(), x.element_count()) * eb);
  return out;
}

}  // namespace hlowb::eval
