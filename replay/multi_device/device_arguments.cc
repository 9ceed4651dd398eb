#include "replay/multi_device/device_arguments.h"

#include "core/ir/float_types.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {
namespace {

// Arguments larger than this are refused before allocation (a corrupt shape, not a model).
constexpr uint64_t kMaxArgumentBytes = uint64_t{1} << 40;

absl::Status CheckShape(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple_shapes()) {
      if (absl::Status st = CheckShape(e); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) return absl::OkStatus();
  uint64_t bytes = static_cast<uint64_t>(ByteWidth(shape.element_type()));
  for (int i = 0; i < shape.rank(); ++i) {
    const int64_t d = shape.dimension(i);
    if (d < 0) {
      return absl::InvalidArgumentError(
          StrCat("cannot make an argument of shape ", PrintShape(shape), " (unbounded)"));
    }
    if (d > 0 && bytes > kMaxArgumentBytes / static_cast<uint64_t>(d)) {
      return absl::InvalidArgumentError(
          StrCat("argument shape ", PrintShape(shape), " is too large to materialise"));
    }
    bytes *= static_cast<uint64_t>(d);
  }
  return absl::OkStatus();
}

void Fill(Literal* l, int64_t value) {
  const PrimitiveType t = l->shape().element_type();
  if (l->shape().IsTuple()) {
    for (Literal& e : *l->mutable_tuple_elements()) Fill(&e, value);
    return;
  }
  if (!l->shape().IsArray()) return;
  const int64_t n = l->element_count();
  if (t == PrimitiveType::kPred) {
    for (int64_t i = 0; i < n; ++i) l->SetBits(i, value % 2 == 0 ? 1 : 0);
  } else if (IsIntegral(t)) {
    for (int64_t i = 0; i < n; ++i) l->SetBits(i, static_cast<uint64_t>(value));
  } else if (IsComplex(t)) {
    const PrimitiveType part = t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    const uint64_t re = DoubleToFloatBits(part, static_cast<double>(value));
    for (int64_t i = 0; i < n; ++i) {
      l->SetBits(2 * i, re);
      l->SetBits(2 * i + 1, 0);
    }
  } else {
    const uint64_t bits = DoubleToFloatBits(t, static_cast<double>(value));
    for (int64_t i = 0; i < n; ++i) l->SetBits(i, bits);
  }
}

}  // namespace

absl::StatusOr<ArgumentMode> ParseArgumentMode(std::string_view name) {
  for (ArgumentMode m : {ArgumentMode::kUseRandomInputs, ArgumentMode::kUseSharedRandomInputs,
                         ArgumentMode::kUseZerosAsInput, ArgumentMode::kUseDeviceIdAsInput,
                         ArgumentMode::kUninitialized}) {
    if (ArgumentModeName(m) == name) return m;
  }
  return absl::InvalidArgumentError(
      StrCat("unknown --hlo_argument_mode '", name, "' (known: use_random_inputs, "
             "use_shared_random_inputs, use_zeros_as_input, use_device_id_as_input, "
             "uninitialized)"));
}

std::string_view ArgumentModeName(ArgumentMode mode) {
  switch (mode) {
    case ArgumentMode::kUseRandomInputs: return "use_random_inputs";
    case ArgumentMode::kUseSharedRandomInputs: return "use_shared_random_inputs";
    case ArgumentMode::kUseZerosAsInput: return "use_zeros_as_input";
    case ArgumentMode::kUseDeviceIdAsInput: return "use_device_id_as_input";
    case ArgumentMode::kUninitialized: return "uninitialized";
  }
  return "?";
}

absl::StatusOr<Literal> MakeFilledLiteral(const Shape& shape, int64_t value) {
  if (absl::Status st = CheckShape(shape); !st.ok()) return st;
  Literal l(shape);
  Fill(&l, value);
  return l;
}

absl::StatusOr<std::vector<std::vector<Literal>>> MakeDeviceArguments(
    const Module& module, ArgumentMode mode, const DeviceGrid& grid, FakeDataEngine* engine,
    bool use_large_float_range) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  std::vector<std::vector<Literal>> out;
  switch (mode) {
    case ArgumentMode::kUseRandomInputs:
    case ArgumentMode::kUseSharedRandomInputs: {
      const int64_t lists = mode == ArgumentMode::kUseRandomInputs ? grid.size() : 1;
      for (int64_t d = 0; d < lists; ++d) {
        auto args = MakeFakeArguments(module, engine, use_large_float_range);
        if (!args.ok()) return args.status();
        out.push_back(std::move(*args));
      }
      return out;
    }
    case ArgumentMode::kUseZerosAsInput:
    case ArgumentMode::kUninitialized:
    case ArgumentMode::kUseDeviceIdAsInput: {
      const bool per_device = mode == ArgumentMode::kUseDeviceIdAsInput;
      const int64_t lists = per_device ? grid.size() : 1;
      for (int64_t d = 0; d < lists; ++d) {
        std::vector<Literal> args;
        for (int i = 0; i < entry->parameter_count(); ++i) {
          const Instruction* p = entry->parameter(i);
          if (p == nullptr) {
            return absl::InvalidArgumentError(StrCat("entry parameter ", i, " is missing"));
          }
          if (per_device) {
            auto l = MakeFilledLiteral(p->shape(), grid.XlaDeviceId(d));
            if (!l.ok()) return l.status();
            args.push_back(std::move(*l));
          } else {
            if (absl::Status st = CheckShape(p->shape()); !st.ok()) return st;
            args.emplace_back(p->shape());  // every byte zero
          }
        }
        out.push_back(std::move(args));
      }
      return out;
    }
  }
  return absl::InternalError("unknown argument mode");
}

}  // namespace hlowb
