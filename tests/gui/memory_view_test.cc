// The memory view, offscreen: clicking the peak marker selects the instruction at the maximum
// of live bytes; XLA's buffer assignments (every jaxlib form under tests/golden/memory/) show
// the peak their files state; a buffer's row selects its defining instruction; a baseline shows
// before, after and the change; busy and error states, and a corrupt buffer-assignment file,
// give messages rather than crashes; the dump's buffer assignment belongs to the
// after-optimizations state only; and the UI thread keeps turning while the largest corpus
// module's profile is computed and drawn.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QImage>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QtConcurrent/QtConcurrentRun>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/gui/memory_source.h"
#include "core/analysis/memory_profile.h"
#include "core/dump/dump_index.h"
#include "core/ir/module.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "latency_probe.h"
#include "tests/gui/corpus_util.h"
#include "viewer/widgets/memory_view.h"

using hlowb::MemoryKind;
using hlowb::MemoryProfile;
using hlowb::Module;
using hlowb::gui::LoadMemoryProfile;
using hlowb::gui::MemorySourceRequest;
using hlowb::viewer::MemoryView;

namespace {

// Scheduled as written. cube and e (64 KiB each) are live together at e; sum may take cube's
// bytes, and out is small.
constexpr char kModule[] = R"(HloModule memory_view_test, is_scheduled=true

ENTRY main {
  p = f32[64]{0} parameter(0)
  a = f32[64]{0} negate(p)
  wide = f32[32,64]{1,0} broadcast(a), dimensions={1}
  cube = f32[8,32,64]{2,1,0} broadcast(wide), dimensions={1,2}
  e = f32[8,32,64]{2,1,0} exponential(cube)
  sum = f32[8,32,64]{2,1,0} add(cube, e)
  row = f32[1,1,64]{2,1,0} slice(sum), slice={[0:1], [0:1], [0:64]}
  ROOT out = f32[64]{0} reshape(row)
}
)";

// The same computation without the [8,32,64] cube: after a pass that shrank the temporaries.
constexpr char kSmallerModule[] = R"(HloModule memory_view_test, is_scheduled=true

ENTRY main {
  p = f32[64]{0} parameter(0)
  a = f32[64]{0} negate(p)
  wide = f32[32,64]{1,0} broadcast(a), dimensions={1}
  e = f32[32,64]{1,0} exponential(wide)
  sum = f32[32,64]{1,0} add(wide, e)
  row = f32[1,64]{1,0} slice(sum), slice={[0:1], [0:64]}
  ROOT out = f32[64]{0} reshape(row)
}
)";

const QString kGolden = QStringLiteral(HLOWB_SOURCE_DIR "/tests/golden/memory");

std::shared_ptr<const Module> Parse(const char* text) {
  auto m = hlowb::ParseModule(text);
  if (!m.ok()) {
    qWarning("parse failed: %s", std::string(m.status().message()).c_str());
    return nullptr;
  }
  return std::shared_ptr<const Module>(std::move(*m));
}

std::shared_ptr<const MemoryProfile> Profile(const MemorySourceRequest& request) {
  auto r = LoadMemoryProfile(request);
  if (!r.ok()) {
    qWarning("profile failed: %s", std::string(r.status().message()).c_str());
    return nullptr;
  }
  return r->profile;
}

std::shared_ptr<const MemoryProfile> OwnProfile(const char* text) {
  MemorySourceRequest request;
  request.module = Parse(text);
  if (request.module == nullptr) return nullptr;
  return Profile(request);
}

std::shared_ptr<const MemoryProfile> XlaProfile(const QString& file) {
  MemorySourceRequest request;
  request.buffer_assignment_file = file.toStdString();
  return Profile(request);
}

QString Only(const QString& dir, const QString& pattern) {
  const QStringList files = QDir(dir).entryList({pattern}, QDir::Files);
  return files.size() == 1 ? QDir(dir).filePath(files[0]) : QString();
}

QString HandFile() {
  return Only(kGolden + QStringLiteral("/hand"), QStringLiteral("*-buffer-assignment.txt"));
}

// Shows the view and waits until its chart and summary are ready.
bool ShowAndWait(MemoryView& view) {
  if (!view.isVisible()) {
    view.show();
    if (!QTest::qWaitForWindowExposed(&view)) return false;
  }
  return QTest::qWaitFor([&] { return !view.IsRendering(); }, 30000) &&
         view.PeakPosition().x() >= 0;
}

// The first point where `live` is largest.
int64_t FirstMax(const std::vector<int64_t>& live) {
  int64_t best = 0;
  for (size_t t = 1; t < live.size(); ++t) {
    if (live[t] > live[best]) best = static_cast<int64_t>(t);
  }
  return live.empty() ? -1 : best;
}

// The summary line that starts with `prefix`.
QString Line(const QString& text, const QString& prefix) {
  for (const QString& line : text.split(QLatin1Char('\n'))) {
    if (line.startsWith(prefix)) return line;
  }
  return QString();
}

// What a buffer-assignment file family states about its peak, read from the text: the point
// of "Live ranges at T (peak):" and the sum of the sizes listed under it.
struct StatedPeak {
  int64_t point = -1;
  int64_t bytes = 0;
};
std::optional<StatedPeak> ReadStatedPeak(const QString& dir) {
  static const QRegularExpression heading(
      QStringLiteral("^\\s*Live ranges at (\\d+) \\(peak\\):"));
  static const QRegularExpression entry(QStringLiteral("^\\s+\\S+: (\\d+) bytes"));
  for (const QString& name : QDir(dir).entryList({QStringLiteral("*.txt")}, QDir::Files)) {
    QFile f(QDir(dir).filePath(name));
    if (!f.open(QIODevice::ReadOnly)) continue;
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
    for (int i = 0; i < lines.size(); ++i) {
      const QRegularExpressionMatch h = heading.match(lines[i]);
      if (!h.hasMatch()) continue;
      StatedPeak peak;
      peak.point = h.captured(1).toLongLong();
      for (int j = i + 1; j < lines.size(); ++j) {
        const QRegularExpressionMatch e = entry.match(lines[j]);
        if (!e.hasMatch()) break;
        peak.bytes += e.captured(1).toLongLong();
      }
      return peak;
    }
  }
  return std::nullopt;
}

// The row of the buffer table holding allocation `allocation` at `offset`; -1 if none.
int BufferRow(QTableView* table, int64_t allocation, int64_t offset) {
  QAbstractItemModel* m = table->model();
  for (int r = 0; r < m->rowCount(); ++r) {
    if (m->index(r, 2).data(Qt::UserRole).toLongLong() == allocation &&
        m->index(r, 3).data(Qt::UserRole).toLongLong() == offset) {
      return r;
    }
  }
  return -1;
}

void ClickRow(QTableView* table, int row) {
  table->scrollTo(table->model()->index(row, 4));
  const QRect rect = table->visualRect(table->model()->index(row, 4));
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, rect.center());
}

// The totals table's row for `kind` ("temp", "total", "peak (live bytes)"); -1 if none.
int TotalsRow(QTableWidget* table, const QString& kind) {
  for (int r = 0; r < table->rowCount(); ++r) {
    if (table->item(r, 0) != nullptr && table->item(r, 0)->text() == kind) return r;
  }
  return -1;
}

qlonglong Raw(QTableWidget* table, int row, int column) {
  QTableWidgetItem* item = table->item(row, column);
  return item == nullptr ? -1 : item->data(Qt::UserRole).toLongLong();
}

QString Header(QTableWidget* table, int column) {
  QTableWidgetItem* item = table->horizontalHeaderItem(column);
  return item == nullptr ? QString() : item->text();
}

// With HLOWB_MEMORY_TEST_SHOTS=DIR, saves what `view` shows as DIR/NAME.png (to look at what a
// test checked).
void Shot(QWidget& view, const char* name) {
  const QString dir = qEnvironmentVariable("HLOWB_MEMORY_TEST_SHOTS");
  if (dir.isEmpty()) return;
  QTest::qWait(50);  // the legend's new height laid out
  view.grab().save(QDir(dir).filePath(QString::fromLatin1(name) + QStringLiteral(".png")));
}

// The largest .hlo or .txt file under the corpus; empty when the corpus is absent.
std::string LargestCorpusFile() {
  return hlowb::testing::LargestCorpusFile({".hlo", ".txt"});
}

}  // namespace

class MemoryViewTest : public QObject {
  Q_OBJECT

 private slots:
  void ClickingThePeakSelectsItsInstruction() {
    auto profile = OwnProfile(kModule);
    QVERIFY(profile != nullptr);
    QCOMPARE(QString::fromStdString(profile->source), QStringLiteral("hlowb"));
    // The peak, found here from the live bytes alone.
    const int64_t peak = FirstMax(profile->live_bytes);
    QVERIFY(peak >= 0);
    const QString expected = QString::fromStdString(profile->points[peak]);
    QVERIFY2(!expected.isEmpty(), "the peak of this module is at an instruction");

    MemoryView view;
    view.resize(900, 700);
    view.SetProfile(profile, QStringLiteral("memory_view_test"));
    QVERIFY(ShowAndWait(view));
    Shot(view, "memory_own");
    QSignalSpy activated(&view, &MemoryView::instructionActivated);
    const QPoint at = view.PeakPosition();
    QCOMPARE(view.PointAt(at), peak);
    QTest::mouseClick(&view, Qt::LeftButton, {}, at);
    QCOMPARE(activated.size(), 1);
    QCOMPARE(activated[0][0].toString(), expected);

    // The same through the chart itself, as a user's click arrives.
    QWidget* chart = view.chart();
    QTest::mouseClick(chart, Qt::LeftButton, {}, chart->mapFrom(&view, at));
    QCOMPARE(activated.size(), 2);
    QCOMPARE(activated[1][0].toString(), expected);

    // The marker is drawn there: a red dot on the live-bytes line.
    const QImage shot = chart->grab().toImage();
    const QColor dot = shot.pixelColor(chart->mapFrom(&view, at));
    QVERIFY2(dot.red() > dot.green() + 60 && dot.red() > dot.blue() + 60, qPrintable(dot.name()));

    // Hovering says which point, which instruction and how many bytes are live.
    const QString tip = view.ToolTipAt(at);
    QVERIFY2(tip.contains(QStringLiteral("point %1 (%2)").arg(peak).arg(expected)),
             qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("(%1 bytes)").arg(profile->live_bytes[peak])),
             qPrintable(tip));
    // The summary names the same peak.
    const QString line = Line(view.SummaryText(), QStringLiteral("Peak:"));
    QVERIFY2(line.contains(QStringLiteral("(%1 bytes) at point %2 (%3)")
                               .arg(profile->live_bytes[peak])
                               .arg(peak)
                               .arg(expected)),
             qPrintable(view.SummaryText()));

    // Another point selects its own instruction.
    const int64_t other = peak == 0 ? 1 : 0;
    const QPoint there = view.PointPosition(other);
    QVERIFY(there.x() >= 0);
    QTest::mouseClick(&view, Qt::LeftButton, {}, there);
    QCOMPARE(activated.size(), 3);
    QCOMPARE(activated[2][0].toString(), QString::fromStdString(profile->points[other]));

    // Stacked by buffer: one series per buffer, the peak in the same place.
    view.stack_by_box()->setCurrentIndex(1);
    QCOMPARE(view.stack_by(), MemoryView::StackBy::kBuffer);
    QVERIFY(ShowAndWait(view));
    Shot(view, "memory_own_by_buffer");
    const QString series = view.SeriesNames().join(QLatin1Char('|'));
    QVERIFY2(series.contains(QStringLiteral("cube{}")), qPrintable(series));
    QCOMPARE(view.PointAt(view.PeakPosition()), peak);
    // Resized: drawn again for the new size, the marker moves with it.
    view.resize(600, 500);
    QVERIFY(ShowAndWait(view));
    QCOMPARE(view.PointAt(view.PeakPosition()), peak);
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.PeakPosition());
    QCOMPARE(activated.size(), 4);
    QCOMPARE(activated[3][0].toString(), expected);
  }

  void XlaBufferAssignmentsShowTheStatedPeak() {
    for (const char* version :
         {"hand", "jaxlib-0.4.13", "jaxlib-0.4.35", "jaxlib-0.6.2", "jaxlib-0.10.2"}) {
      const QString dir = kGolden + QLatin1Char('/') + QLatin1String(version);
      const QString file = Only(dir, QStringLiteral("*-buffer-assignment.txt"));
      QVERIFY2(!file.isEmpty(), version);
      const std::optional<StatedPeak> stated = ReadStatedPeak(dir);
      QVERIFY2(stated.has_value(), version);
      auto profile = XlaProfile(file);
      QVERIFY2(profile != nullptr, version);

      MemoryView view;
      view.resize(900, 700);
      view.SetProfile(profile, QLatin1String(version));
      QVERIFY2(ShowAndWait(view), version);
      Shot(view, (std::string("memory_xla_") + version).c_str());
      const QString summary = view.SummaryText();
      const QString xla = Line(summary, QStringLiteral("XLA's peak"));
      QVERIFY2(xla.contains(
                   QStringLiteral("(%1 bytes) at point %2 ").arg(stated->bytes).arg(stated->point)),
               qPrintable(QStringLiteral("%1: the file states %2 bytes at %3; the view: %4")
                              .arg(QLatin1String(version))
                              .arg(stated->bytes)
                              .arg(stated->point)
                              .arg(summary)));
      QVERIFY2(summary.contains(QStringLiteral("all agree")), qPrintable(summary));
      QVERIFY2(summary.contains(QStringLiteral("Source: XLA's buffer assignment (") +
                                QFileInfo(file).fileName()),
               qPrintable(summary));
      // The chart marks XLA's point where it is not the peak of live bytes.
      const int64_t peak = FirstMax(profile->live_bytes);
      if (stated->point != peak) {
        QVERIFY2(view.XlaPeakPosition().x() >= 0, version);
        QCOMPARE(view.PointAt(view.XlaPeakPosition()), stated->point);
      } else {
        QCOMPARE(view.XlaPeakPosition(), QPoint(-1, -1));
      }
    }
  }

  void EndOfProgramSelectsNothing() {
    // The hand-written assignment's live ranges run to point 6, one past its six instructions.
    auto profile = XlaProfile(HandFile());
    QVERIFY(profile != nullptr);
    QCOMPARE(profile->points.size(), size_t{7});
    MemoryView view;
    view.resize(900, 700);
    view.SetProfile(profile, QStringLiteral("hand"));
    QVERIFY(ShowAndWait(view));
    QSignalSpy activated(&view, &MemoryView::instructionActivated);
    const QPoint end = view.PointPosition(6);
    QVERIFY(end.x() >= 0);
    QCOMPARE(view.PointAt(end), int64_t{6});
    QTest::mouseClick(&view, Qt::LeftButton, {}, end);
    QCOMPARE(activated.size(), 0);
    QVERIFY(view.ToolTipAt(end).contains(QStringLiteral("end of program")));
    // The file's one unknown line is noted.
    QVERIFY2(view.WarningText().contains(QStringLiteral("1 unrecognised lines")),
             qPrintable(view.WarningText()));
  }

  void BufferRowSelectsItsDefiningInstruction() {
    // At the hand-written assignment's peak (point 4, d): p0 in allocation 0; d at offset 0 of
    // allocation 4 (a held those bytes until point 3); b at offset 4096 (with loop{1}, which
    // starts at 4 while b runs 3-4: b defines what is there first); loop{} in allocation 5.
    auto profile = XlaProfile(HandFile());
    QVERIFY(profile != nullptr);
    MemoryView view;
    view.resize(900, 700);
    view.SetProfile(profile, QStringLiteral("hand"));
    QVERIFY(ShowAndWait(view));
    QTableView* table = view.buffer_table();
    QAbstractItemModelTester tester(table->model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(table->model()->rowCount(), 4);
    for (int r = 1; r < table->model()->rowCount(); ++r) {
      QVERIFY(table->model()->index(r - 1, 0).data(Qt::UserRole).toLongLong() >=
              table->model()->index(r, 0).data(Qt::UserRole).toLongLong());
    }
    QSignalSpy activated(&view, &MemoryView::instructionActivated);
    const struct {
      int64_t allocation, offset, size;
      const char* instruction;
    } expected[] = {
        {4, 0, 4096, "d"}, {0, 0, 4096, "p0"}, {4, 4096, 4096, "b"}, {5, 0, 16, "loop"}};
    for (const auto& e : expected) {
      const int row = BufferRow(table, e.allocation, e.offset);
      QVERIFY2(row >= 0, e.instruction);
      QCOMPARE(table->model()->index(row, 0).data(Qt::UserRole).toLongLong(), e.size);
      ClickRow(table, row);
      QVERIFY2(!activated.isEmpty(), e.instruction);
      QCOMPARE(activated.takeLast()[0].toString(), QString::fromLatin1(e.instruction));
    }
    const int shared = BufferRow(table, 4, 4096);
    const QString names = table->model()->index(shared, 4).data().toString();
    QVERIFY2(names.contains(QStringLiteral("b{}")) && names.contains(QStringLiteral("loop{1}")),
             qPrintable(names));
  }

  void BaselineShowsBeforeAfterAndChange() {
    auto before = OwnProfile(kModule);
    auto after = OwnProfile(kSmallerModule);
    QVERIFY(before != nullptr && after != nullptr);
    // Without the cube the temporaries shrink; parameters and outputs are the same.
    QVERIFY(after->BytesOfKind(MemoryKind::kTemp) < before->BytesOfKind(MemoryKind::kTemp));

    MemoryView view;
    view.resize(900, 700);
    view.SetBaseline(before, QStringLiteral("before fusion"));
    view.SetProfile(after, QStringLiteral("after fusion"));
    QVERIFY(ShowAndWait(view));
    Shot(view, "memory_baseline");
    QTableWidget* totals = view.totals_table();
    QCOMPARE(Header(totals, 1), QStringLiteral("Before"));
    QCOMPARE(Header(totals, 2), QStringLiteral("After"));
    QCOMPARE(Header(totals, 3), QStringLiteral("Change"));
    for (int k = 0; k < hlowb::kMemoryKindCount; ++k) {
      const QString kind = QString::fromStdString(
          std::string(hlowb::MemoryKindName(static_cast<MemoryKind>(k))));
      const int row = TotalsRow(totals, kind);
      QVERIFY2(row >= 0, qPrintable(kind));
      QCOMPARE(Raw(totals, row, 1), before->kind_bytes[k]);
      QCOMPARE(Raw(totals, row, 2), after->kind_bytes[k]);
      QCOMPARE(Raw(totals, row, 3), after->kind_bytes[k] - before->kind_bytes[k]);
    }
    const int temp = TotalsRow(totals, QStringLiteral("temp"));
    QVERIFY(Raw(totals, temp, 3) < 0);
    QVERIFY2(totals->item(temp, 3)->text().startsWith(QLatin1Char('-')),
             qPrintable(totals->item(temp, 3)->text()));
    QCOMPARE(Raw(totals, TotalsRow(totals, QStringLiteral("parameter")), 3), qlonglong{0});
    const int peak = TotalsRow(totals, QStringLiteral("peak (live bytes)"));
    QVERIFY(peak >= 0);
    QCOMPARE(Raw(totals, peak, 1), before->live_bytes[FirstMax(before->live_bytes)]);
    QCOMPARE(Raw(totals, peak, 2), after->live_bytes[FirstMax(after->live_bytes)]);
    const int total = TotalsRow(totals, QStringLiteral("total"));
    QCOMPARE(Raw(totals, total, 3), after->total_bytes - before->total_bytes);
    const QString compared = Line(view.SummaryText(), QStringLiteral("Compared with"));
    QVERIFY2(compared.startsWith(QStringLiteral("Compared with before fusion: peak ")),
             qPrintable(view.SummaryText()));
    QVERIFY2(compared.contains(QString::fromStdString(
                 hlowb::FormatMemoryBytes(after->peak.bytes - before->peak.bytes))),
             qPrintable(compared));

    // Without the baseline: one column of bytes again.
    view.SetBaseline(nullptr, QString());
    QVERIFY(ShowAndWait(view));
    QCOMPARE(Header(totals, 1), QStringLiteral("Bytes"));
    QCOMPARE(Raw(totals, TotalsRow(totals, QStringLiteral("temp")), 1),
             after->BytesOfKind(MemoryKind::kTemp));
    QVERIFY(Line(view.SummaryText(), QStringLiteral("Compared with")).isEmpty());
  }

  void BusyAndErrorStates() {
    MemoryView view;
    view.resize(900, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(!view.MessageText().isEmpty());  // nothing to show yet says so
    view.SetBusy(QStringLiteral("Computing hlowb's buffer assignment…"));
    QVERIFY(view.busy());
    QCOMPARE(view.MessageText(), QStringLiteral("Computing hlowb's buffer assignment…"));
    QVERIFY(!view.IsRendering());
    QCOMPARE(view.PeakPosition(), QPoint(-1, -1));

    auto profile = OwnProfile(kModule);
    QVERIFY(profile != nullptr);
    view.SetProfile(profile, QStringLiteral("m"));
    QVERIFY(!view.busy());
    QVERIFY(view.MessageText().isEmpty());
    QVERIFY(ShowAndWait(view));

    // A corrupt buffer-assignment file: a clear error naming the file and line, no profile.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(
        QStringLiteral("module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt"));
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("BufferAssignment:\nallocation 0: size lots, parameter 0:\n");
    }
    MemorySourceRequest request;
    request.buffer_assignment_file = path.toStdString();
    request.module = Parse(kModule);
    auto loaded = LoadMemoryProfile(request);
    QVERIFY(!loaded.ok());
    const QString error = QString::fromStdString(std::string(loaded.status().message()));
    QVERIFY2(error.contains(QStringLiteral("-buffer-assignment.txt:2")), qPrintable(error));
    view.SetError(error);
    QVERIFY(view.HasError());
    QCOMPARE(view.MessageText(), error);
    QCOMPARE(view.PeakPosition(), QPoint(-1, -1));
    QCOMPARE(view.buffer_table()->model()->rowCount(), 0);
    QSignalSpy activated(&view, &MemoryView::instructionActivated);
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.rect().center());
    QCOMPARE(activated.size(), 0);

    // A file that is not there, a module that does not verify, nothing at all, cancelled.
    request.buffer_assignment_file =
        dir.filePath(QStringLiteral("missing-buffer-assignment.txt")).toStdString();
    loaded = LoadMemoryProfile(request);
    QVERIFY(!loaded.ok());
    QVERIFY2(QString::fromStdString(std::string(loaded.status().message()))
                 .contains(QStringLiteral("missing-buffer-assignment.txt: no such file")),
             loaded.status().ToString().c_str());
    auto broken = hlowb::ParseModule(R"(HloModule broken

ENTRY main {
  p = f32[4]{0} parameter(0)
  ROOT n = f32[8]{0} negate(p)
}
)");
    if (broken.ok()) {
      MemorySourceRequest bad;
      bad.module = std::shared_ptr<const Module>(std::move(*broken));
      loaded = LoadMemoryProfile(bad);
      QVERIFY(!loaded.ok());
      QVERIFY2(QString::fromStdString(std::string(loaded.status().message()))
                   .contains(QStringLiteral("hlowb's buffer assignment of broken failed")),
               loaded.status().ToString().c_str());
    }
    loaded = LoadMemoryProfile(MemorySourceRequest());
    QVERIFY(!loaded.ok());
    hlowb::CancelToken cancel;
    cancel.Cancel();
    request.buffer_assignment_file.clear();
    loaded = LoadMemoryProfile(request, &cancel);
    QCOMPARE(loaded.status().code(), absl::StatusCode::kCancelled);

    // Back to a profile after an error.
    view.SetProfile(profile, QStringLiteral("m"));
    QVERIFY(!view.HasError());
    QVERIFY(ShowAndWait(view));
    view.Clear();
    QVERIFY(view.profile() == nullptr);
    QCOMPARE(view.PeakPosition(), QPoint(-1, -1));
  }

  void BufferAssignmentBelongsToAfterOptimizationsOnly() {
    std::vector<hlowb::DumpFile> files;
    for (const char* name : {"module_0001.jit_f.before_optimizations.txt",
                             "module_0001.jit_f.0003.opt.after_dce.before_end.txt",
                             "module_0001.jit_f.cpu_after_optimizations.txt",
                             "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt",
                             "module_0001.jit_f.cpu_after_optimizations-memory-usage-report.txt",
                             "module_0002.jit_g.cpu_after_optimizations.txt"}) {
      hlowb::DumpFile f;
      f.path = name;
      files.push_back(f);
    }
    const hlowb::DumpIndex index = hlowb::BuildDumpIndex("/dump", files);
    const hlowb::DumpModule* f = index.FindModule("1");
    const hlowb::DumpModule* g = index.FindModule("2");
    QVERIFY(f != nullptr && g != nullptr);
    const int fi = static_cast<int>(f - index.modules.data());
    const int gi = static_cast<int>(g - index.modules.data());
    int found = 0;
    for (const hlowb::DumpState& s : index.Timeline(*f)) {
      const std::string path = hlowb::gui::FindBufferAssignmentFile(index, fi, s);
      if (s.stage == hlowb::StageKind::kAfterOptimizations) {
        QCOMPARE(QString::fromStdString(path),
                 QStringLiteral("/dump/module_0001.jit_f.cpu_after_optimizations-buffer-"
                                "assignment.txt"));
        ++found;
      } else {
        QVERIFY2(path.empty(), s.label.c_str());
      }
    }
    QCOMPARE(found, 1);
    // Another module's after-optimizations state: not module 1's file, and module 2 has none.
    const hlowb::DumpState g_after = index.Timeline(*g).back();
    QVERIFY(hlowb::gui::FindBufferAssignmentFile(index, fi, g_after).empty());
    QVERIFY(hlowb::gui::FindBufferAssignmentFile(index, gi, g_after).empty());
    QVERIFY(hlowb::gui::FindBufferAssignmentFile(index, 99, g_after).empty());

    // The sample dump on disk: jit_train_step has one, for its after-optimizations state.
    auto sample = hlowb::IndexDumpDirectory(HLOWB_SOURCE_DIR "/resources/samples/dump");
    QVERIFY2(sample.ok(), sample.status().ToString().c_str());
    const hlowb::DumpModule* train = sample->FindModule("jit_train_step");
    QVERIFY(train != nullptr);
    const int ti = static_cast<int>(train - sample->modules.data());
    found = 0;
    for (const hlowb::DumpState& s : sample->Timeline(*train)) {
      const std::string path = hlowb::gui::FindBufferAssignmentFile(*sample, ti, s);
      if (s.stage != hlowb::StageKind::kAfterOptimizations) {
        QVERIFY2(path.empty(), s.label.c_str());
        continue;
      }
      ++found;
      QVERIFY2(QString::fromStdString(path).endsWith(QStringLiteral(
                   "/module_0001.jit_train_step.after_optimizations-buffer-assignment.txt")),
               path.c_str());
      QVERIFY(QFileInfo::exists(QString::fromStdString(path)));
    }
    QCOMPARE(found, 1);
  }

  void LargestCorpusModuleKeepsTheUiResponsive() {
    const std::string path = LargestCorpusFile();
    if (path.empty()) {
      QSKIP("corpus not found at " HLOWB_CORPUS_DIR
            ": the largest-module latency check needs it");
    }
    MemoryView view;
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTest::qWait(200);

    hlowb::testing::LatencyProbe probe;
    probe.SetPhase(QStringLiteral("parse and profile on a worker"));
    probe.Start();
    view.SetBusy(QStringLiteral("Computing the memory profile…"));
    struct Computed {
      absl::Status status;
      hlowb::gui::MemorySourceResult result;
    };
    QFutureWatcher<std::shared_ptr<Computed>> watcher;
    watcher.setFuture(QtConcurrent::run([path] {
      auto out = std::make_shared<Computed>();
      auto text = hlowb::ReadFileToString(path);
      if (!text.ok()) {
        out->status = text.status();
        return out;
      }
      auto module = hlowb::ParseModule(*text);
      if (!module.ok()) {
        out->status = module.status();
        return out;
      }
      MemorySourceRequest request;
      request.module = std::shared_ptr<const Module>(std::move(*module));
      auto r = LoadMemoryProfile(request);
      if (!r.ok()) {
        out->status = r.status();
      } else {
        out->result = *std::move(r);
      }
      return out;
    }));
    QVERIFY(QTest::qWaitFor([&] { return watcher.isFinished(); }, 300000));
    const std::shared_ptr<Computed> computed = watcher.result();
    QVERIFY2(computed->status.ok(), computed->status.ToString().c_str());
    const auto& profile = computed->result.profile;
    QVERIFY(profile != nullptr);

    probe.SetPhase(QStringLiteral("SetProfile and the first drawing"));
    QElapsedTimer drawn;
    drawn.start();
    view.SetProfile(profile, QString::fromStdString(path));
    QVERIFY(QTest::qWaitFor([&] { return !view.IsRendering(); }, 60000));
    const qint64 first_ms = drawn.elapsed();
    QVERIFY(view.PeakPosition().x() >= 0);
    Shot(view, "memory_largest");
    for (const QSize size :
         {QSize(1400, 900), QSize(700, 500), QSize(1200, 800), QSize(900, 650)}) {
      probe.SetPhase(QStringLiteral("resize to %1x%2").arg(size.width()).arg(size.height()));
      view.resize(size);
      QTest::qWait(30);
      view.resize(size + QSize(13, 7));  // within the debounce: one drawing for both
      QVERIFY(QTest::qWaitFor([&] { return !view.IsRendering(); }, 60000));
    }
    probe.SetPhase(QStringLiteral("stacked by buffer"));
    view.SetStackBy(MemoryView::StackBy::kBuffer);
    QVERIFY(QTest::qWaitFor([&] { return !view.IsRendering(); }, 60000));
    probe.SetPhase(QStringLiteral("hover and scroll the buffers"));
    const QPoint peak_at = view.PeakPosition();
    QVERIFY(!view.ToolTipAt(peak_at).isEmpty());
    view.buffer_table()->scrollToBottom();
    QTest::qWait(100);
    probe.Stop();
    Shot(view, "memory_largest_by_buffer");

    // What was drawn: the largest series plus "other", the peak where the live bytes peak.
    QVERIFY(view.SeriesNames().size() <= MemoryView::kMaxSeries + 1);
    const int64_t peak = FirstMax(profile->live_bytes);
    QCOMPARE(view.PointAt(peak_at), peak);
    QSignalSpy activated(&view, &MemoryView::instructionActivated);
    QTest::mouseClick(&view, Qt::LeftButton, {}, peak_at);
    QCOMPARE(activated.size(), 1);
    QCOMPARE(activated[0][0].toString(), QString::fromStdString(profile->points[peak]));

    qInfo("%s: %zu points, %zu values, %zu buffers; profile computed in %.0f ms (%s); first "
          "drawing %lld ms; max event-loop gap %lld ms (%s), UI-thread CPU in a gap at most "
          "%.0f ms (%s); load %.1f",
          path.c_str(), profile->points.size(), profile->values.size(), profile->buffers.size(),
          computed->result.seconds * 1000, qPrintable(computed->result.origin),
          static_cast<long long>(first_ms), static_cast<long long>(probe.max_gap()),
          qPrintable(probe.worst()), probe.max_cpu_gap(), qPrintable(probe.worst_cpu()),
          hlowb::testing::SystemLoad());
    QVERIFY2(probe.max_cpu_gap() < 100,
             qPrintable(QStringLiteral("the UI thread worked %1 ms without returning to the "
                                       "event loop during %2")
                            .arg(probe.max_cpu_gap())
                            .arg(probe.worst_cpu())));
    if (probe.max_gap() >= 100 && hlowb::testing::LatencyProbe::MachineOverloaded()) {
      qWarning("event-loop gap of %lld ms on an overloaded machine: wall-clock check skipped",
               static_cast<long long>(probe.max_gap()));
      return;
    }
    QVERIFY2(probe.max_gap() < 100,
             qPrintable(QStringLiteral("UI thread blocked for %1 ms during %2")
                            .arg(probe.max_gap())
                            .arg(probe.worst())));
  }
};

QTEST_MAIN(MemoryViewTest)
#include "memory_view_test.moc"
