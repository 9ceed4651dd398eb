// `hlowb memory REF [REF2] [--format=text|json] [--top=N] [--pipeline=none|cpu|gpu]`: the
// memory of a module over its schedule (core/analysis/memory_profile.h): totals by allocation
// kind, the peak with the largest buffers live there, and a sparkline of live bytes; with two
// REFs, the peak and totals of both and the change.
//
// REF is one of:
//   - an XLA buffer-assignment text (a file starting "BufferAssignment:", or any file named
//     *-buffer-assignment.txt, *-buffer-assignment-values.txt, *-live-range.txt or
//     *-memory-usage-report.txt): that buffer assignment, read with the other three texts of
//     the same name beside it;
//   - an HLO file: hlowb's own buffer assignment of it (memory_profile_builder.h says which
//     schedule), after the cpu or gpu pipeline when --pipeline asks for one;
//   - DIR:MODULE[:STEP] of a dump directory (MODULE = id or name; STEP = a step number, before
//     or after): without STEP or with "after", the buffer assignment XLA dumped for the module's
//     after-optimizations state, or hlowb's own of that state when XLA wrote none; any other
//     step, hlowb's own assignment of that state.
#include <sys/stat.h>

#include <algorithm>
#include <iostream>

#include "app/cli/cli.h"
#include "core/analysis/memory_profile.h"
#include "core/analysis/memory_report.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/memory_profile_builder.h"
#include "core/passes/pipelines.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "replay/evaluator/constant_evaluator.h"

namespace hlowb::cli {

namespace {

constexpr char kUsage[] =
    "usage: hlowb memory REF [REF2] [--format=text|json] [--top=N] [--pipeline=none|cpu|gpu]\n"
    "  REF: an XLA *-buffer-assignment.txt (with its -buffer-assignment-values.txt,\n"
    "       -live-range.txt and -memory-usage-report.txt beside it), an HLO file (hlowb's own\n"
    "       buffer assignment), or DIR:MODULE[:STEP] (STEP = number, before, after)\n"
    "  REF2: compare the peak and totals of two states\n"
    "  --pipeline=cpu|gpu: run hlowb's optimizing pipeline on HLO inputs first\n";

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

struct Loaded {
  std::string label;
  MemoryProfile profile;
};

// XLA's texts of one buffer assignment: `path` and the others of the same base name.
bool ReadXlaFiles(const std::string& path, Loaded* out) {
  absl::StatusOr<MemoryProfile> profile = ReadXlaMemoryProfileFiles(path);
  if (!profile.ok()) {
    std::cerr << "error: " << profile.status().message() << "\n";
    return false;
  }
  out->profile = *std::move(profile);
  return true;
}

// hlowb's own assignment of `module` (a copy), after `pipeline` unless it is "none".
bool OwnProfile(const Module& module, const std::string& pipeline, Loaded* out) {
  std::unique_ptr<Module> copy = CloneModule(module);
  if (pipeline != "none") {
    CompileOptions options;
    options.platform = pipeline;
    options.evaluator = InterpreterConstantEvaluator();
    absl::StatusOr<CompileResult> compiled = CompileModule(copy.get(), options);
    if (!compiled.ok()) {
      std::cerr << "error: " << out->label << ": " << compiled.status().message() << "\n";
      return false;
    }
  }
  absl::StatusOr<MemoryProfileResult> result = ComputeMemoryProfile(copy.get());
  if (!result.ok()) {
    std::cerr << "error: " << out->label << ": " << result.status().message() << "\n";
    return false;
  }
  out->profile = std::move(result->profile);
  if (pipeline != "none") {
    out->profile.schedule = StrCat("hlowb's ", pipeline, " pipeline and its memory scheduler");
  }
  return true;
}

// DIR:MODULE[:STEP].
bool LoadFromDump(const std::string& dir, const std::string& module_ref, const std::string& step,
                  const std::string& pipeline, Loaded* out) {
  absl::StatusOr<DumpIndex> index = IndexDumpDirectory(dir);
  if (!index.ok()) {
    std::cerr << "error: " << index.status().message() << "\n";
    return false;
  }
  const DumpModule* m = index->FindModule(module_ref);
  if (m == nullptr) {
    std::cerr << "error: " << dir << ": no module '" << module_ref << "' (hlowb index " << dir
              << " lists them)\n";
    return false;
  }
  std::vector<DumpState> states = index->Timeline(*m);
  const DumpState* chosen = nullptr;
  for (const DumpState& s : states) {
    const bool after = s.stage == StageKind::kAfterOptimizations;
    if (((step.empty() || step == "after") && after) ||
        (step == "before" && s.stage == StageKind::kBeforeOptimizations) ||
        (!step.empty() && std::all_of(step.begin(), step.end(), ::isdigit) &&
         s.stage == StageKind::kPassStep && s.step == std::stoll(step))) {
      chosen = &s;
      if (!after) break;
    }
  }
  if (!step.empty() && chosen == nullptr) {
    std::cerr << "error: module '" << module_ref << "' in " << dir << " has no state '" << step
              << "' (use a step number, before or after)\n";
    return false;
  }
  out->label = StrCat(dir, ":", m->name);
  if (step.empty() || step == "after") {
    // The buffer assignment XLA wrote (for the after-optimizations state it belongs to).
    std::vector<int> artifacts = m->artifacts;
    if (m->split_partner >= 0) {
      const std::vector<int>& more = index->modules[m->split_partner].artifacts;
      artifacts.insert(artifacts.end(), more.begin(), more.end());
    }
    std::string chosen_stage;
    if (chosen != nullptr && chosen->file() >= 0) {
      chosen_stage = index->files[chosen->file()].name.stage_text;
    }
    int best = -1;
    for (int a : artifacts) {
      const DumpName& name = index->files[a].name;
      if (name.kind != DumpFileKind::kBufferAssignment) continue;
      if (best < 0 || name.stage_text == chosen_stage ||
          (index->files[best].name.stage_text != chosen_stage &&
           index->files[a].path > index->files[best].path)) {
        best = a;
      }
    }
    if (best >= 0) {
      if (pipeline != "none") {
        std::cerr << "hlowb memory: --pipeline applies to HLO inputs; " << out->label
                  << " has XLA's buffer assignment (name a step to use hlowb's)\n";
        return false;
      }
      StrAppend(&out->label, ":", index->files[best].name.stage_text);
      return ReadXlaFiles(index->root + "/" + index->files[best].path, out);
    }
    if (chosen == nullptr && !states.empty()) chosen = &states.back();
    if (chosen == nullptr) {
      std::cerr << "error: module '" << module_ref << "' in " << dir
                << " has neither a buffer assignment nor a module state\n";
      return false;
    }
    std::cerr << "note: " << dir << " has no buffer assignment of module '" << m->name
              << "' (XLA writes one with its after-optimizations text dump); using hlowb's own "
                 "of "
              << chosen->label << "\n";
  }
  DumpStateLoader loader(*index, CliModuleOpener());
  std::vector<LoadedState> loaded = loader.Load({*chosen});
  if (!loaded[0].status.ok()) {
    std::cerr << "error: " << loaded[0].status.message() << "\n";
    return false;
  }
  StrAppend(&out->label, ":", chosen->label);
  return OwnProfile(*loaded[0].module, pipeline, out);
}

bool Load(const std::string& ref, const std::string& pipeline, Loaded* out) {
  out->label = ref;
  if (IsFile(ref) || ref == "-") {
    if (!MemoryFileBase(ref).empty()) {
      if (pipeline != "none") {
        std::cerr << "hlowb memory: --pipeline applies to HLO inputs, not to XLA's buffer "
                     "assignment\n";
        return false;
      }
      return ReadXlaFiles(ref, out);
    }
    std::string text;
    std::vector<LoadedModule> modules;
    if (ref != "-") {
      absl::StatusOr<std::string> head = ReadFileToString(ref);
      if (head.ok() && LooksLikeBufferAssignment(*head)) {
        if (pipeline != "none") {
          std::cerr << "hlowb memory: --pipeline applies to HLO inputs, not to XLA's buffer "
                       "assignment\n";
          return false;
        }
        return ReadXlaFiles(ref, out);
      }
    }
    if (!LoadModules(ref, false, &text, &modules)) return false;
    return OwnProfile(*modules[0].module, pipeline, out);
  }
  if (IsDirectory(ref)) {
    std::cerr << "error: " << ref << " is a directory: name a module, " << ref
              << ":MODULE[:STEP] (hlowb index " << ref << " lists them)\n";
    return false;
  }
  // DIR:MODULE or DIR:MODULE:STEP, DIR being the longest existing directory.
  const size_t last = ref.rfind(':');
  if (last != std::string::npos && last > 0 && IsDirectory(ref.substr(0, last))) {
    return LoadFromDump(ref.substr(0, last), ref.substr(last + 1), "", pipeline, out);
  }
  const size_t mid =
      last == std::string::npos || last == 0 ? std::string::npos : ref.rfind(':', last - 1);
  if (mid != std::string::npos && mid > 0 && IsDirectory(ref.substr(0, mid))) {
    return LoadFromDump(ref.substr(0, mid), ref.substr(mid + 1, last - mid - 1),
                        ref.substr(last + 1), pipeline, out);
  }
  std::cerr << "error: " << ref << ": no such file, and not DIR:MODULE[:STEP] of a directory\n";
  return false;
}

}  // namespace

int RunMemory(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, {"format", "top", "pipeline"}, &args, &error) ||
      args.positional.empty() || args.positional.size() > 2) {
    std::cerr << "hlowb memory: " << (error.empty() ? "expected one or two REFs" : error) << "\n"
              << kUsage;
    return kUsageError;
  }
  const std::string format = args.Get("format", "text");
  if (format != "text" && format != "json") {
    std::cerr << "hlowb memory: --format must be text or json, not '" << format << "'\n";
    return kUsageError;
  }
  const std::string pipeline = args.Get("pipeline", "none");
  if (pipeline != "none" && pipeline != "cpu" && pipeline != "gpu") {
    std::cerr << "hlowb memory: --pipeline must be none, cpu or gpu, not '" << pipeline << "'\n";
    return kUsageError;
  }
  int top = 10;
  if (args.Has("top")) {
    const std::string t = args.Get("top");
    if (t.empty() || t.size() > 9 || !std::all_of(t.begin(), t.end(), ::isdigit)) {
      std::cerr << "hlowb memory: --top must be a count, not '" << t << "'\n";
      return kUsageError;
    }
    top = std::stoi(t);
  }
  std::vector<Loaded> loaded(args.positional.size());
  for (size_t i = 0; i < args.positional.size(); ++i) {
    if (!Load(args.positional[i], pipeline, &loaded[i])) return kInputError;
  }
  if (loaded.size() == 2) {
    std::cout << (format == "json"
                      ? FormatMemoryComparisonJson(loaded[0].profile, loaded[0].label,
                                                   loaded[1].profile, loaded[1].label)
                      : FormatMemoryComparisonText(loaded[0].profile, loaded[0].label,
                                                   loaded[1].profile, loaded[1].label));
    return kOk;
  }
  std::cout << (format == "json"
                    ? FormatMemoryProfileJson(loaded[0].profile, loaded[0].label)
                    : FormatMemoryProfileText(loaded[0].profile, loaded[0].label, top));
  return kOk;
}

}  // namespace hlowb::cli
