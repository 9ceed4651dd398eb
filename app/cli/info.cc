// `hlowb info FILE [--split-input-file]`: what is in a module, at a glance.
#include <iostream>
#include <map>

#include "core/support/strings.h"
#include "absl/strings/str_join.h"
#include "app/cli/cli.h"
#include "core/text/printer.h"

namespace hlowb::cli {
namespace {

void PrintInfo(const LoadedModule& lm, std::ostream& os) {
  const Module& m = *lm.module;
  const ModuleConfig& c = m.config();
  os << "file: " << lm.label << "\n";
  os << "module: " << m.name() << "\n";
  std::vector<std::string> header;
  if (c.is_scheduled) header.push_back("is_scheduled=true");
  if (c.replica_count != 1) header.push_back(StrCat("replica_count=", c.replica_count));
  if (c.num_partitions != 1) header.push_back(StrCat("num_partitions=", c.num_partitions));
  if (c.has_input_output_alias) {
    header.push_back(StrCat("input_output_alias=", c.input_output_alias.size(), " entries"));
  }
  if (c.has_buffer_donor) header.push_back(StrCat("buffer_donor=", c.buffer_donors.size(), " entries"));
  if (c.entry_computation_layout) header.push_back("entry_computation_layout");
  if (!c.frontend_attributes.entries.empty()) {
    header.push_back(StrCat("frontend_attributes=", c.frontend_attributes.entries.size()));
  }
  for (const auto& [k, v] : c.unknown) header.push_back(k + " (unrecognised)");
  os << "header: " << (header.empty() ? "(none)" : absl::StrJoin(header, ", ")) << "\n";

  int64_t total = 0;
  std::map<std::string, int64_t> by_opcode;
  bool layouts = false, sharding = false;
  for (const auto& comp : m.computations()) {
    for (const Instruction* i : comp->instructions()) {
      ++total;
      ++by_opcode[std::string(OpcodeName(i->opcode()))];
      layouts |= i->shape().AnyLayout();
      sharding |= i->sharding() != nullptr;
    }
  }
  os << "computations: " << m.computations().size() << "\n";
  for (const auto& comp : m.computations()) {
    os << "  " << (comp->is_entry() ? "ENTRY " : "") << comp->name() << ": "
       << comp->instruction_count() << " instructions";
    if (!comp->execution_thread().empty()) os << ", thread " << comp->execution_thread();
    os << "\n";
  }
  os << "instructions: " << total << "\n";
  for (const auto& [op, n] : by_opcode) os << "  " << op << ": " << n << "\n";
  if (const Computation* entry = m.entry()) {
    os << "parameters:\n";
    for (const Instruction* p : entry->parameters()) {
      if (p) os << "  " << p->parameter_number() << " " << p->name() << ": " << PrintShape(p->shape()) << "\n";
    }
    if (entry->root()) os << "root: " << entry->root()->name() << ": " << PrintShape(entry->root()->shape()) << "\n";
  }
  os << "layouts: " << (layouts ? "present" : "absent") << "\n";
  os << "schedule: " << (c.is_scheduled ? "present" : "absent") << "\n";
  os << "sharding: " << (sharding ? "present" : "absent") << "\n";
}

}  // namespace

int RunInfo(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"split-input-file"}, {}, &args, &error) || args.positional.size() != 1) {
    std::cerr << "hlowb info: " << (error.empty() ? "expected exactly one FILE" : error)
              << "\nusage: hlowb info FILE [--split-input-file]\n";
    return kUsageError;
  }
  std::string text;
  std::vector<LoadedModule> modules;
  bool ok = LoadModules(args.positional[0], args.Has("split-input-file"), &text, &modules);
  for (size_t i = 0; i < modules.size(); ++i) {
    if (i) std::cout << "\n";
    PrintInfo(modules[i], std::cout);
  }
  return ok ? kOk : kInputError;
}

}  // namespace hlowb::cli
