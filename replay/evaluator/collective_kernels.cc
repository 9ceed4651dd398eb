// Typed loops behind the collective ops. The reduction walks the element range in tiles small
// enough to stay in L1, folding one device's tile after the other into the output tile, so a
// 64 MB all-reduce streams each input once instead of re-reading the output per device.
#include "replay/evaluator/collective_kernels.h"

#include <algorithm>
#include <cstring>

#include "core/ir/float_types.h"
#include "core/text/printer.h"
#include "replay/evaluator/eval_internal.h"

namespace hlowb {
namespace {

constexpr int64_t kTile = 2048;

using eval::DispatchNative;
using eval::Tag;

// Re-wraps sub-byte integers in [begin, end) after 8-bit arithmetic.
void NormalizeSubByteRange(Literal* l, int64_t begin, int64_t end) {
  PrimitiveType t = l->shape().element_type();
  int bits = BitWidth(t);
  uint8_t* d = l->mutable_data_as<uint8_t>();
  uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  for (int64_t i = begin; i < end; ++i) {
    uint8_t v = d[i] & mask;
    if (IsSignedIntegral(t) && ((v >> (bits - 1)) & 1)) v |= static_cast<uint8_t>(~mask);
    d[i] = v;
  }
}

template <typename T>
absl::Status TypedReduce(Opcode op, const std::vector<const Literal*>& inputs, Literal* out,
                         int64_t begin, int64_t end) {
  return eval::WithBinaryFn<T>(op, [&](auto fn) -> absl::Status {
    T* o = out->mutable_data_as<T>();
    const T* first = inputs[0]->data_as<T>();
    for (int64_t t = begin; t < end; t += kTile) {
      const int64_t te = std::min(end, t + kTile);
      std::memcpy(o + t, first + t, static_cast<size_t>(te - t) * sizeof(T));
      for (size_t g = 1; g < inputs.size(); ++g) {
        const T* a = inputs[g]->data_as<T>();
        for (int64_t i = t; i < te; ++i) o[i] = static_cast<T>(fn(o[i], a[i]));
      }
    }
    return absl::OkStatus();
  });
}

// f16, bf16, f8 and f4: the fold runs in f64 and the result is rounded to the type once, at
// the end. XLA's CPU backend does the same in f32 (it promotes 16-bit all-reduces, and has no
// narrower collective arithmetic), and TPUs accumulate 16-bit sums in f32; the order of a
// collective's reduction is not specified, so a fold that rounds after every step in rank
// order is no more correct, only further from the exact sum. For add, the f64 sum of the
// values of up to a few hundred devices is exact unless their exponents are far apart, so the
// result is the correctly rounded sum whatever the order.
absl::Status NarrowReduce(PrimitiveType type, Opcode op, const std::vector<const Literal*>& inputs,
                          Literal* out, int64_t begin, int64_t end) {
  return eval::WithBinaryFn<double>(op, [&](auto fn) -> absl::Status {
    if (ByteWidth(type) == 1) {
      double table[256];
      for (int b = 0; b < 256; ++b) table[b] = FloatBitsToDouble(type, static_cast<uint64_t>(b));
      uint8_t* o = out->mutable_data_as<uint8_t>();
      for (int64_t i = begin; i < end; ++i) {
        double acc = table[inputs[0]->data_as<uint8_t>()[i]];
        for (size_t g = 1; g < inputs.size(); ++g) {
          acc = fn(acc, table[inputs[g]->data_as<uint8_t>()[i]]);
        }
        o[i] = static_cast<uint8_t>(DoubleToFloatBits(type, acc));
      }
      return absl::OkStatus();
    }
    auto decode = [type](uint16_t bits) -> double {
      if (type == PrimitiveType::kBF16) {
        uint32_t wide = uint32_t{bits} << 16;
        float f;
        std::memcpy(&f, &wide, 4);
        return f;
      }
      return FloatBitsToDouble(type, bits);
    };
    auto encode = [type](double v) -> uint16_t {
      if (type == PrimitiveType::kBF16) return eval::DoubleToBF16Bits(v);
      return static_cast<uint16_t>(DoubleToFloatBits(type, v));
    };
    uint16_t* o = out->mutable_data_as<uint16_t>();
    for (int64_t i = begin; i < end; ++i) {
      double acc = decode(inputs[0]->data_as<uint16_t>()[i]);
      for (size_t g = 1; g < inputs.size(); ++g) {
        acc = fn(acc, decode(inputs[g]->data_as<uint16_t>()[i]));
      }
      o[i] = encode(acc);
    }
    return absl::OkStatus();
  });
}

// Dimensions of x split around `dim`: elements before, the dimension itself, bytes after.
struct Blocks {
  int64_t outer = 1;
  int64_t mid = 0;
  int64_t inner_bytes = 0;
};

Blocks SplitAt(const Literal& x, int64_t dim) {
  Blocks b;
  const auto& dims = x.shape().dimensions();
  int64_t inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d < dim) b.outer *= dims[d];
    if (d > dim) inner *= dims[d];
  }
  b.mid = dims[dim];
  b.inner_bytes = inner * x.element_bytes();
  return b;
}

}  // namespace

absl::StatusOr<ElementwiseReducer> ElementwiseReducer::Create(const Instruction& instr,
                                                              const Computation* reducer,
                                                              PrimitiveType type) {
  if (reducer == nullptr || reducer->root() == nullptr || reducer->parameter_count() != 2) {
    return absl::InvalidArgumentError(
        StrCat("collective ", eval::InstrRef(instr), " needs a to_apply computation of two "
               "scalar parameters"));
  }
  ElementwiseReducer r;
  r.instr_ = &instr;
  r.reducer_ = reducer;
  r.type_ = type;
  eval::ScalarComputation sc = eval::ScalarComputation::Analyze(reducer);
  if (sc.simple_binary && reducer->root()->shape().element_type() == type) {
    r.op_ = sc.op;
    if (eval::IsNarrowFloat(type)) {
      r.typed_ = eval::WithBinaryFn<double>(sc.op, [](auto) { return absl::OkStatus(); }).ok();
    } else if (IsArrayType(type)) {
      r.typed_ = DispatchNative(type, [&](auto tag) -> absl::Status {
                   using T = typename decltype(tag)::type;
                   return eval::WithBinaryFn<T>(sc.op, [](auto) { return absl::OkStatus(); });
                 }).ok();
    }
  }
  return r;
}

absl::Status ElementwiseReducer::Reduce(const std::vector<const Literal*>& inputs, Literal* out,
                                        int64_t begin, int64_t end,
                                        const ComputationCaller& call) const {
  if (inputs.empty()) return absl::InvalidArgumentError("reduction of no inputs");
  for (const Literal* in : inputs) {
    if (in->shape().element_type() != type_ || in->element_count() != out->element_count() ||
        !in->shape().IsArray()) {
      return absl::InvalidArgumentError(
          StrCat("the devices' operands of ", eval::InstrRef(*instr_),
                 " differ in shape (every device must contribute the same shape)"));
    }
  }
  begin = std::max<int64_t>(begin, 0);
  end = std::min(end, out->element_count());
  if (begin >= end) return absl::OkStatus();
  if (typed_) {
    if (eval::IsNarrowFloat(type_)) return NarrowReduce(type_, op_, inputs, out, begin, end);
    absl::Status st = DispatchNative(type_, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      return TypedReduce<T>(op_, inputs, out, begin, end);
    });
    if (st.ok() && eval::IsSubByteInt(type_)) NormalizeSubByteRange(out, begin, end);
    return st;
  }
  if (!call) {
    return absl::InternalError(StrCat("no evaluator to run the reducer of ",
                                      eval::InstrRef(*instr_)));
  }
  for (int64_t i = begin; i < end; ++i) {
    Literal acc = eval::ScalarFrom(*inputs[0], i);
    for (size_t g = 1; g < inputs.size(); ++g) {
      Literal x = eval::ScalarFrom(*inputs[g], i);
      auto r = call(*reducer_, {&acc, &x});
      if (!r.ok()) return r.status();
      if (!r->shape().IsArray() || r->element_count() != 1 ||
          r->shape().element_type() != type_) {
        return absl::InvalidArgumentError(
            StrCat("the to_apply computation ", reducer_->name(), " of ",
                   eval::InstrRef(*instr_), " must return one ", PrimitiveTypeName(type_),
                   " scalar"));
      }
      acc = std::move(*r);
    }
    eval::CopyElement(acc, 0, out, i);
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> SliceAlongDimension(const Literal& x, int64_t dim, int64_t start,
                                            int64_t size) {
  if (!x.shape().IsArray() || dim < 0 || dim >= x.shape().rank()) {
    return absl::InvalidArgumentError(StrCat("cannot slice dimension ", dim, " of a rank-",
                                             x.shape().rank(), " value"));
  }
  Blocks b = SplitAt(x, dim);
  if (start < 0 || size < 0 || start + size > b.mid) {
    return absl::InvalidArgumentError(StrCat("slice [", start, ", ", start + size,
                                             ") is outside dimension ", dim, " of size ", b.mid));
  }
  std::vector<int64_t> dims = x.shape().dimensions();
  dims[dim] = size;
  Literal out(Shape::Array(x.shape().element_type(), dims));
  const uint8_t* src = x.data().data();
  uint8_t* dst = out.mutable_data()->data();
  const size_t row = static_cast<size_t>(size * b.inner_bytes);
  for (int64_t o = 0; o < b.outer && row > 0; ++o) {
    std::memcpy(dst + o * row, src + (o * b.mid + start) * b.inner_bytes, row);
  }
  return out;
}

absl::Status ConcatenateAlongDimension(const std::vector<const Literal*>& parts, int64_t dim,
                                       Literal* out) {
  if (!out->shape().IsArray() || dim < 0 || dim >= out->shape().rank()) {
    return absl::InvalidArgumentError(StrCat("cannot concatenate along dimension ", dim));
  }
  int64_t total = 0;
  for (const Literal* p : parts) {
    if (!p->shape().IsArray() || p->shape().rank() != out->shape().rank() ||
        p->shape().element_type() != out->shape().element_type()) {
      return absl::InvalidArgumentError("concatenated values differ in element type or rank");
    }
    for (int64_t d = 0; d < out->shape().rank(); ++d) {
      if (d != dim && p->shape().dimension(static_cast<int>(d)) !=
                          out->shape().dimension(static_cast<int>(d))) {
        return absl::InvalidArgumentError(
            StrCat("concatenated values differ in dimension ", d, " (", PrintShape(p->shape(), false),
                   " into ", PrintShape(out->shape(), false), ")"));
      }
    }
    total += p->shape().dimension(static_cast<int>(dim));
  }
  if (total != out->shape().dimension(static_cast<int>(dim))) {
    return absl::InvalidArgumentError(
        StrCat("concatenating ", parts.size(), " values gives ", total, " along dimension ", dim,
               " but the result has ", out->shape().dimension(static_cast<int>(dim))));
  }
  Blocks ob = SplitAt(*out, dim);
  uint8_t* dst = out->mutable_data()->data();
  int64_t offset = 0;
  for (const Literal* p : parts) {
    const int64_t mid = p->shape().dimension(static_cast<int>(dim));
    const size_t row = static_cast<size_t>(mid * ob.inner_bytes);
    const uint8_t* src = p->data().data();
    for (int64_t o = 0; o < ob.outer && row > 0; ++o) {
      std::memcpy(dst + (o * ob.mid + offset) * ob.inner_bytes, src + o * row, row);
    }
    offset += mid;
  }
  return absl::OkStatus();
}

void CopyElementRange(const Literal& src, Literal* dst, int64_t begin, int64_t end) {
  if (begin >= end) return;
  const int eb = src.element_bytes();
  std::memcpy(dst->mutable_data()->data() + begin * eb, src.data().data() + begin * eb,
              static_cast<size_t>(end - begin) * eb);
}

}  // namespace hlowb
