#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "core/support/strings.h"
#include "app/cli/cli.h"
#include "core/support/file_util.h"
#include "core/proto/open_file.h"
#include "core/text/parser.h"

namespace hlowb::cli {

bool Args::Has(const std::string& name) const {
  return std::any_of(options.begin(), options.end(), [&](const auto& o) { return o.first == name; });
}

std::string Args::Get(const std::string& name, const std::string& fallback) const {
  for (auto it = options.rbegin(); it != options.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return fallback;
}

bool ParseArgs(const std::vector<std::string>& argv, const std::vector<std::string>& known_flags,
               const std::vector<std::string>& value_options, Args* args, std::string* error) {
  auto is = [](const std::vector<std::string>& set, const std::string& n) {
    return std::find(set.begin(), set.end(), n) != set.end();
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-" || a.empty() || a[0] != '-') {
      args->positional.push_back(a);
      continue;
    }
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    std::string name = body, value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (is(value_options, name)) {
      if (!has_value) {
        if (i + 1 >= argv.size()) {
          *error = StrCat("option ", a, " needs a value");
          return false;
        }
        value = argv[++i];
      }
      args->options.emplace_back(name, value);
    } else if (is(known_flags, name)) {
      if (has_value && value != "true" && value != "false") {
        *error = StrCat("option --", name, " takes no value (or true/false)");
        return false;
      }
      if (!has_value || value == "true") args->options.emplace_back(name, "true");
    } else {
      *error = StrCat("unknown option ", a);
      return false;
    }
  }
  return true;
}

bool LoadModules(const std::string& path, bool split, std::string* text,
                 std::vector<LoadedModule>* modules) {
  absl::StatusOr<std::string> contents = ReadFileToString(path);
  if (!contents.ok()) {
    std::cerr << "error: " << contents.status().message() << "\n";
    return false;
  }
  *text = std::move(*contents);
  if (path != "-" && !LooksLikeHloText(path, *text)) {
    OpenOptions open_options;
    open_options.split_input_file = split;
    absl::StatusOr<OpenedHloFile> file = OpenHloBytes(*text, path, open_options);
    if (!file.ok()) {
      std::cerr << "error: " << file.status().message() << "\n";
      return false;
    }
    for (const std::string& w : file->warnings) std::cerr << "warning: " << w << "\n";
    for (OpenedModule& m : file->modules) {
      LoadedModule lm;
      lm.label = m.label.empty() ? path : m.label;
      lm.module = std::move(m.module);
      modules->push_back(std::move(lm));
    }
    return !modules->empty();
  }
  std::vector<std::string_view> parts =
      split ? SplitInputFile(*text) : std::vector<std::string_view>{*text};
  bool ok = true;
  for (size_t i = 0; i < parts.size(); ++i) {
    ParseOptions options;
    options.file_name = path == "-" ? "<stdin>" : path;
    options.enclosing_text = *text;
    absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(parts[i], options);
    if (!m.ok()) {
      std::cerr << "error: " << m.status().message() << "\n";
      ok = false;
      continue;
    }
    LoadedModule lm;
    lm.label = parts.size() > 1 ? StrCat(options.file_name, "#", i + 1) : options.file_name;
    lm.module = std::move(*m);
    modules->push_back(std::move(lm));
  }
  return ok;
}

}  // namespace hlowb::cli

namespace hlowb::cli {

ModuleOpener CliModuleOpener() { return AnyFormatModuleOpener(); }

bool LoadDumpModule(const std::string& dir, const std::string& module, DumpIndex* index,
                    std::vector<DumpState>* states, std::vector<LoadedState>* loaded) {
  auto idx = IndexDumpDirectory(dir);
  if (!idx.ok()) {
    std::cerr << "error: " << idx.status().message() << "\n";
    return false;
  }
  *index = std::move(*idx);
  const DumpModule* m = index->FindModule(module);
  if (!m) {
    std::cerr << "error: " << dir << ": no module '" << module << "'; modules:";
    for (const DumpModule& dm : index->modules) std::cerr << " " << dm.id_text << ":" << dm.name;
    std::cerr << "\n";
    return false;
  }
  *states = index->Timeline(*m);
  DumpStateLoader loader(*index, CliModuleOpener());
  bool tty = isatty(2);
  *loaded = loader.Load(*states, nullptr, [tty](int64_t done, int64_t total, const std::string&) {
    if (tty) std::fprintf(stderr, "\rloading %lld/%lld states", static_cast<long long>(done),
                          static_cast<long long>(total));
  });
  if (tty) std::fprintf(stderr, "\r\033[K");
  return true;
}

bool ResolveState(const std::string& ref, ResolvedState* out) {
  // DIR:MODULE:STEP, unless the whole reference names an existing file.
  struct stat st;
  size_t last = ref.rfind(':');
  size_t mid = last == std::string::npos || last == 0 ? std::string::npos : ref.rfind(':', last - 1);
  if (stat(ref.c_str(), &st) == 0 || mid == std::string::npos) {
    std::string text;
    std::vector<LoadedModule> modules;
    if (!LoadModules(ref, false, &text, &modules)) return false;
    out->label = ref;
    out->module = std::shared_ptr<const Module>(std::move(modules[0].module));
    return true;
  }
  std::string dir = ref.substr(0, mid);
  std::string module = ref.substr(mid + 1, last - mid - 1);
  std::string step = ref.substr(last + 1);
  auto index = IndexDumpDirectory(dir);
  if (!index.ok()) {
    std::cerr << "error: " << index.status().message() << "\n";
    return false;
  }
  const DumpModule* m = index->FindModule(module);
  if (!m) {
    std::cerr << "error: " << dir << ": no module '" << module << "'\n";
    return false;
  }
  std::vector<DumpState> states = index->Timeline(*m);
  const DumpState* chosen = nullptr;
  for (const DumpState& s : states) {
    if ((step == "before" && s.stage == StageKind::kBeforeOptimizations) ||
        (step == "after" && s.stage == StageKind::kAfterOptimizations) ||
        (!step.empty() && std::all_of(step.begin(), step.end(), ::isdigit) &&
         s.stage == StageKind::kPassStep && s.step == std::stoll(step))) {
      chosen = &s;
      if (step != "after") break;
    }
  }
  if (!chosen) {
    std::cerr << "error: module '" << module << "' in " << dir << " has no state '" << step
              << "' (use a step number, before or after)\n";
    return false;
  }
  DumpStateLoader loader(*index, CliModuleOpener());
  std::vector<LoadedState> loaded = loader.Load({*chosen});
  if (!loaded[0].status.ok()) {
    std::cerr << "error: " << loaded[0].status.message() << "\n";
    return false;
  }
  out->label = StrCat(dir, ":", module, ":", chosen->label);
  out->module = loaded[0].module;
  return true;
}

}  // namespace hlowb::cli
