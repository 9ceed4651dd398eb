#include "core/analysis/cost_model.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "core/ir/opcode.h"
#include "core/ir/primitive_type.h"

namespace hlowb {

std::string CountMagnitude(int64_t n) {
  if (n < 10000) return std::to_string(n);
  static const char* kSuffix[] = {"K", "M", "G", "T", "P", "E"};
  double v = static_cast<double>(n);
  int i = -1;
  while (v >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g %s", v, kSuffix[i]);
  return buffer;
}
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t SatAdd(int64_t a, int64_t b) {
  if (a < 0) a = 0;
  if (b < 0) b = 0;
  return a > kMax - b ? kMax : a + b;
}

int64_t SatMul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

// Elements of an array shape; 0 for tuples, tokens and unbounded dynamic shapes.
int64_t Elements(const Shape& shape) {
  if (!shape.IsArray()) return 0;
  int64_t n = shape.ElementCount();
  return n < 0 ? 0 : n;
}

int64_t DimSize(const Shape& shape, int64_t dim) {
  if (!shape.IsArray() || dim < 0 || dim >= shape.rank()) return 1;
  int64_t d = shape.dimension(static_cast<int>(dim));
  return d < 0 ? 0 : d;
}

int64_t OperandBytes(const Instruction& instr, int i) {
  return ShapeByteSize(instr.operand(i)->shape());
}

int64_t AllOperandBytes(const Instruction& instr) {
  int64_t total = 0;
  for (const Instruction* op : instr.operands()) total = SatAdd(total, ShapeByteSize(op->shape()));
  return total;
}

// Elementwise opcodes that do arithmetic (copy and bitcast-convert only move bits).
bool IsArithmeticElementwise(Opcode op) {
  if (op == Opcode::kCopy || op == Opcode::kBitcastConvert) return false;
  return IsElementwise(op);
}

bool MovesNoData(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kBitcast:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
      return true;
    default:
      return false;
  }
}

int64_t WindowSize(const Instruction& instr) {
  const InstructionAttrs* a = instr.attrs();
  if (a == nullptr || !a->window) return 1;
  int64_t n = 1;
  for (const WindowDimension& d : *a->window) n = SatMul(n, std::max<int64_t>(d.size, 0));
  return n;
}

}  // namespace

Cost& Cost::operator+=(const Cost& other) {
  flops = SatAdd(flops, other.flops);
  transcendentals = SatAdd(transcendentals, other.transcendentals);
  operand_bytes = SatAdd(operand_bytes, other.operand_bytes);
  result_bytes = SatAdd(result_bytes, other.result_bytes);
  return *this;
}

int64_t ShapeByteSize(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) total = SatAdd(total, ShapeByteSize(s));
    return total;
  }
  if (shape.IsBuffer()) {
    return shape.tuple_count() == 1 ? ShapeByteSize(shape.tuple_shape(0)) : 0;
  }
  if (!shape.IsArray()) return 0;
  return SatMul(Elements(shape), ByteWidth(shape.element_type()));
}

bool IsTranscendental(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtan:
    case Opcode::kAtan2:
    case Opcode::kAtanh:
    case Opcode::kCbrt:
    case Opcode::kCos:
    case Opcode::kCosh:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kPower:
    case Opcode::kRsqrt:
    case Opcode::kSin:
    case Opcode::kSinh:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

Cost CostModel::InstructionCost(const Instruction& instr) {
  Cost cost;
  const Opcode op = instr.opcode();
  const Shape& shape = instr.shape();
  const int64_t result_elements = Elements(shape);
  const auto called_flops = [&](int i) -> Cost {
    const auto& called = instr.called_computations();
    if (i < 0 || i >= static_cast<int>(called.size()) || called[i] == nullptr) return Cost();
    return ComputationCost(*called[i]);
  };

  // Bytes: the instruction's own operands and result, with the exceptions documented above.
  if (MovesNoData(op)) {
    // nothing
  } else if ((op == Opcode::kSlice || op == Opcode::kDynamicSlice || op == Opcode::kGather) &&
             instr.operand_count() > 0) {
    cost.result_bytes = ShapeByteSize(shape);
    cost.operand_bytes = cost.result_bytes;
    for (int i = 1; i < instr.operand_count(); ++i) {
      cost.operand_bytes = SatAdd(cost.operand_bytes, OperandBytes(instr, i));
    }
  } else if (op == Opcode::kDynamicUpdateSlice && instr.operand_count() > 1) {
    for (int i = 1; i < instr.operand_count(); ++i) {
      cost.operand_bytes = SatAdd(cost.operand_bytes, OperandBytes(instr, i));
    }
    cost.result_bytes = OperandBytes(instr, 1);
  } else {
    cost.operand_bytes = AllOperandBytes(instr);
    cost.result_bytes = ShapeByteSize(shape);
  }

  // Flops.
  if (IsArithmeticElementwise(op)) {
    if (IsTranscendental(op)) {
      cost.transcendentals = result_elements;
    } else {
      cost.flops = result_elements;
    }
    return cost;
  }
  switch (op) {
    case Opcode::kDot:
    case Opcode::kScaledDot:
    case Opcode::kRaggedDot: {
      int64_t contracted = 1;
      const InstructionAttrs* a = instr.attrs();
      if (a != nullptr && a->dot_dimension_numbers && instr.operand_count() > 0) {
        const Shape& lhs = instr.operand(0)->shape();
        for (int64_t d : a->dot_dimension_numbers->lhs_contracting_dimensions) {
          contracted = SatMul(contracted, DimSize(lhs, d));
        }
      }
      cost.flops = SatMul(SatMul(2, result_elements), contracted);
      break;
    }
    case Opcode::kConvolution: {
      const InstructionAttrs* a = instr.attrs();
      if (a == nullptr || !a->convolution_dimension_numbers || instr.operand_count() < 2) break;
      const ConvolutionDimensionNumbers& dn = *a->convolution_dimension_numbers;
      const Shape& kernel = instr.operand(1)->shape();
      int64_t spatial = 1;
      for (int64_t d : dn.kernel_spatial_dimensions) spatial = SatMul(spatial, DimSize(kernel, d));
      // The kernel's input-feature dimension already is the per-group input feature count.
      const int64_t features = DimSize(kernel, dn.kernel_input_feature_dimension);
      cost.flops = SatMul(SatMul(SatMul(2, result_elements), spatial), features);
      break;
    }
    case Opcode::kReduce: {
      // Operands are N inputs followed by N init values.
      const int inputs = instr.operand_count() / 2;
      int64_t n = 0;
      for (int i = 0; i < inputs; ++i) n = SatAdd(n, Elements(instr.operand(i)->shape()));
      cost.flops = n;
      break;
    }
    case Opcode::kReduceWindow: {
      // One reducer application per window element of every output element.
      int64_t outputs = result_elements;
      if (shape.IsTuple()) {
        outputs = 0;
        for (const Shape& s : shape.tuple_shapes()) outputs = SatAdd(outputs, Elements(s));
      }
      cost.flops = SatMul(outputs, WindowSize(instr));
      break;
    }
    case Opcode::kMap:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter: {
      const Cost applied = called_flops(0);
      int64_t applications = result_elements;
      if (shape.IsTuple()) {
        applications = 0;
        for (const Shape& s : shape.tuple_shapes()) applications = SatAdd(applications, Elements(s));
      }
      cost.flops = SatMul(applications, applied.flops);
      cost.transcendentals = SatMul(applications, applied.transcendentals);
      break;
    }
    case Opcode::kScatter: {
      // Operands: N inputs, indices, N updates.
      const int n = (instr.operand_count() - 1) / 2;
      int64_t updates = 0;
      for (int i = n + 1; i < instr.operand_count(); ++i) {
        updates = SatAdd(updates, Elements(instr.operand(i)->shape()));
      }
      const Cost applied = called_flops(0);
      cost.flops = SatMul(updates, applied.flops);
      cost.transcendentals = SatMul(updates, applied.transcendentals);
      break;
    }
    case Opcode::kFusion:
    case Opcode::kCall:
    case Opcode::kAsyncStart: {
      const Cost inner = called_flops(0);
      cost.flops = inner.flops;
      cost.transcendentals = inner.transcendentals;
      break;
    }
    case Opcode::kWhile: {
      // Condition then body, each counted once.
      Cost inner = called_flops(0);
      inner += called_flops(1);
      cost.flops = inner.flops;
      cost.transcendentals = inner.transcendentals;
      break;
    }
    case Opcode::kConditional: {
      for (int i = 0; i < static_cast<int>(instr.called_computations().size()); ++i) {
        const Cost branch = called_flops(i);
        cost.flops = std::max(cost.flops, branch.flops);
        cost.transcendentals = std::max(cost.transcendentals, branch.transcendentals);
      }
      break;
    }
    default:
      break;
  }
  return cost;
}

Cost CostModel::ComputationCost(const Computation& computation) {
  auto it = cache_.find(&computation);
  if (it != cache_.end()) return it->second;
  if (active_[&computation]) return Cost();  // a cycle: count the inner occurrence as free
  active_[&computation] = true;
  Cost total;
  for (const Instruction* instr : computation.instructions()) {
    if (instr != nullptr) total += InstructionCost(*instr);
  }
  active_.erase(&computation);
  cache_[&computation] = total;
  return total;
}

Cost CostModel::ModuleCost(const Module& module) {
  return module.entry() != nullptr ? ComputationCost(*module.entry()) : Cost();
}

Cost EstimateInstructionCost(const Instruction& instruction) {
  CostModel model;
  return model.InstructionCost(instruction);
}

double RooflineModel::KernelSeconds(double flops, double transcendentals,
                                    double bytes) const {
  return launch_seconds + std::max({flops / flops_per_second,
                                    transcendentals / transcendentals_per_second,
                                    bytes / bytes_per_second});
}

}  // namespace hlowb
