// Reads HLO text into a Module: the long and short printed forms, with or without the
// `HloModule` header, stack-frame tables, comments. Errors carry file:line:col, the offending
// line with a caret, and what was expected. The parser checks syntax and name resolution only;
// shape rules are the verifier's (core/analysis/verifier.h).
#ifndef HLOWB_CORE_TEXT_PARSER_H_
#define HLOWB_CORE_TEXT_PARSER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/ir/shape.h"

namespace hlowb {

struct ParseOptions {
  // Shown in diagnostics.
  std::string file_name;
  // When the text is a part of a larger file (see SplitInputFile), the whole file, so that
  // diagnostics give line numbers in the file. Must contain the parsed text.
  std::string_view enclosing_text;
  // Nesting limit for shapes, literals and inline computations.
  int max_depth = 200;
};

absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                                    const ParseOptions& options = {});

// Splits a file at lines consisting of `// -----` (the --split-input-file convention). Parts
// are views into `text`. A file without separators is one part.
std::vector<std::string_view> SplitInputFile(std::string_view text);

// Parses one shape, e.g. "f32[2,3]{1,0}" or "(s32[], token[])".
absl::StatusOr<Shape> ParseShape(std::string_view text);
// Parses a shaped literal, e.g. "f32[2]{0} {1, 2}".
absl::StatusOr<Literal> ParseShapedLiteral(std::string_view text);

}  // namespace hlowb

#endif  // HLOWB_CORE_TEXT_PARSER_H_
