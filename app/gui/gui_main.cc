#include "app/gui/gui_main.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPixmap>
#include <QSettings>
#include <QStyleFactory>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "app/gui/main_window.h"
#include "viewer/graph/graph_view.h"

namespace hlowb::gui {
namespace {

constexpr char kUsage[] =
    "usage: hlowb gui [--screenshot=FILE] [--select=NAME] [--module=M] [--step=S]\n"
    "                 [--size=WxH] [--theme=system|light|dark] [PATH]\n"
    "  PATH            an HLO file (text, .hlo.pb, .pbtxt, .pb.gz, snapshot) or a dump directory\n"
    "  --module=M      dump module id or name to show (default: the first)\n"
    "  --step=S        state to show: step number, before, after or a pass name\n"
    "  --select=NAME   instruction to select\n"
    "  --screenshot=FILE  render the window after loading and layout, write a PNG, exit\n"
    "  --size=WxH      window size for --screenshot (default 1600x1000)\n"
    "  --theme=T       theme for --screenshot: system, light or dark (default: the one\n"
    "                  chosen in View > Theme)\n"
    "`hlowb PATH` is `hlowb gui PATH`.\n";

struct GuiOptions {
  std::string screenshot, select, module, step, path, theme;
  int width = 1600, height = 1000;
};

// Returns false (with `error`) on a usage error.
bool ParseGuiArgs(const std::vector<std::string>& args, GuiOptions* o, std::string* error) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-') {
      if (!o->path.empty()) {
        *error = "expected one PATH, got '" + o->path + "' and '" + a + "'";
        return false;
      }
      o->path = a;
      continue;
    }
    std::string name = a.substr(a[1] == '-' ? 2 : 1), value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name != "screenshot" && name != "select" && name != "module" && name != "step" &&
        name != "size" && name != "theme") {
      *error = "unknown option " + a;
      return false;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        *error = "option " + a + " needs a value";
        return false;
      }
      value = args[++i];
    }
    if (name == "screenshot") o->screenshot = value;
    if (name == "select") o->select = value;
    if (name == "module") o->module = value;
    if (name == "step") o->step = value;
    if (name == "theme") {
      if (value != "system" && value != "light" && value != "dark") {
        *error = "--theme wants system, light or dark, got '" + value + "'";
        return false;
      }
      o->theme = value;
    }
    if (name == "size") {
      int w = 0, h = 0;
      if (std::sscanf(value.c_str(), "%dx%d", &w, &h) != 2 || w < 200 || h < 150 || w > 10000 ||
          h > 10000) {
        *error = "--size wants WxH (e.g. 1600x1000), got '" + value + "'";
        return false;
      }
      o->width = w;
      o->height = h;
    }
  }
  return true;
}

// Drops the offscreen platform's notes that say nothing about the program
// ("This plugin does not support propagateSizeHints()", XDG_RUNTIME_DIR defaults).
QtMessageHandler previous_handler = nullptr;
void QuietOffscreenNotes(QtMsgType type, const QMessageLogContext& context, const QString& msg) {
  if (type == QtWarningMsg && (msg.contains(QLatin1String("does not support propagateSizeHints")) ||
                               msg.contains(QLatin1String("XDG_RUNTIME_DIR")))) {
    return;
  }
  if (previous_handler) previous_handler(type, context, msg);
}

bool HasDisplay() {
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
  };
  return set("DISPLAY") || set("WAYLAND_DISPLAY") || set("QT_QPA_PLATFORM");
}

}  // namespace

void SetApplicationNames() {
  QCoreApplication::setOrganizationName(QStringLiteral("HLO Workbench"));
  QCoreApplication::setOrganizationDomain(QStringLiteral("hlowb.invalid"));
  QCoreApplication::setApplicationName(QStringLiteral("hlowb"));
  QCoreApplication::setApplicationVersion(QStringLiteral("0.1.0"));
}

int RunGui(const char* argv0, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  GuiOptions options;
  std::string error;
  if (!ParseGuiArgs(args, &options, &error)) {
    std::cerr << "hlowb gui: " << error << "\n" << kUsage;
    return 2;
  }
  const bool screenshot = !options.screenshot.empty();
  if (!HasDisplay()) {
    if (!screenshot) {
      std::cerr << "hlowb gui: no display (DISPLAY and WAYLAND_DISPLAY are unset); use "
                   "--screenshot=FILE to render the window offscreen, or the CLI commands\n";
      return 1;
    }
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  if (screenshot) previous_handler = qInstallMessageHandler(QuietOffscreenNotes);
  if (!options.path.empty() && !QFileInfo::exists(QString::fromStdString(options.path))) {
    std::cerr << "hlowb gui: " << options.path << ": no such file or directory\n";
    return 1;
  }

  static int qt_argc = 1;
  static char* qt_argv[] = {const_cast<char*>(argv0), nullptr};
  QApplication app(qt_argc, qt_argv);
  SetApplicationNames();
  QApplication::setApplicationDisplayName(QStringLiteral("HLO Workbench"));
  if (QStyleFactory::keys().contains(QStringLiteral("Fusion"), Qt::CaseInsensitive)) {
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  }

  // The theme: --theme, else the one the user chose in View ▸ Theme (read before screenshots
  // turn to settings of their own).
  const QString theme =
      !options.theme.empty()
          ? QString::fromStdString(options.theme)
          : QSettings().value(QStringLiteral("view/theme"), QStringLiteral("system")).toString();
  // Screenshots use the default layout and leave the user's settings alone; they keep the theme.
  QTemporaryDir settings_dir;
  if (screenshot && settings_dir.isValid()) {
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir.path());
  }
  if (screenshot) QSettings().setValue(QStringLiteral("view/theme"), theme);

  MainWindow window;
  if (screenshot) window.resize(options.width, options.height);
  window.show();

  OpenRequest request;
  request.path = QString::fromStdString(options.path);
  request.module = QString::fromStdString(options.module);
  request.step = QString::fromStdString(options.step);
  request.select = QString::fromStdString(options.select);
  if (!request.path.isEmpty()) {
    // Opened from the event loop so the window is up (and paints progress) first.
    QTimer::singleShot(0, &window, [&window, request] { window.Open(request); });
  }
  if (!screenshot) return app.exec();

  // Screenshot mode: wait until nothing loads or lays out for a few polls, then grab.
  QString open_error;
  QObject::connect(&window, &MainWindow::openFailed, &window,
                   [&open_error](const QString& message) { open_error = message; });
  int exit_code = 0;
  int quiet_polls = 0;
  QElapsedTimer clock;
  clock.start();
  QTimer poll;
  poll.setInterval(50);
  QObject::connect(&poll, &QTimer::timeout, &window, [&] {
    const bool started = request.path.isEmpty() || !window.current_path().isEmpty() ||
                         !open_error.isEmpty();
    quiet_polls = started && !window.IsBusy() ? quiet_polls + 1 : 0;
    const bool timed_out = clock.elapsed() > 120000;
    if (quiet_polls < 4 && !timed_out) return;
    poll.stop();
    if (timed_out) std::cerr << "hlowb gui: still loading after 120 s; writing what is shown\n";
    const QString file = QString::fromStdString(options.screenshot);
    QPixmap pixmap = window.grab();
    if (pixmap.isNull() || !pixmap.save(file, "PNG")) {
      std::cerr << "hlowb gui: cannot write screenshot " << options.screenshot << "\n";
      exit_code = 1;
    } else {
      std::cout << "wrote " << options.screenshot << " (" << pixmap.width() << "x"
                << pixmap.height() << ")\n";
    }
    if (!open_error.isEmpty()) {
      std::cerr << "hlowb gui: " << open_error.toStdString() << "\n";
      exit_code = 1;
    }
    if (!options.select.empty() && window.current_module()) {
      bool found = false;
      for (const auto& c : window.current_module()->computations()) {
        found = found || c->FindInstruction(options.select) != nullptr;
      }
      if (!found) {
        std::cerr << "hlowb gui: warning: no instruction '" << options.select
                  << "' in the shown state\n";
      }
    }
    if (timed_out) exit_code = 1;
    QCoreApplication::exit(exit_code);
  });
  poll.start();
  app.exec();
  return exit_code;
}

}  // namespace hlowb::gui
