#include "core/passes/module_dumper.h"

#include <chrono>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/support/strings.h"
#include "core/proto/open_file.h"
#include "core/support/file_util.h"
#include "core/text/printer.h"

namespace hlowb {

std::string SanitizeDumpFileName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == '/' || c == '\\' || c == '[' || c == ']' || c == ' ') c = '_';
  }
  return out;
}

namespace {

absl::StatusOr<bool> ParseBool(std::string_view name, std::string_view value) {
  std::string v = absl::AsciiStrToLower(AsAbsl(value));
  if (v.empty() || v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return absl::InvalidArgumentError(
      StrCat("--", name, " takes true or false, not '", value, "'"));
}

std::vector<std::string> SplitList(std::string_view value) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(AsAbsl(value), ',', absl::SkipEmpty())) {
    out.push_back(std::string(absl::StripAsciiWhitespace(part)));
  }
  return out;
}

}  // namespace

absl::Status ApplyXlaFlag(std::string_view flag, DumpOptions* dump, PassOptions* passes,
                          bool* known) {
  *known = true;
  while (!flag.empty() && flag[0] == '-') flag.remove_prefix(1);
  std::string_view name = flag;
  std::string_view value;
  bool has_value = false;
  if (size_t eq = flag.find('='); eq != std::string_view::npos) {
    name = flag.substr(0, eq);
    value = flag.substr(eq + 1);
    has_value = true;
  }
  auto set_bool = [&](bool* field) -> absl::Status {
    absl::StatusOr<bool> b = ParseBool(name, has_value ? value : "true");
    if (!b.ok()) return b.status();
    *field = *b;
    return absl::OkStatus();
  };
  auto need_value = [&]() -> absl::Status {
    if (!has_value) {
      return absl::InvalidArgumentError(StrCat("--", name, " needs a value (--", name,
                                                     "=...)"));
    }
    return absl::OkStatus();
  };
  if (name == "xla_dump_to") {
    if (absl::Status st = need_value(); !st.ok()) return st;
    dump->dump_to = std::string(value);
  } else if (name == "xla_dump_hlo_pass_re") {
    if (absl::Status st = need_value(); !st.ok()) return st;
    dump->pass_re = std::string(value);
  } else if (name == "xla_dump_hlo_pipeline_re") {
    if (absl::Status st = need_value(); !st.ok()) return st;
    dump->pipeline_re = std::string(value);
  } else if (name == "xla_dump_hlo_module_re") {
    if (absl::Status st = need_value(); !st.ok()) return st;
    dump->module_re = std::string(value);
  } else if (name == "xla_dump_hlo_as_text") {
    return set_bool(&dump->as_text);
  } else if (name == "xla_dump_hlo_as_proto") {
    return set_bool(&dump->as_proto);
  } else if (name == "xla_dump_hlo_snapshots") {
    return set_bool(&dump->snapshots);
  } else if (name == "xla_dump_include_timestamp") {
    return set_bool(&dump->include_timestamp);
  } else if (name == "xla_dump_hlo_as_long_text") {
    return set_bool(&dump->long_text);
  } else if (name == "xla_dump_disable_metadata") {
    return set_bool(&dump->disable_metadata);
  } else if (name == "xla_dump_large_constants") {
    return set_bool(&dump->large_constants);
  } else if (name == "xla_disable_hlo_passes") {
    if (absl::Status st = need_value(); !st.ok()) return st;
    for (std::string& p : SplitList(value)) passes->disabled_passes.push_back(std::move(p));
  } else if (name == "xla_enable_hlo_passes_only") {
    if (absl::Status st = need_value(); !st.ok()) return st;
    for (std::string& p : SplitList(value)) passes->enabled_passes_only.push_back(std::move(p));
  } else if (name == "xla_verify_after_passes" || name == "xla_hlo_verify_after_each_pass") {
    return set_bool(&passes->verify_after_each_pass);
  } else if (name == "xla_fuel") {
    if (absl::Status st = need_value(); !st.ok()) return st;
    for (const std::string& item : SplitList(value)) {
      size_t eq = item.find('=');
      int64_t n = 0;
      if (eq == std::string::npos || !absl::SimpleAtoi(item.substr(eq + 1), &n) || n < 0) {
        return absl::InvalidArgumentError(
            StrCat("--xla_fuel takes PASS=N[,PASS=N...], not '", item, "'"));
      }
      passes->fuel[item.substr(0, eq)] = n;
    }
  } else if (name == "xla_hlo_pass_fix_detect_cycles" || name == "xla_dump_hlo_as_dot" ||
             name == "xla_dump_hlo_as_html" || name == "xla_dump_compress_protos" ||
             name == "xla_dump_module_metadata" || name == "xla_dump_full_hlo_config") {
    // Accepted for compatibility; these formats are not written.
  } else {
    *known = false;
  }
  return absl::OkStatus();
}

absl::Status ApplyXlaFlags(std::string_view flags, DumpOptions* dump, PassOptions* passes,
                           std::vector<std::string>* unknown) {
  for (absl::string_view f :
       absl::StrSplit(AsAbsl(flags), absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    bool known = false;
    absl::Status st = ApplyXlaFlag(AsStd(f), dump, passes, &known);
    if (!st.ok()) return st;
    if (!known && unknown) unknown->push_back(std::string(f));
  }
  return absl::OkStatus();
}

ModuleDumper::ModuleDumper(DumpOptions options, const Module& module)
    : options_(std::move(options)) {
  enabled_ = !options_.dump_to.empty();
  if (enabled_ && !options_.module_re.empty()) {
    try {
      enabled_ = std::regex_search(module.name(), std::regex(options_.module_re));
    } catch (const std::regex_error&) {
      enabled_ = false;
    }
  }
  if (!options_.any_format_given()) options_.as_text = true;
  try {
    if (!options_.pass_re.empty()) pass_re_ = std::regex(options_.pass_re);
    if (!options_.pipeline_re.empty()) pipeline_re_ = std::regex(options_.pipeline_re);
  } catch (const std::regex_error&) {
    pass_re_.reset();
  }
  pass_re_is_all_ = options_.pass_re == ".*";
  prefix_ = absl::StrFormat("module_%04d.%s", module.id(), module.name());
  if (options_.include_timestamp) {
    int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    prefix_ = StrCat(us, ".", prefix_);
  }
}

absl::Status ModuleDumper::Write(const std::string& file_name, std::string_view contents) {
  std::error_code ec;
  std::filesystem::create_directories(options_.dump_to, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        StrCat("cannot create the dump directory ", options_.dump_to, ": ", ec.message()));
  }
  std::string path =
      (std::filesystem::path(options_.dump_to) / SanitizeDumpFileName(file_name)).string();
  absl::Status st = WriteStringToFile(path, std::string(contents));
  if (st.ok()) written_.push_back(path);
  return st;
}

absl::Status ModuleDumper::DumpModule(const Module& module, std::string_view stage,
                                      const xla::BufferAssignmentProto* buffer_assignment) {
  if (!enabled_) return absl::OkStatus();
  std::string base = StrCat(prefix_, ".", stage);
  if (options_.as_text) {
    // XLA's dump style: the long form without operand shapes.
    PrintOptions po = options_.long_text ? PrintOptions::Dump() : PrintOptions::Short();
    po.print_metadata = !options_.disable_metadata;
    if (absl::Status st = Write(base + ".txt", PrintModule(module, po)); !st.ok()) return st;
  }
  if (options_.as_proto) {
    EncodeOptions encode;
    encode.buffer_assignment = buffer_assignment;
    absl::StatusOr<std::string> bytes =
        EncodeHloFile(module, HloOutputFormat::kHloProto, encode);
    if (!bytes.ok()) return bytes.status();
    if (absl::Status st = Write(base + ".hlo.pb", *bytes); !st.ok()) return st;
  }
  return absl::OkStatus();
}

bool ModuleDumper::WantsPassDump(std::string_view pipeline, std::string_view after_pass,
                                 std::string_view before_pass, bool changed) const {
  if (!enabled_ || !pass_re_) return false;
  if (pipeline_re_ && !std::regex_search(std::string(pipeline), *pipeline_re_)) return false;
  const bool matches = std::regex_search(std::string(after_pass), *pass_re_) ||
                       std::regex_search(std::string(before_pass), *pass_re_);
  if (!matches) return false;
  // With `.*` XLA leaves out passes that changed nothing; with any other regex it keeps them.
  if (pass_re_is_all_ && !changed) return false;
  return true;
}

absl::Status ModuleDumper::DumpPassStep(const Module& module, std::string_view pipeline,
                                        std::string_view after_pass,
                                        std::string_view before_pass) {
  if (!enabled_) return absl::OkStatus();
  std::string stage = absl::StrFormat("%04d.%s.after_%s.before_%s", step_++, std::string(pipeline),
                                      std::string(after_pass), std::string(before_pass));
  return DumpModule(module, stage);
}

absl::Status ModuleDumper::DumpSnapshot(const Module& module, const SnapshotData& data,
                                        int64_t execution) {
  if (!enabled_) return absl::OkStatus();
  EncodeOptions encode;
  encode.snapshot = &data;
  absl::StatusOr<std::string> bytes = EncodeHloFile(module, HloOutputFormat::kHloSnapshot, encode);
  if (!bytes.ok()) return bytes.status();
  return Write(StrCat(prefix_, ".snapshot.", execution, ".pb"), *bytes);
}

absl::Status ModuleDumper::DumpFile(std::string_view suffix, std::string_view contents) {
  if (!enabled_) return absl::OkStatus();
  std::string name = !suffix.empty() && (suffix[0] == '-' || suffix[0] == '.')
                         ? StrCat(prefix_, suffix)
                         : StrCat(prefix_, ".", suffix);
  return Write(name, contents);
}

}  // namespace hlowb
