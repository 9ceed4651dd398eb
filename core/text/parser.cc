#include "core/text/parser.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "core/support/strings.h"
#include "absl/strings/str_split.h"
#include "core/analysis/shape_inference.h"
#include "core/ir/float_types.h"
#include "core/support/diagnostics.h"
#include "core/text/lexer.h"

namespace hlowb {
namespace {

// absl's own hash for names; Debian's abseil would otherwise hash std::string_view through
// std::hash, which is several times slower on the parser's hot path.
struct NameHash {
  size_t operator()(std::string_view s) const { return absl::Hash<absl::string_view>()(AsAbsl(s)); }
};
using NameMap = absl::flat_hash_map<std::string_view, Instruction*, NameHash>;

// Instructions whose operands name an instruction that has not been seen yet are resolved at
// the end of their computation; calls to computations at the end of the module.
struct PendingOperand {
  Instruction* instr;
  int slot;
  bool control;
  std::string_view name;
  size_t offset;
};

struct PendingCall {
  Instruction* instr;
  int slot;
  std::string name;
  size_t offset;
};

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options)
      : options_(options), lex_(text), text_(text) {}

  absl::StatusOr<std::unique_ptr<Module>> RunModule();
  absl::StatusOr<Shape> RunShape();
  absl::StatusOr<Literal> RunShapedLiteral();

 private:
  // --- errors ---
  bool ErrorAt(size_t offset, std::string msg) {
    if (error_.empty()) {
      error_ = std::move(msg);
      error_offset_ = offset;
    }
    return false;
  }
  bool Error(std::string msg) {
    if (lex_.kind() == TokKind::kError) {
      return ErrorAt(lex_.tok().offset, lex_.tok().str);
    }
    return ErrorAt(lex_.tok().offset, std::move(msg));
  }
  std::string Got() const {
    const Token& t = lex_.tok();
    if (t.kind == TokKind::kEof) return "got end of input";
    std::string_view name = TokKindName(t.kind);
    if (!name.empty() && name.front() == '\'') return StrCat("got ", name);
    std::string_view shown = lex_.text().substr(t.offset, std::min<size_t>(t.end - t.offset, 40));
    return StrCat("got ", name, " '", std::string(shown), "'");
  }
  bool Expected(std::string_view what) { return Error(StrCat("expected ", what, ", ", Got())); }
  absl::Status MakeStatus() const;

  bool Expect(TokKind kind, std::string_view what) {
    if (lex_.kind() != kind) return Expected(what);
    lex_.Next();
    return true;
  }
  bool TryConsume(TokKind kind) {
    if (lex_.kind() != kind) return false;
    lex_.Next();
    return true;
  }
  bool AtIdent(std::string_view word) const {
    return lex_.kind() == TokKind::kIdent && lex_.tok().text == word;
  }
  bool Deeper() {
    if (++depth_ > options_.max_depth) {
      return Error(StrCat("nesting is deeper than the limit of ", options_.max_depth));
    }
    return true;
  }
  struct DepthGuard {
    explicit DepthGuard(int* d) : d(d) {}
    ~DepthGuard() { --*d; }
    int* d;
  };

  // --- module structure ---
  bool ParseModuleBody();
  bool ParseHeaderAttribute(std::string_view name, size_t offset);
  bool ParseStackFrameIndex();
  bool ParseComputation(bool top_level, Computation** out);
  bool ParseInstructionList(Computation* comp, bool inline_body);
  bool ParseInstruction(Computation* comp, NameMap* names,
                        std::vector<PendingOperand>* pending, Instruction** out, bool* is_root);
  // From the optional result shape on: `[shape] opcode(operands), attributes`. Nested operand
  // instructions (`add(f32[] parameter(0), ...)`) come through here with nested=true, already
  // holding the shape parsed by the operand list, and may not carry attributes.
  bool BuildAsyncWrappedComputation(Instruction* start, Instruction* wrapped, size_t offset);
  bool ParseInstructionBody(Computation* comp,
                            NameMap* names,
                            std::vector<PendingOperand>* pending, std::string name,
                            size_t name_offset, bool nested, Shape* nested_shape,
                            bool nested_has_shape, Instruction** out);
  bool ParseAttribute(Instruction* instr, std::string_view name, size_t name_offset);
  bool ParseComputationRef(Instruction* instr);
  bool ParseComputationRefList(Instruction* instr);

  // --- values ---
  bool ParseShape(Shape* shape);
  // Parses a shape and returns the module's interned copy. Identical shape texts are parsed
  // once per module: long-form dumps repeat every operand's shape, so this is the hot path.
  bool ParseInternedShape(const Shape** out);
  size_t ScanShapeEnd(size_t start) const;
  bool ParseArrayShape(Shape* shape);
  bool ParseLayout(Shape* shape);
  bool ParseInt64(int64_t* v);
  bool ParseInt32(int32_t* v);
  bool ParseBool(bool* v);
  bool ParseDouble(double* v);
  bool ParseIntList(std::vector<int64_t>* v);  // {1,2,3}
  bool ParseIntListList(std::vector<std::vector<int64_t>>* v);
  bool ParseParenIntList(std::vector<int64_t>* v);  // (1,2,3)
  bool ParseShapeIndex(ShapeIndex* v) { return ParseIntList(v); }
  bool ParseBoolList(std::vector<bool>* v);
  bool ParseString(std::string* v);
  bool ParseIdentWord(std::string_view* v);
  bool ParseWindow(Window* w);
  bool ParseDxD(std::vector<int64_t>* v);
  bool ParseConvDimLabels(ConvolutionDimensionNumbers* d);
  bool ParsePadding(PaddingConfig* p);
  bool ParseSliceRanges(std::vector<SliceDimension>* s);
  bool ParseSharding(Sharding* s);
  bool ParseSingleSharding(Sharding* s, bool braced);
  bool ParseIotaTail(IotaDeviceList* iota);
  bool ParseReplicaGroups(ReplicaGroups* g);
  bool ParseMeshReplicaGroups(MeshReplicaGroups* m);
  bool ParseMetadata(OpMetadata* m);
  bool ParseFrontendAttributes(FrontendAttributes* f);
  bool ParseBackendConfig(std::string* v);
  bool ParseStatistics(StatisticsViz* s);
  bool ParseResultAccuracy(ResultAccuracy* r);
  bool ParseAliasing(std::vector<OutputOperandAlias>* a);
  bool ParsePrecisionList(std::vector<Precision>* p);
  bool ParseDomain(InstructionAttrs* a);
  bool ParseLiteral(const Shape& shape, Literal* lit);
  bool ParseLiteralElements(const Shape& shape, Literal* lit);
  bool ParseScalarInto(PrimitiveType type, Literal* lit, int64_t index);
  bool ParseComponent(PrimitiveType type, Literal* lit, int64_t component);
  bool ParseShapedLiteral(Literal* lit);

  const ParseOptions& options_;
  Lexer lex_;
  std::string_view text_;
  std::unique_ptr<Module> module_;
  std::vector<PendingCall> pending_calls_;
  absl::flat_hash_map<std::string, Computation*> computations_by_name_;
  absl::flat_hash_map<std::string_view, const Shape*, NameHash> shape_cache_;
  // Instructions written without a result shape, with the opcode's offset; their shapes are
  // inferred once every name in the module is resolved.
  std::vector<std::pair<Instruction*, size_t>> shapeless_;
  std::string error_;
  size_t error_offset_ = 0;
  int depth_ = 0;
  int anon_counter_ = 0;
  // Names given to the computations that "<op>-start" sugar wraps.
  absl::flat_hash_set<std::string> sugar_names_;
};

absl::Status Parser::MakeStatus() const {
  std::string_view full = options_.enclosing_text.empty() ? text_ : options_.enclosing_text;
  size_t base = 0;
  if (!options_.enclosing_text.empty() && text_.data() >= full.data() &&
      text_.data() + text_.size() <= full.data() + full.size()) {
    base = static_cast<size_t>(text_.data() - full.data());
  } else {
    full = text_;
  }
  LineIndex index(full);
  SourceLocation loc = index.Locate(base + error_offset_);
  return absl::InvalidArgumentError(
      FormatDiagnostic(options_.file_name, full, loc, error_));
}

// ----------------------------------------------------------------------------------------------
// Module structure

absl::StatusOr<std::unique_ptr<Module>> Parser::RunModule() {
  lex_.SeekTo(0);
  if (!ParseModuleBody()) return MakeStatus();
  return std::move(module_);
}

bool Parser::ParseModuleBody() {
  if (AtIdent("HloModule")) {
    lex_.Next();
    std::string name;
    if (lex_.kind() == TokKind::kIdent || lex_.kind() == TokKind::kName ||
        lex_.kind() == TokKind::kPrimType) {
      name = std::string(lex_.tok().text);
      lex_.Next();
    } else if (lex_.kind() == TokKind::kAttrName) {
      return Error("a module name must be followed by ',' before header attributes");
    } else {
      return Expected("module name after 'HloModule'");
    }
    module_ = std::make_unique<Module>(std::move(name));
    while (lex_.kind() == TokKind::kComma) {
      lex_.Next();
      if (lex_.kind() != TokKind::kAttrName) return Expected("header attribute name=value");
      std::string_view attr = lex_.tok().text;
      size_t offset = lex_.tok().offset;
      lex_.Next();
      if (!ParseHeaderAttribute(attr, offset)) return false;
    }
  } else {
    module_ = std::make_unique<Module>("");
  }
  if (AtIdent("FileNames")) {
    if (!ParseStackFrameIndex()) return false;
  }
  Computation* last = nullptr;
  Computation* entry = nullptr;
  while (lex_.kind() != TokKind::kEof) {
    bool is_entry = AtIdent("ENTRY");
    size_t offset = lex_.tok().offset;
    Computation* comp = nullptr;
    if (!ParseComputation(true, &comp)) return false;
    if (is_entry) {
      if (entry) return ErrorAt(offset, "a module can have only one ENTRY computation");
      entry = comp;
    }
    last = comp;
  }
  if (!last) {
    return Error(module_->name().empty() ? "expected an HLO module or computation"
                                         : "expected at least one computation");
  }
  if (!entry) entry = last;
  module_->set_entry(entry);
  if (module_->name().empty()) module_->set_name("module_" + entry->name());
  for (PendingCall& call : pending_calls_) {
    auto it = computations_by_name_.find(call.name);
    if (it == computations_by_name_.end()) {
      return ErrorAt(call.offset, StrCat("computation '", call.name, "' is not defined"));
    }
    (*call.instr->mutable_called_computations())[call.slot] = it->second;
  }
  for (auto& [instr, offset] : shapeless_) {
    absl::StatusOr<Shape> shape = InferShape(*instr);
    if (!shape.ok()) {
      return ErrorAt(offset, StrCat("cannot infer the result shape of '", instr->name(), "': ",
                                    shape.status().message(), "; write the shape before the opcode"));
    }
    instr->set_shape(module_->InternShape(*shape));
  }
  return true;
}

bool Parser::ParseHeaderAttribute(std::string_view name, size_t offset) {
  ModuleConfig& config = module_->config();
  auto bool_or_list = [&](std::vector<bool>* out) {
    if (lex_.kind() == TokKind::kLbrace) return ParseBoolList(out);
    bool b;
    if (!ParseBool(&b)) return false;
    *out = {b};
    return true;
  };
  if (name == "is_scheduled") return ParseBool(&config.is_scheduled);
  if (name == "replica_count") return ParseInt64(&config.replica_count);
  if (name == "num_partitions") return ParseInt64(&config.num_partitions);
  if (name == "alias_passthrough_params") return ParseBool(&config.alias_passthrough_params);
  if (name == "allow_spmd_sharding_propagation_to_parameters") {
    return bool_or_list(&config.allow_spmd_sharding_propagation_to_parameters);
  }
  if (name == "allow_spmd_sharding_propagation_to_output") {
    return bool_or_list(&config.allow_spmd_sharding_propagation_to_output);
  }
  if (name == "frontend_attributes") return ParseFrontendAttributes(&config.frontend_attributes);
  if (name == "entry_computation_layout") {
    if (!Expect(TokKind::kLbrace, "'{' to start entry_computation_layout")) return false;
    if (!Expect(TokKind::kLparen, "'(' before the parameter shapes")) return false;
    ProgramShape ps;
    if (lex_.kind() != TokKind::kRparen) {
      do {
        Shape s;
        if (!ParseShape(&s)) return false;
        ps.parameters.push_back(std::move(s));
      } while (TryConsume(TokKind::kComma));
    }
    if (!Expect(TokKind::kRparen, "')' after the parameter shapes")) return false;
    if (!Expect(TokKind::kArrow, "'->' before the result shape")) return false;
    if (!ParseShape(&ps.result)) return false;
    if (!Expect(TokKind::kRbrace, "'}' to end entry_computation_layout")) return false;
    config.entry_computation_layout = std::move(ps);
    return true;
  }
  if (name == "input_output_alias") {
    config.has_input_output_alias = true;
    if (!Expect(TokKind::kLbrace, "'{' to start input_output_alias")) return false;
    while (lex_.kind() != TokKind::kRbrace) {
      InputOutputAlias alias;
      if (!ParseShapeIndex(&alias.output_index)) return false;
      if (!Expect(TokKind::kColon, "':' after the output shape index")) return false;
      if (!Expect(TokKind::kLparen, "'(' before the parameter number")) return false;
      if (!ParseInt64(&alias.parameter_number)) return false;
      if (!Expect(TokKind::kComma, "',' after the parameter number")) return false;
      if (!ParseShapeIndex(&alias.parameter_index)) return false;
      if (TryConsume(TokKind::kComma)) {
        if (AtIdent("must-alias")) {
          alias.must_alias = true;
        } else if (!AtIdent("may-alias")) {
          return Expected("'must-alias' or 'may-alias'");
        }
        lex_.Next();
      }
      if (!Expect(TokKind::kRparen, "')' to end the alias entry")) return false;
      config.input_output_alias.push_back(std::move(alias));
      if (!TryConsume(TokKind::kComma)) break;
    }
    return Expect(TokKind::kRbrace, "'}' to end input_output_alias");
  }
  if (name == "buffer_donor") {
    config.has_buffer_donor = true;
    if (!Expect(TokKind::kLbrace, "'{' to start buffer_donor")) return false;
    while (lex_.kind() != TokKind::kRbrace) {
      BufferDonor donor;
      if (!Expect(TokKind::kLparen, "'(' to start a buffer donor")) return false;
      if (!ParseInt64(&donor.parameter_number)) return false;
      if (!Expect(TokKind::kComma, "',' after the parameter number")) return false;
      if (!ParseShapeIndex(&donor.parameter_index)) return false;
      if (!Expect(TokKind::kRparen, "')' to end the buffer donor")) return false;
      config.buffer_donors.push_back(std::move(donor));
      if (!TryConsume(TokKind::kComma)) break;
    }
    return Expect(TokKind::kRbrace, "'}' to end buffer_donor");
  }
  if (name == "origin_recovery_table") {
    config.origin_recovery_table = std::string(lex_.TakeRawValue());
    return true;
  }
  (void)offset;
  std::string raw(lex_.TakeRawValue());
  if (raw.empty()) return Expected(StrCat("a value for header attribute '", name, "'"));
  config.unknown.emplace_back(std::string(name), std::move(raw));
  return true;
}

bool Parser::ParseStackFrameIndex() {
  StackFrameIndex& index = module_->stack_frames();
  auto parse_entries = [&](std::string_view section, auto&& fn) {
    if (!AtIdent(section)) return true;
    lex_.Next();
    int64_t expected_id = 1;
    while (lex_.kind() == TokKind::kInt) {
      int64_t id;
      if (!ParseInt64(&id)) return false;
      if (id != expected_id) {
        return Error(StrCat(section, " entries must be numbered 1, 2, ... in order; expected ",
                                  expected_id));
      }
      ++expected_id;
      if (!fn()) return false;
    }
    return true;
  };
  auto sub_int = [&](std::string_view want, int32_t* out) {
    if (lex_.kind() != TokKind::kAttrName || lex_.tok().text != want) {
      return Expected(StrCat("'", want, "='"));
    }
    lex_.Next();
    return ParseInt32(out);
  };
  if (!parse_entries("FileNames", [&] {
        std::string s;
        if (!ParseString(&s)) return false;
        index.file_names.push_back(std::move(s));
        return true;
      })) {
    return false;
  }
  if (!parse_entries("FunctionNames", [&] {
        std::string s;
        if (!ParseString(&s)) return false;
        index.function_names.push_back(std::move(s));
        return true;
      })) {
    return false;
  }
  if (!parse_entries("FileLocations", [&] {
        FileLocation loc;
        if (!Expect(TokKind::kLbrace, "'{' to start a file location")) return false;
        if (!sub_int("file_name_id", &loc.file_name_id) ||
            !sub_int("function_name_id", &loc.function_name_id) || !sub_int("line", &loc.line) ||
            !sub_int("end_line", &loc.end_line) || !sub_int("column", &loc.column) ||
            !sub_int("end_column", &loc.end_column)) {
          return false;
        }
        index.file_locations.push_back(loc);
        return Expect(TokKind::kRbrace, "'}' to end the file location");
      })) {
    return false;
  }
  return parse_entries("StackFrames", [&] {
    StackFrame frame;
    if (!Expect(TokKind::kLbrace, "'{' to start a stack frame")) return false;
    if (!sub_int("file_location_id", &frame.file_location_id)) return false;
    int32_t parent = 0;
    if (!sub_int("parent_frame_id", &parent)) return false;
    frame.parent_frame_id = parent - 1;
    index.stack_frames.push_back(frame);
    return Expect(TokKind::kRbrace, "'}' to end the stack frame");
  });
}

bool Parser::ParseComputation(bool top_level, Computation** out) {
  if (!Deeper()) return false;
  DepthGuard guard(&depth_);
  std::string name;
  size_t name_offset = lex_.tok().offset;
  if (top_level) {
    if (AtIdent("ENTRY")) lex_.Next();
    name_offset = lex_.tok().offset;
    if (lex_.kind() == TokKind::kName || lex_.kind() == TokKind::kIdent) {
      name = std::string(lex_.tok().text);
      lex_.Next();
    } else {
      return Expected("a computation name");
    }
    if (lex_.kind() == TokKind::kLparen) {
      // Signature: parsed for syntax, then ignored (parameters come from parameter(N)).
      lex_.Next();
      while (lex_.kind() != TokKind::kRparen) {
        if (lex_.kind() != TokKind::kName) return Expected("'name:' of a signature parameter");
        lex_.Next();
        TryConsume(TokKind::kColon);  // after a %name the ':' is still there
        Shape ignored;
        if (!ParseShape(&ignored)) return false;
        if (!TryConsume(TokKind::kComma)) break;
      }
      if (!Expect(TokKind::kRparen, "')' to end the signature")) return false;
      if (!Expect(TokKind::kArrow, "'->' after the signature")) return false;
      Shape ignored;
      if (!ParseShape(&ignored)) return false;
    }
  } else {
    name = StrCat("_inline.", anon_counter_++);
  }
  if (lex_.kind() != TokKind::kLbrace) {
    return Expected(top_level ? "'{' to start the computation body" : "'{'");
  }
  if (computations_by_name_.contains(name)) {
    return ErrorAt(name_offset, StrCat("computation '", name, "' is already defined"));
  }
  auto comp_owned = std::make_unique<Computation>(name);
  Computation* comp = comp_owned.get();
  if (!ParseInstructionList(comp, !top_level)) return false;
  if (top_level && lex_.kind() == TokKind::kComma) {
    lex_.Next();
    if (lex_.kind() != TokKind::kAttrName || lex_.tok().text != "execution_thread") {
      return Expected("'execution_thread=' after the computation");
    }
    lex_.Next();
    std::string thread;
    if (!ParseString(&thread)) return false;
    if (thread != "main") comp->set_execution_thread(std::move(thread));
  }
  module_->AddComputation(std::move(comp_owned));
  computations_by_name_[name] = comp;
  *out = comp;
  return true;
}

bool Parser::ParseInstructionList(Computation* comp, bool inline_body) {
  size_t open_offset = lex_.tok().offset;
  lex_.Next();  // '{'
  NameMap names;
  std::vector<PendingOperand> pending;
  Instruction* root = nullptr;
  Instruction* last = nullptr;
  while (lex_.kind() != TokKind::kRbrace) {
    if (lex_.kind() == TokKind::kEof) {
      return ErrorAt(open_offset, StrCat("computation '", comp->name(),
                                               "' is not closed: expected '}' before end of input"));
    }
    Instruction* instr = nullptr;
    bool is_root = false;
    size_t offset = lex_.tok().offset;
    if (!ParseInstruction(comp, &names, &pending, &instr, &is_root)) return false;
    if (is_root) {
      if (root) {
        return ErrorAt(offset, StrCat("computation '", comp->name(),
                                            "' has more than one ROOT instruction"));
      }
      root = instr;
    }
    last = instr;
  }
  lex_.Next();  // '}'
  if (!last) {
    return ErrorAt(open_offset, StrCat("computation '", comp->name(),
                                             "' has no instructions"));
  }
  for (const PendingOperand& p : pending) {
    auto it = names.find(p.name);
    if (it == names.end()) {
      return ErrorAt(p.offset, StrCat("instruction '", p.name, "' is not defined in computation '",
                                            comp->name(), "'"));
    }
    auto* list = p.control ? p.instr->mutable_control_predecessors() : p.instr->mutable_operands();
    (*list)[p.slot] = it->second;
  }
  comp->set_root(root ? root : last);
  (void)inline_body;
  return true;
}

bool Parser::ParseInstruction(Computation* comp,
                              NameMap* names,
                              std::vector<PendingOperand>* pending, Instruction** out,
                              bool* is_root) {
  if (AtIdent("ROOT")) {
    *is_root = true;
    lex_.Next();
  }
  std::string_view name;
  size_t name_offset = lex_.tok().offset;
  switch (lex_.kind()) {
    case TokKind::kName:
    case TokKind::kIdent:
      name = lex_.tok().text;
      lex_.Next();
      if (!Expect(TokKind::kEqual, "'=' after the instruction name")) return false;
      break;
    case TokKind::kAttrName:  // `name=shape ...` without a space; accepted leniently
      name = lex_.tok().text;
      lex_.Next();
      break;
    case TokKind::kPrimType:
      return Error(StrCat("'", lex_.tok().text,
                                "' is an element type and cannot name an instruction"));
    default:
      return Expected("an instruction ('name = shape opcode(operands)') or '}'");
  }
  if (names->contains(name)) {
    return ErrorAt(name_offset, StrCat("instruction '", name,
                                             "' is already defined in computation '",
                                             comp->name(), "'"));
  }
  return ParseInstructionBody(comp, names, pending, std::string(name), name_offset, false,
                              nullptr, false, out);
}

bool Parser::ParseInstructionBody(Computation* comp,
                                  NameMap* names,
                                  std::vector<PendingOperand>* pending, std::string name,
                                  size_t name_offset, bool nested, Shape* nested_shape,
                                  bool nested_has_shape, Instruction** out) {
  if (!Deeper()) return false;
  DepthGuard guard(&depth_);
  (void)name_offset;
  // Optional result shape.
  static const Shape* const kNoShape = new Shape();
  const Shape* shape_ptr = kNoShape;
  bool has_shape = false;
  if (nested) {
    has_shape = nested_has_shape;
    if (has_shape) shape_ptr = module_->InternShape(*nested_shape);
  } else if (lex_.kind() == TokKind::kPrimType || lex_.kind() == TokKind::kLparen ||
             (AtIdent("b") && lex_.text().substr(lex_.tok().end, 1) == "(")) {
    if (!ParseInternedShape(&shape_ptr)) return false;
    has_shape = true;
  }
  const Shape& shape = *shape_ptr;
  if (lex_.kind() != TokKind::kIdent) return Expected("an opcode");
  std::string_view opcode_text = lex_.tok().text;
  size_t opcode_offset = lex_.tok().offset;
  std::optional<Opcode> opcode = ParseOpcode(opcode_text);
  // Asynchronous syntax sugar: "<op>-start", "<op>-update", "<op>-done" for an opcode without
  // native start/done forms read as async-start/update/done; the start wraps <op> in a
  // computation of its own.
  Opcode sugar_wrapped = Opcode::kParameter;
  bool sugar = false;
  if (!opcode) {
    for (auto [suffix, async_op] : {std::pair<std::string_view, Opcode>{"-start", Opcode::kAsyncStart},
                                    {"-update", Opcode::kAsyncUpdate},
                                    {"-done", Opcode::kAsyncDone}}) {
      if (opcode_text.size() <= suffix.size() ||
          opcode_text.substr(opcode_text.size() - suffix.size()) != suffix) {
        continue;
      }
      std::optional<Opcode> wrapped =
          ParseOpcode(opcode_text.substr(0, opcode_text.size() - suffix.size()));
      if (!wrapped || !CanBeAsyncSugar(*wrapped)) continue;
      opcode = async_op;
      sugar_wrapped = *wrapped;
      sugar = true;
      break;
    }
  }
  if (!opcode) {
    return Error(StrCat("unknown opcode '", opcode_text, "'"));
  }
  if (sugar && *opcode == Opcode::kAsyncStart &&
      (!has_shape || !shape.IsTuple() || shape.tuple_count() < 2 ||
       !shape.tuple_shape(0).IsTuple())) {
    return ErrorAt(opcode_offset,
                   StrCat("'", opcode_text, "' needs its result shape: ((operand shapes), ",
                          "result shape[, context...])"));
  }
  if (!has_shape && !OpcodeShapeIsInferable(*opcode)) {
    return ErrorAt(opcode_offset, StrCat("'", opcode_text,
                                               "' needs its result shape before the opcode"));
  }
  lex_.Next();
  if (nested) {
    // Generated names: <opcode>.anon, then .anon.1, .anon.2, ... within the computation.
    std::string base = StrCat(opcode_text, ".anon");
    name = base;
    for (int n = 1; names->contains(name); ++n) name = StrCat(base, ".", n);
  }
  Instruction* instr = module_->NewInstruction(
      *opcode, std::move(name), has_shape ? shape_ptr : module_->InternShape(shape));
  if (!has_shape) shapeless_.emplace_back(instr, opcode_offset);
  // The wrapped instruction of an "<op>-start": it takes the attributes that belong to <op>.
  Instruction* wrapped = nullptr;
  if (sugar) {
    instr->set_async_sugar(true);
    if (*opcode == Opcode::kAsyncStart) {
      wrapped = module_->NewInstruction(sugar_wrapped, std::string(OpcodeName(sugar_wrapped)),
                                        module_->InternShape(shape.tuple_shape(1)));
    }
  }
  if (!Expect(TokKind::kLparen, "'(' after the opcode")) return false;
  if (*opcode == Opcode::kConstant) {
    if (!has_shape) return Error("constant needs a result shape");
    auto lit = std::make_unique<Literal>();
    if (!ParseLiteral(shape, lit.get())) return false;
    instr->set_literal(std::move(lit));
  } else if (*opcode == Opcode::kParameter) {
    int64_t number;
    if (!ParseInt64(&number)) return false;
    if (number < 0) return Error("parameter numbers must not be negative");
    instr->set_index(number);
  } else {
    while (lex_.kind() != TokKind::kRparen) {
      // Operands: [shape] name, or a nested instruction [shape] opcode(...). Inline operand
      // shapes of named operands are informational; the definition's shape is what counts.
      Shape operand_shape;
      bool operand_has_shape = false;
      if (lex_.kind() == TokKind::kPrimType || lex_.kind() == TokKind::kLparen) {
        const Shape* interned = nullptr;
        if (!ParseInternedShape(&interned)) return false;
        operand_has_shape = true;
        if (lex_.kind() == TokKind::kIdent && lex_.text().substr(lex_.tok().end, 1) == "(") {
          operand_shape = *interned;  // needed for a nested instruction
        }
      }
      if (lex_.kind() == TokKind::kIdent && lex_.text().substr(lex_.tok().end, 1) == "(" &&
          ParseOpcode(lex_.tok().text)) {
        Instruction* inner = nullptr;
        if (!ParseInstructionBody(comp, names, pending, "", lex_.tok().offset, true,
                                  &operand_shape, operand_has_shape, &inner)) {
          return false;
        }
        instr->mutable_operands()->push_back(inner);
        if (!TryConsume(TokKind::kComma)) break;
        continue;
      }
      if (lex_.kind() != TokKind::kName && lex_.kind() != TokKind::kIdent) {
        return Expected("an operand name");
      }
      std::string_view operand = lex_.tok().text;
      auto it = names->find(operand);
      int slot = instr->operand_count();
      instr->mutable_operands()->push_back(it == names->end() ? nullptr : it->second);
      if (it == names->end()) {
        pending->push_back({instr, slot, false, operand, lex_.tok().offset});
      }
      lex_.Next();
      if (!TryConsume(TokKind::kComma)) break;
    }
  }
  if (!Expect(TokKind::kRparen, "')' or ',' in the operand list")) return false;
  // Attributes.
  // Attribute names seen on this instruction (few, so a linear scan beats a hash map).
  absl::InlinedVector<std::string_view, 8> seen;
  while (!nested && lex_.kind() == TokKind::kComma) {
    lex_.Next();
    if (lex_.kind() != TokKind::kAttrName) {
      return Expected("an attribute 'name=value' after ','");
    }
    std::string_view attr = lex_.tok().text;
    size_t attr_offset = lex_.tok().offset;
    if (std::find(seen.begin(), seen.end(), attr) != seen.end()) {
      return Error(StrCat("attribute '", attr, "' is given twice"));
    }
    seen.push_back(attr);
    lex_.Next();
    if (attr == "control-predecessors") {
      if (!Expect(TokKind::kLbrace, "'{' to start control-predecessors")) return false;
      while (lex_.kind() != TokKind::kRbrace) {
        if (lex_.kind() != TokKind::kName && lex_.kind() != TokKind::kIdent) {
          return Expected("an instruction name");
        }
        std::string_view pred = lex_.tok().text;
        auto it = names->find(pred);
        int slot = static_cast<int>(instr->control_predecessors().size());
        instr->mutable_control_predecessors()->push_back(it == names->end() ? nullptr : it->second);
        if (it == names->end()) pending->push_back({instr, slot, true, pred, lex_.tok().offset});
        lex_.Next();
        if (!TryConsume(TokKind::kComma)) break;
      }
      if (!Expect(TokKind::kRbrace, "'}' to end control-predecessors")) return false;
      continue;
    }
    // An "<op>-start" keeps what every instruction has; the rest is <op>'s.
    const bool own = attr == "metadata" || attr == "backend_config" ||
                     attr == "frontend_attributes" || attr == "sharding" ||
                     attr == "statistics" || attr == "async_execution_thread";
    if (!ParseAttribute(wrapped != nullptr && !own ? wrapped : instr, attr, attr_offset)) {
      return false;
    }
  }
  if (lex_.kind() == TokKind::kError) return Error("");
  if (wrapped != nullptr && !BuildAsyncWrappedComputation(instr, wrapped, opcode_offset)) {
    return false;
  }
  if (sugar && *opcode != Opcode::kAsyncStart && instr->operand_count() == 1 &&
      instr->operand(0) != nullptr) {
    // "<op>-update" / "<op>-done" continue an "<op>-start" (through its updates).
    const Instruction* start = instr->operand(0);
    while (start->opcode() == Opcode::kAsyncUpdate && start->operand_count() == 1 &&
           start->operand(0) != nullptr) {
      start = start->operand(0);
    }
    const Computation* called =
        start->opcode() == Opcode::kAsyncStart && !start->called_computations().empty()
            ? start->called_computations()[0]
            : nullptr;
    if (called == nullptr || called->root() == nullptr ||
        called->root()->opcode() != sugar_wrapped) {
      return ErrorAt(opcode_offset,
                     StrCat("'", opcode_text, "' takes the value of a '",
                            OpcodeName(sugar_wrapped), "-start' (or -update), not '",
                            instr->operand(0)->name(), "'"));
    }
  }
  comp->AddInstruction(instr);
  names->emplace(instr->name(), instr);
  *out = instr;
  return true;
}

// ----------------------------------------------------------------------------------------------
// Attributes

bool Parser::BuildAsyncWrappedComputation(Instruction* start, Instruction* wrapped,
                                          size_t offset) {
  const Shape& operands = start->shape().tuple_shape(0);
  if (operands.tuple_count() != start->operand_count()) {
    return ErrorAt(offset, StrCat("'", start->name(), "' has ", start->operand_count(),
                                  " operand(s) but its shape lists ", operands.tuple_count(),
                                  " in its first element"));
  }
  std::string base = StrCat("wrapped_", OpcodeName(wrapped->opcode()), "_computation");
  for (char& c : base) {
    if (c == '-') c = '_';
  }
  std::string name = base;
  for (int n = 1; computations_by_name_.contains(name) || sugar_names_.contains(name); ++n) {
    name = StrCat(base, ".", n);
  }
  sugar_names_.insert(name);
  auto comp_owned = std::make_unique<Computation>(name);
  Computation* comp = comp_owned.get();
  for (int i = 0; i < start->operand_count(); ++i) {
    Instruction* param = module_->NewInstruction(
        Opcode::kParameter, StrCat("param_", i), module_->InternShape(operands.tuple_shape(i)));
    param->set_index(i);
    comp->AddInstruction(param);
    wrapped->mutable_operands()->push_back(param);
  }
  comp->AddInstruction(wrapped);
  comp->set_root(wrapped);
  module_->AddComputation(std::move(comp_owned));
  start->mutable_called_computations()->push_back(comp);
  return true;
}

bool Parser::ParseComputationRef(Instruction* instr) {
  if (lex_.kind() == TokKind::kLbrace) {
    Computation* inline_comp = nullptr;
    if (!ParseComputation(false, &inline_comp)) return false;
    instr->mutable_called_computations()->push_back(inline_comp);
    return true;
  }
  if (lex_.kind() != TokKind::kName && lex_.kind() != TokKind::kIdent) {
    return Expected("a computation name");
  }
  std::string name(lex_.tok().text);
  auto it = computations_by_name_.find(name);
  int slot = static_cast<int>(instr->called_computations().size());
  instr->mutable_called_computations()->push_back(it == computations_by_name_.end() ? nullptr
                                                                                   : it->second);
  if (it == computations_by_name_.end()) {
    pending_calls_.push_back({instr, slot, std::move(name), lex_.tok().offset});
  }
  lex_.Next();
  return true;
}

bool Parser::ParseComputationRefList(Instruction* instr) {
  if (!Expect(TokKind::kLbrace, "'{' to start a computation list")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    if (!ParseComputationRef(instr)) return false;
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "'}' to end the computation list");
}

template <typename E>
struct EnumWord {
  std::string_view word;
  E value;
};

template <typename E, size_t N>
bool LookupEnum(std::string_view text, const EnumWord<E> (&table)[N], E* out, bool fold_case) {
  for (const auto& row : table) {
    bool eq = fold_case ? (text.size() == row.word.size() &&
                           std::equal(text.begin(), text.end(), row.word.begin(),
                                      [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
                        : text == row.word;
    if (eq) {
      *out = row.value;
      return true;
    }
  }
  return false;
}

template <typename E, size_t N>
std::string EnumChoices(const EnumWord<E> (&table)[N]) {
  std::string s;
  for (const auto& row : table) StrAppend(&s, s.empty() ? "" : ", ", row.word);
  return s;
}

const EnumWord<ComparisonDirection> kDirections[] = {
    {"EQ", ComparisonDirection::kEq}, {"NE", ComparisonDirection::kNe},
    {"GE", ComparisonDirection::kGe}, {"GT", ComparisonDirection::kGt},
    {"LE", ComparisonDirection::kLe}, {"LT", ComparisonDirection::kLt}};
const EnumWord<ComparisonType> kComparisonTypes[] = {
    {"FLOAT", ComparisonType::kFloat}, {"TOTALORDER", ComparisonType::kTotalOrder},
    {"SIGNED", ComparisonType::kSigned}, {"UNSIGNED", ComparisonType::kUnsigned}};
const EnumWord<FusionKind> kFusionKinds[] = {{"kLoop", FusionKind::kLoop},
                                             {"kInput", FusionKind::kInput},
                                             {"kOutput", FusionKind::kOutput},
                                             {"kCustom", FusionKind::kCustom}};
const EnumWord<FftType> kFftTypes[] = {{"FFT", FftType::kFft},
                                       {"IFFT", FftType::kIfft},
                                       {"RFFT", FftType::kRfft},
                                       {"IRFFT", FftType::kIrfft}};
const EnumWord<RandomDistribution> kDistributions[] = {{"rng_uniform", RandomDistribution::kUniform},
                                                       {"rng_normal", RandomDistribution::kNormal}};
const EnumWord<RandomAlgorithm> kRngAlgorithms[] = {{"rng_default", RandomAlgorithm::kDefault},
                                                    {"rng_three_fry", RandomAlgorithm::kThreeFry},
                                                    {"rng_philox", RandomAlgorithm::kPhilox}};
const EnumWord<TriangularTranspose> kTransposes[] = {
    {"NO_TRANSPOSE", TriangularTranspose::kNoTranspose},
    {"TRANSPOSE", TriangularTranspose::kTranspose},
    {"ADJOINT", TriangularTranspose::kAdjoint}};
const EnumWord<CustomCallSchedule> kSchedules[] = {{"SCHEDULE_NONE", CustomCallSchedule::kNone},
                                                   {"SCHEDULE_LATEST", CustomCallSchedule::kLatest},
                                                   {"SCHEDULE_EARLIEST", CustomCallSchedule::kEarliest}};
const EnumWord<CustomCallApiVersion> kApiVersions[] = {
    {"API_VERSION_ORIGINAL", CustomCallApiVersion::kOriginal},
    {"API_VERSION_STATUS_RETURNING", CustomCallApiVersion::kStatusReturning},
    {"API_VERSION_STATUS_RETURNING_UNIFIED", CustomCallApiVersion::kStatusReturningUnified},
    {"API_VERSION_TYPED_FFI", CustomCallApiVersion::kTypedFfi}};
const EnumWord<PaddingType> kPaddingTypes[] = {{"PADDING_VALID", PaddingType::kValid},
                                               {"PADDING_SAME", PaddingType::kSame}};
const EnumWord<ConvolutionKind> kConvKinds[] = {{"unset", ConvolutionKind::kUnset},
                                                {"fprop", ConvolutionKind::kFprop},
                                                {"dgrad", ConvolutionKind::kDgrad},
                                                {"wgrad", ConvolutionKind::kWgrad}};
const EnumWord<Precision> kPrecisions[] = {{"default", Precision::kDefault},
                                           {"high", Precision::kHigh},
                                           {"highest", Precision::kHighest},
                                           {"packed_nibble", Precision::kPackedNibble}};
const EnumWord<TriState> kTriStates[] = {{"true", TriState::kTrue}, {"false", TriState::kFalse}};

bool Parser::ParseAttribute(Instruction* instr, std::string_view name, size_t name_offset) {
  const Opcode op = instr->opcode();
  auto enum_attr = [&](auto& table, auto* out, bool fold_case) {
    if (lex_.kind() != TokKind::kIdent && lex_.kind() != TokKind::kPrimType &&
        lex_.kind() != TokKind::kName) {
      return Expected(StrCat("one of ", EnumChoices(table), " for '", name, "'"));
    }
    if (!LookupEnum(lex_.tok().text, table, out, fold_case)) {
      return Error(StrCat("unknown value '", lex_.tok().text, "' for '", name,
                                "'; expected one of ", EnumChoices(table)));
    }
    lex_.Next();
    return true;
  };
  auto a = [&]() { return instr->mutable_attrs(); };

  // Attributes every opcode may carry.
  if (name == "metadata") return ParseMetadata(instr->mutable_metadata());
  if (name == "sharding") {
    auto s = std::make_unique<Sharding>();
    if (!ParseSharding(s.get())) return false;
    instr->set_sharding(std::move(s));
    return true;
  }
  if (name == "frontend_attributes") {
    return ParseFrontendAttributes(instr->mutable_frontend_attributes());
  }
  if (name == "backend_config") {
    std::string v;
    if (!ParseBackendConfig(&v)) return false;
    instr->set_backend_config(std::move(v));
    return true;
  }
  if (name == "statistics") {
    a()->statistics.emplace();
    return ParseStatistics(&*a()->statistics);
  }
  if (name == "result_accuracy") {
    a()->result_accuracy.emplace();
    return ParseResultAccuracy(&*a()->result_accuracy);
  }
  if (name == "origin") {
    a()->origin = std::string(lex_.TakeRawValue());
    return true;
  }
  if (name == "parameter_replication") return ParseBoolList(&a()->parameter_replication);

  // Called computations.
  if (name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
      name == "select" || name == "scatter" || name == "true_computation" ||
      name == "false_computation") {
    // Order in called_computations: condition before body, select before scatter,
    // true before false, regardless of textual order.
    bool second = name == "body" || name == "scatter" || name == "false_computation";
    bool first = name == "condition" || name == "select" || name == "true_computation";
    if (!ParseComputationRef(instr)) return false;
    auto* called = instr->mutable_called_computations();
    if ((first || second) && called->size() == 2) {
      // Whichever came second textually: put into its canonical position.
      bool last_is_first = first;
      if (last_is_first) {
        std::swap((*called)[0], (*called)[1]);
        for (PendingCall& p : pending_calls_) {
          if (p.instr == instr) p.slot = 1 - p.slot;
        }
      }
    }
    return true;
  }
  if (name == "branch_computations") return ParseComputationRefList(instr);
  if (name == "called_computations") {
    a()->called_computations_as_list = true;
    return ParseComputationRefList(instr);
  }

  // Integer lists and scalars kept on the instruction itself.
  if (name == "dimensions") {
    instr->set_has_dimensions(true);
    return ParseIntList(instr->mutable_dimensions());
  }
  if (name == "index" && op == Opcode::kGetTupleElement) {
    int64_t v;
    if (!ParseInt64(&v)) return false;
    instr->set_index(v);
    return true;
  }
  if (name == "iota_dimension" && op == Opcode::kIota) {
    int64_t v;
    if (!ParseInt64(&v)) return false;
    instr->set_index(v);
    return true;
  }
  if (name == "inferred_dimension") return ParseInt64(&a()->inferred_dimension);

  // Comparisons and numerics.
  if (name == "direction" && op == Opcode::kCompare) {
    return enum_attr(kDirections, &a()->comparison_direction, false);
  }
  if (name == "type" && op == Opcode::kCompare) {
    return enum_attr(kComparisonTypes, &a()->comparison_type, false);
  }
  if (name == "exponent_bits" && op == Opcode::kReducePrecision) return ParseInt32(&a()->exponent_bits);
  if (name == "mantissa_bits" && op == Opcode::kReducePrecision) return ParseInt32(&a()->mantissa_bits);

  // Windows, convolution, dot.
  if (name == "window") {
    a()->window.emplace();
    return ParseWindow(&*a()->window);
  }
  if (name == "dim_labels") {
    a()->convolution_dimension_numbers.emplace();
    return ParseConvDimLabels(&*a()->convolution_dimension_numbers);
  }
  if (name == "feature_group_count") return ParseInt64(&a()->feature_group_count);
  if (name == "batch_group_count") return ParseInt64(&a()->batch_group_count);
  if (name == "conv_kind") return enum_attr(kConvKinds, &a()->conv_kind, true);
  if (name == "operand_precision") return ParsePrecisionList(&a()->precision_config.operand_precision);
  if (name == "algorithm") {
    if (op == Opcode::kRngBitGenerator) return enum_attr(kRngAlgorithms, &a()->rng_algorithm, true);
    std::string_view w;
    if (!ParseIdentWord(&w)) return false;
    std::string lower(w);
    for (char& c : lower) c = static_cast<char>(std::tolower(c));
    if (lower.rfind("alg_", 0) == 0) lower = lower.substr(4);
    a()->precision_config.algorithm = lower == "unset" ? "" : lower;
    return true;
  }
  auto dot_dims = [&](std::vector<int64_t> DotDimensionNumbers::*field) {
    if (!a()->dot_dimension_numbers) a()->dot_dimension_numbers.emplace();
    return ParseIntList(&((*a()->dot_dimension_numbers).*field));
  };
  if (name == "lhs_batch_dims") return dot_dims(&DotDimensionNumbers::lhs_batch_dimensions);
  if (name == "rhs_batch_dims") return dot_dims(&DotDimensionNumbers::rhs_batch_dimensions);
  if (name == "lhs_contracting_dims") return dot_dims(&DotDimensionNumbers::lhs_contracting_dimensions);
  if (name == "rhs_contracting_dims") return dot_dims(&DotDimensionNumbers::rhs_contracting_dimensions);
  if (name == "lhs_ragged_dims") return dot_dims(&DotDimensionNumbers::lhs_ragged_dimensions);
  if (name == "rhs_group_dims") return dot_dims(&DotDimensionNumbers::rhs_group_dimensions);
  if (name == "sparsity") {
    a()->sparsity = std::string(lex_.TakeRawValue());
    return true;
  }

  // Gather / scatter.
  auto gather_dims = [&](std::vector<int64_t> GatherDimensionNumbers::*field) {
    if (!a()->gather_dimension_numbers) a()->gather_dimension_numbers.emplace();
    return ParseIntList(&((*a()->gather_dimension_numbers).*field));
  };
  auto scatter_dims = [&](std::vector<int64_t> ScatterDimensionNumbers::*field) {
    if (!a()->scatter_dimension_numbers) a()->scatter_dimension_numbers.emplace();
    return ParseIntList(&((*a()->scatter_dimension_numbers).*field));
  };
  if (op == Opcode::kGather) {
    if (name == "offset_dims") return gather_dims(&GatherDimensionNumbers::offset_dims);
    if (name == "collapsed_slice_dims") return gather_dims(&GatherDimensionNumbers::collapsed_slice_dims);
    if (name == "start_index_map") return gather_dims(&GatherDimensionNumbers::start_index_map);
    if (name == "operand_batching_dims") return gather_dims(&GatherDimensionNumbers::operand_batching_dims);
    if (name == "start_indices_batching_dims") {
      return gather_dims(&GatherDimensionNumbers::start_indices_batching_dims);
    }
    if (name == "index_vector_dim") {
      if (!a()->gather_dimension_numbers) a()->gather_dimension_numbers.emplace();
      return ParseInt64(&a()->gather_dimension_numbers->index_vector_dim);
    }
  }
  if (op == Opcode::kScatter) {
    if (name == "update_window_dims") return scatter_dims(&ScatterDimensionNumbers::update_window_dims);
    if (name == "inserted_window_dims") return scatter_dims(&ScatterDimensionNumbers::inserted_window_dims);
    if (name == "scatter_dims_to_operand_dims") {
      return scatter_dims(&ScatterDimensionNumbers::scatter_dims_to_operand_dims);
    }
    if (name == "input_batching_dims") return scatter_dims(&ScatterDimensionNumbers::input_batching_dims);
    if (name == "scatter_indices_batching_dims") {
      return scatter_dims(&ScatterDimensionNumbers::scatter_indices_batching_dims);
    }
    if (name == "index_vector_dim") {
      if (!a()->scatter_dimension_numbers) a()->scatter_dimension_numbers.emplace();
      return ParseInt64(&a()->scatter_dimension_numbers->index_vector_dim);
    }
  }
  if (name == "slice_sizes") {
    if (op == Opcode::kCollectivePermute || op == Opcode::kCollectivePermuteStart) {
      return ParseIntListList(&a()->permute_slice_sizes);
    }
    return ParseIntList(&a()->slice_sizes);
  }
  if (name == "dynamic_slice_sizes") return ParseIntList(&a()->slice_sizes);
  if (name == "indices_are_sorted") return ParseBool(&a()->indices_are_sorted);
  if (name == "unique_indices") return ParseBool(&a()->unique_indices);
  if (name == "slice") return ParseSliceRanges(&a()->slice);
  if (name == "padding") {
    a()->padding.emplace();
    return ParsePadding(&*a()->padding);
  }

  // Collectives.
  if (name == "channel_id") {
    int64_t v;
    if (!ParseInt64(&v)) return false;
    a()->channel_id = v;
    return true;
  }
  if (name == "replica_groups") {
    a()->replica_groups.emplace();
    return ParseReplicaGroups(&*a()->replica_groups);
  }
  if (name == "constrain_layout") return ParseBool(&a()->constrain_layout);
  if (name == "use_global_device_ids") {
    bool v;
    if (!ParseBool(&v)) return false;
    a()->use_global_device_ids = v;
    return true;
  }
  if (name == "source_target_pairs") {
    std::vector<std::vector<int64_t>> pairs;
    size_t offset = lex_.tok().offset;
    if (!ParseIntListList(&pairs)) return false;
    for (const auto& p : pairs) {
      if (p.size() != 2) return ErrorAt(offset, "each source_target_pairs entry must be {source,target}");
      a()->source_target_pairs.emplace_back(p[0], p[1]);
    }
    return true;
  }
  if (name == "mode" && (op == Opcode::kAllReduce || op == Opcode::kAllReduceStart ||
                         op == Opcode::kReduceScatter)) {
    a()->legacy_mode = std::string(lex_.TakeRawValue());
    return true;
  }

  // Custom calls and fusions.
  if (name == "custom_call_target") return ParseString(&a()->custom_call_target);
  if (name == "api_version") {
    if (lex_.kind() == TokKind::kIdent &&
        (lex_.tok().text == "API_VERSION_UNSPECIFIED" || lex_.tok().text == "api_version_unspecified")) {
      return Error("api_version=API_VERSION_UNSPECIFIED is not allowed");
    }
    return enum_attr(kApiVersions, &a()->api_version, true);
  }
  if (name == "schedule") return enum_attr(kSchedules, &a()->schedule, true);
  if (name == "custom_call_has_side_effect") return ParseBool(&a()->custom_call_has_side_effect);
  if (name == "operand_layout_constraints") {
    if (!Expect(TokKind::kLbrace, "'{' to start operand_layout_constraints")) return false;
    a()->operand_layout_constraints.emplace();
    while (lex_.kind() != TokKind::kRbrace) {
      Shape s;
      if (!ParseShape(&s)) return false;
      a()->operand_layout_constraints->push_back(std::move(s));
      if (!TryConsume(TokKind::kComma)) break;
    }
    return Expect(TokKind::kRbrace, "'}' to end operand_layout_constraints");
  }
  if (name == "literal") {
    a()->custom_call_literal.emplace();
    return ParseShapedLiteral(&*a()->custom_call_literal);
  }
  if (name == "padding_type") return enum_attr(kPaddingTypes, &a()->padding_type, true);
  if (name == "output_to_operand_aliasing") return ParseAliasing(&a()->output_operand_aliasing);
  if (name == "kind" && op == Opcode::kFusion) return enum_attr(kFusionKinds, &a()->fusion_kind, false);

  // Everything else with a fixed meaning.
  if (name == "fft_type" && op == Opcode::kFft) return enum_attr(kFftTypes, &a()->fft_type, false);
  if (name == "fft_length") return ParseIntList(&a()->fft_length);
  if (name == "left_side") return ParseBool(&a()->left_side);
  if (name == "lower") return ParseBool(&a()->lower);
  if (name == "unit_diagonal") return ParseBool(&a()->unit_diagonal);
  if (name == "transpose_a") return enum_attr(kTransposes, &a()->transpose_a, false);
  const bool batch_norm = op == Opcode::kBatchNormGrad || op == Opcode::kBatchNormInference ||
                          op == Opcode::kBatchNormTraining;
  if (name == "epsilon" && batch_norm) {
    double v;
    if (!ParseDouble(&v)) return false;
    a()->epsilon = static_cast<float>(v);
    return true;
  }
  if (name == "feature_index" && batch_norm) return ParseInt64(&a()->feature_index);
  if (name == "distribution") return enum_attr(kDistributions, &a()->distribution, true);
  if (name == "delta" && op == Opcode::kRngGetAndUpdateState) return ParseInt64(&a()->delta);
  if (name == "infeed_config") return ParseString(&a()->infeed_config);
  if (name == "outfeed_config") return ParseString(&a()->outfeed_config);
  if (name == "outfeed_shape") {
    a()->outfeed_shape.emplace();
    return ParseShape(&*a()->outfeed_shape);
  }
  if (name == "is_host_transfer") return ParseBool(&a()->is_host_transfer);
  if (name == "cross_program_prefetch_index") {
    int32_t v;
    if (!ParseInt32(&v)) return false;
    a()->cross_program_prefetch_index = v;
    return true;
  }
  if (name == "k" && op == Opcode::kTopK) return ParseInt64(&a()->k);
  if (name == "largest" && op == Opcode::kTopK) return ParseBool(&a()->largest);
  if (name == "num_carries") return ParseInt64(&a()->num_carries);
  if (name == "is_reverse") return ParseBool(&a()->is_reverse);
  if (name == "is_associative") return enum_attr(kTriStates, &a()->is_associative, false);
  if (name == "is_stable") return ParseBool(&a()->is_stable);
  if (name == "is_composite") return ParseBool(&a()->is_composite);
  if (name == "async_execution_thread") {
    std::string t;
    if (!ParseString(&t)) return false;
    a()->async_execution_thread = t == "main" ? "" : t;
    return true;
  }
  if (name == "domain" && op == Opcode::kDomain) return ParseDomain(a());

  // Unknown, or a known attribute this opcode does not take (the printer only writes those
  // typed fields for their own opcodes): keep verbatim so the text still round-trips.
  std::string raw(lex_.TakeRawValue());
  if (raw.empty()) {
    return ErrorAt(name_offset, StrCat("attribute '", name, "' has no value"));
  }
  a()->unknown.emplace_back(std::string(name), std::move(raw));
  return true;
}

// ----------------------------------------------------------------------------------------------
// Scalars and lists

bool Parser::ParseInt64(int64_t* v) {
  if (lex_.kind() != TokKind::kInt) return Expected("an integer");
  const Token& t = lex_.tok();
  if (t.int_overflow) return Error(StrCat("integer ", t.text, " is out of range"));
  // Non-negative values up to 2^64-1 are bit-cast, as XLA does.
  *v = t.int_negative ? static_cast<int64_t>(0 - t.int_bits) : static_cast<int64_t>(t.int_bits);
  lex_.Next();
  return true;
}

bool Parser::ParseInt32(int32_t* v) {
  int64_t w;
  size_t offset = lex_.tok().offset;
  if (!ParseInt64(&w)) return false;
  if (w < INT32_MIN || w > INT32_MAX) return ErrorAt(offset, "integer does not fit in 32 bits");
  *v = static_cast<int32_t>(w);
  return true;
}

bool Parser::ParseBool(bool* v) {
  if (AtIdent("true")) {
    *v = true;
  } else if (AtIdent("false")) {
    *v = false;
  } else {
    return Expected("'true' or 'false'");
  }
  lex_.Next();
  return true;
}

bool Parser::ParseDouble(double* v) {
  if (lex_.kind() == TokKind::kDecimal) {
    *v = lex_.tok().decimal;
  } else if (lex_.kind() == TokKind::kInt) {
    const Token& t = lex_.tok();
    *v = t.int_negative ? -static_cast<double>(t.int_bits) : static_cast<double>(t.int_bits);
  } else if (AtIdent("inf")) {
    *v = HUGE_VAL;
  } else if (lex_.kind() == TokKind::kNegInf) {
    *v = -HUGE_VAL;
  } else {
    return Expected("a number");
  }
  lex_.Next();
  return true;
}

bool Parser::ParseIntList(std::vector<int64_t>* v) {
  v->clear();
  if (!Expect(TokKind::kLbrace, "'{' to start an integer list")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    int64_t x;
    if (!ParseInt64(&x)) return false;
    v->push_back(x);
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "'}' or ',' in the integer list");
}

bool Parser::ParseParenIntList(std::vector<int64_t>* v) {
  v->clear();
  if (!Expect(TokKind::kLparen, "'('")) return false;
  while (lex_.kind() != TokKind::kRparen) {
    int64_t x;
    if (!ParseInt64(&x)) return false;
    v->push_back(x);
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRparen, "')' or ','");
}

bool Parser::ParseIntListList(std::vector<std::vector<int64_t>>* v) {
  v->clear();
  if (!Expect(TokKind::kLbrace, "'{' to start a list of lists")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    std::vector<int64_t> inner;
    if (!ParseIntList(&inner)) return false;
    v->push_back(std::move(inner));
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "'}' or ',' in the list of lists");
}

bool Parser::ParseBoolList(std::vector<bool>* v) {
  v->clear();
  if (!Expect(TokKind::kLbrace, "'{' to start a list of booleans")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    bool b;
    if (!ParseBool(&b)) return false;
    v->push_back(b);
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "'}' or ',' in the list of booleans");
}

bool Parser::ParseString(std::string* v) {
  if (lex_.kind() != TokKind::kString) return Expected("a quoted string");
  *v = lex_.TakeString();
  lex_.Next();
  return true;
}

bool Parser::ParseIdentWord(std::string_view* v) {
  if (lex_.kind() != TokKind::kIdent && lex_.kind() != TokKind::kPrimType) {
    return Expected("a word");
  }
  *v = lex_.tok().text;
  lex_.Next();
  return true;
}

bool Parser::ParseDxD(std::vector<int64_t>* v) {
  v->clear();
  if (lex_.kind() == TokKind::kInt) {
    int64_t x;
    if (!ParseInt64(&x)) return false;
    v->push_back(x);
    return true;
  }
  if (lex_.kind() != TokKind::kDxD) return Expected("sizes like 3x3");
  for (absl::string_view part : absl::StrSplit(AsAbsl(lex_.tok().text), 'x')) {
    int64_t x = 0;
    for (char c : part) {
      if (x > (INT64_MAX - 9) / 10) return Error("window value is out of range");
      x = x * 10 + (c - '0');
    }
    v->push_back(x);
  }
  lex_.Next();
  return true;
}

bool Parser::ParseWindow(Window* w) {
  if (!Expect(TokKind::kLbrace, "'{' to start the window")) return false;
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<std::pair<int64_t, int64_t>> pad;
  bool has_size = false;
  while (lex_.kind() != TokKind::kRbrace) {
    if (lex_.kind() != TokKind::kAttrName) return Expected("a window field like size=3x3");
    std::string_view field = lex_.tok().text;
    lex_.Next();
    if (field == "size") {
      has_size = true;
      if (!ParseDxD(&size)) return false;
    } else if (field == "stride") {
      if (!ParseDxD(&stride)) return false;
    } else if (field == "lhs_dilate") {
      if (!ParseDxD(&lhs_dilate)) return false;
    } else if (field == "rhs_dilate") {
      if (!ParseDxD(&rhs_dilate)) return false;
    } else if (field == "rhs_reversal") {
      if (!ParseDxD(&reversal)) return false;
    } else if (field == "pad") {
      if (lex_.kind() != TokKind::kPad) return Expected("padding like 0_1x1_0");
      for (absl::string_view dim : absl::StrSplit(AsAbsl(lex_.tok().text), 'x')) {
        std::vector<absl::string_view> parts = absl::StrSplit(dim, '_');
        if (parts.size() != 2) return Error("window padding takes low_high per dimension");
        int64_t lo = 0, hi = 0;
        if (!absl::SimpleAtoi(parts[0], &lo) || !absl::SimpleAtoi(parts[1], &hi)) {
          return Error("window padding value is out of range");
        }
        pad.emplace_back(lo, hi);
      }
      lex_.Next();
    } else {
      return ErrorAt(lex_.tok().offset, StrCat("unknown window field '", field, "'"));
    }
  }
  lex_.Next();
  if (!has_size) return Error("window needs size=");
  size_t rank = size.size();
  auto check = [&](size_t n, std::string_view what) {
    if (n != 0 && n != rank) {
      return Error(StrCat("window ", what, " has ", n, " dimensions but size has ", rank));
    }
    return true;
  };
  if (!check(stride.size(), "stride") || !check(pad.size(), "pad") ||
      !check(lhs_dilate.size(), "lhs_dilate") || !check(rhs_dilate.size(), "rhs_dilate") ||
      !check(reversal.size(), "rhs_reversal")) {
    return false;
  }
  w->assign(rank, WindowDimension());
  for (size_t i = 0; i < rank; ++i) {
    WindowDimension& d = (*w)[i];
    d.size = size[i];
    if (!stride.empty()) d.stride = stride[i];
    if (!pad.empty()) {
      d.padding_low = pad[i].first;
      d.padding_high = pad[i].second;
    }
    if (!lhs_dilate.empty()) d.base_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) d.window_dilation = rhs_dilate[i];
    if (!reversal.empty()) d.window_reversal = reversal[i] != 0;
  }
  return true;
}

bool Parser::ParseConvDimLabels(ConvolutionDimensionNumbers* d) {
  if (lex_.kind() != TokKind::kDimLabels) return Expected("dimension labels like b01f_01io->b01f");
  std::string_view text = lex_.tok().text;
  size_t us = text.find('_');
  size_t arrow = text.find("->");
  std::string_view lhs = text.substr(0, us);
  std::string_view rhs = text.substr(us + 1, arrow - us - 1);
  std::string_view out = text.substr(arrow + 2);
  auto spatial_count = [](std::string_view s) {
    int n = 0;
    for (char c : s) n += (c >= '0' && c <= '9');
    return n;
  };
  int n = spatial_count(lhs);
  if (spatial_count(rhs) != n || spatial_count(out) != n) {
    return Error("dim_labels: input, kernel and output must name the same spatial dimensions");
  }
  auto fill = [&](std::string_view s, char a, char b, int64_t* da, int64_t* db,
                  std::vector<int64_t>* spatial, std::string_view part) {
    bool seen_a = false, seen_b = false;
    spatial->assign(n, -1);
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == a && !seen_a) {
        *da = static_cast<int64_t>(i);
        seen_a = true;
      } else if (c == b && !seen_b) {
        *db = static_cast<int64_t>(i);
        seen_b = true;
      } else if (c >= '0' && c <= '9' && c - '0' < n && (*spatial)[c - '0'] == -1) {
        (*spatial)[c - '0'] = static_cast<int64_t>(i);
      } else if (c != '?') {
        return Error(StrCat("dim_labels: unexpected or repeated '", std::string(1, c),
                                  "' in the ", part, " labels"));
      }
    }
    if (!seen_a || !seen_b) {
      return Error(StrCat("dim_labels: the ", part, " labels must contain '",
                                std::string(1, a), "' and '", std::string(1, b), "'"));
    }
    for (int64_t v : *spatial) {
      if (v < 0) return Error(StrCat("dim_labels: spatial dimensions of the ", part,
                                           " must be numbered 0..", n - 1));
    }
    return true;
  };
  if (!fill(lhs, 'b', 'f', &d->input_batch_dimension, &d->input_feature_dimension,
            &d->input_spatial_dimensions, "input") ||
      !fill(rhs, 'i', 'o', &d->kernel_input_feature_dimension, &d->kernel_output_feature_dimension,
            &d->kernel_spatial_dimensions, "kernel") ||
      !fill(out, 'b', 'f', &d->output_batch_dimension, &d->output_feature_dimension,
            &d->output_spatial_dimensions, "output")) {
    return false;
  }
  lex_.Next();
  return true;
}

bool Parser::ParsePadding(PaddingConfig* p) {
  p->clear();
  if (lex_.kind() != TokKind::kPad) return Expected("padding like 0_0x1_1 or 0_1_0x2_2_1");
  for (absl::string_view dim : absl::StrSplit(AsAbsl(lex_.tok().text), 'x')) {
    std::vector<absl::string_view> parts = absl::StrSplit(dim, '_');
    PaddingDimension d;
    if (parts.size() < 2 || parts.size() > 3 || !absl::SimpleAtoi(parts[0], &d.low) ||
        !absl::SimpleAtoi(parts[1], &d.high) ||
        (parts.size() == 3 && !absl::SimpleAtoi(parts[2], &d.interior))) {
      return Error("malformed padding; expected low_high[_interior] per dimension");
    }
    p->push_back(d);
  }
  lex_.Next();
  return true;
}

bool Parser::ParseSliceRanges(std::vector<SliceDimension>* s) {
  s->clear();
  if (!Expect(TokKind::kLbrace, "'{' to start slice ranges")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    if (!Expect(TokKind::kLsquare, "'[' to start a slice range")) return false;
    SliceDimension d;
    if (!ParseInt64(&d.start)) return false;
    if (!Expect(TokKind::kColon, "':' in the slice range")) return false;
    if (!ParseInt64(&d.limit)) return false;
    if (TryConsume(TokKind::kColon)) {
      if (!ParseInt64(&d.stride)) return false;
    }
    if (!Expect(TokKind::kRsquare, "']' to end the slice range")) return false;
    s->push_back(d);
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "'}' to end slice ranges");
}

bool Parser::ParsePrecisionList(std::vector<Precision>* p) {
  p->clear();
  if (!Expect(TokKind::kLbrace, "'{' to start operand_precision")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    Precision v;
    if (lex_.kind() != TokKind::kIdent || !LookupEnum(lex_.tok().text, kPrecisions, &v, true)) {
      return Expected(StrCat("a precision (", EnumChoices(kPrecisions), ")"));
    }
    p->push_back(v);
    lex_.Next();
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "'}' to end operand_precision");
}

bool Parser::ParseIotaTail(IotaDeviceList* iota) {
  // After '[dims]': '<=' '[' reshape ']' ['T(' perm ')']
  if (!Expect(TokKind::kLeq, "'<='")) return false;
  if (!Expect(TokKind::kLsquare, "'[' to start the iota reshape dimensions")) return false;
  while (lex_.kind() != TokKind::kRsquare) {
    int64_t x;
    if (!ParseInt64(&x)) return false;
    iota->reshape_dims.push_back(x);
    if (!TryConsume(TokKind::kComma)) break;
  }
  if (!Expect(TokKind::kRsquare, "']'")) return false;
  if (AtIdent("T")) {
    lex_.Next();
    if (!ParseParenIntList(&iota->transpose_perm)) return false;
  }
  return true;
}

// The mesh-axes form, read character by character from the current token:
//   mesh['a'=2,'b'=4][, device_ids=(LIST)] {AXES}   or   @mesh<a=2,b=4>[(LIST)] {AXES}
// LIST is `d,d,...` or an iota `[reshape]T(perm)`; AXES are names (quoted as in the mesh, or
// axis numbers) with an optional sub-axis `:(pre_size)size`.
bool Parser::ParseMeshReplicaGroups(MeshReplicaGroups* m) {
  const std::string_view t = lex_.text();
  size_t i = lex_.tok().offset;
  auto skip_ws = [&] {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
  };
  auto peek = [&](std::string_view w) { return t.substr(i, w.size()) == w; };
  auto expect = [&](std::string_view w) {
    skip_ws();
    if (!peek(w)) return ErrorAt(i, StrCat("expected '", w, "' in mesh-axes replica_groups"));
    i += w.size();
    return true;
  };
  auto read_int = [&](int64_t* out) {
    skip_ws();
    size_t start = i;
    bool neg = i < t.size() && t[i] == '-';
    if (neg) ++i;
    int64_t v = 0;
    size_t digits = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      if (v > (INT64_MAX - (t[i] - '0')) / 10) return ErrorAt(start, "integer is too large");
      v = v * 10 + (t[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0) return ErrorAt(start, "expected an integer in mesh-axes replica_groups");
    *out = neg ? -v : v;
    return true;
  };
  // A name, quoted with m->quote (or bare when m->quote is 0); `quote_out` learns the quote.
  auto read_name = [&](std::string* out, bool first) {
    skip_ws();
    size_t start = i;
    char q = (i < t.size() && (t[i] == '\'' || t[i] == '"')) ? t[i] : 0;
    if (first) m->quote = q;
    if (q != m->quote) {
      return ErrorAt(start, q == 0 ? "expected a quoted mesh axis name"
                                   : "mesh axis names must all be quoted the same way");
    }
    if (q) {
      size_t close = t.find(q, i + 1);
      size_t eol = t.find('\n', i + 1);
      if (close == std::string_view::npos || (eol != std::string_view::npos && eol < close)) {
        return ErrorAt(start, "unterminated mesh axis name");
      }
      *out = std::string(t.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_' ||
                              t[i] == '.' || t[i] == '-')) {
        ++i;
      }
      *out = std::string(t.substr(start, i - start));
    }
    if (out->empty()) return ErrorAt(start, "expected a mesh axis name");
    return true;
  };
  auto read_device_list = [&]() {
    // After '(': `[reshape]T(perm))` or `d,d,...)`.
    skip_ws();
    if (peek("[")) {
      ++i;
      IotaDeviceList iota;
      iota.dims = m->axis_sizes;
      for (;;) {
        int64_t d;
        if (!read_int(&d)) return false;
        iota.reshape_dims.push_back(d);
        skip_ws();
        if (peek(",")) {
          ++i;
          continue;
        }
        break;
      }
      if (!expect("]")) return false;
      skip_ws();
      if (peek("T(")) {
        i += 2;
        for (;;) {
          int64_t d;
          if (!read_int(&d)) return false;
          iota.transpose_perm.push_back(d);
          skip_ws();
          if (peek(",")) {
            ++i;
            continue;
          }
          break;
        }
        if (!expect(")")) return false;
      }
      m->device_iota = std::move(iota);
    } else {
      for (;;) {
        int64_t d;
        if (!read_int(&d)) return false;
        m->device_ids.push_back(d);
        skip_ws();
        if (peek(",")) {
          ++i;
          continue;
        }
        break;
      }
    }
    return expect(")");
  };

  const size_t begin = i;
  char close;
  if (peek("mesh[")) {
    m->style = MeshReplicaGroups::Style::kBracket;
    i += 5;
    close = ']';
  } else if (peek("@mesh<")) {
    m->style = MeshReplicaGroups::Style::kAngle;
    i += 6;
    close = '>';
  } else {
    return ErrorAt(i, "expected 'mesh[' or '@mesh<' to start mesh-axes replica_groups");
  }
  for (;;) {
    std::string name;
    if (!read_name(&name, m->axis_names.empty())) return false;
    if (!expect("=")) return false;
    size_t size_at = (skip_ws(), i);
    int64_t size;
    if (!read_int(&size)) return false;
    if (size <= 0) return ErrorAt(size_at, StrCat("mesh axis '", name, "' needs a positive size"));
    for (const std::string& seen : m->axis_names) {
      if (seen == name) return ErrorAt(size_at, StrCat("mesh axis '", name, "' is repeated"));
    }
    m->axis_names.push_back(std::move(name));
    m->axis_sizes.push_back(size);
    skip_ws();
    if (peek(",")) {
      ++i;
      continue;
    }
    break;
  }
  if (!expect(std::string_view(&close, 1))) return false;
  size_t devices_at = i;
  if (m->style == MeshReplicaGroups::Style::kBracket) {
    skip_ws();
    if (peek(",")) {
      ++i;
      if (!expect("device_ids=")) return false;
      if (!expect("(")) return false;
      devices_at = i;
      if (!read_device_list()) return false;
    }
  } else if (peek("(")) {
    ++i;
    devices_at = i;
    if (!read_device_list()) return false;
  }
  {
    MeshReplicaGroups mesh_only = *m;
    std::string problem = mesh_only.Validate();
    if (!problem.empty()) return ErrorAt(devices_at, problem);
  }
  if (!expect("{")) return false;
  skip_ws();
  while (!peek("}")) {
    const size_t ref_at = i;
    std::string name;
    MeshAxisRef ref;
    bool bare_digit = m->quote == 0 && i < t.size() && t[i] >= '0' && t[i] <= '9';
    if (!read_name(&name, false)) return false;
    auto it = std::find(m->axis_names.begin(), m->axis_names.end(), name);
    if (it != m->axis_names.end() && !bare_digit) {
      ref.axis = it - m->axis_names.begin();
    } else if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
                 return c >= '0' && c <= '9';
               }) && name.size() < 10 && std::stoll(name) < static_cast<int64_t>(m->axis_names.size())) {
      ref.axis = std::stoll(name);
      ref.by_index = true;
    } else {
      return ErrorAt(ref_at, StrCat("unknown mesh axis '", name, "' in replica_groups"));
    }
    skip_ws();
    if (peek(":")) {
      ++i;
      if (!expect("(")) return false;
      if (!read_int(&ref.pre_size)) return false;
      if (!expect(")")) return false;
      if (!read_int(&ref.size)) return false;
      if (ref.pre_size <= 0) return ErrorAt(ref_at, "a sub-axis pre-size must be positive");
    }
    m->axes.push_back(ref);
    std::string problem = m->Validate();
    if (!problem.empty()) return ErrorAt(ref_at, problem);
    skip_ws();
    if (!peek(",")) break;
    ++i;
    skip_ws();
  }
  if (!expect("}")) return false;
  (void)begin;
  lex_.SeekTo(i);
  return true;
}

bool Parser::ParseReplicaGroups(ReplicaGroups* g) {
  {
    std::string_view rest = lex_.text().substr(lex_.tok().offset);
    if (rest.substr(0, 5) == "mesh[" || rest.substr(0, 6) == "@mesh<") {
      MeshReplicaGroups m;
      if (!ParseMeshReplicaGroups(&m)) return false;
      g->mesh = std::move(m);
      return true;
    }
  }
  if (lex_.kind() == TokKind::kLsquare) {
    IotaDeviceList iota;
    lex_.Next();
    while (lex_.kind() != TokKind::kRsquare) {
      int64_t x;
      if (!ParseInt64(&x)) return false;
      iota.dims.push_back(x);
      if (!TryConsume(TokKind::kComma)) break;
    }
    if (!Expect(TokKind::kRsquare, "']'")) return false;
    if (!ParseIotaTail(&iota)) return false;
    if (iota.dims.size() != 2) return Error("iota replica groups need [groups,size] dimensions");
    g->iota = std::move(iota);
    return true;
  }
  return ParseIntListList(&g->groups);
}

bool Parser::ParseSharding(Sharding* s) {
  if (!Deeper()) return false;
  DepthGuard guard(&depth_);
  // '{' then either a single sharding's items or a list of '{...}' tuple elements.
  if (lex_.kind() != TokKind::kLbrace) return Expected("'{' to start a sharding");
  size_t open = lex_.tok().offset;
  lex_.Next();
  if (lex_.kind() == TokKind::kLbrace || lex_.kind() == TokKind::kRbrace) {
    s->type = ShardingType::kTuple;
    while (lex_.kind() != TokKind::kRbrace) {
      Sharding element;
      if (!ParseSharding(&element)) return false;
      s->tuple_elements.push_back(std::move(element));
      if (!TryConsume(TokKind::kComma)) break;
    }
    return Expect(TokKind::kRbrace, "'}' to end the tuple sharding");
  }
  if (AtIdent("mesh") || AtIdent("maximal_mesh")) {
    lex_.SeekTo(open);
    std::string_view raw;
    if (!lex_.TakeBalancedBraces(&raw)) return ErrorAt(open, "unbalanced braces in sharding");
    s->type = ShardingType::kRaw;
    s->raw = std::string(raw.substr(1, raw.size() - 2));
    return true;
  }
  return ParseSingleSharding(s, true);
}

bool Parser::ParseSingleSharding(Sharding* s, bool braced) {
  bool have_type = false;
  while (lex_.kind() != TokKind::kRbrace) {
    if (AtIdent("replicated")) {
      s->type = ShardingType::kReplicated;
      have_type = true;
      lex_.Next();
    } else if (AtIdent("manual")) {
      s->type = ShardingType::kManual;
      have_type = true;
      lex_.Next();
    } else if (AtIdent("unknown")) {
      s->type = ShardingType::kUnknown;
      have_type = true;
      lex_.Next();
    } else if (AtIdent("unreduced")) {
      s->type = ShardingType::kUnreduced;
      have_type = true;
      lex_.Next();
    } else if (AtIdent("maximal")) {
      s->type = ShardingType::kMaximal;
      have_type = true;
      lex_.Next();
      if (lex_.kind() != TokKind::kAttrName || lex_.tok().text != "device") {
        return Expected("'device=' after 'maximal'");
      }
      lex_.Next();
      int64_t d;
      if (!ParseInt64(&d)) return false;
      s->devices = {d};
    } else if (lex_.kind() == TokKind::kAttrName && lex_.tok().text == "devices") {
      s->type = ShardingType::kTiled;
      have_type = true;
      lex_.Next();
      if (!Expect(TokKind::kLsquare, "'[' to start the tile dimensions")) return false;
      while (lex_.kind() != TokKind::kRsquare) {
        int64_t x;
        if (!ParseInt64(&x)) return false;
        s->tile_dims.push_back(x);
        if (!TryConsume(TokKind::kComma)) break;
      }
      if (!Expect(TokKind::kRsquare, "']'")) return false;
      if (lex_.kind() == TokKind::kLeq) {
        IotaDeviceList iota;
        iota.dims = s->tile_dims;
        if (!ParseIotaTail(&iota)) return false;
        s->iota = std::move(iota);
      } else {
        while (lex_.kind() == TokKind::kInt) {
          int64_t x;
          if (!ParseInt64(&x)) return false;
          s->devices.push_back(x);
          if (!TryConsume(TokKind::kComma)) break;
        }
        if (s->devices.empty()) return Expected("a device list or '<=[...]' after devices=[...]");
      }
    } else if (AtIdent("last_tile_dim_replicate")) {
      s->last_tile_dim_replicate = true;
      lex_.Next();
    } else if (lex_.kind() == TokKind::kAttrName && lex_.tok().text == "last_tile_dims") {
      lex_.Next();
      if (!Expect(TokKind::kLbrace, "'{' to start last_tile_dims")) return false;
      while (lex_.kind() != TokKind::kRbrace) {
        std::string_view w = lex_.tok().text;
        if (lex_.kind() != TokKind::kIdent) return Expected("a subgroup type");
        if (w == "replicated") s->last_tile_dims.push_back(SubgroupType::kReplicated);
        else if (w == "manual") s->last_tile_dims.push_back(SubgroupType::kManual);
        else if (w == "unreduced") s->last_tile_dims.push_back(SubgroupType::kUnreduced);
        else if (w == "maximal") s->last_tile_dims.push_back(SubgroupType::kMaximal);
        else return Error(StrCat("unknown subgroup type '", w, "'"));
        lex_.Next();
        if (!TryConsume(TokKind::kComma)) break;
      }
      if (!Expect(TokKind::kRbrace, "'}' to end last_tile_dims")) return false;
    } else if (AtIdent("shard_as") || AtIdent("shard_like")) {
      s->shard_group = AtIdent("shard_as") ? Sharding::ShardGroup::kAs : Sharding::ShardGroup::kLike;
      lex_.Next();
      if (!ParseInt64(&s->shard_group_id)) return false;
    } else if (lex_.kind() == TokKind::kAttrName && lex_.tok().text == "metadata") {
      lex_.Next();
      if (!Expect(TokKind::kLbrace, "'{' to start sharding metadata")) return false;
      if (lex_.kind() == TokKind::kLbrace) {
        while (lex_.kind() == TokKind::kLbrace) {
          OpMetadata m;
          // Reuse the instruction metadata parser, which expects the opening brace itself.
          if (!ParseMetadata(&m)) return false;
          s->metadata.push_back(std::move(m));
          if (!TryConsume(TokKind::kComma)) break;
        }
        if (!Expect(TokKind::kRbrace, "'}' to end the sharding metadata list")) return false;
      } else {
        // Single metadata written without an inner brace: parse fields until '}'.
        lex_.SeekTo(lex_.tok().offset);
        OpMetadata m;
        // Step back to the '{' we consumed: find it before the current token.
        size_t brace = lex_.text().rfind('{', lex_.tok().offset);
        lex_.SeekTo(brace);
        if (!ParseMetadata(&m)) return false;
        s->metadata.push_back(std::move(m));
      }
    } else {
      return Expected("a sharding (replicated, maximal device=N, devices=[...], manual, ...)");
    }
  }
  if (!have_type) return Error("sharding has no type (replicated, maximal, devices=..., manual)");
  if (braced) return Expect(TokKind::kRbrace, "'}' to end the sharding");
  return true;
}

bool Parser::ParseMetadata(OpMetadata* m) {
  if (!Expect(TokKind::kLbrace, "'{' to start metadata")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    if (lex_.kind() != TokKind::kAttrName) return Expected("a metadata field like op_name=\"...\"");
    std::string_view field = lex_.tok().text;
    lex_.Next();
    bool ok;
    if (field == "op_type") ok = ParseString(&m->op_type);
    else if (field == "op_name") ok = ParseString(&m->op_name);
    else if (field == "source_file") ok = ParseString(&m->source_file);
    else if (field == "source_line") ok = ParseInt32(&m->source_line);
    else if (field == "source_end_line") ok = ParseInt32(&m->source_end_line);
    else if (field == "source_column") ok = ParseInt32(&m->source_column);
    else if (field == "source_end_column") ok = ParseInt32(&m->source_end_column);
    else if (field == "profile_type") ok = ParseIntList(&m->profile_type);
    else if (field == "deduplicated_name") ok = ParseString(&m->deduplicated_name);
    else if (field == "scheduling_name") ok = ParseString(&m->scheduling_name);
    else if (field == "stack_frame_id") ok = ParseInt32(&m->stack_frame_id);
    else if (field == "preserve_layout") ok = ParseBool(&m->preserve_layout);
    else return Error(StrCat("unknown metadata field '", field, "'"));
    if (!ok) return false;
    TryConsume(TokKind::kComma);
  }
  lex_.Next();
  return true;
}

bool Parser::ParseFrontendAttributes(FrontendAttributes* f) {
  if (!Expect(TokKind::kLbrace, "'{' to start frontend_attributes")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    FrontendAttributes::Entry e;
    if (lex_.kind() == TokKind::kAttrName) {
      e.key = std::string(lex_.tok().text);
      lex_.Next();
    } else if (lex_.kind() == TokKind::kString) {
      e.key = lex_.tok().str;
      lex_.Next();
      if (!Expect(TokKind::kEqual, "'=' after the attribute key")) return false;
    } else {
      return Expected("key=value in frontend_attributes");
    }
    if (lex_.kind() == TokKind::kLbrace) {
      std::string_view raw;
      if (!lex_.TakeBalancedBraces(&raw)) return Error("unbalanced braces in attribute value");
      e.value = std::string(raw);
      e.is_dict = true;
    } else if (!ParseString(&e.value)) {
      return false;
    }
    f->entries.push_back(std::move(e));
    if (!TryConsume(TokKind::kComma)) break;
  }
  std::stable_sort(f->entries.begin(), f->entries.end(),
                   [](const auto& x, const auto& y) { return x.key < y.key; });
  return Expect(TokKind::kRbrace, "'}' to end frontend_attributes");
}

bool Parser::ParseBackendConfig(std::string* v) {
  if (lex_.kind() == TokKind::kString) return ParseString(v);
  if (lex_.kind() == TokKind::kLbrace) {
    std::string_view raw;
    size_t offset = lex_.tok().offset;
    if (!lex_.TakeBalancedBraces(&raw)) return ErrorAt(offset, "unbalanced braces in backend_config");
    *v = std::string(raw);
    return true;
  }
  return Expected("a quoted string or {...} for backend_config");
}

bool Parser::ParseStatistics(StatisticsViz* s) {
  if (!Expect(TokKind::kLbrace, "'{' to start statistics")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    if (lex_.kind() != TokKind::kAttrName) return Expected("name=value in statistics");
    std::string name(lex_.tok().text);
    lex_.Next();
    if (name == "visualizing_index") {
      if (!ParseInt64(&s->visualizing_index)) return false;
    } else {
      Statistic st;
      st.name = std::move(name);
      if (!ParseDouble(&st.value)) return false;
      s->statistics.push_back(std::move(st));
    }
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "'}' to end statistics");
}

bool Parser::ParseResultAccuracy(ResultAccuracy* r) {
  if (!Expect(TokKind::kLbrace, "'{' to start result_accuracy")) return false;
  if (lex_.kind() != TokKind::kAttrName) return Expected("mode= or tolerance=");
  std::string_view field = lex_.tok().text;
  lex_.Next();
  if (field == "mode") {
    if (AtIdent("default") || AtIdent("DEFAULT")) r->mode = ResultAccuracy::Mode::kDefault;
    else if (AtIdent("highest") || AtIdent("HIGHEST")) r->mode = ResultAccuracy::Mode::kHighest;
    else return Expected("'default' or 'highest'");
    lex_.Next();
  } else if (field == "tolerance") {
    r->mode = ResultAccuracy::Mode::kTolerance;
    if (!Expect(TokKind::kLbrace, "'{' to start the tolerance")) return false;
    while (lex_.kind() != TokKind::kRbrace) {
      if (lex_.kind() != TokKind::kAttrName) return Expected("atol=, rtol= or ulps=");
      std::string_view t = lex_.tok().text;
      lex_.Next();
      if (t == "atol") {
        if (!ParseDouble(&r->atol)) return false;
      } else if (t == "rtol") {
        if (!ParseDouble(&r->rtol)) return false;
      } else if (t == "ulps") {
        if (!ParseInt64(&r->ulps)) return false;
      } else {
        return Error(StrCat("unknown tolerance field '", t, "'"));
      }
      if (!TryConsume(TokKind::kComma)) break;
    }
    if (!Expect(TokKind::kRbrace, "'}' to end the tolerance")) return false;
  } else {
    return Error(StrCat("unknown result_accuracy field '", field, "'"));
  }
  return Expect(TokKind::kRbrace, "'}' to end result_accuracy");
}

bool Parser::ParseAliasing(std::vector<OutputOperandAlias>* a) {
  a->clear();
  if (!Expect(TokKind::kLbrace, "'{' to start output_to_operand_aliasing")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    OutputOperandAlias e;
    if (!ParseShapeIndex(&e.output_index)) return false;
    if (!Expect(TokKind::kColon, "':' after the output shape index")) return false;
    if (!Expect(TokKind::kLparen, "'('")) return false;
    if (!ParseInt64(&e.operand)) return false;
    if (!Expect(TokKind::kComma, "','")) return false;
    if (!ParseShapeIndex(&e.operand_index)) return false;
    if (!Expect(TokKind::kRparen, "')'")) return false;
    a->push_back(std::move(e));
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "'}' to end output_to_operand_aliasing");
}

bool Parser::ParseDomain(InstructionAttrs* a) {
  if (!Expect(TokKind::kLbrace, "'{' to start domain")) return false;
  while (lex_.kind() != TokKind::kRbrace) {
    if (lex_.kind() != TokKind::kAttrName) return Expected("kind=, entry= or exit=");
    std::string_view field = lex_.tok().text;
    lex_.Next();
    if (field == "kind") {
      if (!ParseString(&a->domain_kind)) return false;
    } else if (field == "entry") {
      a->domain_entry_sharding.emplace();
      if (!ParseSharding(&*a->domain_entry_sharding)) return false;
    } else if (field == "exit") {
      a->domain_exit_sharding.emplace();
      if (!ParseSharding(&*a->domain_exit_sharding)) return false;
    } else {
      return Error(StrCat("unknown domain field '", field, "'"));
    }
    if (!TryConsume(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "'}' to end domain");
}

// ----------------------------------------------------------------------------------------------
// Shapes

bool Parser::ParseShape(Shape* shape) {
  if (!Deeper()) return false;
  DepthGuard guard(&depth_);
  if (lex_.kind() == TokKind::kLparen) {
    lex_.Next();
    std::vector<Shape> elements;
    while (lex_.kind() != TokKind::kRparen) {
      Shape e;
      if (!ParseShape(&e)) return false;
      elements.push_back(std::move(e));
      if (!TryConsume(TokKind::kComma)) break;
    }
    if (!Expect(TokKind::kRparen, "')' or ',' in the tuple shape")) return false;
    *shape = Shape::Tuple(std::move(elements));
    return true;
  }
  if (AtIdent("b")) {
    lex_.Next();
    if (!Expect(TokKind::kLparen, "'(' after 'b' in a buffer shape")) return false;
    Shape inner;
    if (!ParseShape(&inner)) return false;
    if (!inner.IsArray()) return Error("a buffer shape must wrap an array shape");
    if (!Expect(TokKind::kRparen, "')' to end the buffer shape")) return false;
    *shape = Shape::Buffer(std::move(inner));
    return true;
  }
  return ParseArrayShape(shape);
}

size_t Parser::ScanShapeEnd(size_t start) const {
  const std::string_view t = lex_.text();
  const size_t n = t.size();
  auto balanced = [&](size_t p, char open, char close) -> size_t {
    int depth = 0;
    for (; p < n; ++p) {
      char c = t[p];
      if (c == open) {
        ++depth;
      } else if (c == close) {
        if (--depth == 0) return p + 1;
      } else if (c == '"' || c == '\'' || c == '\n' || c == '=') {
        return std::string_view::npos;
      }
    }
    return std::string_view::npos;
  };
  size_t p = start;
  if (p < n && t[p] == '(') return balanced(p, '(', ')');
  size_t word = p;
  while (p < n && ((t[p] >= 'a' && t[p] <= 'z') || (t[p] >= '0' && t[p] <= '9'))) ++p;
  if (p == word || p >= n) return std::string_view::npos;
  if (t[p] == '(') return balanced(p, '(', ')');  // b(...)
  if (t[p] != '[') return std::string_view::npos;
  size_t close = t.find(']', p);
  if (close == std::string_view::npos) return close;
  bool rank0 = t.find_first_not_of(" \t", p + 1) == close;
  size_t q = close + 1;
  while (q < n && (t[q] == ' ' || t[q] == '\t')) ++q;
  if (q < n && t[q] == '{') {
    size_t r = q + 1;
    while (r < n && (t[r] == ' ' || t[r] == '\t')) ++r;
    if (r < n && ((t[r] >= '0' && t[r] <= '9') || t[r] == ':' || (t[r] == '}' && rank0))) {
      return balanced(q, '{', '}');
    }
  }
  return close + 1;
}

bool Parser::ParseInternedShape(const Shape** out) {
  size_t start = lex_.tok().offset;
  size_t end = ScanShapeEnd(start);
  std::string_view key;
  if (end != std::string_view::npos) {
    key = lex_.text().substr(start, end - start);
    auto it = shape_cache_.find(key);
    if (it != shape_cache_.end()) {
      *out = it->second;
      lex_.SeekTo(end);
      return true;
    }
  }
  Shape shape;
  if (!ParseShape(&shape)) return false;
  *out = module_->InternShape(shape);
  if (end != std::string_view::npos && lex_.prev_end() == end) shape_cache_.emplace(key, *out);
  return true;
}

bool Parser::ParseArrayShape(Shape* shape) {
  if (lex_.kind() != TokKind::kPrimType) return Expected("a shape such as f32[2,3]");
  PrimitiveType type = lex_.tok().prim;
  lex_.Next();
  *shape = Shape::Array(type, {});
  if (!Expect(TokKind::kLsquare, "'[' after the element type")) return false;
  while (lex_.kind() != TokKind::kRsquare) {
    if (lex_.kind() == TokKind::kQuestion) {
      lex_.Next();
      shape->add_dimension(Shape::kUnboundedSize, true);
    } else {
      bool bounded = TryConsume(TokKind::kLeq);
      int64_t d;
      size_t offset = lex_.tok().offset;
      if (!ParseInt64(&d)) return false;
      if (d < 0) return ErrorAt(offset, "dimension sizes must not be negative");
      shape->add_dimension(d, bounded);
    }
    if (!TryConsume(TokKind::kComma)) break;
  }
  if (!Expect(TokKind::kRsquare, "']' or ',' in the dimensions")) return false;
  if ((type == PrimitiveType::kToken || type == PrimitiveType::kOpaque) && shape->rank() != 0) {
    return Error("token and opaque shapes have no dimensions");
  }
  if (lex_.kind() == TokKind::kLbrace) {
    // A '{' starts a layout only when an integer, ':' or '}' follows.
    std::string_view rest = lex_.text().substr(lex_.tok().end);
    size_t i = 0;
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
    if (i < rest.size() && ((rest[i] >= '0' && rest[i] <= '9') || rest[i] == ':' ||
                            (rest[i] == '}' && shape->rank() == 0))) {
      return ParseLayout(shape);
    }
  }
  return true;
}

bool Parser::ParseLayout(Shape* shape) {
  size_t open = lex_.tok().offset;
  lex_.Next();  // '{'
  Layout* layout = shape->mutable_layout();
  while (lex_.kind() == TokKind::kInt) {
    int64_t d;
    if (!ParseInt64(&d)) return false;
    layout->minor_to_major.push_back(d);
    if (!TryConsume(TokKind::kComma)) break;
  }
  if (TryConsume(TokKind::kColon)) {
    auto paren_int = [&](int64_t* out) {
      lex_.Next();
      if (!Expect(TokKind::kLparen, "'('")) return false;
      if (!ParseInt64(out)) return false;
      return Expect(TokKind::kRparen, "')'");
    };
    auto paren_type = [&](PrimitiveType* out) {
      lex_.Next();
      if (!Expect(TokKind::kLparen, "'('")) return false;
      if (lex_.kind() != TokKind::kPrimType) return Expected("an element type");
      *out = lex_.tok().prim;
      lex_.Next();
      return Expect(TokKind::kRparen, "')'");
    };
    while (lex_.kind() != TokKind::kRbrace) {
      if (AtIdent("D")) {
        lex_.Next();
        if (!Expect(TokKind::kLparen, "'(' after D")) return false;
        while (lex_.kind() != TokKind::kRparen) {
          DimLevel level;
          if (AtIdent("D")) level.type = DimLevelType::kDense;
          else if (AtIdent("C")) level.type = DimLevelType::kCompressed;
          else if (AtIdent("S")) level.type = DimLevelType::kSingleton;
          else if (AtIdent("H")) level.type = DimLevelType::kLooseCompressed;
          else return Expected("a dimension level type (D, C, S or H)");
          lex_.Next();
          while (true) {
            if (TryConsume(TokKind::kPlus)) level.unique = false;
            else if (TryConsume(TokKind::kTilde)) level.ordered = false;
            else break;
          }
          layout->dim_levels.push_back(level);
          if (!TryConsume(TokKind::kComma)) break;
        }
        if (!Expect(TokKind::kRparen, "')'")) return false;
      } else if (AtIdent("T")) {
        lex_.Next();
        while (lex_.kind() == TokKind::kLparen) {
          lex_.Next();
          Tile tile;
          while (lex_.kind() != TokKind::kRparen) {
            if (TryConsume(TokKind::kStar)) {
              tile.dimensions.push_back(Tile::kCombineDimension);
            } else {
              int64_t x;
              if (!ParseInt64(&x)) return false;
              tile.dimensions.push_back(x);
            }
            if (!TryConsume(TokKind::kComma)) break;
          }
          if (!Expect(TokKind::kRparen, "')' to end the tile")) return false;
          layout->tiles.push_back(std::move(tile));
        }
      } else if (AtIdent("L")) {
        if (!paren_int(&layout->tail_padding_alignment_in_elements)) return false;
      } else if (lex_.kind() == TokKind::kHash) {
        if (!paren_type(&layout->index_primitive_type)) return false;
      } else if (lex_.kind() == TokKind::kStar) {
        if (!paren_type(&layout->pointer_primitive_type)) return false;
      } else if (AtIdent("E")) {
        if (!paren_int(&layout->element_size_in_bits)) return false;
      } else if (AtIdent("S")) {
        if (!paren_int(&layout->memory_space)) return false;
      } else if (AtIdent("M")) {
        if (!paren_int(&layout->dynamic_shape_metadata_prefix_bytes)) return false;
      } else if (AtIdent("SC")) {
        lex_.Next();
        while (lex_.kind() == TokKind::kLparen) {
          lex_.Next();
          SplitConfig sc;
          if (!ParseInt64(&sc.dimension)) return false;
          if (!Expect(TokKind::kColon, "':' in the split config")) return false;
          while (lex_.kind() == TokKind::kInt) {
            int64_t x;
            if (!ParseInt64(&x)) return false;
            sc.split_indices.push_back(x);
            if (!TryConsume(TokKind::kComma)) break;
          }
          if (!Expect(TokKind::kRparen, "')' to end the split config")) return false;
          layout->split_configs.push_back(std::move(sc));
        }
      } else if (AtIdent("P")) {
        lex_.Next();
        if (!Expect(TokKind::kLparen, "'(' after P")) return false;
        auto physical = std::make_shared<Shape>();
        if (!ParseShape(physical.get())) return false;
        layout->physical_shape = std::move(physical);
        if (!Expect(TokKind::kRparen, "')' after the physical shape")) return false;
      } else {
        return Expected("a layout attribute (T, E, S, L, D, SC, M, P, #, *) or '}'");
      }
    }
  }
  if (lex_.kind() != TokKind::kRbrace) return Expected("'}' to end the layout");
  lex_.Next();
  // Every dimension must be listed ("{:T(128)}" is a layout only for a scalar).
  if (static_cast<int>(layout->minor_to_major.size()) != shape->rank()) {
    return ErrorAt(open, StrCat("layout lists ", layout->minor_to_major.size(),
                                      " dimensions but the shape has rank ", shape->rank()));
  }
  return true;
}

// ----------------------------------------------------------------------------------------------
// Literals

bool Parser::ParseComponent(PrimitiveType type, Literal* lit, int64_t component) {
  const Token& t = lex_.tok();
  if (type == PrimitiveType::kPred) {
    uint64_t v;
    if (AtIdent("true")) v = 1;
    else if (AtIdent("false")) v = 0;
    else if (t.kind == TokKind::kInt && !t.int_negative && t.int_bits <= 1) v = t.int_bits;
    else return Expected("true, false, 0 or 1 for a pred element");
    lit->SetBits(component, v);
    lex_.Next();
    return true;
  }
  if (IsIntegral(type)) {
    if (t.kind != TokKind::kInt) return Expected(StrCat("an integer for a ", PrimitiveTypeName(type), " element"));
    int bits = BitWidth(type);
    bool ok;
    uint64_t stored;
    if (IsSignedIntegral(type)) {
      // Signed: [-2^(b-1), 2^(b-1)-1].
      uint64_t limit = uint64_t{1} << (bits - 1);
      ok = !t.int_overflow && (t.int_negative ? t.int_bits <= limit : t.int_bits < limit);
      stored = t.int_negative ? 0 - t.int_bits : t.int_bits;
    } else {
      ok = !t.int_overflow && (!t.int_negative || t.int_bits == 0) &&
           (bits == 64 || t.int_bits < (uint64_t{1} << bits));
      stored = t.int_bits;
    }
    if (!ok) {
      return Error(StrCat("value ", t.text, " is out of range for ", PrimitiveTypeName(type)));
    }
    lit->SetBits(component, stored);
    lex_.Next();
    return true;
  }
  // Floating point (also the components of complex numbers).
  absl::StatusOr<uint64_t> bits;
  if (t.kind == TokKind::kDecimal && std::isnan(t.decimal)) {
    bits = NaNBits(type, std::signbit(t.decimal),
                   t.has_nan_payload ? std::optional<uint64_t>(t.nan_payload) : std::nullopt);
  } else if (AtIdent("inf") || t.kind == TokKind::kNegInf) {
    bits = InfinityBits(type, t.kind == TokKind::kNegInf);
  } else if (t.kind == TokKind::kDecimal || t.kind == TokKind::kInt) {
    double v = t.kind == TokKind::kDecimal ? t.decimal
               : t.int_negative             ? -static_cast<double>(t.int_bits)
                                            : static_cast<double>(t.int_bits);
    bits = FiniteDoubleToFloatBits(type, v);
  } else {
    return Expected(StrCat("a number for a ", PrimitiveTypeName(type), " element"));
  }
  if (!bits.ok()) return Error(std::string(bits.status().message()));
  lit->SetBits(component, *bits);
  lex_.Next();
  return true;
}

bool Parser::ParseScalarInto(PrimitiveType type, Literal* lit, int64_t index) {
  if (IsComplex(type)) {
    PrimitiveType component = ComplexComponentType(type);
    if (!Expect(TokKind::kLparen, "'(' to start a complex value (real, imag)")) return false;
    if (!ParseComponent(component, lit, 2 * index)) return false;
    if (!Expect(TokKind::kComma, "',' between the real and imaginary parts")) return false;
    if (!ParseComponent(component, lit, 2 * index + 1)) return false;
    return Expect(TokKind::kRparen, "')' to end the complex value");
  }
  return ParseComponent(type, lit, index);
}

bool Parser::ParseLiteral(const Shape& shape, Literal* lit) {
  if (!Deeper()) return false;
  DepthGuard guard(&depth_);
  if (shape.IsTuple()) {
    *lit = Literal(shape, false);
    if (lex_.kind() == TokKind::kLbrace) {
      // A tuple constant printed with elided data.
      size_t open = lex_.tok().offset;
      lex_.Next();
      if (lex_.kind() == TokKind::kDots) {
        lex_.Next();
        if (!Expect(TokKind::kRbrace, "'}' after '...'")) return false;
        lit->set_elided(true);
        return true;
      }
      return ErrorAt(open, "a tuple constant must be written as ( element, ... )");
    }
    if (!Expect(TokKind::kLparen, "'(' to start a tuple literal")) return false;
    for (int i = 0; i < shape.tuple_count(); ++i) {
      if (i > 0 && !Expect(TokKind::kComma, "',' between tuple literal elements")) return false;
      if (!ParseLiteral(shape.tuple_shape(i), &(*lit->mutable_tuple_elements())[i])) return false;
    }
    return Expect(TokKind::kRparen, "')' to end the tuple literal");
  }
  if (!shape.IsArray()) {
    // token[] and opaque[] constants have no data.
    *lit = Literal(shape, false);
    if (TryConsume(TokKind::kLbrace)) return Expect(TokKind::kRbrace, "'}'");
    return true;
  }
  if (shape.IsDynamic()) {
    return Error("constants with dynamic dimensions are not supported; give static sizes");
  }
  int64_t count = shape.ElementCount();
  if (shape.rank() > 0 && lex_.kind() == TokKind::kLbrace) {
    std::string_view rest = lex_.text().substr(lex_.tok().end);
    size_t i = 0;
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
    if (rest.substr(i, 3) == "...") {
      lex_.Next();
      lex_.Next();
      if (!Expect(TokKind::kRbrace, "'}' after '...'")) return false;
      *lit = Literal(shape, false);
      lit->set_elided(true);
      return true;
    }
  }
  // Every element takes at least one character, so a count beyond the remaining text cannot be
  // satisfied; refusing early keeps hostile shapes from allocating.
  size_t remaining = lex_.text().size() - lex_.tok().offset;
  if (count < 0 || static_cast<uint64_t>(count) > remaining) {
    if (count < 0) return Error("the constant's element count overflows 64 bits");
    return Error(StrCat("the constant has ", count,
                        " elements, more than the remaining text can hold"));
  }
  *lit = Literal(shape);
  return ParseLiteralElements(shape, lit);
}

bool Parser::ParseLiteralElements(const Shape& shape, Literal* lit) {
  PrimitiveType type = shape.element_type();
  if (shape.rank() == 0) {
    // Scalars may be written bare or in braces.
    if (TryConsume(TokKind::kLbrace)) {
      if (!ParseScalarInto(type, lit, 0)) return false;
      return Expect(TokKind::kRbrace, "'}' after the scalar");
    }
    return ParseScalarInto(type, lit, 0);
  }
  // Nested braces; dimension 0 outermost. Track position per dimension.
  const int rank = shape.rank();
  int64_t linear = 0;
  std::function<bool(int)> parse_dim = [&](int dim) -> bool {
    if (!Deeper()) return false;
    DepthGuard guard(&depth_);
    size_t open = lex_.tok().offset;
    if (!Expect(TokKind::kLbrace, StrCat("'{' to start dimension ", dim, " of the literal"))) {
      return false;
    }
    int64_t n = 0;
    while (lex_.kind() != TokKind::kRbrace) {
      if (n >= shape.dimension(dim)) {
        return Error(StrCat("too many elements in dimension ", dim, " of the literal; the shape says ",
                                  shape.dimension(dim)));
      }
      if (dim + 1 < rank) {
        if (!parse_dim(dim + 1)) return false;
      } else {
        if (!ParseScalarInto(type, lit, linear)) return false;
        ++linear;
      }
      ++n;
      if (!TryConsume(TokKind::kComma)) break;
    }
    if (lex_.kind() != TokKind::kRbrace) return Expected("',' or '}' in the literal");
    if (n != shape.dimension(dim)) {
      return ErrorAt(open, StrCat("dimension ", dim, " of the literal has ", n,
                                        " elements but the shape says ", shape.dimension(dim)));
    }
    lex_.Next();
    return true;
  };
  return parse_dim(0);
}

bool Parser::ParseShapedLiteral(Literal* lit) {
  Shape shape;
  if (!ParseShape(&shape)) return false;
  return ParseLiteral(shape, lit);
}

absl::StatusOr<Shape> Parser::RunShape() {
  lex_.SeekTo(0);
  Shape shape;
  if (!ParseShape(&shape)) return MakeStatus();
  if (lex_.kind() != TokKind::kEof) {
    Expected("end of input after the shape");
    return MakeStatus();
  }
  return shape;
}

absl::StatusOr<Literal> Parser::RunShapedLiteral() {
  lex_.SeekTo(0);
  Literal lit;
  if (!ParseShapedLiteral(&lit)) return MakeStatus();
  if (lex_.kind() != TokKind::kEof) {
    Expected("end of input after the literal");
    return MakeStatus();
  }
  return lit;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                                    const ParseOptions& options) {
  Parser parser(text, options);
  return parser.RunModule();
}

std::vector<std::string_view> SplitInputFile(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  size_t line_start = 0;
  while (line_start <= text.size()) {
    size_t nl = text.find('\n', line_start);
    size_t line_end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(line_start, line_end - line_start);
    size_t a = line.find_first_not_of(" \t");
    std::string_view trimmed = a == std::string_view::npos ? std::string_view() : line.substr(a);
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t' || trimmed.back() == '\r')) {
      trimmed.remove_suffix(1);
    }
    if (trimmed == "// -----") {
      parts.push_back(text.substr(start, line_start - start));
      start = line_end;
    }
    if (nl == std::string_view::npos) break;
    line_start = nl + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  ParseOptions options;
  Parser parser(text, options);
  return parser.RunShape();
}

absl::StatusOr<Literal> ParseShapedLiteral(std::string_view text) {
  ParseOptions options;
  Parser parser(text, options);
  return parser.RunShapedLiteral();
}

}  // namespace hlowb
