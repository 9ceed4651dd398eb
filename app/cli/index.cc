// `hlowb index DIR [--format=text|json]`: what a dump directory holds.
#include <iostream>
#include <map>

#include "app/cli/cli.h"
#include "core/support/json.h"
#include "core/support/strings.h"

namespace hlowb::cli {
namespace {

uint64_t ModuleBytes(const DumpIndex& index, const DumpModule& m) {
  uint64_t bytes = 0;
  for (const DumpState& s : m.states) {
    if (s.text_file >= 0) bytes += index.files[s.text_file].size;
    if (s.proto_file >= 0) bytes += index.files[s.proto_file].size;
  }
  for (int a : m.artifacts) bytes += index.files[a].size;
  return bytes;
}

int CountPassSteps(const DumpModule& m) {
  int n = 0;
  for (const DumpState& s : m.states) n += s.stage == StageKind::kPassStep;
  return n;
}

std::string IdsOfName(const DumpIndex& index, const std::string& name) {
  std::string ids;
  for (const DumpModuleGroup& g : index.groups) {
    if (g.name != name || g.modules.size() < 2) continue;
    for (int i : g.modules) StrAppend(&ids, ids.empty() ? "" : ",", index.modules[i].id_text);
  }
  return ids;
}

void PrintText(const DumpIndex& index) {
  std::cout << index.root << ": " << index.files.size() << " files, " << index.modules.size()
            << " modules, " << index.unrecognized.size() << " unrecognised\n";
  for (const DumpModule& m : index.modules) {
    std::cout << "module " << (m.id_text.empty() ? "-" : m.id_text) << " "
              << (m.name.empty() ? "(unnamed)" : m.name) << ": " << m.states.size()
              << " states (" << CountPassSteps(m) << " pass steps), " << m.artifacts.size()
              << " artifacts, " << ModuleBytes(index, m) << " bytes";
    std::string ids = IdsOfName(index, m.name);
    if (!ids.empty()) std::cout << "; same function as ids " << ids;
    if (m.split_partner >= 0) {
      std::cout << "; one compilation with id " << index.modules[m.split_partner].id_text
                << " (its dump is split over the two ids)";
    }
    std::cout << "\n";
    for (const DumpState& s : m.states) {
      std::cout << "  state " << s.label << ":";
      if (s.text_file >= 0) std::cout << " " << index.files[s.text_file].path;
      if (s.proto_file >= 0) std::cout << " " << index.files[s.proto_file].path;
      std::cout << "\n";
    }
    std::map<std::string, int> kinds;
    for (int a : m.artifacts) ++kinds[std::string(DumpFileKindName(index.files[a].name.kind))];
    for (const auto& [kind, n] : kinds) std::cout << "  artifact " << kind << ": " << n << "\n";
  }
  for (int u : index.unrecognized) std::cout << "unrecognised " << index.files[u].path << "\n";
}

void PrintJson(const DumpIndex& index) {
  std::string out = StrCat("{\"root\":", JsonQuote(index.root), ",\"files\":", index.files.size(),
                           ",\"modules\":[");
  for (size_t k = 0; k < index.modules.size(); ++k) {
    const DumpModule& m = index.modules[k];
    StrAppend(&out, k ? "," : "", "{\"id\":", m.id, ",\"id_text\":", JsonQuote(m.id_text),
              ",\"name\":", JsonQuote(m.name), ",\"bytes\":", ModuleBytes(index, m),
              ",\"pass_steps\":", CountPassSteps(m), ",\"states\":[");
    for (size_t i = 0; i < m.states.size(); ++i) {
      const DumpState& s = m.states[i];
      StrAppend(&out, i ? "," : "", "{\"label\":", JsonQuote(s.label), ",\"step\":", s.step,
                ",\"pipeline\":", JsonQuote(s.pipeline), ",\"pass\":", JsonQuote(s.pass),
                ",\"text\":", s.text_file >= 0 ? JsonQuote(index.files[s.text_file].path) : "null",
                ",\"proto\":", s.proto_file >= 0 ? JsonQuote(index.files[s.proto_file].path) : "null",
                "}");
    }
    out += "],\"artifacts\":[";
    for (size_t i = 0; i < m.artifacts.size(); ++i) {
      const DumpFile& f = index.files[m.artifacts[i]];
      StrAppend(&out, i ? "," : "", "{\"path\":", JsonQuote(f.path), ",\"kind\":\"",
                DumpFileKindName(f.name.kind), "\",\"bytes\":", f.size, "}");
    }
    out += "]}";
  }
  out += "],\"unrecognized\":[";
  for (size_t i = 0; i < index.unrecognized.size(); ++i) {
    StrAppend(&out, i ? "," : "", JsonQuote(index.files[index.unrecognized[i]].path));
  }
  out += "]}\n";
  std::cout << out;
}

}  // namespace

int RunIndex(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, {"format"}, &args, &error) || args.positional.size() != 1) {
    std::cerr << "hlowb index: " << (error.empty() ? "expected exactly one DIR" : error)
              << "\nusage: hlowb index DIR [--format=text|json]\n";
    return kUsageError;
  }
  std::string format = args.Get("format", "text");
  if (format != "text" && format != "json") {
    std::cerr << "hlowb index: --format must be text or json\n";
    return kUsageError;
  }
  auto index = IndexDumpDirectory(args.positional[0]);
  if (!index.ok()) {
    std::cerr << "error: " << index.status().message() << "\n";
    return kInputError;
  }
  if (format == "json") {
    PrintJson(*index);
  } else {
    PrintText(*index);
  }
  return kOk;
}

}  // namespace hlowb::cli
