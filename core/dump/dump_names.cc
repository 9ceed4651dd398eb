#include "core/dump/dump_names.h"

#include <array>
#include <cctype>

namespace hlowb {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::optional<int64_t> ToInt(std::string_view s) {
  if (!AllDigits(s) || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

struct SuffixRow {
  std::string_view suffix;
  DumpFileKind kind;
};

// Longest first where one suffix ends another.
constexpr std::array<SuffixRow, 26> kSuffixes = {{
    {"-buffer-assignment-values.txt", DumpFileKind::kBufferAssignmentValues},
    {"-live-range.txt", DumpFileKind::kLiveRange},
    {"-memory-usage-report.pb.gz", DumpFileKind::kMemoryUsageReport},
    {"-memory-usage-report.txt", DumpFileKind::kMemoryUsageReport},
    {"-memory-usage-report.pb", DumpFileKind::kMemoryUsageReport},
    {"-buffer-assignment.txt", DumpFileKind::kBufferAssignment},
    {".hlo_unoptimized_snapshot.pb", DumpFileKind::kUnoptimizedSnapshot},
    {".hlo_unoptimized_snapshot.txt", DumpFileKind::kUnoptimizedSnapshot},
    {".hlo_snapshot.pb", DumpFileKind::kSnapshot},
    {".hlo.pb.gz", DumpFileKind::kHloProtoGz},
    {".hlo.pb", DumpFileKind::kHloProto},
    {".top_level.html", DumpFileKind::kHtml},
    {".html", DumpFileKind::kHtml},
    {".dot", DumpFileKind::kDot},
    {".url", DumpFileKind::kUrl},
    {".ll", DumpFileKind::kLlvmIr},
    {".ptx", DumpFileKind::kPtx},
    {".mlir", DumpFileKind::kMlir},
    {".o", DumpFileKind::kObjectFile},
    {".textproto", DumpFileKind::kOtherModuleFile},
    {".pbtxt", DumpFileKind::kOtherModuleFile},
    {".txt", DumpFileKind::kHloText},
    {".pb", DumpFileKind::kOtherModuleFile},
    {".flagfile", DumpFileKind::kDebugOptions},
    {".fdo_profile", DumpFileKind::kOtherModuleFile},
    {".debug_options", DumpFileKind::kDebugOptions},
}};

struct ArtifactRow {
  std::string_view name;  // last dot-separated part of the stem
  DumpFileKind kind;
};

constexpr std::array<ArtifactRow, 16> kArtifacts = {{
    {"thunk_sequence", DumpFileKind::kThunkSequence},
    {"config", DumpFileKind::kConfig},
    {"hlo_module_config", DumpFileKind::kConfig},
    {"execution_options", DumpFileKind::kConfig},
    {"target_arguments", DumpFileKind::kConfig},
    {"tpu_comp_env", DumpFileKind::kConfig},
    {"gpu_target_config", DumpFileKind::kConfig},
    {"debug_options", DumpFileKind::kDebugOptions},
    {"autotune_results", DumpFileKind::kAutotuneResults},
    {"ir-no-opt", DumpFileKind::kLlvmIr},
    {"ir-with-opt", DumpFileKind::kLlvmIr},
    {"ir-no-opt-noconst", DumpFileKind::kLlvmIr},
    {"ir-with-opt-noconst", DumpFileKind::kLlvmIr},
    {"fdo_profile", DumpFileKind::kOtherModuleFile},
    {"gpu_executable_proto", DumpFileKind::kOtherModuleFile},
    {"metadata", DumpFileKind::kModuleMetadata},
}};

// A platform prefix XLA's GPU/CPU compilers put before after_optimizations, e.g. "sm_9.0_gpu_".
bool IsPlatformPrefix(std::string_view p) {
  if (p.empty() || !std::isalpha(static_cast<unsigned char>(p[0]))) return false;
  for (char c : p) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  }
  return EndsWith(p, "gpu_") || EndsWith(p, "cpu_") || EndsWith(p, "tpu_");
}

// Splits "<name>.<stage>" where stage is [platform]before/after_optimizations[variant].
bool MatchOptimizationStage(std::string_view body, DumpName* out) {
  for (std::string_view variant : {"_after_buffer_assignment", "_before_buffer_assignment", ""}) {
    for (std::string_view core : {"after_optimizations", "before_optimizations"}) {
      std::string tail = std::string(core) + std::string(variant);
      if (!EndsWith(body, tail)) continue;
      std::string_view head = body.substr(0, body.size() - tail.size());
      // head is "<name>." or "<name>.<platform>" or "" / "<platform>" when the name is omitted.
      std::string_view name, platform;
      bool found = false;
      if (head.empty()) {
        found = true;
      } else if (head.back() == '.') {
        name = head.substr(0, head.size() - 1);
        found = true;
      } else {
        // Rightmost dot after which a platform prefix starts.
        for (size_t dot = head.rfind('.'); dot != std::string_view::npos;
             dot = dot == 0 ? std::string_view::npos : head.rfind('.', dot - 1)) {
          if (IsPlatformPrefix(head.substr(dot + 1))) {
            name = head.substr(0, dot);
            platform = head.substr(dot + 1);
            found = true;
            break;
          }
        }
        if (!found && IsPlatformPrefix(head)) {
          platform = head;
          found = true;
        }
      }
      if (!found) continue;
      out->module_name = std::string(name);
      out->platform_prefix = std::string(platform);
      out->stage_text = std::string(body.substr(name.empty() ? 0 : name.size() + 1));
      if (!variant.empty()) {
        out->stage = StageKind::kAfterOptimizationsVariant;
      } else {
        out->stage = core[0] == 'a' ? StageKind::kAfterOptimizations
                                    : StageKind::kBeforeOptimizations;
      }
      return true;
    }
  }
  return false;
}

// "<name>.NNNN.<pipeline>.after_<pass>.before_<next>" (name may be absent).
bool MatchPassStep(std::string_view body, DumpName* out) {
  size_t before = body.rfind(".before_");
  if (before == std::string_view::npos) return false;
  size_t after = body.rfind(".after_", before);
  if (after == std::string_view::npos || after == 0) return false;
  std::string_view head = body.substr(0, after);  // "<name>.NNNN.<pipeline>"
  // Find NNNN: a run of >= 4 digits delimited by dots (or the start), followed by a pipeline.
  for (size_t dot = head.rfind('.'); dot != std::string_view::npos && dot > 0;
       dot = head.rfind('.', dot - 1)) {
    std::string_view pipeline = head.substr(dot + 1);
    std::string_view before_dot = head.substr(0, dot);
    size_t start = before_dot.rfind('.');
    std::string_view digits = start == std::string_view::npos ? before_dot
                                                              : before_dot.substr(start + 1);
    if (digits.size() >= 4 && AllDigits(digits) && !pipeline.empty()) {
      out->module_name =
          start == std::string_view::npos ? "" : std::string(before_dot.substr(0, start));
      out->step = *ToInt(digits);
      out->pipeline = std::string(pipeline);
      out->pass = std::string(body.substr(after + 7, before - after - 7));
      out->next_pass = std::string(body.substr(before + 8));
      out->stage = StageKind::kPassStep;
      out->stage_text = std::string(body.substr(out->module_name.empty() ? 0 : start + 1));
      return true;
    }
    if (dot == 0) break;
  }
  return false;
}

// "<name>.NNNN.<pass>.<step name>": a dump taken during a pass.
bool MatchDuringPass(std::string_view body, DumpName* out) {
  size_t last = body.rfind('.');
  if (last == std::string_view::npos || last == 0) return false;
  size_t mid = body.rfind('.', last - 1);
  if (mid == std::string_view::npos) return false;
  std::string_view before_mid = body.substr(0, mid);
  size_t start = before_mid.rfind('.');
  std::string_view digits = start == std::string_view::npos ? before_mid
                                                            : before_mid.substr(start + 1);
  if (digits.size() < 4 || !AllDigits(digits)) return false;
  out->module_name = start == std::string_view::npos ? "" : std::string(before_mid.substr(0, start));
  out->step = *ToInt(digits);
  out->pass = std::string(body.substr(mid + 1, last - mid - 1));
  out->next_pass = std::string(body.substr(last + 1));
  out->stage = StageKind::kDuringPass;
  out->stage_text = std::string(body.substr(out->module_name.empty() ? 0 : start + 1));
  return true;
}

// A per-module folder name: "[<prefix>.]module_<id>[.<name>]", e.g. "module_0000.jit_f".
bool ParseModuleFolder(std::string_view folder, DumpName* out) {
  size_t module_pos = folder.rfind("module_", 0) == 0 ? 0 : std::string_view::npos;
  if (module_pos != 0) {
    size_t p = folder.find(".module_");
    if (p == std::string_view::npos || !AllDigits(folder.substr(0, p))) return false;
    module_pos = p + 1;
  }
  std::string_view rest = folder.substr(module_pos + 7);
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits == 0 || (digits < rest.size() && rest[digits] != '.')) return false;
  if (module_pos > 0) out->timestamp_us = ToInt(folder.substr(0, module_pos - 1));
  out->module_id_text = std::string(rest.substr(0, digits));
  out->module_id = ToInt(out->module_id_text);
  if (!out->module_id) return false;
  out->module_name = std::string(rest.substr(std::min(digits + 1, rest.size())));
  return true;
}

// What a file inside a per-module folder is, from its own name.
DumpFileKind KindInModuleFolder(std::string_view file_name, std::string* stem_out) {
  std::string_view stem = file_name.substr(0, file_name.find('.'));
  *stem_out = std::string(stem);
  if (stem == "compile_options") return DumpFileKind::kCompileOptions;
  if (stem == "topology") return DumpFileKind::kTopology;
  if (stem == "debug_options") return DumpFileKind::kDebugOptions;
  for (const SuffixRow& row : kSuffixes) {
    if (!EndsWith(file_name, row.suffix)) continue;
    // HLO found here has no stage in its name: keep it as a file, not a state.
    if (IsModuleStateKind(row.kind) || row.kind == DumpFileKind::kSnapshot ||
        row.kind == DumpFileKind::kUnoptimizedSnapshot) {
      return DumpFileKind::kOtherModuleFile;
    }
    return row.kind;
  }
  return DumpFileKind::kOtherModuleFile;
}

}  // namespace

std::string_view DumpFileKindName(DumpFileKind kind) {
  switch (kind) {
    case DumpFileKind::kUnrecognized: return "unrecognized";
    case DumpFileKind::kHloText: return "hlo-text";
    case DumpFileKind::kHloProto: return "hlo-proto";
    case DumpFileKind::kHloProtoGz: return "hlo-proto-gz";
    case DumpFileKind::kSnapshot: return "snapshot";
    case DumpFileKind::kUnoptimizedSnapshot: return "unoptimized-snapshot";
    case DumpFileKind::kBufferAssignment: return "buffer-assignment";
    case DumpFileKind::kBufferAssignmentValues: return "buffer-assignment-values";
    case DumpFileKind::kLiveRange: return "live-range";
    case DumpFileKind::kMemoryUsageReport: return "memory-usage-report";
    case DumpFileKind::kDot: return "dot";
    case DumpFileKind::kHtml: return "html";
    case DumpFileKind::kUrl: return "url";
    case DumpFileKind::kLlvmIr: return "llvm-ir";
    case DumpFileKind::kPtx: return "ptx";
    case DumpFileKind::kMlir: return "mlir";
    case DumpFileKind::kObjectFile: return "object-file";
    case DumpFileKind::kThunkSequence: return "thunk-sequence";
    case DumpFileKind::kDebugOptions: return "debug-options";
    case DumpFileKind::kConfig: return "config";
    case DumpFileKind::kModuleMetadata: return "module-metadata";
    case DumpFileKind::kAutotuneResults: return "autotune-results";
    case DumpFileKind::kFusionVisualization: return "fusion-visualization";
    case DumpFileKind::kCompileOptions: return "compile-options";
    case DumpFileKind::kTopology: return "topology";
    case DumpFileKind::kOtherModuleFile: return "other-module-file";
  }
  return "unknown";
}

bool IsModuleStateKind(DumpFileKind kind) {
  return kind == DumpFileKind::kHloText || kind == DumpFileKind::kHloProto ||
         kind == DumpFileKind::kHloProtoGz;
}

DumpName ParseDumpFileName(std::string_view file_name) {
  DumpName out;
  std::string_view name = file_name;
  // Fusion visualizations are prefixed with the computation name.
  if (EndsWith(name, "._fusion.html")) {
    size_t m = name.find(".module_");
    if (m != std::string_view::npos) {
      out.computation = std::string(name.substr(0, m));
      name = name.substr(m + 1);
      out.kind = DumpFileKind::kFusionVisualization;
    }
  }
  // Optional "<prefix>." before "module_": a microsecond timestamp or a helper's name.
  size_t module_pos = std::string_view::npos;
  if (name.substr(0, 7) == "module_") {
    module_pos = 0;
  } else {
    for (size_t p = name.find(".module_"); p != std::string_view::npos;
         p = name.find(".module_", p + 1)) {
      module_pos = p + 1;
      break;
    }
    if (module_pos == std::string_view::npos) return DumpName();
    std::string_view prefix = name.substr(0, module_pos - 1);
    if (AllDigits(prefix)) out.timestamp_us = ToInt(prefix);
  }
  std::string_view rest = name.substr(module_pos + 7);
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  // Snapshots of modules without an id: module_<name>.execution_NNNN.hlo_snapshot.pb
  bool has_id = digits > 0 && (digits == rest.size() || rest[digits] == '.');
  if (has_id) {
    out.module_id_text = std::string(rest.substr(0, digits));
    out.module_id = ToInt(out.module_id_text);
    rest = rest.substr(std::min(digits + 1, rest.size()));
  }
  // Known suffix.
  std::string_view body;
  DumpFileKind suffix_kind = DumpFileKind::kUnrecognized;
  for (const SuffixRow& row : kSuffixes) {
    if (EndsWith(rest, row.suffix)) {
      out.suffix = std::string(row.suffix);
      suffix_kind = row.kind;
      body = rest.substr(0, rest.size() - row.suffix.size());
      break;
    }
  }
  if (out.suffix.empty()) {
    // No known extension: still module-prefixed, so keep it as another module file.
    out.kind = DumpFileKind::kOtherModuleFile;
    out.module_name = std::string(rest);
    return has_id || !rest.empty() ? out : DumpName();
  }
  if (out.kind == DumpFileKind::kFusionVisualization) {
    out.module_name = std::string(body.size() > 0 && body.back() == '.'
                                      ? body.substr(0, body.size() - 1) : body);
    return out;
  }
  if (!has_id && suffix_kind != DumpFileKind::kSnapshot &&
      suffix_kind != DumpFileKind::kUnoptimizedSnapshot) {
    return DumpName();
  }
  // execution_NNNN (snapshots and per-execution helpers).
  if (size_t e = body.rfind("execution_"); e != std::string_view::npos &&
                                           (e == 0 || body[e - 1] == '.') &&
                                           AllDigits(body.substr(e + 10))) {
    out.execution = *ToInt(body.substr(e + 10));
    out.module_name = std::string(e == 0 ? "" : body.substr(0, e - 1));
    out.stage_text = std::string(body.substr(e));
    out.kind = suffix_kind == DumpFileKind::kHloText ? DumpFileKind::kOtherModuleFile : suffix_kind;
    return out;
  }
  // Snapshots of the CPU client: "<name>.snapshot.<N>.pb", N the execution's run id, a signed
  // 32-bit number that is often negative ("snapshot.-1438371118.pb").
  if (size_t sn = body.rfind("snapshot."); out.suffix == ".pb" && sn != std::string_view::npos &&
                                           (sn == 0 || body[sn - 1] == '.')) {
    std::string_view number = body.substr(sn + 9);
    const bool negative = !number.empty() && number[0] == '-';
    if (negative) number.remove_prefix(1);
    if (AllDigits(number)) {
      const int64_t magnitude = ToInt(number).value_or(-1);
      out.execution = negative ? -magnitude : magnitude;
      out.module_name = std::string(sn == 0 ? "" : body.substr(0, sn - 1));
      out.stage_text = std::string(body.substr(sn));
      out.kind = DumpFileKind::kSnapshot;
      return out;
    }
  }
  if (body == "metadata" && out.suffix == ".textproto") {
    out.kind = DumpFileKind::kModuleMetadata;
    return out;
  }
  if (MatchOptimizationStage(body, &out) || MatchPassStep(body, &out)) {
    out.kind = suffix_kind == DumpFileKind::kOtherModuleFile ? DumpFileKind::kOtherModuleFile
                                                              : suffix_kind;
    return out;
  }
  // Artifacts named by their last dot-separated part ("jit_f.thunk_sequence"), or by an
  // inner part for per-kernel LLVM IR ("jit_f.ir-no-opt.kernel_1", "jit_f.k1.ir-no-opt").
  size_t dot = body.rfind('.');
  std::string_view last = dot == std::string_view::npos ? body : body.substr(dot + 1);
  for (const ArtifactRow& row : kArtifacts) {
    if (last == row.name) {
      out.kind = row.kind;
      out.module_name = std::string(dot == std::string_view::npos ? "" : body.substr(0, dot));
      out.stage_text = std::string(last);
      return out;
    }
  }
  if (suffix_kind == DumpFileKind::kLlvmIr) {
    size_t ir = body.find(".ir-");
    out.kind = DumpFileKind::kLlvmIr;
    out.module_name = std::string(ir == std::string_view::npos ? body : body.substr(0, ir));
    return out;
  }
  // During-pass states, as text and (with --xla_dump_hlo_as_proto) as protos.
  if (IsModuleStateKind(suffix_kind) && MatchDuringPass(body, &out)) {
    out.kind = suffix_kind;
    return out;
  }
  // Object files of the CPU compiler: "<name>.obj-file.<kernel>.o".
  if (suffix_kind == DumpFileKind::kObjectFile) {
    if (size_t obj = body.find("obj-file."); obj != std::string_view::npos &&
                                             (obj == 0 || body[obj - 1] == '.')) {
      out.kind = DumpFileKind::kObjectFile;
      out.module_name = std::string(obj == 0 ? "" : body.substr(0, obj - 1));
      out.computation = std::string(body.substr(obj + 9));
      out.stage_text = std::string(body.substr(obj));
      return out;
    }
  }
  if (suffix_kind == DumpFileKind::kPtx || suffix_kind == DumpFileKind::kMlir ||
      suffix_kind == DumpFileKind::kObjectFile || suffix_kind == DumpFileKind::kDebugOptions ||
      suffix_kind == DumpFileKind::kDot || suffix_kind == DumpFileKind::kHtml) {
    out.kind = suffix_kind;
    out.module_name = std::string(body);
    return out;
  }
  out.kind = DumpFileKind::kOtherModuleFile;
  out.module_name = std::string(body);
  return out;
}

DumpName ParseDumpFilePath(std::string_view relative_path) {
  size_t slash = relative_path.rfind('/');
  std::string_view base =
      slash == std::string_view::npos ? relative_path : relative_path.substr(slash + 1);
  DumpName own = ParseDumpFileName(base);
  if (own.kind != DumpFileKind::kUnrecognized || slash == std::string_view::npos) return own;
  // The innermost enclosing folder named like a module owns the file.
  std::string_view dirs = relative_path.substr(0, slash);
  while (!dirs.empty()) {
    size_t s = dirs.rfind('/');
    std::string_view folder = s == std::string_view::npos ? dirs : dirs.substr(s + 1);
    DumpName out;
    if (ParseModuleFolder(folder, &out)) {
      out.kind = KindInModuleFolder(base, &out.stage_text);
      size_t dot = base.find('.');
      if (dot != std::string_view::npos) out.suffix = std::string(base.substr(dot));
      return out;
    }
    if (s == std::string_view::npos) break;
    dirs = dirs.substr(0, s);
  }
  return own;
}

}  // namespace hlowb
