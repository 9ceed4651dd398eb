// reduce (variadic), reduce-window and select-and-scatter. A reducer that is a plain binary op
// of its two parameters (add, multiply, max, min, and, or, xor) runs as a typed loop; any other
// reducer (variadic argmax, custom logic) runs through the interpreter on scalars. Elements are
// combined per output in row-major order of the reduced (or window) positions, starting from
// the init value, as XLA's interpreter does.
#include <functional>

#include "core/ir/float_types.h"
#include "replay/evaluator/eval_internal.h"
#include "replay/evaluator/semantics.h"

namespace hlowb::eval {
namespace {

// For each output element (row-major), calls visit(out_linear, positions) where positions is
// the list of input linear indices combined into it, in order. Shared by reduce and
// reduce-window through `Enumerate`.
struct ReduceGeometry {
  std::vector<int64_t> out_dims;
  // reduce: kept dims map; window: per-dim window params.
  std::function<void(const std::vector<int64_t>& out_idx, std::vector<int64_t>* positions)> inputs;
};

// Typed fast path: one input, simple binary reducer.
template <typename T, typename Round>
absl::Status FastReduce(const ReduceGeometry& g, const Literal& in, const Literal& init,
                        Literal* out, Opcode op, Round round) {
  return WithBinaryFn<T>(op, [&](auto fn) -> absl::Status {
    const T* a = in.data_as<T>();
    T* o = out->mutable_data_as<T>();
    T init_v = init.data_as<T>()[0];
    std::vector<int64_t> idx(g.out_dims.size(), 0), positions;
    int64_t n = Product(g.out_dims);
    for (int64_t i = 0; i < n; ++i) {
      g.inputs(idx, &positions);
      T acc = init_v;
      for (int64_t p : positions) acc = round(static_cast<T>(fn(acc, a[p])));
      o[i] = acc;
      NextIndex(idx, g.out_dims);
    }
    return absl::OkStatus();
  });
}

// reduce's typed fast path: walks the input once in row-major order, combining each element
// into its output slot. Per output, elements still combine in row-major order of the reduced
// positions, and the walk is cache-friendly for row and column reductions alike.
template <typename T, typename Round>
absl::Status LinearReduce(const Literal& in, const std::vector<int64_t>& out_stride_per_dim,
                          const Literal& init, Literal* out, Opcode op, Round round) {
  return WithBinaryFn<T>(op, [&](auto fn) -> absl::Status {
    const T* a = in.data_as<T>();
    T* o = out->mutable_data_as<T>();
    T init_v = init.data_as<T>()[0];
    for (int64_t i = 0; i < out->element_count(); ++i) o[i] = init_v;
    const auto& dims = in.shape().dimensions();
    int rank = static_cast<int>(dims.size());
    if (in.element_count() == 0) return absl::OkStatus();
    if (rank == 0) {
      o[0] = round(static_cast<T>(fn(o[0], a[0])));
      return absl::OkStatus();
    }
    std::vector<int64_t> idx(rank, 0);
    int64_t inner = dims[rank - 1], is = out_stride_per_dim[rank - 1];
    int64_t off = 0, i = 0;
    while (true) {
      T* orow = o + off;
      if (is == 0) {
        T acc = orow[0];
        for (int64_t j = 0; j < inner; ++j) acc = round(static_cast<T>(fn(acc, a[i + j])));
        orow[0] = acc;
      } else {
        for (int64_t j = 0; j < inner; ++j) orow[j] = round(static_cast<T>(fn(orow[j], a[i + j])));
      }
      i += inner;
      int d = rank - 2;
      for (; d >= 0; --d) {
        off += out_stride_per_dim[d];
        if (++idx[d] < dims[d]) break;
        off -= out_stride_per_dim[d] * dims[d];
        idx[d] = 0;
      }
      if (d < 0) break;
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<Literal> RunReduction(Evaluator& ev, const Instruction& instr, const Operands& ops,
                                     const ReduceGeometry& g) {
  size_t n_in = ops.size() / 2;
  const Computation* comp =
      instr.called_computations().empty() ? nullptr : instr.called_computations()[0];
  if (comp == nullptr) return Invalid(instr, "missing to_apply");
  std::vector<Literal> outs;
  for (size_t k = 0; k < n_in; ++k) {
    auto o = NewLiteral(Shape::Array(ops[n_in + k]->shape().element_type(), g.out_dims));
    if (!o.ok()) return o.status();
    outs.push_back(std::move(*o));
  }
  ScalarComputation sc = ScalarComputation::Analyze(comp);
  if (n_in == 1 && sc.simple_binary &&
      ops[0]->shape().element_type() == ops[1]->shape().element_type() &&
      comp->root()->shape().element_type() == ops[0]->shape().element_type()) {
    PrimitiveType t = ops[0]->shape().element_type();
    absl::Status st;
    if (IsNarrowFloat(t)) {
      Literal win = WidenToF64(*ops[0]), wini = WidenToF64(*ops[1]);
      Literal wout(Shape::Array(PrimitiveType::kF64, g.out_dims));
      st = FastReduce<double>(g, win, wini, &wout, sc.op,
                              [t](double v) { return RoundThrough(t, v); });
      if (st.ok()) return NarrowFromF64(wout, t);
    } else {
      st = DispatchNative(t, [&](auto tag) -> absl::Status {
        using T = typename decltype(tag)::type;
        return FastReduce<T>(g, *ops[0], *ops[1], &outs[0], sc.op, [](T v) { return v; });
      });
      if (st.ok()) {
        if (IsSubByteInt(t)) NormalizeSubByte(&outs[0]);
        return std::move(outs[0]);
      }
    }
  }
  // General path through the interpreter.
  std::vector<int64_t> idx(g.out_dims.size(), 0), positions;
  int64_t n = Product(g.out_dims);
  std::vector<Literal> acc(n_in), elems(n_in);
  Operands args(2 * n_in);
  for (int64_t i = 0; i < n; ++i) {
    g.inputs(idx, &positions);
    for (size_t k = 0; k < n_in; ++k) acc[k] = *ops[n_in + k];
    for (int64_t p : positions) {
      for (size_t k = 0; k < n_in; ++k) {
        elems[k] = ScalarFrom(*ops[k], p);
        args[k] = &acc[k];
        args[n_in + k] = &elems[k];
      }
      auto r = ev.CallScalar(*comp, args);
      if (!r.ok()) return r.status();
      if (n_in == 1) {
        if (r->shape().IsTuple()) return Invalid(instr, "reducer returns a tuple for one input");
        acc[0] = std::move(*r);
      } else {
        if (!r->shape().IsTuple() || r->tuple_elements().size() != n_in) {
          return Invalid(instr, "variadic reducer must return a tuple of one scalar per input");
        }
        for (size_t k = 0; k < n_in; ++k) acc[k] = r->tuple_elements()[k];
      }
    }
    for (size_t k = 0; k < n_in; ++k) {
      if (acc[k].shape().element_type() != outs[k].shape().element_type()) {
        return Invalid(instr, "reducer result type differs from the init value's type");
      }
      CopyElement(acc[k], 0, &outs[k], i);
    }
    NextIndex(idx, g.out_dims);
  }
  if (n_in == 1) return std::move(outs[0]);
  std::vector<Shape> shapes;
  for (const Literal& o : outs) shapes.push_back(o.shape());
  Literal t(Shape::Tuple(shapes), false);
  *t.mutable_tuple_elements() = std::move(outs);
  return t;
}

}  // namespace

absl::StatusOr<Literal> EvalReduce(Evaluator& ev, const Instruction& instr, const Operands& ops) {
  if (ops.size() < 2 || ops.size() % 2 != 0) return Invalid(instr, "reduce needs inputs and inits");
  size_t n_in = ops.size() / 2;
  const Shape& in = ops[0]->shape();
  for (size_t k = 0; k < n_in; ++k) {
    if (ops[k]->shape().dimensions() != in.dimensions()) {
      return Invalid(instr, "reduce inputs differ in shape");
    }
    if (ops[n_in + k]->element_count() != 1) return Invalid(instr, "init value is not a scalar");
  }
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= in.rank()) return Invalid(instr, "reduce dimension out of range");
    reduced[d] = true;
  }
  std::vector<int64_t> strides = RowMajorStrides(in.dimensions());
  ReduceGeometry g;
  std::vector<int64_t> kept, red_dims, red_strides;
  for (int d = 0; d < in.rank(); ++d) {
    if (reduced[d]) {
      red_dims.push_back(in.dimension(d));
      red_strides.push_back(strides[d]);
    } else {
      kept.push_back(d);
      g.out_dims.push_back(in.dimension(d));
    }
  }
  // Typed fast path for one input and a plain binary reducer.
  const Computation* comp =
      instr.called_computations().empty() ? nullptr : instr.called_computations()[0];
  ScalarComputation sc = ScalarComputation::Analyze(comp);
  PrimitiveType t = in.element_type();
  if (n_in == 1 && sc.simple_binary && ops[1]->shape().element_type() == t &&
      comp->root()->shape().element_type() == t) {
    std::vector<int64_t> out_strides = RowMajorStrides(g.out_dims), per_dim(in.rank(), 0);
    for (size_t k = 0; k < kept.size(); ++k) per_dim[kept[k]] = out_strides[k];
    absl::Status st;
    if (IsNarrowFloat(t)) {
      Literal win = WidenToF64(*ops[0]), wini = WidenToF64(*ops[1]);
      Literal wout(Shape::Array(PrimitiveType::kF64, g.out_dims));
      st = LinearReduce<double>(win, per_dim, wini, &wout, sc.op,
                                [t](double v) { return RoundThrough(t, v); });
      if (st.ok()) return NarrowFromF64(wout, t);
    } else {
      Literal out(Shape::Array(t, g.out_dims));
      st = DispatchNative(t, [&](auto tag) -> absl::Status {
        using T = typename decltype(tag)::type;
        return LinearReduce<T>(*ops[0], per_dim, *ops[1], &out, sc.op, [](T v) { return v; });
      });
      if (st.ok()) {
        if (IsSubByteInt(t)) NormalizeSubByte(&out);
        return out;
      }
    }
  }
  int64_t red_count = Product(red_dims);
  g.inputs = [&](const std::vector<int64_t>& out_idx, std::vector<int64_t>* pos) {
    pos->clear();
    int64_t base = 0;
    for (size_t i = 0; i < kept.size(); ++i) base += out_idx[i] * strides[kept[i]];
    if (red_count == 0) return;
    std::vector<int64_t> r(red_dims.size(), 0);
    int64_t off = 0;
    while (true) {
      pos->push_back(base + off);
      int d = static_cast<int>(red_dims.size()) - 1;
      for (; d >= 0; --d) {
        off += red_strides[d];
        if (++r[d] < red_dims[d]) break;
        off -= red_strides[d] * red_dims[d];
        r[d] = 0;
      }
      if (d < 0) break;
    }
  };
  return RunReduction(ev, instr, ops, g);
}

namespace {

// Window positions for output index `out_idx`: input linear indices in window row-major order,
// skipping padding and base-dilation holes.
void WindowPositions(const Window& w, const std::vector<int64_t>& in_dims,
                     const std::vector<int64_t>& in_strides, const std::vector<int64_t>& out_idx,
                     std::vector<int64_t>* pos) {
  pos->clear();
  int rank = static_cast<int>(in_dims.size());
  std::vector<int64_t> wdims(rank);
  for (int d = 0; d < rank; ++d) wdims[d] = w[d].size;
  if (Product(wdims) == 0) return;
  std::vector<int64_t> widx(rank, 0);
  do {
    int64_t lin = 0;
    bool ok = true;
    for (int d = 0; d < rank && ok; ++d) {
      const WindowDimension& wd = w[d];
      int64_t k = wd.window_reversal ? wd.size - 1 - widx[d] : widx[d];
      int64_t p = out_idx[d] * wd.stride + k * wd.window_dilation - wd.padding_low;
      if (p < 0 || p % wd.base_dilation != 0) {
        ok = false;
        break;
      }
      int64_t q = p / wd.base_dilation;
      if (q >= in_dims[d]) ok = false;
      lin += q * in_strides[d];
    }
    if (ok) pos->push_back(lin);
  } while (NextIndex(widx, wdims));
}

absl::StatusOr<Window> FullWindow(const Instruction& instr, int rank) {
  Window w = instr.attrs_or_default().window.value_or(Window());
  if (w.empty() && rank > 0) {
    w.assign(rank, WindowDimension{});
    for (auto& d : w) d.size = 1;
  }
  if (static_cast<int>(w.size()) != rank) return Invalid(instr, "window rank mismatch");
  for (const auto& d : w) {
    if (d.size < 0 || d.stride <= 0 || d.base_dilation <= 0 || d.window_dilation <= 0) {
      return Invalid(instr, "window has a non-positive stride or dilation");
    }
  }
  return w;
}

}  // namespace

absl::StatusOr<Literal> EvalReduceWindow(Evaluator& ev, const Instruction& instr,
                                         const Operands& ops) {
  if (ops.size() < 2 || ops.size() % 2 != 0) return Invalid(instr, "reduce-window operands");
  const Shape& in = ops[0]->shape();
  auto w = FullWindow(instr, in.rank());
  if (!w.ok()) return w.status();
  ReduceGeometry g;
  const Shape& rs = instr.shape().IsTuple() ? instr.shape().tuple_shape(0) : instr.shape();
  g.out_dims = rs.dimensions();
  std::vector<int64_t> in_dims = in.dimensions();
  std::vector<int64_t> strides = RowMajorStrides(in_dims);
  g.inputs = [&](const std::vector<int64_t>& out_idx, std::vector<int64_t>* pos) {
    WindowPositions(*w, in_dims, strides, out_idx, pos);
  };
  return RunReduction(ev, instr, ops, g);
}

absl::StatusOr<Literal> EvalSelectAndScatter(Evaluator& ev, const Instruction& instr,
                                             const Operands& ops) {
  const Literal& operand = *ops[0];
  const Literal& source = *ops[1];
  const Literal& init = *ops[2];
  if (instr.called_computations().size() != 2) return Invalid(instr, "needs select and scatter");
  const Computation* select = instr.called_computations()[0];
  const Computation* scatter = instr.called_computations()[1];
  auto w = FullWindow(instr, operand.shape().rank());
  if (!w.ok()) return w.status();
  Literal out(Shape::Array(operand.shape().element_type(), operand.shape().dimensions()));
  for (int64_t i = 0; i < out.element_count(); ++i) CopyElement(init, 0, &out, i);
  std::vector<int64_t> in_dims = operand.shape().dimensions();
  std::vector<int64_t> strides = RowMajorStrides(in_dims);
  const auto& sdims = source.shape().dimensions();
  if (source.element_count() == 0) return out;
  std::vector<int64_t> idx(sdims.size(), 0), pos;
  int64_t si = 0;
  do {
    WindowPositions(*w, in_dims, strides, idx, &pos);
    if (!pos.empty()) {
      int64_t sel = pos[0];
      Literal cur = ScalarFrom(operand, sel);
      for (size_t k = 1; k < pos.size(); ++k) {
        Literal cand = ScalarFrom(operand, pos[k]);
        auto keep = ev.CallScalar(*select, {&cur, &cand});
        if (!keep.ok()) return keep.status();
        if (keep->shape().element_type() != PrimitiveType::kPred) {
          return Invalid(instr, "select computation must return pred[]");
        }
        if (!keep->data_as<bool>()[0]) {
          sel = pos[k];
          cur = std::move(cand);
        }
      }
      Literal acc = ScalarFrom(out, sel);
      Literal src = ScalarFrom(source, si);
      auto r = ev.CallScalar(*scatter, {&acc, &src});
      if (!r.ok()) return r.status();
      CopyElement(*r, 0, &out, sel);
    }
    ++si;
  } while (NextIndex(idx, sdims));
  return out;
}

}  // namespace hlowb::eval
