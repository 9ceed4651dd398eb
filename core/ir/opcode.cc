#include "core/ir/opcode.h"

#include <string>

#include <array>

#include "absl/container/flat_hash_map.h"

namespace hlowb {
namespace {

struct OpcodeRow {
  std::string_view name;
  int arity;
  OpcodeCategory category;
};

constexpr std::array<OpcodeRow, kOpcodeCount> kRows = {{
#define HLOWB_OPCODE_ROW(e, name, arity, cat) {name, arity, OpcodeCategory::cat},
    HLOWB_OPCODE_LIST(HLOWB_OPCODE_ROW)
#undef HLOWB_OPCODE_ROW
}};

}  // namespace

std::string_view OpcodeName(Opcode op) { return kRows[static_cast<int>(op)].name; }

std::optional<Opcode> ParseOpcode(std::string_view name) {
  static const auto* map = [] {
    auto* m = new absl::flat_hash_map<absl::string_view, Opcode>();
    for (int i = 0; i < kOpcodeCount; ++i) {
      m->emplace(absl::string_view(kRows[i].name.data(), kRows[i].name.size()),
                 static_cast<Opcode>(i));
    }
    return m;
  }();
  auto it = map->find(absl::string_view(name.data(), name.size()));
  if (it == map->end()) return std::nullopt;
  return it->second;
}

int OpcodeArity(Opcode op) { return kRows[static_cast<int>(op)].arity; }

OpcodeCategory OpcodeCategoryOf(Opcode op) { return kRows[static_cast<int>(op)].category; }

bool IsElementwise(Opcode op) {
  switch (OpcodeCategoryOf(op)) {
    case OpcodeCategory::kUnary:
    case OpcodeCategory::kUnaryAccuracy:
    case OpcodeCategory::kBinary:
    case OpcodeCategory::kTernary:
      return true;
    default:
      return op == Opcode::kCompare || op == Opcode::kConvert ||
             op == Opcode::kBitcastConvert || op == Opcode::kReducePrecision ||
             op == Opcode::kStochasticConvert;
  }
}

bool OpcodeShapeIsInferable(Opcode op) {
  switch (OpcodeCategoryOf(op)) {
    case OpcodeCategory::kUnary:
    case OpcodeCategory::kUnaryAccuracy:
    case OpcodeCategory::kBinary:
    case OpcodeCategory::kTernary:
      return true;
    case OpcodeCategory::kCollective:
    case OpcodeCategory::kAsync:
      return false;
    case OpcodeCategory::kOther:
      break;
  }
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
    case Opcode::kBroadcast:
    case Opcode::kCall:
    case Opcode::kCholesky:
    case Opcode::kConcatenate:
    case Opcode::kConditional:
    case Opcode::kConvolution:
    case Opcode::kDomain:
    case Opcode::kDot:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot:
    case Opcode::kFft:
    case Opcode::kGather:
    case Opcode::kScatter:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kGetTupleElement:
    case Opcode::kMap:
    case Opcode::kOptimizationBarrier:
    case Opcode::kPad:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kReverse:
    case Opcode::kScan:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kTranspose:
    case Opcode::kTriangularSolve:
    case Opcode::kTuple:
    case Opcode::kWhile:
      return true;
    default:
      return false;
  }
}

bool IsAsyncCollectiveStart(Opcode op) {
  return op == Opcode::kAllGatherStart || op == Opcode::kAllReduceStart ||
         op == Opcode::kCollectivePermuteStart || op == Opcode::kCopyStart ||
         op == Opcode::kSend || op == Opcode::kRecv;
}

bool IsAsyncCollectiveDone(Opcode op) {
  return op == Opcode::kAllGatherDone || op == Opcode::kAllReduceDone ||
         op == Opcode::kCollectivePermuteDone || op == Opcode::kCopyDone ||
         op == Opcode::kSendDone || op == Opcode::kRecvDone;
}

bool CanBeAsyncSugar(Opcode op) {
  if (op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kAsyncStart ||
      op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone) {
    return false;
  }
  const std::string name(OpcodeName(op));
  return !ParseOpcode(name + "-start") && !ParseOpcode(name + "-update") &&
         !ParseOpcode(name + "-done");
}

}  // namespace hlowb
