// gather and scatter with XLA's full dimension numbers, including operand/start-indices
// batching dims. Gather clamps every start index so the slice stays inside the operand;
// scatter skips an update window that would leave the operand (both per semantics.h). Scatter
// applies updates in row-major order of the updates array, so duplicate indices combine
// deterministically; a reducer that is a plain binary op (or `ROOT p1`, overwrite) runs typed.
#include <algorithm>

#include "replay/evaluator/eval_internal.h"
#include "replay/evaluator/scatter_pairs.h"
#include "replay/evaluator/semantics.h"

namespace hlowb::eval {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Reads the index vector at batch position `batch` (indices dims other than index_vector_dim,
// in order) of `indices`.
void ReadIndexVector(const Literal& indices, int64_t index_vector_dim,
                     const std::vector<int64_t>& batch, const std::vector<int64_t>& strides,
                     std::vector<int64_t>* out) {
  int rank = indices.shape().rank();
  int64_t base = 0;
  int b = 0;
  for (int d = 0; d < rank; ++d) {
    if (d == index_vector_dim) continue;
    base += batch[b++] * strides[d];
  }
  if (index_vector_dim >= rank) {
    (*out)[0] = IndexValue(indices, base);
    return;
  }
  for (size_t k = 0; k < out->size(); ++k) {
    (*out)[k] = IndexValue(indices, base + static_cast<int64_t>(k) * strides[index_vector_dim]);
  }
}

}  // namespace

absl::StatusOr<Literal> EvalGather(const Instruction& instr, const Literal& operand,
                                   const Literal& indices) {
  const auto& gdn = instr.attrs_or_default().gather_dimension_numbers;
  if (!gdn) return Invalid(instr, "gather without dimension numbers");
  const GatherDimensionNumbers& d = *gdn;
  const auto& slice_sizes = instr.attrs_or_default().slice_sizes;
  const Shape& os = operand.shape();
  const Shape& out_shape = instr.shape();
  int orank = os.rank();
  if (static_cast<int>(slice_sizes.size()) != orank) return Invalid(instr, "slice_sizes rank");
  for (int i = 0; i < orank; ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > os.dimension(i)) {
      return Invalid(instr, StrCat("slice size ", slice_sizes[i], " exceeds operand dimension ", i));
    }
  }
  int irank = indices.shape().rank();
  int64_t ivd = d.index_vector_dim;
  int64_t vec_len = ivd < irank ? indices.shape().dimension(ivd) : 1;
  if (vec_len != static_cast<int64_t>(d.start_index_map.size())) {
    return Invalid(instr, "index vector length differs from start_index_map");
  }
  for (int64_t x : d.start_index_map) if (x < 0 || x >= orank) return Invalid(instr, "start_index_map out of range");
  // Operand dims that appear as offset dims in the output.
  std::vector<int64_t> offset_operand_dims;
  for (int i = 0; i < orank; ++i) {
    if (!Contains(d.collapsed_slice_dims, i) && !Contains(d.operand_batching_dims, i)) {
      offset_operand_dims.push_back(i);
    }
  }
  if (offset_operand_dims.size() != d.offset_dims.size()) {
    return Invalid(instr, "offset_dims do not match the non-collapsed operand dims");
  }
  std::vector<int64_t> batch_out_dims;
  for (int i = 0; i < out_shape.rank(); ++i) {
    if (!Contains(d.offset_dims, i)) batch_out_dims.push_back(i);
  }
  // Indices dims (without index_vector_dim), in order: position of each batching dim.
  std::vector<int64_t> idx_batch_dims;
  for (int i = 0; i < irank; ++i) if (i != ivd) idx_batch_dims.push_back(i);
  if (idx_batch_dims.size() != batch_out_dims.size()) {
    return Invalid(instr, "output batch rank differs from the indices' batch rank");
  }
  std::vector<int64_t> batching_pos(d.operand_batching_dims.size());
  for (size_t j = 0; j < d.start_indices_batching_dims.size() && j < batching_pos.size(); ++j) {
    auto it = std::find(idx_batch_dims.begin(), idx_batch_dims.end(), d.start_indices_batching_dims[j]);
    if (it == idx_batch_dims.end()) return Invalid(instr, "bad start_indices_batching_dims");
    batching_pos[j] = it - idx_batch_dims.begin();
  }
  Literal out(Shape::Array(os.element_type(), out_shape.dimensions()));
  if (out.element_count() == 0) return out;
  std::vector<int64_t> ostrides = RowMajorStrides(os.dimensions());
  std::vector<int64_t> istrides = RowMajorStrides(indices.shape().dimensions());
  std::vector<int64_t> idx(out_shape.rank(), 0), batch(batch_out_dims.size()), vec(vec_len),
      start(orank);
  int64_t i = 0;
  do {
    for (size_t b = 0; b < batch_out_dims.size(); ++b) batch[b] = idx[batch_out_dims[b]];
    ReadIndexVector(indices, ivd, batch, istrides, &vec);
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < d.start_index_map.size(); ++k) start[d.start_index_map[k]] = vec[k];
    for (size_t j = 0; j < d.operand_batching_dims.size(); ++j) {
      start[d.operand_batching_dims[j]] = batch[batching_pos[j]];
    }
    int64_t lin = 0;
    for (int od = 0; od < orank; ++od) {
      int64_t s = std::clamp<int64_t>(start[od], 0, os.dimension(od) - slice_sizes[od]);
      lin += s * ostrides[od];
    }
    for (size_t k = 0; k < d.offset_dims.size(); ++k) {
      lin += idx[d.offset_dims[k]] * ostrides[offset_operand_dims[k]];
    }
    CopyElement(operand, lin, &out, i);
    ++i;
  } while (NextIndex(idx, out_shape.dimensions()));
  return out;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ScatterPairs(const Instruction& instr,
                                                                      const Shape& operand,
                                                                      const Literal& indices,
                                                                      const Shape& updates) {
  const auto& sdn = instr.attrs_or_default().scatter_dimension_numbers;
  if (!sdn) return Invalid(instr, "scatter without dimension numbers");
  const ScatterDimensionNumbers& d = *sdn;
  const Shape& os = operand;
  const Shape& us = updates;
  int orank = os.rank(), irank = indices.shape().rank();
  int64_t ivd = d.index_vector_dim;
  if (ivd < 0 || ivd > irank) return Invalid(instr, "index_vector_dim out of range");
  int64_t vec_len = ivd < irank ? indices.shape().dimension(ivd) : 1;
  if (vec_len != static_cast<int64_t>(d.scatter_dims_to_operand_dims.size())) {
    return Invalid(instr, "index vector length differs from scatter_dims_to_operand_dims");
  }
  for (int64_t x : d.scatter_dims_to_operand_dims) if (x < 0 || x >= orank) return Invalid(instr, "scatter_dims_to_operand_dims out of range");
  for (int64_t x : d.input_batching_dims) if (x < 0 || x >= orank) return Invalid(instr, "input_batching_dims out of range");
  for (int64_t x : d.update_window_dims) if (x < 0 || x >= us.rank()) return Invalid(instr, "update_window_dims out of range");
  std::vector<int64_t> window_operand_dims;
  for (int i = 0; i < orank; ++i) {
    if (!Contains(d.inserted_window_dims, i) && !Contains(d.input_batching_dims, i)) {
      window_operand_dims.push_back(i);
    }
  }
  if (window_operand_dims.size() != d.update_window_dims.size()) {
    return Invalid(instr, "update_window_dims do not match the operand's window dims");
  }
  std::vector<int64_t> update_scatter_dims;
  for (int i = 0; i < us.rank(); ++i) {
    if (!Contains(d.update_window_dims, i)) update_scatter_dims.push_back(i);
  }
  std::vector<int64_t> idx_batch_dims;
  for (int i = 0; i < irank; ++i) if (i != ivd) idx_batch_dims.push_back(i);
  if (idx_batch_dims.size() != update_scatter_dims.size()) {
    return Invalid(instr, "updates scatter rank differs from the indices' batch rank");
  }
  if (d.scatter_indices_batching_dims.size() < d.input_batching_dims.size()) {
    return Invalid(instr, "fewer scatter_indices_batching_dims than input_batching_dims");
  }
  std::vector<int64_t> batching_pos(d.input_batching_dims.size());
  for (size_t j = 0; j < batching_pos.size(); ++j) {
    auto it = std::find(idx_batch_dims.begin(), idx_batch_dims.end(), d.scatter_indices_batching_dims[j]);
    if (it == idx_batch_dims.end()) return Invalid(instr, "bad scatter_indices_batching_dims");
    batching_pos[j] = it - idx_batch_dims.begin();
  }
  // Window size per operand dim.
  std::vector<int64_t> wsize(orank, 1);
  for (size_t k = 0; k < d.update_window_dims.size(); ++k) {
    wsize[window_operand_dims[k]] = us.dimension(d.update_window_dims[k]);
  }
  // (operand index, update index) pairs in update row-major order. The updates are walked a
  // row (their last dimension) at a time; a window's start is read from the indices only when
  // the update's scatter position changes, and a row along a window dimension is a run of
  // operand elements a fixed stride apart.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (Product(us.dimensions()) > 0) {
    pairs.reserve(static_cast<size_t>(Product(us.dimensions())));
    const std::vector<int64_t> ostrides = RowMajorStrides(os.dimensions());
    const std::vector<int64_t> istrides = RowMajorStrides(indices.shape().dimensions());
    // Each update dimension's step in the operand (0 for scatter dimensions).
    std::vector<int64_t> ustep(us.rank(), 0);
    for (size_t k = 0; k < d.update_window_dims.size(); ++k) {
      ustep[d.update_window_dims[k]] = ostrides[window_operand_dims[k]];
    }
    const int last = us.rank() - 1;
    const bool row_is_window = last >= 0 && Contains(d.update_window_dims, last);
    const int64_t row = row_is_window ? us.dimension(last) : 1;
    // The multi-index over the update's dimensions but the last when rows are runs.
    std::vector<int64_t> outer_dims(us.dimensions().begin(),
                                    us.dimensions().end() - (row_is_window ? 1 : 0));
    std::vector<int64_t> idx(us.rank(), 0), batch(update_scatter_dims.size()), vec(vec_len),
        start(orank), prev_batch;
    std::vector<int64_t> outer(outer_dims.size(), 0);
    bool started = false, in_bounds = false;
    int64_t base = 0;
    int64_t ui = 0;
    do {
      std::copy(outer.begin(), outer.end(), idx.begin());
      for (size_t b = 0; b < update_scatter_dims.size(); ++b) batch[b] = idx[update_scatter_dims[b]];
      if (!started || batch != prev_batch) {
        ReadIndexVector(indices, ivd, batch, istrides, &vec);
        std::fill(start.begin(), start.end(), 0);
        for (size_t k = 0; k < vec.size(); ++k) start[d.scatter_dims_to_operand_dims[k]] = vec[k];
        for (size_t j = 0; j < d.input_batching_dims.size(); ++j) {
          start[d.input_batching_dims[j]] = batch[batching_pos[j]];
        }
        in_bounds = true;
        base = 0;
        for (int od = 0; od < orank; ++od) {
          if (start[od] < 0 || start[od] > os.dimension(od) - wsize[od]) in_bounds = false;
          base += start[od] * ostrides[od];
        }
        prev_batch = batch;
        started = true;
      }
      if (in_bounds) {
        int64_t lin = base;
        for (int u = 0; u < static_cast<int>(outer.size()); ++u) lin += outer[u] * ustep[u];
        const int64_t step = row_is_window ? ustep[last] : 0;
        for (int64_t j = 0; j < row; ++j) pairs.emplace_back(lin + j * step, ui + j);
      }
      ui += row;
    } while (NextIndex(outer, outer_dims));
  }
  return pairs;
}

absl::StatusOr<Literal> EvalScatter(Evaluator& ev, const Instruction& instr, const Operands& ops) {
  if (ops.size() < 3 || ops.size() % 2 == 0) return Invalid(instr, "scatter operand count");
  size_t n = (ops.size() - 1) / 2;
  const Shape& os = ops[0]->shape();
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> listed =
      ScatterPairs(instr, os, *ops[n], ops[n + 1]->shape());
  if (!listed.ok()) return listed.status();
  const std::vector<std::pair<int64_t, int64_t>>& pairs = *listed;
  std::vector<Literal> outs;
  for (size_t k = 0; k < n; ++k) {
    Literal o(Shape::Array(ops[k]->shape().element_type(), ops[k]->shape().dimensions()));
    *o.mutable_data() = ops[k]->data();
    outs.push_back(std::move(o));
  }
  const Computation* comp =
      instr.called_computations().empty() ? nullptr : instr.called_computations()[0];
  if (comp == nullptr) return Invalid(instr, "scatter without to_apply");
  bool overwrite = n == 1 && comp->parameter_count() == 2 && comp->root() == comp->parameter(1);
  ScalarComputation sc = ScalarComputation::Analyze(comp);
  bool fast_done = false;
  if (overwrite) {
    for (auto [oi, ui] : pairs) CopyElement(*ops[n + 1], ui, &outs[0], oi);
    fast_done = true;
  } else if (n == 1 && sc.simple_binary && IsNativeType(os.element_type()) &&
             !IsSubByteInt(os.element_type()) &&
             comp->root()->shape().element_type() == os.element_type()) {
    absl::Status st = DispatchNative(os.element_type(), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      T* o = outs[0].mutable_data_as<T>();
      const T* u = ops[n + 1]->data_as<T>();
      Opcode op = sc.op;
      for (auto [oi, ui] : pairs) {
        T a = o[oi], b = u[ui];
        if constexpr (std::is_same_v<T, bool>) {
          o[oi] = (op == Opcode::kAdd || op == Opcode::kOr || op == Opcode::kMaximum) ? (a || b)
                  : (op == Opcode::kXor) ? (a != b) : (a && b);
        } else if constexpr (kIsComplex<T>) {
          if (op == Opcode::kAdd) o[oi] = a + b;
          else if (op == Opcode::kMultiply) o[oi] = a * b;
          else if (op == Opcode::kSubtract) o[oi] = a - b;
          else return absl::UnimplementedError("");
        } else {
          switch (op) {
            case Opcode::kAdd: o[oi] = WrapAdd<T>(a, b); break;
            case Opcode::kMultiply: o[oi] = WrapMul<T>(a, b); break;
            case Opcode::kSubtract: o[oi] = WrapSub<T>(a, b); break;
            case Opcode::kMaximum: o[oi] = NanPropagatingMax<T>(a, b); break;
            case Opcode::kMinimum: o[oi] = NanPropagatingMin<T>(a, b); break;
            default: return absl::UnimplementedError("");
          }
        }
      }
      return absl::OkStatus();
    });
    if (st.ok()) fast_done = true;
    else {  // restore and fall through to the general path
      *outs[0].mutable_data() = ops[0]->data();
    }
  }
  if (!fast_done) {
    std::vector<Literal> cur(n), upd(n);
    Operands args(2 * n);
    for (auto [oi, ui] : pairs) {
      for (size_t k = 0; k < n; ++k) {
        cur[k] = ScalarFrom(outs[k], oi);
        upd[k] = ScalarFrom(*ops[n + 1 + k], ui);
        args[k] = &cur[k];
        args[n + k] = &upd[k];
      }
      auto r = ev.CallScalar(*comp, args);
      if (!r.ok()) return r.status();
      if (n == 1) {
        if (!r->shape().IsArray()) return Invalid(instr, "scatter combiner must return a scalar");
        CopyElement(*r, 0, &outs[0], oi);
      } else {
        if (!r->shape().IsTuple() || r->tuple_elements().size() != n) {
          return Invalid(instr, "variadic scatter combiner must return a tuple");
        }
        for (size_t k = 0; k < n; ++k) CopyElement(r->tuple_elements()[k], 0, &outs[k], oi);
      }
    }
  }
  if (n == 1) return std::move(outs[0]);
  std::vector<Shape> shapes;
  for (const Literal& o : outs) shapes.push_back(o.shape());
  Literal t(Shape::Tuple(shapes), false);
  *t.mutable_tuple_elements() = std::move(outs);
  return t;
}

}  // namespace hlowb::eval
