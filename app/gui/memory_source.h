// Where the memory view's profile of a shown state comes from: XLA's own buffer assignment when
// the dump holds one for exactly that state (the after-optimizations module XLA wrote it
// with), else hlowb's buffer assignment of the state's module (on a copy: scheduling may add
// copies). Both are plain functions, safe to call from a worker thread; the window runs them
// off the UI thread and hands the finished profile to viewer::MemoryView.
//
// Deliberately not here: threads, caching, or anything the view draws.
#ifndef HLOWB_APP_GUI_MEMORY_SOURCE_H_
#define HLOWB_APP_GUI_MEMORY_SOURCE_H_

#include <QString>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/analysis/memory_profile.h"
#include "core/dump/dump_index.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"

namespace hlowb::gui {

struct MemorySourceRequest {
  // The state's module. Not needed when `buffer_assignment_file` is given; never changed.
  std::shared_ptr<const Module> module;
  // XLA's -buffer-assignment.txt that belongs to this state (FindBufferAssignmentFile); empty
  // when there is none. Its sibling texts (-buffer-assignment-values.txt, -live-range.txt,
  // -memory-usage-report.txt) are read with it.
  std::string buffer_assignment_file;
  // What the view calls the state ("jit_f: after_optimizations"); empty: the module's name.
  QString label;
};

struct MemorySourceResult {
  std::shared_ptr<const MemoryProfile> profile;
  QString label;
  // "XLA's buffer assignment (FILE)" or "hlowb's buffer assignment; schedule: ...".
  QString origin;
  double seconds = 0;  // how long the profile took
};

// The profile of one state (see the file comment). Errors say which file or module failed and
// why (a buffer-assignment text that does not parse names its file and line; a module that
// does not verify names its errors); a cancelled request returns CancelledError.
absl::StatusOr<MemorySourceResult> LoadMemoryProfile(const MemorySourceRequest& request,
                                                     const CancelToken* cancel = nullptr);

// The path (root-joined) of the -buffer-assignment.txt XLA wrote for `state` of module
// `module_index` of `index` (or of its split partner); empty unless `state` is the
// after-optimizations state that buffer assignment describes: every other state's schedule and
// instructions differ from it.
std::string FindBufferAssignmentFile(const DumpIndex& index, int module_index,
                                     const DumpState& state);

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_MEMORY_SOURCE_H_
