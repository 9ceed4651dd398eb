// Reading and writing run_hlo_module's literal files (the RunHloModuleLiterals message): one
// entry per iteration with the arguments, the result and the reference result. Reading accepts
// the binary and the text proto form (as run_hlo_module does); writing picks text for names
// ending in .txt, .pbtxt or .textproto and binary otherwise.
#ifndef HLOWB_REPLAY_DATA_LITERALS_FILE_H_
#define HLOWB_REPLAY_DATA_LITERALS_FILE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/literal.h"

namespace hlowb {

struct IterationLiterals {
  std::vector<Literal> arguments;
  std::optional<Literal> result;
  std::optional<Literal> reference_result;
};

absl::StatusOr<std::vector<IterationLiterals>> ReadRunHloModuleLiterals(const std::string& path);
absl::StatusOr<std::vector<IterationLiterals>> ParseRunHloModuleLiterals(const std::string& data,
                                                                         const std::string& name);
absl::Status WriteRunHloModuleLiterals(const std::string& path,
                                       const std::vector<IterationLiterals>& iterations);
// Serialized bytes; text proto when `text` is set.
absl::StatusOr<std::string> EncodeRunHloModuleLiterals(
    const std::vector<IterationLiterals>& iterations, bool text);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_DATA_LITERALS_FILE_H_
