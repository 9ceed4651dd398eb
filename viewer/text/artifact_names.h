// Names of a module's instructions and computations as they appear in the artifacts XLA dumps
// beside it: buffer assignments and thunk sequences write the plain HLO names ("fusion.3"),
// LLVM IR and PTX write kernel and function names with every character that is not a letter,
// digit or '_' replaced by '_' ("fusion_3", "loop_add_fusion_1"), often with a suffix for the
// pieces a kernel is built from ("add_reduce_fusion_wrapped", "fusion_3_param_0").
//
// ArtifactNameIndex answers "which instruction or computation does this token name": the plain
// name first, then the sanitized form (when several names sanitize alike, an exact plain match
// wins, else the first in module order). Instructions win over computations of the same name.
#ifndef HLOWB_VIEWER_TEXT_ARTIFACT_NAMES_H_
#define HLOWB_VIEWER_TEXT_ARTIFACT_NAMES_H_

#include <QHash>
#include <QString>
#include <QStringView>
#include <memory>
#include <vector>

#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"

namespace hlowb::viewer {

// What a link names: an instruction (with its computation), or a computation alone.
struct ArtifactLinkTarget {
  const Instruction* instruction = nullptr;
  const Computation* computation = nullptr;  // the instruction's parent, or the named one
};

// A link in one line of text: [start, start + length) columns and what it names.
struct ArtifactLinkSpan {
  int start = 0;
  int length = 0;
  ArtifactLinkTarget target;
};

// XLA's identifier form of an HLO name: every character other than [A-Za-z0-9_] becomes '_'.
QString SanitizeArtifactName(QStringView name);

class ArtifactNameIndex {
 public:
  ArtifactNameIndex() = default;
  // Keeps pointers into `module`: the caller keeps the module alive as long as the index.
  explicit ArtifactNameIndex(const Module& module);

  // The plain name, else the sanitized form; nullptr when the token names nothing.
  const ArtifactLinkTarget* Find(QStringView token) const;
  // Find, and failing that the token with its last one or two '.'/'_'-separated parts removed
  // (an IR value or kernel parameter derived from a name: "add_fusion_wrapped",
  // "fusion_3_param_0"). Never strips below two characters.
  const ArtifactLinkTarget* FindAllowingSuffix(QStringView token) const;

  bool empty() const { return targets_.empty(); }
  int size() const { return static_cast<int>(targets_.size()); }

 private:
  const ArtifactLinkTarget* Lookup(QStringView token) const;

  std::vector<ArtifactLinkTarget> targets_;
  QHash<QString, int> plain_;      // name as written in HLO -> index into targets_
  QHash<QString, int> sanitized_;  // identifier form -> index into targets_
  int min_length_ = 0;
  int max_length_ = 0;
};

// A tooltip for a link target: what it is, where it lives, and its HLO text (shortened).
QString ArtifactLinkToolTip(const ArtifactLinkTarget& target);

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_ARTIFACT_NAMES_H_
