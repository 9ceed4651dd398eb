#include <algorithm>
#include <iostream>

#include "core/support/strings.h"
#include "app/cli/cli.h"
#include "core/support/file_util.h"
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
