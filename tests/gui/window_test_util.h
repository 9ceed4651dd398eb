// Helpers for the offscreen tests that drive the main window.
#ifndef HLOWB_TESTS_GUI_WINDOW_TEST_UTIL_H_
#define HLOWB_TESTS_GUI_WINDOW_TEST_UTIL_H_

#include <QCoreApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QString>
#include <QTest>
#include <string>

#include "app/gui/main_window.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"

namespace hlowb::testing {

// Waits until the window has something open and nothing loads or lays out, then lets a queued
// result that may still be on its way arrive.
inline bool WaitWindowIdle(gui::MainWindow& w, int timeout_ms) {
  return QTest::qWaitFor([&] { return !w.IsBusy(); }, timeout_ms) &&
         QTest::qWaitFor([&] { return !w.IsBusy(); }, 50) && !w.IsBusy();
}

// Keeps a test's settings and standard paths away from the user's: settings files go to `dir`,
// under the test application `app`.
inline void UseTestSettings(const QString& dir, const QString& app) {
  QStandardPaths::setTestModeEnabled(true);
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir);
  QCoreApplication::setOrganizationName(QStringLiteral("HLO Workbench Tests"));
  QCoreApplication::setApplicationName(app);
}

// The instruction `name` in any computation of `m`; null when there is none.
inline const Instruction* FindInstruction(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    if (const Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_GUI_WINDOW_TEST_UTIL_H_
