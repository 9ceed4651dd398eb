// An index of an --xla_dump_to directory built from file names alone: every file with its
// classification, modules (by id) with their states in compiler order and their artifacts,
// modules grouped by name, and the files it did not recognise. Every module id is its own
// timeline: a program compiled several times gives several ids of one name with different
// contents, so a shared name is only a hint ("same function as ids ..."), never a merge. The
// one exception is a compilation whose dump XLA split over two ids (openxla/xla#7193), joined
// only when the file names prove it (see DumpModule::split_partner). Opening the states is
// DumpStateLoader's job.
#ifndef HLOWB_CORE_DUMP_DUMP_INDEX_H_
#define HLOWB_CORE_DUMP_DUMP_INDEX_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dump/dump_names.h"
#include "core/support/cancel.h"

namespace hlowb {

struct DumpFile {
  std::string path;  // relative to the index root, '/'-separated
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  DumpName name;
};

// One state of a module: a point in the compiler's pipeline with its text and/or proto file.
struct DumpState {
  StageKind stage = StageKind::kNone;
  int64_t module_id = -1;
  int64_t step = -1;
  std::string pipeline;
  std::string pass;
  std::string next_pass;
  std::string label;  // "before_optimizations", "0007 simplification: algsimp", ...
  int text_file = -1;   // index into DumpIndex::files
  int proto_file = -1;  // .hlo.pb or .hlo.pb.gz
  // The file to open for this state: text when present, else the proto.
  int file() const { return text_file >= 0 ? text_file : proto_file; }
};

struct DumpModule {
  int64_t id = -1;
  std::string id_text;
  std::string name;
  std::vector<DumpState> states;  // compiler order
  std::vector<int> artifacts;     // indexes into files (everything that is not a state)
  int64_t timestamp_us = -1;
  // The other half of a compilation whose dump is split over two ids (an index into
  // DumpIndex::modules, -1 when none): one id holds only before_optimizations, the next id of
  // the same name holds no before_optimizations, and no other id of that name lies between.
  int split_partner = -1;
};

// Modules sharing a name: the ids XLA gave one function, in id order.
struct DumpModuleGroup {
  std::string name;
  std::vector<int> modules;  // indexes into DumpIndex::modules
};

struct DumpIndex {
  std::string root;
  std::vector<DumpFile> files;  // sorted by path
  std::vector<DumpModule> modules;  // sorted by id
  std::vector<DumpModuleGroup> groups;  // sorted by name
  std::vector<int> unrecognized;  // indexes into files

  // Module by id ("42", "0042") or by name (the first id with that name); nullptr if none.
  const DumpModule* FindModule(const std::string& id_or_name) const;
  // The pass timeline of `module`: its own states in compiler order, joined with its split
  // partner's (if any) in id order; a joined state's label names the id it came from
  // ("after_optimizations (module 0023)"). Never another module's states otherwise.
  std::vector<DumpState> Timeline(const DumpModule& module) const;
  // All states of every module with this name, in compiler order (ids ascending). These are
  // separate compilations: for listing and comparing them, never one timeline (use Timeline).
  std::vector<DumpState> StatesForName(const std::string& name) const;
};

struct IndexOptions {
  const CancelToken* cancel = nullptr;
  ProgressFn progress;
  int max_depth = 16;
};

// Scans `dir` recursively. Symlinked directories are not followed (no loops).
absl::StatusOr<DumpIndex> IndexDumpDirectory(const std::string& dir,
                                             const IndexOptions& options = {});
// Builds the index from already-known files (paths relative to root); used by scanning and by
// tests that need no file system.
DumpIndex BuildDumpIndex(std::string root, std::vector<DumpFile> files);
// Re-scans the index's root; returns the paths of files that appeared since it was built.
absl::StatusOr<std::vector<std::string>> RescanDumpIndex(DumpIndex* index,
                                                         const IndexOptions& options = {});

}  // namespace hlowb

#endif  // HLOWB_CORE_DUMP_DUMP_INDEX_H_
