// The memory view's profiles: XLA's buffer assignment of a dump's after-optimizations state,
// or hlowb's own of any module.
#include "app/gui/memory_source.h"

#include <chrono>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "core/analysis/memory_report.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/memory_profile_builder.h"

namespace hlowb::gui {

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool Cancelled(const CancelToken* cancel) { return cancel != nullptr && cancel->IsCancelled(); }

absl::Status CancelledStatus() { return absl::CancelledError("the memory profile was cancelled"); }

}  // namespace

absl::StatusOr<MemorySourceResult> LoadMemoryProfile(const MemorySourceRequest& request,
                                                     const CancelToken* cancel) {
  const auto start = std::chrono::steady_clock::now();
  if (Cancelled(cancel)) return CancelledStatus();
  MemorySourceResult result;
  result.label = request.label;
  if (result.label.isEmpty() && request.module != nullptr) {
    result.label = QString::fromStdString(request.module->name());
  }

  if (!request.buffer_assignment_file.empty()) {
    const std::string& path = request.buffer_assignment_file;
    // The reader gathers the assignment's texts beside the name; none there is this error.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return absl::NotFoundError("XLA's buffer assignment could not be read: " + path +
                                 ": no such file");
    }
    absl::StatusOr<MemoryProfile> profile = ReadXlaMemoryProfileFiles(path);
    if (!profile.ok()) {
      return absl::Status(profile.status().code(),
                          "XLA's buffer assignment could not be read: " +
                              std::string(profile.status().message()));
    }
    if (Cancelled(cancel)) return CancelledStatus();
    if (result.label.isEmpty()) result.label = QString::fromStdString(path);
    result.origin =
        QStringLiteral("XLA's buffer assignment (%1)").arg(QString::fromStdString(path));
    result.profile = std::make_shared<const MemoryProfile>(*std::move(profile));
    result.seconds = SecondsSince(start);
    return result;
  }

  if (request.module == nullptr) {
    return absl::InvalidArgumentError(
        "no module and no buffer-assignment file: nothing to profile");
  }
  // Scheduling and buffer assignment may add copies: the shown module stays as it is.
  std::unique_ptr<Module> copy = CloneModule(*request.module);
  if (Cancelled(cancel)) return CancelledStatus();
  absl::StatusOr<MemoryProfileResult> own = ComputeMemoryProfile(copy.get(), cancel);
  if (Cancelled(cancel)) return CancelledStatus();
  if (!own.ok()) {
    return absl::Status(own.status().code(), "hlowb's buffer assignment of " +
                                                 request.module->name() + " failed: " +
                                                 std::string(own.status().message()));
  }
  MemoryProfile profile = std::move(own->profile);
  if (profile.schedule.empty()) profile.schedule = own->schedule;
  result.origin = QStringLiteral("hlowb's buffer assignment; schedule: %1")
                      .arg(QString::fromStdString(profile.schedule));
  result.profile = std::make_shared<const MemoryProfile>(std::move(profile));
  result.seconds = SecondsSince(start);
  return result;
}

std::string FindBufferAssignmentFile(const DumpIndex& index, int module_index,
                                     const DumpState& state) {
  if (module_index < 0 || module_index >= static_cast<int>(index.modules.size())) return {};
  if (state.stage != StageKind::kAfterOptimizations) return {};
  const int state_file = state.file();
  if (state_file < 0 || state_file >= static_cast<int>(index.files.size())) return {};
  const std::string& stage_text = index.files[state_file].name.stage_text;

  // The state is the module's own or, for a compilation XLA split over two ids, its partner's;
  // the buffer assignment was written under the id of the state it describes.
  const DumpModule& module = index.modules[module_index];
  std::vector<const DumpModule*> owners = {&module};
  if (module.split_partner >= 0 && module.split_partner < static_cast<int>(index.modules.size())) {
    owners.push_back(&index.modules[module.split_partner]);
  }
  const DumpModule* owner = nullptr;
  for (const DumpModule* m : owners) {
    if (m->id == state.module_id) owner = m;
  }
  if (owner == nullptr) return {};
  for (int a : owner->artifacts) {
    if (a < 0 || a >= static_cast<int>(index.files.size())) continue;
    const DumpName& name = index.files[a].name;
    if (name.kind != DumpFileKind::kBufferAssignment) continue;
    if (name.stage != StageKind::kAfterOptimizations || name.stage_text != stage_text) continue;
    return index.root + "/" + index.files[a].path;
  }
  return {};
}

}  // namespace hlowb::gui
