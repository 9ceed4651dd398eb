#include "core/passes/batchnorm_expander.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/passes/hlo_edit.h"

namespace hlowb {
namespace {

// A scalar constant. Its shape carries no layout, so it prints as `f32[]` the way XLA prints
// scalars.
Instruction* AddScalarConstant(ComputationEditor& editor, Literal literal) {
  Instruction* c = editor.Add(Opcode::kConstant,
                              Shape::Array(literal.shape().element_type(), {}), {}, "constant");
  c->set_literal(std::make_unique<Literal>(std::move(literal)));
  return c;
}


// Finds or creates `add(lhs, rhs)` over scalars of `type`, placed before `before` in the
// module's computation order.
class AddComputations {
 public:
  AddComputations(Module* module, NameUniquer* names) : module_(module), names_(names) {}

  Computation* Get(PrimitiveType type, const Computation* before) {
    auto it = cache_.find(type);
    if (it != cache_.end()) return it->second;
    auto comp = std::make_unique<Computation>(names_->Unique("add_computation"));
    Shape scalar = Shape::Array(type, {});
    const Shape* s = module_->InternShape(scalar);
    Instruction* lhs = module_->NewInstruction(Opcode::kParameter, names_->Unique("lhs"), s);
    lhs->set_index(0);
    Instruction* rhs = module_->NewInstruction(Opcode::kParameter, names_->Unique("rhs"), s);
    rhs->set_index(1);
    Instruction* add = module_->NewInstruction(Opcode::kAdd, names_->Unique("add"), s);
    *add->mutable_operands() = {lhs, rhs};
    comp->AddInstruction(lhs);
    comp->AddInstruction(rhs);
    comp->AddInstruction(add);
    comp->set_root(add);
    Computation* added = module_->AddComputation(std::move(comp));
    // Move it in front of its first user.
    auto& comps = *module_->mutable_computations();
    auto pos = std::find_if(comps.begin(), comps.end(),
                            [&](const auto& c) { return c.get() == before; });
    if (pos != comps.end()) std::rotate(pos, comps.end() - 1, comps.end());
    cache_[type] = added;
    return added;
  }

 private:
  Module* module_;
  NameUniquer* names_;
  std::map<PrimitiveType, Computation*> cache_;
};

bool IsStaticArray(const Shape& s) { return s.IsArray() && !s.IsDynamic(); }

// Emits the expansion of one batch-norm instruction.
class Expander {
 public:
  Expander(ComputationEditor* editor, AddComputations* adds, const Instruction& bn)
      : editor_(*editor), adds_(*adds), bn_(bn) {
    const Shape& operand = bn.operand(0)->shape();
    operand_shape_ = operand;
    type_ = operand.element_type();
    feature_index_ = bn.attrs_or_default().feature_index;
    feature_shape_ = Shape::Array(type_, {operand.dimension(static_cast<int>(feature_index_))});
    feature_shape_.SetDefaultLayout();
    for (int i = 0; i < operand.rank(); ++i) {
      if (i != feature_index_) reduce_dims_.push_back(i);
    }
    const int64_t features = operand.dimension(static_cast<int>(feature_index_));
    per_feature_ = features == 0 ? 0 : operand.ElementCount() / features;
  }

  Instruction* Training() {
    Instruction* x = bn_.operand(0);
    Instruction* scale = bn_.operand(1);
    Instruction* offset = bn_.operand(2);
    Instruction* count = FeatureConstant(static_cast<double>(std::max<int64_t>(per_feature_, 1)));
    Instruction* sum = Reduce(x);
    Instruction* squared_sum = Reduce(Binary(Opcode::kMultiply, x, x));
    Instruction* mean = Binary(Opcode::kDivide, sum, count);
    Instruction* square_mean = Binary(Opcode::kDivide, squared_sum, count);
    Instruction* mean_square = Binary(Opcode::kMultiply, mean, mean);
    Instruction* var = Binary(Opcode::kSubtract, square_mean, mean_square);
    Instruction* var_eps = Binary(Opcode::kAdd, ToOperand(var), OperandConstant(Epsilon()));
    Instruction* rsqrt = Unary(Opcode::kRsqrt, var_eps);
    Instruction* centered = Binary(Opcode::kSubtract, x, ToOperand(mean));
    Instruction* normalized = Binary(Opcode::kMultiply, centered, rsqrt);
    Instruction* scaled = Binary(Opcode::kMultiply, normalized, ToOperand(scale));
    Instruction* shifted = Binary(Opcode::kAdd, scaled, ToOperand(offset));
    return Tuple({shifted, mean, var});
  }

  Instruction* Inference() {
    Instruction* x = bn_.operand(0);
    Instruction* scale = bn_.operand(1);
    Instruction* offset = bn_.operand(2);
    Instruction* mean = bn_.operand(3);
    Instruction* var = bn_.operand(4);
    Instruction* var_eps = Binary(Opcode::kAdd, var, FeatureConstant(Epsilon()));
    Instruction* rsqrt = Unary(Opcode::kRsqrt, var_eps);
    Instruction* true_scale = Binary(Opcode::kMultiply, scale, rsqrt);
    Instruction* true_shift =
        Binary(Opcode::kSubtract, offset, Binary(Opcode::kMultiply, mean, true_scale));
    Instruction* scaled = Binary(Opcode::kMultiply, x, ToOperand(true_scale));
    return Binary(Opcode::kAdd, scaled, ToOperand(true_shift));
  }

  // grad_scale  = Sum(dy * (x - mean)) * rsqrt(var + eps)
  // grad_offset = Sum(dy)
  // grad_x      = scale * rsqrt(var + eps) *
  //               (dy - Sum(dy) / N - (x - mean) * Sum(dy * (x - mean)) / (N * (var + eps)))
  Instruction* Grad() {
    Instruction* x = bn_.operand(0);
    Instruction* scale = bn_.operand(1);
    Instruction* mean = bn_.operand(2);
    Instruction* var = bn_.operand(3);
    Instruction* grad_y = bn_.operand(4);
    Instruction* count = FeatureConstant(static_cast<double>(std::max<int64_t>(per_feature_, 1)));
    Instruction* var_eps = Binary(Opcode::kAdd, var, FeatureConstant(Epsilon()));
    Instruction* rsqrt = Unary(Opcode::kRsqrt, var_eps);
    Instruction* centered = Binary(Opcode::kSubtract, x, ToOperand(mean));
    Instruction* sum_grad = Reduce(grad_y);
    Instruction* sum_grad_centered = Reduce(Binary(Opcode::kMultiply, grad_y, centered));
    Instruction* grad_scale = Binary(Opcode::kMultiply, sum_grad_centered, rsqrt);
    Instruction* mean_grad = Binary(Opcode::kDivide, sum_grad, count);
    Instruction* coefficient = Binary(Opcode::kDivide, sum_grad_centered,
                                      Binary(Opcode::kMultiply, count, var_eps));
    Instruction* inner = Binary(
        Opcode::kSubtract, Binary(Opcode::kSubtract, grad_y, ToOperand(mean_grad)),
        Binary(Opcode::kMultiply, centered, ToOperand(coefficient)));
    Instruction* factor = Binary(Opcode::kMultiply, scale, rsqrt);
    Instruction* grad_x = Binary(Opcode::kMultiply, ToOperand(factor), inner);
    return Tuple({grad_x, grad_scale, sum_grad});
  }

 private:
  double Epsilon() const { return bn_.attrs_or_default().epsilon; }

  Instruction* Unary(Opcode op, Instruction* a) { return editor_.Add(op, a->shape(), {a}); }
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) {
    return editor_.Add(op, a->shape(), {a, b});
  }
  Instruction* Broadcast(Instruction* a, const Shape& shape, std::vector<int64_t> dims) {
    Instruction* b = editor_.Add(Opcode::kBroadcast, shape, {a});
    *b->mutable_dimensions() = std::move(dims);
    b->set_has_dimensions(true);
    return b;
  }
  Instruction* FeatureConstant(double value) {
    return Broadcast(AddScalarConstant(editor_, ScalarLiteral(type_, value)), feature_shape_, {});
  }
  Instruction* OperandConstant(double value) {
    return Broadcast(AddScalarConstant(editor_, ScalarLiteral(type_, value)), operand_shape_, {});
  }
  // A per-feature value broadcast along feature_index to the operand's shape.
  Instruction* ToOperand(Instruction* feature_value) {
    return Broadcast(feature_value, operand_shape_, {feature_index_});
  }
  Instruction* Reduce(Instruction* value) {
    Instruction* zero = AddScalarConstant(editor_, ScalarLiteral(type_, 0.0));
    Instruction* r = editor_.Add(Opcode::kReduce, feature_shape_, {value, zero});
    *r->mutable_dimensions() = reduce_dims_;
    r->set_has_dimensions(true);
    r->mutable_called_computations()->push_back(adds_.Get(type_, editor_.computation()));
    return r;
  }
  Instruction* Tuple(std::vector<Instruction*> elements) {
    std::vector<Shape> shapes;
    for (Instruction* e : elements) shapes.push_back(e->shape());
    return editor_.Add(Opcode::kTuple, Shape::Tuple(std::move(shapes)), std::move(elements));
  }

  ComputationEditor& editor_;
  AddComputations& adds_;
  const Instruction& bn_;
  Shape operand_shape_;
  Shape feature_shape_;
  PrimitiveType type_ = PrimitiveType::kInvalid;
  int64_t feature_index_ = 0;
  std::vector<int64_t> reduce_dims_;
  int64_t per_feature_ = 0;
};

bool Expandable(const Instruction& instr) {
  const int expected = instr.opcode() == Opcode::kBatchNormTraining ? 3 : 5;
  if (instr.operand_count() != expected) return false;
  for (const Instruction* op : instr.operands()) {
    if (!IsStaticArray(op->shape())) return false;
  }
  const Shape& x = instr.operand(0)->shape();
  if (!IsFloatingPoint(x.element_type())) return false;
  const int64_t f = instr.attrs_or_default().feature_index;
  if (f < 0 || f >= x.rank()) return false;
  // Per-feature operands must be rank 1 of the feature dimension and the operand's type.
  for (int i = 1; i < instr.operand_count(); ++i) {
    const Shape& s = instr.operand(i)->shape();
    const bool full = instr.opcode() == Opcode::kBatchNormGrad && i == 4;
    if (s.element_type() != x.element_type()) return false;
    if (full ? !s.SameDimensions(x)
             : (s.rank() != 1 || s.dimension(0) != x.dimension(static_cast<int>(f)))) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> BatchNormExpander::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  AddComputations adds(module, &names);
  std::vector<Computation*> comps;
  for (const auto& c : module->computations()) comps.push_back(c.get());
  for (Computation* comp : comps) {
    std::vector<Instruction*> targets;
    for (Instruction* instr : comp->instructions()) {
      const Opcode op = instr->opcode();
      const bool wanted = (op == Opcode::kBatchNormTraining && options_.rewrite_training_op) ||
                          (op == Opcode::kBatchNormInference && options_.rewrite_inference_op) ||
                          (op == Opcode::kBatchNormGrad && options_.rewrite_grad_op);
      if (wanted && Expandable(*instr)) targets.push_back(instr);
    }
    if (targets.empty()) continue;
    ComputationEditor editor(comp, &names);
    bool comp_changed = false;
    for (Instruction* instr : targets) {
      if (!context.ConsumeFuel(name())) break;
      Expander expander(&editor, &adds, *instr);
      Instruction* result = nullptr;
      switch (instr->opcode()) {
        case Opcode::kBatchNormTraining: result = expander.Training(); break;
        case Opcode::kBatchNormInference: result = expander.Inference(); break;
        default: result = expander.Grad(); break;
      }
      editor.ReplaceAllUsesWith(instr, result);
      comp_changed = true;
    }
    if (comp_changed) {
      editor.Finish();
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlowb
