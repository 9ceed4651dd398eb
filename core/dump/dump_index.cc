#include "core/dump/dump_index.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/support/strings.h"

namespace hlowb {
namespace {

int StageRank(StageKind s) {
  switch (s) {
    case StageKind::kBeforeOptimizations: return 0;
    case StageKind::kPassStep:
    case StageKind::kDuringPass: return 1;
    case StageKind::kAfterOptimizations: return 2;
    case StageKind::kAfterOptimizationsVariant: return 3;
    case StageKind::kNone: return 4;
  }
  return 4;
}

bool StateLess(const DumpState& a, const DumpState& b) {
  int ra = StageRank(a.stage), rb = StageRank(b.stage);
  if (ra != rb) return ra < rb;
  if (a.module_id != b.module_id) return a.module_id < b.module_id;
  if (a.step != b.step) return a.step < b.step;
  // At one step number, a during-pass dump comes before the after-pass dump.
  if (a.stage != b.stage) return a.stage == StageKind::kDuringPass;
  return a.label < b.label;
}

std::string StateLabel(const DumpName& n) {
  switch (n.stage) {
    case StageKind::kBeforeOptimizations:
    case StageKind::kAfterOptimizations:
    case StageKind::kAfterOptimizationsVariant:
      return n.stage_text;
    case StageKind::kPassStep:
      return StrCat(absl::StrFormat("%04d", n.step), " ", n.pipeline, ": ", n.pass);
    case StageKind::kDuringPass:
      return StrCat(absl::StrFormat("%04d", n.step), " during ", n.pass, ": ", n.next_pass);
    case StageKind::kNone:
      break;
  }
  return n.stage_text;
}

struct ScanState {
  const IndexOptions* options;
  std::vector<DumpFile>* files;
  std::string error;
};

void ScanDir(int dir_fd, const std::string& rel, int depth, ScanState* st) {
  if (depth > st->options->max_depth) return;
  if (st->options->cancel && st->options->cancel->IsCancelled()) return;
  int fd = dup(dir_fd);
  if (fd < 0) return;
  DIR* d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  std::vector<std::string> subdirs;
  while (dirent* e = readdir(d)) {
    const char* n = e->d_name;
    if (std::strcmp(n, ".") == 0 || std::strcmp(n, "..") == 0) continue;
    struct stat s;
    if (fstatat(dirfd(d), n, &s, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::string path = rel.empty() ? std::string(n) : rel + "/" + n;
    if (S_ISDIR(s.st_mode)) {
      subdirs.push_back(n);
    } else if (S_ISREG(s.st_mode)) {
      DumpFile f;
      f.path = std::move(path);
      f.size = static_cast<uint64_t>(s.st_size);
      f.mtime_ns = static_cast<int64_t>(s.st_mtim.tv_sec) * 1000000000 + s.st_mtim.tv_nsec;
      st->files->push_back(std::move(f));
      if (st->options->progress && st->files->size() % 1024 == 0) {
        st->options->progress(static_cast<int64_t>(st->files->size()), -1, "scanning");
      }
    }
  }
  for (const std::string& sub : subdirs) {
    int sub_fd = openat(dirfd(d), sub.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (sub_fd < 0) continue;
    ScanDir(sub_fd, rel.empty() ? sub : rel + "/" + sub, depth + 1, st);
    close(sub_fd);
  }
  closedir(d);
}

absl::StatusOr<std::vector<DumpFile>> ScanFiles(const std::string& dir, const IndexOptions& options) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    return absl::NotFoundError(StrCat(dir, ": cannot open directory: ", std::strerror(errno)));
  }
  std::vector<DumpFile> files;
  ScanState st{&options, &files, ""};
  ScanDir(fd, "", 0, &st);
  close(fd);
  if (options.cancel && options.cancel->IsCancelled()) {
    return absl::CancelledError(StrCat("indexing ", dir, " was cancelled"));
  }
  return files;
}

bool OnlyBeforeOptimizations(const DumpModule& m) {
  return !m.states.empty() && std::all_of(m.states.begin(), m.states.end(), [](const DumpState& s) {
    return s.stage == StageKind::kBeforeOptimizations;
  });
}

bool HasBeforeOptimizations(const DumpModule& m) {
  return std::any_of(m.states.begin(), m.states.end(), [](const DumpState& s) {
    return s.stage == StageKind::kBeforeOptimizations;
  });
}

// XLA sometimes dumps one compilation under two ids (openxla/xla#7193): the module as given
// (before_optimizations only) and, under the next id it hands out for that name, the module it
// optimized (no before_optimizations of its own). Only that pattern is joined; any id with a
// before_optimizations of its own is another compilation.
void LinkSplitCompilations(DumpIndex* index) {
  std::map<std::string, std::vector<int>> by_name;  // ids ascending (modules are sorted)
  for (int i = 0; i < static_cast<int>(index->modules.size()); ++i) {
    const DumpModule& m = index->modules[i];
    if (m.id >= 0 && !m.name.empty()) by_name[m.name].push_back(i);
  }
  for (auto& [name, ids] : by_name) {
    for (size_t k = 0; k + 1 < ids.size(); ++k) {
      DumpModule& a = index->modules[ids[k]];
      DumpModule& b = index->modules[ids[k + 1]];
      if (a.split_partner >= 0 || !OnlyBeforeOptimizations(a) || b.states.empty() ||
          HasBeforeOptimizations(b)) {
        continue;
      }
      a.split_partner = ids[k + 1];
      b.split_partner = ids[k];
    }
  }
}

}  // namespace

DumpIndex BuildDumpIndex(std::string root, std::vector<DumpFile> files) {
  DumpIndex index;
  index.root = std::move(root);
  std::sort(files.begin(), files.end(),
            [](const DumpFile& a, const DumpFile& b) { return a.path < b.path; });
  for (DumpFile& f : files) f.name = ParseDumpFilePath(f.path);
  index.files = std::move(files);

  std::map<int64_t, DumpModule> by_id;
  // Files with a module name but no id (snapshots of modules without one) are resolved after.
  std::vector<int> without_id;
  for (int i = 0; i < static_cast<int>(index.files.size()); ++i) {
    const DumpName& n = index.files[i].name;
    if (n.kind == DumpFileKind::kUnrecognized) {
      index.unrecognized.push_back(i);
      continue;
    }
    if (!n.module_id) {
      without_id.push_back(i);
      continue;
    }
    DumpModule& m = by_id[*n.module_id];
    m.id = *n.module_id;
    if (m.id_text.empty() || n.module_id_text.size() < m.id_text.size()) m.id_text = n.module_id_text;
    if (n.timestamp_us && m.timestamp_us < 0) m.timestamp_us = *n.timestamp_us;
    if (IsModuleStateKind(n.kind) && n.stage != StageKind::kNone) {
      if (!n.module_name.empty()) m.name = n.module_name;
      // Merge the text and proto files of one state.
      DumpState* state = nullptr;
      for (DumpState& s : m.states) {
        if (s.stage == n.stage && s.step == n.step && s.label == StateLabel(n)) state = &s;
      }
      if (!state) {
        m.states.emplace_back();
        state = &m.states.back();
        state->stage = n.stage;
        state->module_id = m.id;
        state->step = n.step;
        state->pipeline = n.pipeline;
        state->pass = n.pass;
        state->next_pass = n.next_pass;
        state->label = StateLabel(n);
      }
      (n.kind == DumpFileKind::kHloText ? state->text_file : state->proto_file) = i;
    } else {
      if (m.name.empty() && !n.module_name.empty()) m.name = n.module_name;
      m.artifacts.push_back(i);
    }
  }
  for (auto& [id, m] : by_id) {
    std::sort(m.states.begin(), m.states.end(), StateLess);
    index.modules.push_back(std::move(m));
  }
  for (int i : without_id) {
    const DumpName& n = index.files[i].name;
    auto it = std::find_if(index.modules.begin(), index.modules.end(),
                           [&](const DumpModule& m) { return m.name == n.module_name; });
    if (it == index.modules.end()) {
      DumpModule m;
      m.name = n.module_name;
      index.modules.push_back(std::move(m));
      it = index.modules.end() - 1;
    }
    it->artifacts.push_back(i);
  }
  LinkSplitCompilations(&index);
  std::map<std::string, DumpModuleGroup> groups;
  for (int i = 0; i < static_cast<int>(index.modules.size()); ++i) {
    DumpModuleGroup& g = groups[index.modules[i].name];
    g.name = index.modules[i].name;
    g.modules.push_back(i);
  }
  for (auto& [name, g] : groups) index.groups.push_back(std::move(g));
  return index;
}

const DumpModule* DumpIndex::FindModule(const std::string& key) const {
  bool numeric = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  if (numeric && key.size() <= 18) {
    int64_t id = std::stoll(key);
    for (const DumpModule& m : modules) {
      if (m.id == id) return &m;
    }
  }
  for (const DumpModule& m : modules) {
    if (m.name == key) return &m;
  }
  return nullptr;
}

std::vector<DumpState> DumpIndex::Timeline(const DumpModule& module) const {
  if (module.split_partner < 0 || module.split_partner >= static_cast<int>(modules.size())) {
    return module.states;
  }
  const DumpModule& other = modules[module.split_partner];
  std::vector<DumpState> joined = other.states;
  for (DumpState& s : joined) s.label = StrCat(s.label, " (module ", other.id_text, ")");
  std::vector<DumpState> states;
  states.reserve(module.states.size() + joined.size());
  if (other.id < module.id) states.insert(states.end(), joined.begin(), joined.end());
  states.insert(states.end(), module.states.begin(), module.states.end());
  if (other.id > module.id) states.insert(states.end(), joined.begin(), joined.end());
  return states;
}

std::vector<DumpState> DumpIndex::StatesForName(const std::string& name) const {
  std::vector<DumpState> states;
  for (const DumpModule& m : modules) {
    if (m.name == name) states.insert(states.end(), m.states.begin(), m.states.end());
  }
  std::stable_sort(states.begin(), states.end(), StateLess);
  return states;
}

absl::StatusOr<DumpIndex> IndexDumpDirectory(const std::string& dir, const IndexOptions& options) {
  auto files = ScanFiles(dir, options);
  if (!files.ok()) return files.status();
  DumpIndex index = BuildDumpIndex(dir, std::move(*files));
  if (options.progress) {
    options.progress(static_cast<int64_t>(index.files.size()),
                     static_cast<int64_t>(index.files.size()), "indexed");
  }
  return index;
}

absl::StatusOr<std::vector<std::string>> RescanDumpIndex(DumpIndex* index,
                                                         const IndexOptions& options) {
  auto files = ScanFiles(index->root, options);
  if (!files.ok()) return files.status();
  std::set<std::string> known;
  for (const DumpFile& f : index->files) known.insert(f.path);
  std::vector<std::string> added;
  for (const DumpFile& f : *files) {
    if (!known.count(f.path)) added.push_back(f.path);
  }
  std::sort(added.begin(), added.end());
  *index = BuildDumpIndex(index->root, std::move(*files));
  return added;
}

}  // namespace hlowb
