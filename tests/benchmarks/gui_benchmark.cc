// Graph view benchmark: the time from GraphView::SetComputation to the first painted frame on
// the largest computations of the largest corpus modules (offscreen platform), with the longest
// event-loop stall seen meanwhile, and, as the baseline measured in the same run, the time
// Graphviz dot (libgvc in a child process, same box sizes) needs just to lay out the same graph.
//
// Each graph is opened in a fresh view (no cache) `--runs` times in whole-graph mode (the
// neighborhood threshold lifted) and once in the default mode (neighborhood above 2,000 nodes);
// the medians are printed. Dot runs once per graph with a timeout; a timed-out run prints the
// ratio as a lower bound.
//
// Not a Google Benchmark binary: dot takes seconds to minutes, so a fixed number of runs print
// one table.
//   hlowb_gui_benchmark [--runs=N] [--dot_timeout=SECONDS] [--modules=N] [--quick]
//                       [--filter=SUBSTRING] [--benchmark_filter=REGEX]
//                       [--screenshot_dir=DIR]
// --screenshot_dir saves each graph's first view and fitted view as PNG files (what was timed).
// --benchmark_filter (scripts/bench passes it to every benchmark) selects graphs by regex on
// their names; other --benchmark_* flags are ignored.
#include <QApplication>
#include <QElapsedTimer>
#include <QFont>
#include <QGraphicsView>
#include <QTimer>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "viewer/graph/graph_scene.h"
#include "viewer/graph/graph_view.h"
#include "viewer/graph/graphviz_layout.h"
#include "viewer/graph/hlo_graph.h"

namespace hlowb::viewer {
namespace {

namespace fs = std::filesystem;

struct Args {
  int runs = 3;
  double dot_timeout = 60;
  int modules = 3;
  std::string filter;
  std::string regex;
  std::string screenshot_dir;
};

struct Graph {
  std::string name;
  std::shared_ptr<const Module> module;
  const Computation* computation = nullptr;
};

struct Open {
  double first_paint_ms = -1;
  double finished_ms = -1;
  double max_gap_ms = 0;
  int nodes = 0;
  double repaint_ms = -1;      // a full repaint of the initial view (min of several)
  double fit_repaint_ms = -1;  // the same with the whole graph fitted in the view
};

// The cheapest of `n` synchronous repaints of the canvas.
double RepaintMs(GraphView& view, int n = 5) {
  QWidget* viewport = view.graphicsView()->viewport();
  double best = 1e9;
  for (int i = 0; i < n; ++i) {
    QElapsedTimer t;
    t.start();
    viewport->repaint();
    best = std::min(best, t.nsecsElapsed() / 1e6);
  }
  return best;
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Opens `g` in a fresh, shown view and waits for the first painted frame and the end of the
// layout (both, in either order).
Open OpenOnce(const Graph& g, bool whole, const std::string& screenshot_prefix = "") {
  Open out;
  GraphView view;
  view.resize(1280, 900);
  view.show();
  QElapsedTimer settle;
  settle.start();
  while (settle.elapsed() < 50) QApplication::processEvents(QEventLoop::AllEvents, 10);
  if (whole) view.SetNeighborhoodThreshold(INT_MAX);

  QElapsedTimer clock;
  qint64 last = 0;
  QTimer probe;
  probe.setInterval(5);
  QObject::connect(&probe, &QTimer::timeout, [&] {
    qint64 now = clock.elapsed();
    out.max_gap_ms = std::max(out.max_gap_ms, static_cast<double>(now - last));
    last = now;
  });
  QObject::connect(&view, &GraphView::firstFramePainted, [&](double) {
    if (out.first_paint_ms < 0) out.first_paint_ms = clock.nsecsElapsed() / 1e6;
  });
  QObject::connect(&view, &GraphView::layoutFinished, [&](int nodes, double) {
    out.finished_ms = clock.nsecsElapsed() / 1e6;
    out.nodes = nodes;
  });
  bool failed = false;
  QObject::connect(&view, &GraphView::layoutFailed, [&](const QString& message) {
    std::fprintf(stderr, "%s: layout failed: %s\n", g.name.c_str(), qPrintable(message));
    failed = true;
  });
  clock.start();
  probe.start();
  view.SetComputation(g.module, g.computation);
  while (!failed && (out.first_paint_ms < 0 || out.finished_ms < 0) && clock.elapsed() < 300000) {
    QApplication::processEvents(QEventLoop::AllEvents, 5);
  }
  probe.stop();
  if (!failed) {
    out.repaint_ms = RepaintMs(view);
    if (!screenshot_prefix.empty())
      view.grab().save(QString::fromStdString(screenshot_prefix + ".png"));
    view.FitToView();
    QApplication::processEvents();
    out.fit_repaint_ms = RepaintMs(view);
    if (!screenshot_prefix.empty()) {
      view.grab().save(QString::fromStdString(screenshot_prefix + "_fit.png"));
    }
  }
  return out;
}

std::string Cell(double ms) {
  char buf[64];
  if (ms < 0) return "-";
  std::snprintf(buf, sizeof(buf), "%.0f", ms);
  return buf;
}

std::string Cell1(double ms) {
  char buf[64];
  if (ms < 0) return "-";
  std::snprintf(buf, sizeof(buf), "%.1f", ms);
  return buf;
}

int Main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  Args args;
  std::vector<char*> qt_argv = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") {
      args.runs = 1;
      args.dot_timeout = 10;
      args.modules = 2;
    } else if (a.rfind("--runs=", 0) == 0) {
      args.runs = std::max(1, std::atoi(a.c_str() + 7));
    } else if (a.rfind("--dot_timeout=", 0) == 0) {
      args.dot_timeout = std::atof(a.c_str() + 14);
    } else if (a.rfind("--modules=", 0) == 0) {
      args.modules = std::max(1, std::atoi(a.c_str() + 10));
    } else if (a.rfind("--filter=", 0) == 0) {
      args.filter = a.substr(9);
    } else if (a.rfind("--screenshot_dir=", 0) == 0) {
      args.screenshot_dir = a.substr(17);
    } else if (a.rfind("--benchmark_filter=", 0) == 0) {
      args.regex = a.substr(19);
    } else if (a.rfind("--benchmark_", 0) == 0) {
      // Google Benchmark flags passed to every benchmark by scripts/bench.
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  int qt_argc = static_cast<int>(qt_argv.size());
  QApplication app(qt_argc, qt_argv.data());

  // The largest corpus modules: their entry and their largest computation.
  std::vector<std::pair<uintmax_t, fs::path>> files;
  std::error_code ec;
  fs::path corpus(HLOWB_CORPUS_DIR);
  if (fs::is_directory(corpus, ec)) {
    for (auto it = fs::recursive_directory_iterator(corpus, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it->is_regular_file() && it->path().extension() == ".hlo") {
        files.emplace_back(it->file_size(), it->path());
      }
    }
  }
  if (files.empty()) {
    std::printf("corpus not found at %s: nothing to measure\n", HLOWB_CORPUS_DIR);
    return 0;
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<Graph> graphs;
  for (size_t f = 0; f < files.size() && static_cast<int>(f) < args.modules; ++f) {
    auto text = ReadFileToString(files[f].second.string());
    if (!text.ok()) continue;
    auto parsed = ParseModule(*text);
    if (!parsed.ok()) {
      std::fprintf(stderr, "%s: %s\n", files[f].second.c_str(),
                   std::string(parsed.status().message()).c_str());
      continue;
    }
    std::shared_ptr<const Module> module(std::move(*parsed));
    std::string stem = files[f].second.stem().string();
    size_t cut = stem.rfind("__");
    if (cut != std::string::npos) stem = stem.substr(cut + 2);
    const Computation* largest = nullptr;
    for (const auto& c : module->computations()) {
      if (!largest || c->instruction_count() > largest->instruction_count()) largest = c.get();
    }
    std::vector<const Computation*> picks = {module->entry()};
    if (largest && largest != module->entry()) picks.push_back(largest);
    for (const Computation* c : picks) {
      if (!c) continue;
      Graph g;
      g.name = stem + ":" + c->name() + (c == module->entry() ? " (entry)" : "");
      g.module = module;
      g.computation = c;
      if (!args.filter.empty() && g.name.find(args.filter) == std::string::npos) continue;
      if (!args.regex.empty() && !std::regex_search(g.name, std::regex(args.regex))) continue;
      graphs.push_back(std::move(g));
    }
  }
  std::sort(graphs.begin(), graphs.end(), [](const Graph& a, const Graph& b) {
    return a.computation->instruction_count() < b.computation->instruction_count();
  });

  QFont font = QApplication::font();
  font.setPixelSize(12);
  graph::HloGraphOptions options;
  options.measure = gv::MakeMeasureFn(font.toString());

  std::printf(
      "# Graph view: SetComputation to first painted frame vs Graphviz dot layout (same run; "
      "%d run(s), median; dot timeout %.0f s; offscreen, 1280x900)\n\n",
      args.runs, args.dot_timeout);
  std::printf(
      "| graph | instructions | nodes | edges | first frame ms (whole) | laid out and drawn ms "
      "| max UI stall ms | repaint ms | repaint ms (fit) | first frame ms (default mode) "
      "| nodes shown (default) | dot layout ms | dot / first frame |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> log_ratios;
  double worst_gap = 0;
  for (const Graph& g : graphs) {
    auto hlo = graph::HloGraph::Build(*g.computation, options);
    if (!hlo.ok()) {
      std::printf("| %s | %d | build failed: %s |\n", g.name.c_str(),
                  g.computation->instruction_count(), std::string(hlo.status().message()).c_str());
      continue;
    }
    const graph::LayoutGraph& lg = *hlo->graph();

    std::vector<double> first, finished, gaps, repaint, fit_repaint;
    for (int r = 0; r < args.runs; ++r) {
      std::string shot;
      if (!args.screenshot_dir.empty() && r == 0) {
        std::string file = g.name.substr(0, std::min<size_t>(g.name.size(), 48));
        for (char& c : file) {
          if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
        }
        shot = (fs::path(args.screenshot_dir) / file).string();
      }
      Open o = OpenOnce(g, /*whole=*/true, shot);
      first.push_back(o.first_paint_ms);
      finished.push_back(o.finished_ms);
      gaps.push_back(o.max_gap_ms);
      repaint.push_back(o.repaint_ms);
      fit_repaint.push_back(o.fit_repaint_ms);
    }
    Open def = OpenOnce(g, /*whole=*/false);
    double gap = std::max(*std::max_element(gaps.begin(), gaps.end()), def.max_gap_ms);
    worst_gap = std::max(worst_gap, gap);

    graph::GraphvizOptions gv_options;
    gv_options.timeout_seconds = args.dot_timeout;
    gv_options.max_nodes = 0;
    auto t0 = std::chrono::steady_clock::now();
    auto dot = graph::GraphvizLayout(lg, gv_options);
    double dot_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double ours = Median(first);
    std::string dot_cell, ratio_cell;
    char buf[64];
    if (dot.ok()) {
      dot_cell = Cell(dot_ms);
      std::snprintf(buf, sizeof(buf), "%.1fx", dot_ms / ours);
      ratio_cell = buf;
      log_ratios.push_back(std::log(dot_ms / ours));
    } else if (absl::IsDeadlineExceeded(dot.status())) {
      std::snprintf(buf, sizeof(buf), "timed out (> %.0f s)", args.dot_timeout);
      dot_cell = buf;
      std::snprintf(buf, sizeof(buf), "> %.0fx", args.dot_timeout * 1000 / ours);
      ratio_cell = buf;
    } else {
      dot_cell = "failed: " + std::string(dot.status().message());
      ratio_cell = "-";
    }
    std::printf("| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %d | %s | %s |\n",
                g.name.c_str(), g.computation->instruction_count(), lg.node_count(),
                lg.edge_count(), Cell(ours).c_str(), Cell(Median(finished)).c_str(),
                Cell(gap).c_str(), Cell1(Median(repaint)).c_str(),
                Cell1(Median(fit_repaint)).c_str(), Cell(def.first_paint_ms).c_str(), def.nodes,
                dot_cell.c_str(), ratio_cell.c_str());
    std::fflush(stdout);
  }
  std::printf("\n");
  if (!log_ratios.empty()) {
    double mean = 0;
    for (double l : log_ratios) mean += l;
    std::printf("- dot / first frame, geometric mean over graphs dot finished: %.1fx\n",
                std::exp(mean / static_cast<double>(log_ratios.size())));
  }
  std::printf(
      "- longest UI-thread stall seen (event-loop probe every 5 ms): %.0f ms (goal < 100)\n",
      worst_gap);
  return 0;
}

}  // namespace
}  // namespace hlowb::viewer

int main(int argc, char** argv) { return hlowb::viewer::Main(argc, argv); }
