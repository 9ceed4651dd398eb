// Writes modules, computations, instructions, shapes and literals as HLO text, in the long form
// that current XLA dumps (`%` sigils, operand shapes, signatures) or the short form. Output is
// deterministic and re-parses to an equal module; nothing parsed is dropped (large constants
// are printed in full unless they were elided in the input).
#ifndef HLOWB_CORE_TEXT_PRINTER_H_
#define HLOWB_CORE_TEXT_PRINTER_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/ir/shape.h"

namespace hlowb {

struct PrintOptions {
  enum class Form { kLong, kShort };
  Form form = Form::kLong;
  bool print_metadata = true;
  bool print_backend_config = true;
  // Off for structural signatures: called computations and control predecessors are printed
  // by name, which a rename would change.
  bool print_references = true;
  // Long form: each operand's shape before its name ("add(f32[4]{0} %a, ...)"), as XLA printed
  // by default until its dumps dropped them; off gives "add(%a, ...)". Short form never prints
  // operand shapes.
  bool print_operand_shape = true;
  // `/*index=N*/` before every fifth operand: XLA writes it in the long form, and older XLA
  // versions (jaxlib 0.4.35 among them) in the short form too.
  bool print_operand_index = true;
  // "} // name" after every computation of more than five instructions, as older XLA versions
  // wrote their dumps (jaxlib 0.4.35 among them).
  bool print_name_after_closing_brace = false;
  // XLA's canonical and fingerprint forms (HloPrintOptions::Canonical() and Fingerprint(), as
  // HloModule::ToString writes them): instructions in XLA's post order and named tmp_0, tmp_1,
  // ... afresh in every computation; operands with their shapes; the bodies of called
  // computations written in place; default layouts spelled out; no metadata, backend_config,
  // control dependencies or computation signatures; constants of more than 10 elements (and
  // tuple constants) as {...}. The fingerprint form also leaves out module and computation
  // names and infeed/outfeed configs, writes only "essential" constants (all zeros as 0, all
  // ones as 1, integers in full) and expands iota replica groups. The other options are
  // ignored in these forms.
  enum class Canonical : uint8_t { kNone, kCanonical, kFingerprint };
  Canonical canonical = Canonical::kNone;

  static PrintOptions Long() { return PrintOptions(); }
  static PrintOptions Short() {
    PrintOptions o;
    o.form = Form::kShort;
    o.print_operand_shape = false;
    o.print_operand_index = false;
    return o;
  }
  // What XLA writes in its dumps today: the long form without operand shapes.
  static PrintOptions Dump() {
    PrintOptions o;
    o.print_operand_shape = false;
    return o;
  }
  static PrintOptions CanonicalForm() {
    PrintOptions o;
    o.canonical = Canonical::kCanonical;
    return o;
  }
  static PrintOptions FingerprintForm() {
    PrintOptions o;
    o.canonical = Canonical::kFingerprint;
    return o;
  }
};

// For an async-start: the instruction it wraps when its computation is exactly that one
// instruction over the computation's parameters in order, of an opcode that can be written as
// `<op>-start` sugar (CanBeAsyncSugar); nullptr otherwise. XLA prints such starts, and their
// updates and dones, as the sugar.
const Instruction* AsyncWrappedInstruction(const Instruction& start);

// The print options a module's text was written with, read off the text itself: the long or
// the short form (`%` names and computation signatures), whether operands carry their shapes
// and `/*index=N*/` marks, and whether computations end with "} // name". Printing the parsed module with them gives back what XLA wrote. Text without a
// computation gives Long().
PrintOptions DetectPrintOptions(std::string_view text);

// XLA's instruction post order for a computation (HloComputation::MakeInstructionPostOrder):
// from every instruction without users, in the computation's order, a depth-first walk that
// visits control predecessors, then operands first to last. The order XLA prints an
// unscheduled computation in (the installed XLA 0.10 no longer orders collectives by channel).
std::vector<const Instruction*> XlaInstructionPostOrder(const Computation& comp);
// XLA's computation post order (HloModule::MakeComputationPostOrder): every computation after
// the computations it calls.
std::vector<const Computation*> XlaComputationPostOrder(const Module& module);

std::string PrintModule(const Module& module, const PrintOptions& options = {});
void AppendModule(const Module& module, const PrintOptions& options, std::string* out);
std::string PrintComputation(const Computation& comp, const PrintOptions& options = {});
std::string PrintInstruction(const Instruction& instr, const PrintOptions& options = {});
std::string PrintShape(const Shape& shape, bool print_layout = true);
void AppendShape(const Shape& shape, bool print_layout, std::string* out);
std::string PrintLayout(const Layout& layout);
// Literal data only, as inside constant(...): "{1, 2}", "(1, 2)" for complex scalars, ...
std::string PrintLiteralData(const Literal& literal);
// Shape then data: "f32[2]{0} {1, 2}".
std::string PrintShapedLiteral(const Literal& literal);
// A literal as XLA's Literal::ToString writes it, so that output compares with XLA's tools
// (run_hlo_module): shapes without layouts; a scalar "f32[] 1.5"; a vector "f32[3] {1, 2, 3}";
// higher ranks one innermost row per line ("f32[2,3] {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}",
// with "/*i0=1*/" marks above rank 3); predicates as 1 and 0 inside arrays; tuples as
// "(\n<element>,\n<element>\n)"; tokens as "token".
std::string PrintLiteralAsXla(const Literal& literal);
std::string PrintSharding(const Sharding& sharding);
std::string PrintMetadata(const OpMetadata& metadata);
// What an instruction is, without its name, operands or provenance: opcode, result shape
// (with layout), attributes, literal or parameter number. Two instructions with equal
// signatures and corresponding operands compute the same thing. Metadata is excluded.
std::string InstructionSignature(const Instruction& instr);
// The part of the signature that is neither opcode nor shape: literal or parameter number,
// operand count and attributes. Tells an attribute change apart from a shape change.
std::string InstructionAttributeSignature(const Instruction& instr);
// C-escaped, quoted.
std::string QuoteString(std::string_view s);

}  // namespace hlowb

#endif  // HLOWB_CORE_TEXT_PRINTER_H_
