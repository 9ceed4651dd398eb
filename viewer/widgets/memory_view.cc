// The memory view: the chart (drawn into an image on a worker thread, one job at a time, the
// latest request winning), the buffers live at the peak (a lazy model: a huge module's rows are
// only formatted when shown), the totals by kind and the summary (prepared on a worker).
//
// Chart geometry: the plot has one column per pixel; column c covers the program points
// [c*n/C, max(c*n/C + 1, (c+1)*n/C)) of the n points and C columns, and shows the point among
// them with the most live bytes (so the peak is never averaged away); with fewer points than
// columns a point spans several columns. The stacked series, the hover text and clicks all use
// the column's point.
#include "viewer/widgets/memory_view.h"

#include <QAbstractTableModel>
#include <QComboBox>
#include <QEvent>
#include <QFileInfo>
#include <QFontMetrics>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QImage>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QProgressBar>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace hlowb::viewer {

namespace {

constexpr int kInstructionRole = Qt::UserRole + 1;

constexpr std::array<QRgb, MemoryView::kMaxSeries> kSeriesColors = {
    0x4e79a7, 0xf28e2b, 0x59a14f, 0xb07aa1, 0x76b7b2, 0xedc948,
    0xff9da7, 0x9c755f, 0x86bcb6, 0xd4a6c8, 0x8cd17d, 0xa0cbe8,
};
constexpr QRgb kOtherColor = 0xbab0ac;

QString Q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<int>(s.size())); }

QString Bytes(int64_t bytes) { return Q(FormatMemoryBytes(bytes)); }

// "16.0 KiB (16400 bytes)".
QString BytesExact(int64_t bytes) {
  return QStringLiteral("%1 (%2 bytes)").arg(Bytes(bytes)).arg(bytes);
}

QString Signed(int64_t delta) {
  return delta > 0 ? QStringLiteral("+") + Bytes(delta) : Bytes(delta);
}

QString Percent(int64_t part, int64_t whole) {
  if (whole == 0) return part == 0 ? QStringLiteral("0%") : QStringLiteral("n/a");
  const double v = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  return (v > 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', 1) +
         QStringLiteral("%");
}

// "4 (d)", "7 (end of program)".
QString PointText(const MemoryProfile& p, int64_t point) {
  if (point < 0) return QStringLiteral("-");
  const std::string_view name = p.PointName(point);
  return name.empty() ? QStringLiteral("%1 (end of program)").arg(point)
                      : QStringLiteral("%1 (%2)").arg(point).arg(Q(name));
}

QString KindText(const MemoryProfile& p, int64_t allocation) {
  if (allocation < 0 || allocation >= static_cast<int64_t>(p.allocations.size())) {
    return QStringLiteral("?");
  }
  const MemoryAllocation& a = p.allocations[allocation];
  QString kind = Q(MemoryKindName(a.kind));
  if (a.kind == MemoryKind::kParameter && a.parameter_number >= 0) {
    kind += QStringLiteral(" %1").arg(a.parameter_number);
  }
  return kind;
}

// The values of buffer `b` live at `point`, as "name{index}" (phi marked); all of its values
// when none is live there.
QStringList ValuesAt(const MemoryProfile& p, const MemoryBuffer& b, int64_t point) {
  QStringList live, all;
  for (int64_t vi : b.values) {
    const MemoryValue& v = p.values[vi];
    QString name = Q(v.Name());
    if (v.phi) name += QStringLiteral(" (phi)");
    all << name;
    if (v.has_live_range() && v.start <= point && point <= v.end) live << name;
  }
  return live.isEmpty() ? all : live;
}

// The instruction that defines what buffer `b` holds at `point`: the first value live there,
// else its first value.
QString DefiningInstruction(const MemoryProfile& p, const MemoryBuffer& b, int64_t point) {
  for (int64_t vi : b.values) {
    const MemoryValue& v = p.values[vi];
    if (v.has_live_range() && v.start <= point && point <= v.end) return Q(v.instruction);
  }
  return b.values.empty() ? QString() : Q(p.values[b.values.front()].instruction);
}

// --- The chart picture (built on a worker thread). ---

struct ChartStyle {
  QFont font;
  QColor base, text, grid, peak, xla, baseline, value_line;
};

struct ChartRequest {
  uint64_t generation = 0;
  std::shared_ptr<const MemoryProfile> profile;
  int64_t baseline_peak = -1;  // -1: no baseline
  QString baseline_label;
  MemoryView::StackBy by = MemoryView::StackBy::kAllocation;
  QSize size;
  qreal dpr = 1;
  ChartStyle style;
};

struct ChartSeries {
  QString name;
  QColor color;
  int64_t source = -1;          // allocation or buffer index; -1: "other"
  int64_t largest = 0;          // most bytes at any point
  std::vector<int64_t> values;  // per plot column
};

struct ChartPicture {
  uint64_t generation = 0;
  MemoryView::StackBy by = MemoryView::StackBy::kAllocation;
  QImage image;
  QSize size;  // logical size drawn for
  QRect plot;  // logical
  int64_t points = 0;
  std::vector<int64_t> column_point;  // per plot column: the point it shows
  std::vector<ChartSeries> series;    // bottom first
  double y_max = 1;
  QPoint peak{-1, -1};
  QPoint xla_peak{-1, -1};

  int columns() const { return static_cast<int>(column_point.size()); }
  int64_t Lo(int64_t c) const { return c * points / columns(); }
  int64_t Hi(int64_t c) const { return std::max(Lo(c) + 1, (c + 1) * points / columns()); }
  // The column under logical x; -1 outside the plot.
  int ColumnAt(double x) const {
    const int c = static_cast<int>(std::floor(x - plot.left()));
    return c >= 0 && c < columns() ? c : -1;
  }
  // The middle of the columns showing point t (logical x); -1 when not drawn.
  int XOf(int64_t t) const {
    const int n = columns();
    if (n == 0 || t < 0 || t >= points) return -1;
    int lo = 0, hi = n - 1;  // the first column whose points reach past t
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (Hi(mid) > t) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    const int first = lo;
    hi = n - 1;  // the last column starting at or before t
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (Lo(mid) <= t) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return plot.left() + (first + lo) / 2;
  }
  double Y(double bytes) const { return plot.bottom() + 1 - (bytes / y_max) * plot.height(); }
  double BytesAtY(double y) const { return (plot.bottom() + 1 - y) / plot.height() * y_max; }
};

// A step of 1, 2 or 5 times a power of ten, about `raw`.
int64_t NiceStep(double raw) {
  if (raw <= 1) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw) return static_cast<int64_t>(m * magnitude);
  }
  return static_cast<int64_t>(10 * magnitude);
}

// A byte step that reads well in the unit FormatMemoryBytes picks (1, 2, 5, ... 500 KiB).
int64_t NiceByteStep(double raw) {
  if (raw <= 1) return 1;
  double unit = 1;
  while (raw / unit >= 1024 && unit < 1e18) unit *= 1024;
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0}) {
    if (m * unit >= raw) return static_cast<int64_t>(m * unit);
  }
  return static_cast<int64_t>(1024 * unit);
}

// The stacked series: the kMaxSeries allocations holding the most bytes at any point, or the
// kMaxSeries largest buffers, each at the columns' points; the rest as "other".
void ChooseSeries(const MemoryProfile& p, MemoryView::StackBy by, ChartPicture* pic) {
  const int columns = pic->columns();
  std::vector<std::pair<int64_t, int64_t>> candidates;  // (bytes, index)
  if (by == MemoryView::StackBy::kAllocation) {
    for (size_t a = 0; a < p.allocation_steps.size(); ++a) {
      int64_t most = 0;
      for (const MemoryStep& s : p.allocation_steps[a]) most = std::max(most, s.bytes);
      if (most > 0) candidates.push_back({most, static_cast<int64_t>(a)});
    }
  } else {
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      const MemoryBuffer& buffer = p.buffers[b];
      if (buffer.live.empty() || buffer.size <= 0) continue;
      candidates.push_back({buffer.size, static_cast<int64_t>(b)});
    }
  }
  // One more than the cap is drawn as itself rather than as an "other" of one.
  const size_t keep = candidates.size() <= static_cast<size_t>(MemoryView::kMaxSeries) + 1
                          ? candidates.size()
                          : static_cast<size_t>(MemoryView::kMaxSeries);
  std::partial_sort(candidates.begin(), candidates.begin() + keep, candidates.end(),
                    [](const auto& x, const auto& y) {
                      return x.first != y.first ? x.first > y.first : x.second < y.second;
                    });
  std::vector<int64_t> stacked(columns, 0);
  for (size_t i = 0; i < keep; ++i) {
    ChartSeries s;
    s.source = candidates[i].second;
    s.largest = candidates[i].first;
    s.color = QColor(kSeriesColors[i % kSeriesColors.size()]);
    s.values.assign(columns, 0);
    if (by == MemoryView::StackBy::kAllocation) {
      const std::vector<MemoryStep>& steps = p.allocation_steps[s.source];
      s.name = QStringLiteral("allocation %1 (%2, %3)")
                   .arg(s.source)
                   .arg(KindText(p, s.source), Bytes(p.allocations[s.source].size));
      size_t k = 0;
      int64_t held = 0;
      for (int c = 0; c < columns; ++c) {
        const int64_t t = pic->column_point[c];
        while (k < steps.size() && steps[k].point <= t) held = steps[k++].bytes;
        s.values[c] = held;
      }
    } else {
      const MemoryBuffer& b = p.buffers[s.source];
      QStringList names;
      for (int64_t vi : b.values) {
        if (names.size() == 2) {
          names << QStringLiteral("+%1").arg(b.values.size() - 2);
          break;
        }
        names << Q(p.values[vi].Name());
      }
      s.name = QStringLiteral("%1 (%2, allocation %3)")
                   .arg(names.join(QStringLiteral(", ")), Bytes(b.size))
                   .arg(b.allocation);
      size_t k = 0;
      for (int c = 0; c < columns; ++c) {
        const int64_t t = pic->column_point[c];
        while (k < b.live.size() && b.live[k].second < t) ++k;
        s.values[c] = k < b.live.size() && b.live[k].first <= t ? b.size : 0;
      }
    }
    for (int c = 0; c < columns; ++c) stacked[c] += s.values[c];
    pic->series.push_back(std::move(s));
  }
  ChartSeries other;
  other.color = QColor(kOtherColor);
  other.values.assign(columns, 0);
  for (int c = 0; c < columns; ++c) {
    const int64_t rest = p.live_bytes[pic->column_point[c]] - stacked[c];
    other.values[c] = std::max<int64_t>(0, rest);
    other.largest = std::max(other.largest, other.values[c]);
  }
  if (other.largest > 0) {
    const size_t rest = candidates.size() - keep;
    other.name = by == MemoryView::StackBy::kAllocation
                     ? QStringLiteral("other (%1 allocations)").arg(rest)
                     : QStringLiteral("other (%1 buffers)").arg(rest);
    pic->series.push_back(std::move(other));
  }
}

std::shared_ptr<const ChartPicture> DrawChart(const ChartRequest& r) {
  auto pic = std::make_shared<ChartPicture>();
  pic->generation = r.generation;
  pic->by = r.by;
  pic->size = r.size;
  const QSize pixels = (QSizeF(r.size) * r.dpr).toSize();
  pic->image = QImage(pixels.expandedTo(QSize(1, 1)), QImage::Format_ARGB32_Premultiplied);
  pic->image.setDevicePixelRatio(r.dpr);
  pic->image.fill(r.style.base);
  const MemoryProfile& p = *r.profile;
  const int64_t n = static_cast<int64_t>(p.live_bytes.size());
  QPainter painter(&pic->image);
  painter.setFont(r.style.font);
  const QFontMetrics fm(r.style.font);
  if (n == 0 || p.peak.point < 0) {
    painter.setPen(r.style.text);
    painter.drawText(QRect(QPoint(0, 0), r.size), Qt::AlignCenter | Qt::TextWordWrap,
                     QStringLiteral("No live ranges: nothing to draw over the schedule."));
    return pic;
  }

  // Scale: the most bytes any line reaches, with room for the peak's label.
  int64_t top = std::max<int64_t>(p.peak.bytes, 1);
  for (int64_t v : p.value_bytes) top = std::max(top, v);
  if (r.baseline_peak > 0) top = std::max(top, r.baseline_peak);
  const int64_t y_step = NiceByteStep(static_cast<double>(top) * 1.08 / 4);
  pic->y_max = static_cast<double>(((top * 108 / 100) / y_step + 1) * y_step);
  int label_width = 0;
  for (int64_t v = 0; v <= pic->y_max; v += y_step) {
    label_width = std::max(label_width, fm.horizontalAdvance(Bytes(v)));
  }
  const int left = label_width + 10;
  const int top_margin = fm.height() + 10;
  const int bottom = 2 * fm.height() + 10;
  const int right = 14;
  pic->plot = QRect(left, top_margin, r.size.width() - left - right,
                    r.size.height() - top_margin - bottom);
  if (pic->plot.width() < 8 || pic->plot.height() < 8) {
    pic->plot = QRect();
    return pic;
  }
  const QRect& plot = pic->plot;
  pic->points = n;
  pic->column_point.resize(plot.width());
  for (int c = 0; c < plot.width(); ++c) {
    const int64_t lo = pic->Lo(c), hi = std::min(pic->Hi(c), n);
    int64_t best = lo;
    for (int64_t t = lo + 1; t < hi; ++t) {
      if (p.live_bytes[t] > p.live_bytes[best]) best = t;
    }
    pic->column_point[c] = best;
  }
  ChooseSeries(p, r.by, pic.get());

  // Grid and y labels.
  for (int64_t v = 0; v <= pic->y_max; v += y_step) {
    const int y = static_cast<int>(std::lround(pic->Y(static_cast<double>(v))));
    painter.setPen(r.style.grid);
    painter.drawLine(plot.left(), y, plot.right(), y);
    painter.setPen(r.style.text);
    painter.drawText(QRect(0, y - fm.height() / 2, left - 6, fm.height()),
                     Qt::AlignRight | Qt::AlignVCenter, Bytes(v));
  }

  // The stacked series, one column at a time.
  painter.setPen(Qt::NoPen);
  for (int c = 0; c < plot.width(); ++c) {
    double below = 0;
    for (const ChartSeries& s : pic->series) {
      const int64_t v = s.values[c];
      if (v <= 0) continue;
      const double y0 = pic->Y(below);
      const double y1 = pic->Y(below + static_cast<double>(v));
      painter.fillRect(QRectF(plot.left() + c, y1, 1, y0 - y1), s.color);
      below += static_cast<double>(v);
    }
  }

  // Live bytes (solid) and every live value counted (dotted), as steps over the columns.
  auto steps = [&](const std::vector<int64_t>& series) {
    QPolygonF line;
    line.reserve(2 * plot.width());
    for (int c = 0; c < plot.width(); ++c) {
      const double y = pic->Y(static_cast<double>(series[pic->column_point[c]]));
      line << QPointF(plot.left() + c, y) << QPointF(plot.left() + c + 1, y);
    }
    return line;
  };
  painter.setPen(QPen(r.style.value_line, 1, Qt::DotLine));
  painter.drawPolyline(steps(p.value_bytes));
  painter.setPen(QPen(r.style.text, 1));
  painter.drawPolyline(steps(p.live_bytes));

  // Axes and x labels.
  painter.setPen(r.style.text);
  painter.drawLine(plot.bottomLeft(), plot.bottomRight());
  painter.drawLine(plot.bottomLeft(), plot.topLeft());
  const int label_room = fm.horizontalAdvance(QString::number(n)) + 24;
  const int64_t x_step =
      NiceStep(static_cast<double>(n) / std::max(1, plot.width() / label_room));
  for (int64_t t = 0; t < n; t += x_step) {
    const int x = pic->XOf(t);
    painter.drawLine(x, plot.bottom(), x, plot.bottom() + 3);
    const QString text = QString::number(t);
    const int w = fm.horizontalAdvance(text);
    painter.drawText(QRect(x - w / 2 - 2, plot.bottom() + 4, w + 4, fm.height()), Qt::AlignCenter,
                     text);
  }
  painter.drawText(
      QRect(plot.left(), plot.bottom() + 4 + fm.height(), plot.width(), fm.height() + 2),
      Qt::AlignCenter, QStringLiteral("program point (schedule order, %1 points)").arg(n));

  // The baseline's peak.
  if (r.baseline_peak >= 0) {
    const double y = pic->Y(static_cast<double>(r.baseline_peak));
    painter.setPen(QPen(r.style.baseline, 1, Qt::DashLine));
    painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    const QString text =
        QStringLiteral("peak of %1: %2")
            .arg(r.baseline_label.isEmpty() ? QStringLiteral("baseline") : r.baseline_label,
                 Bytes(r.baseline_peak));
    painter.drawText(QRectF(plot.left() + 4, y - fm.height() - 1, plot.width() - 8, fm.height()),
                     Qt::AlignRight | Qt::AlignVCenter,
                     fm.elidedText(text, Qt::ElideMiddle, plot.width() - 8));
  }

  // XLA's peak point (the one its files state, else its rule's), where it is not ours.
  const int64_t xla_point = p.stated.peak_point.value_or(p.xla_peak.point);
  if (xla_point >= 0 && xla_point < n && xla_point != p.peak.point) {
    const int x = pic->XOf(xla_point);
    painter.setPen(QPen(r.style.xla, 1, Qt::DashLine));
    painter.drawLine(x, plot.top(), x, plot.bottom());
    const QString text = QStringLiteral("XLA's peak point %1").arg(xla_point);
    const int w = fm.horizontalAdvance(text) + 4;
    const int tx = x + w + 4 <= plot.right() ? x + 3 : x - w - 3;
    painter.drawText(QRect(tx, plot.bottom() - fm.height() - 2, w, fm.height()), Qt::AlignCenter,
                     text);
    pic->xla_peak = QPoint(x, plot.bottom() - fm.height() / 2 - 2);
  }

  // The peak: a line, a dot on the live-bytes line and what it is.
  const int px = pic->XOf(p.peak.point);
  const int py = static_cast<int>(std::lround(pic->Y(static_cast<double>(p.peak.bytes))));
  painter.setPen(QPen(r.style.peak, 1));
  painter.drawLine(px, plot.top(), px, plot.bottom());
  painter.setRenderHint(QPainter::Antialiasing, true);
  painter.setBrush(r.style.peak);
  painter.drawEllipse(QPointF(px + 0.5, py + 0.5), 4, 4);
  painter.setBrush(Qt::NoBrush);
  const QString peak_text = fm.elidedText(
      QStringLiteral("peak %1 at %2").arg(Bytes(p.peak.bytes), PointText(p, p.peak.point)),
      Qt::ElideRight, std::max(40, r.size.width() - 8));
  const int tw = fm.horizontalAdvance(peak_text) + 4;
  const int tx = std::clamp(px - tw / 2, 2, std::max(2, r.size.width() - tw - 2));
  painter.setPen(r.style.peak);
  painter.drawText(QRect(tx, 2, tw, fm.height() + 2), Qt::AlignCenter, peak_text);
  pic->peak = QPoint(px, py);
  return pic;
}

}  // namespace

// --- The summary (built on a worker thread). ---

struct MemoryView::Summary {
  QString text;
  QString warnings;
};

std::shared_ptr<const MemoryView::Summary> MemoryView::BuildSummary(
    std::shared_ptr<const MemoryProfile> profile, std::shared_ptr<const MemoryProfile> base,
    const QString& base_label) {
  auto out = std::make_shared<Summary>();
  const MemoryProfile& p = *profile;
  QStringList lines, warnings;
  QStringList files;
  for (const std::string& f : p.files) files << QFileInfo(Q(f)).fileName();
  if (p.source == "xla") {
    lines << QStringLiteral("Source: XLA's buffer assignment (%1)")
                 .arg(files.join(QStringLiteral(", ")));
  } else if (p.source == "hlowb") {
    lines << QStringLiteral("Source: hlowb's buffer assignment; schedule: %1").arg(Q(p.schedule));
  } else {
    lines << QStringLiteral("Source: %1").arg(Q(p.source));
  }
  if (p.peak.point < 0) {
    lines << QStringLiteral("Peak: none (no live ranges)");
    warnings << QStringLiteral(
        "No live ranges: the buffer assignment has no HloLiveRange section, so only the totals "
        "are shown.");
  } else {
    lines << QStringLiteral(
                 "Peak: %1 at point %2: allocation bytes held by live values, each byte once "
                 "(each live value counted there: %3)")
                 .arg(BytesExact(p.peak.bytes), PointText(p, p.peak.point),
                      Bytes(p.value_bytes[p.peak.point]));
    // XLA's measure as its files state it: jaxlib 0.4.x sizes each value by its defining
    // instruction's whole shape.
    const bool by_instruction =
        p.stated.peak_bytes &&
        p.stated.peak_measure == StatedMemory::PeakMeasure::kInstructionShapeBytes;
    const int64_t xla_bytes =
        by_instruction ? p.xla_peak.instruction_shape_bytes : p.xla_peak.value_bytes;
    lines << QStringLiteral("XLA's peak (HloLiveRange, %1): %2 at point %3")
                 .arg(by_instruction ? QStringLiteral("each live value sized by its defining "
                                                      "instruction, as this XLA counts")
                                     : QStringLiteral("each live value counted"),
                      BytesExact(xla_bytes), PointText(p, p.xla_peak.point));
  }
  const int64_t with_range = static_cast<int64_t>(p.values.size()) - p.values_without_live_range;
  lines << QStringLiteral("Allocations: %1, %2; program points: %3; values: %4 (%5 with a live "
                          "range)")
               .arg(p.allocations.size())
               .arg(BytesExact(p.total_bytes))
               .arg(p.points.size())
               .arg(p.values.size())
               .arg(with_range);
  const StatedMemory& s = p.stated;
  QStringList stated;
  if (s.peak_point && s.peak_bytes) {
    stated << QStringLiteral("peak %1 bytes at point %2").arg(*s.peak_bytes).arg(*s.peak_point);
  }
  if (s.total_bytes_used) stated << QStringLiteral("total %1 bytes").arg(*s.total_bytes_used);
  if (s.report_total_bytes) {
    stated << QStringLiteral("memory-usage report total %1 bytes").arg(*s.report_total_bytes);
  }
  const std::vector<std::string> checks = CheckStatedMemory(p);
  if (!stated.isEmpty()) {
    lines << QStringLiteral("The files state: %1; %2")
                 .arg(stated.join(QStringLiteral(", ")),
                      checks.empty() ? QStringLiteral("all agree")
                                     : QStringLiteral("they disagree (see the warning)"));
  }
  for (const std::string& c : checks) {
    warnings << QStringLiteral("The files disagree: %1").arg(Q(c));
  }
  if (p.skipped_lines > 0) {
    warnings << QStringLiteral("%1 unrecognised lines of the files were skipped.")
                    .arg(p.skipped_lines);
  }
  if (p.unallocated_live_ranges > 0) {
    warnings << QStringLiteral(
                    "%1 live ranges name values no allocation holds; they are not counted.")
                    .arg(p.unallocated_live_ranges);
  }
  if (base != nullptr) {
    const QString name = base_label.isEmpty() ? QStringLiteral("the baseline") : base_label;
    lines << QStringLiteral("Compared with %1: peak %2 → %3 (%4, %5); total %6 → %7 (%8, %9)")
                 .arg(name, Bytes(base->peak.bytes), Bytes(p.peak.bytes),
                      Signed(p.peak.bytes - base->peak.bytes),
                      Percent(p.peak.bytes - base->peak.bytes, base->peak.bytes),
                      Bytes(base->total_bytes), Bytes(p.total_bytes),
                      Signed(p.total_bytes - base->total_bytes))
                 .arg(Percent(p.total_bytes - base->total_bytes, base->total_bytes));
  }
  out->text = lines.join(QLatin1Char('\n'));
  out->warnings = warnings.join(QLatin1Char('\n'));
  return out;
}

// --- The buffers live at the peak. ---

class MemoryView::BufferModel : public QAbstractTableModel {
 public:
  explicit BufferModel(QObject* parent) : QAbstractTableModel(parent) {}

  void SetProfile(std::shared_ptr<const MemoryProfile> profile) {
    beginResetModel();
    profile_ = std::move(profile);
    endResetModel();
  }

  int rowCount(const QModelIndex& parent = QModelIndex()) const override {
    if (parent.isValid() || profile_ == nullptr) return 0;
    return static_cast<int>(profile_->live_at_peak.size());
  }
  int columnCount(const QModelIndex& parent = QModelIndex()) const override {
    return parent.isValid() ? 0 : 5;
  }

  QVariant headerData(int section, Qt::Orientation orientation, int role) const override {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
      case 0:
        return QStringLiteral("Size");
      case 1:
        return QStringLiteral("Of peak");
      case 2:
        return QStringLiteral("Allocation");
      case 3:
        return QStringLiteral("Offset");
      case 4:
        return QStringLiteral("Values live at the peak");
    }
    return {};
  }

  QVariant data(const QModelIndex& index, int role) const override {
    if (!index.isValid() || profile_ == nullptr || index.row() >= rowCount()) return {};
    const MemoryProfile& p = *profile_;
    const MemoryBuffer& b = p.buffers[p.live_at_peak[index.row()]];
    const int64_t t = p.peak.point;
    if (role == kInstructionRole) return DefiningInstruction(p, b, t);
    if (role == Qt::UserRole) {
      switch (index.column()) {
        case 0:
          return QVariant::fromValue<qlonglong>(b.size);
        case 2:
          return QVariant::fromValue<qlonglong>(b.allocation);
        case 3:
          return QVariant::fromValue<qlonglong>(b.offset);
        default:
          return {};
      }
    }
    if (role == Qt::TextAlignmentRole) {
      return static_cast<int>(index.column() == 4 || index.column() == 2
                                  ? Qt::AlignLeft | Qt::AlignVCenter
                                  : Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::ToolTipRole) {
      QStringList values;
      for (int64_t vi : b.values) {
        const MemoryValue& v = p.values[vi];
        values << (v.has_live_range() ? QStringLiteral("%1: points %2–%3")
                                            .arg(Q(v.Name()))
                                            .arg(v.start)
                                            .arg(v.end)
                                      : QStringLiteral("%1: no live range").arg(Q(v.Name())));
        if (values.size() == 20 && b.values.size() > 20) {
          values << QStringLiteral("… %1 more").arg(b.values.size() - 20);
          break;
        }
      }
      return QStringLiteral("%1 at offset %2 of allocation %3 (%4)\n%5\nClick to select %6")
          .arg(BytesExact(b.size))
          .arg(b.offset)
          .arg(b.allocation)
          .arg(KindText(p, b.allocation), values.join(QLatin1Char('\n')),
               DefiningInstruction(p, b, t));
    }
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
      case 0:
        return Bytes(b.size);
      case 1:
        if (p.peak.bytes <= 0) return QString();
        return QString::number(
                   100.0 * static_cast<double>(b.size) / static_cast<double>(p.peak.bytes), 'f',
                   1) +
               QStringLiteral("%");
      case 2:
        return QStringLiteral("%1 %2").arg(b.allocation).arg(KindText(p, b.allocation));
      case 3:
        return QString::number(b.offset);
      case 4:
        return ValuesAt(p, b, t).join(QStringLiteral(", "));
    }
    return {};
  }

 private:
  std::shared_ptr<const MemoryProfile> profile_;
};

// --- The chart widget. ---

class MemoryView::Chart : public QWidget {
 public:
  explicit Chart(MemoryView* view, QWidget* parent) : QWidget(parent), view_(view) {
    setMouseTracking(true);
    setMinimumSize(220, 150);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    debounce_.setSingleShot(true);
    debounce_.setInterval(60);
    QObject::connect(&debounce_, &QTimer::timeout, this, [this] { Request(); });
  }

  // The profile, baseline, mode or style changed: the picture shown is wrong now.
  void Invalidate() {
    ++generation_;
    picture_.reset();
    hover_column_ = -1;
    Request();
    update();
  }

  bool IsRendering() const {
    if (view_->profile_ == nullptr) return false;
    return in_flight_ || pending_ || debounce_.isActive() || picture_ == nullptr ||
           picture_->size != size();
  }

  const ChartPicture* picture() const { return picture_.get(); }

  // Chart coordinates <-> the picture's (they differ while a new size is being drawn: the old
  // picture is shown stretched).
  QPointF ToPicture(const QPointF& pos) const {
    if (picture_ == nullptr || width() <= 0 || height() <= 0) return pos;
    return QPointF(pos.x() * picture_->size.width() / width(),
                   pos.y() * picture_->size.height() / height());
  }
  QPoint FromPicture(const QPoint& pos) const {
    if (picture_ == nullptr || picture_->size.width() <= 0 || picture_->size.height() <= 0) {
      return pos;
    }
    return QPoint(
        static_cast<int>(std::lround((pos.x() + 0.5) * width() / picture_->size.width() - 0.5)),
        static_cast<int>(
            std::lround((pos.y() + 0.5) * height() / picture_->size.height() - 0.5)));
  }

  int ColumnAt(const QPoint& pos) const {
    if (picture_ == nullptr || picture_->columns() == 0) return -1;
    const QPointF at = ToPicture(QPointF(pos) + QPointF(0.5, 0.5));
    if (at.y() > picture_->plot.bottom() + 1) return -1;
    return picture_->ColumnAt(at.x());
  }

  int64_t PointAt(const QPoint& pos) const {
    const int c = ColumnAt(pos);
    return c < 0 ? -1 : picture_->column_point[c];
  }

  QString TextAt(const QPoint& pos) const {
    const int c = ColumnAt(pos);
    if (c < 0 || view_->profile_ == nullptr) return {};
    const MemoryProfile& p = *view_->profile_;
    const ChartPicture& pic = *picture_;
    const int64_t t = pic.column_point[c];
    QStringList lines;
    const int64_t lo = pic.Lo(c), hi = std::min(pic.Hi(c), pic.points);
    if (hi - lo > 1) {
      lines << QStringLiteral("points %1–%2; the most live at point %3")
                   .arg(lo)
                   .arg(hi - 1)
                   .arg(PointText(p, t));
    } else {
      lines << QStringLiteral("point %1").arg(PointText(p, t));
    }
    lines << QStringLiteral("live: %1").arg(BytesExact(p.live_bytes[t]));
    lines << QStringLiteral("each live value counted: %1").arg(Bytes(p.value_bytes[t]));
    // The series under the cursor.
    const double bytes = pic.BytesAtY(ToPicture(QPointF(pos)).y());
    double below = 0;
    for (const ChartSeries& s : pic.series) {
      const int64_t v = s.values[c];
      if (v <= 0) continue;
      if (bytes >= below && bytes < below + static_cast<double>(v)) {
        QString what = s.name;
        if (pic.by == StackBy::kBuffer && s.source >= 0) {
          what = ValuesAt(p, p.buffers[s.source], t).join(QStringLiteral(", "));
        }
        lines << QStringLiteral("under the cursor: %1: %2").arg(what, Bytes(v));
        break;
      }
      below += static_cast<double>(v);
    }
    if (!p.PointName(t).empty()) {
      lines << QStringLiteral("click to select %1").arg(Q(p.PointName(t)));
    }
    return lines.join(QLatin1Char('\n'));
  }

  void Click(const QPoint& pos) {
    const int64_t t = PointAt(pos);
    if (t < 0 || view_->profile_ == nullptr) return;
    const std::string_view name = view_->profile_->PointName(t);
    if (!name.empty()) emit view_->instructionActivated(Q(name));
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    if (picture_ != nullptr) {
      painter.drawImage(QRectF(rect()), picture_->image);
      // The window's selection: a line in the highlight colour.
      if (const int mx = view_->marked_point_ >= 0 ? picture_->XOf(view_->marked_point_) : -1;
          mx >= 0) {
        const int x = FromPicture(QPoint(mx, 0)).x();
        const int top = FromPicture(picture_->plot.topLeft()).y();
        const int bottom = FromPicture(picture_->plot.bottomLeft()).y();
        painter.setPen(QPen(palette().color(QPalette::Highlight), 2));
        painter.drawLine(x, top, x, bottom);
      }
      if (hover_column_ >= 0 && hover_column_ < picture_->columns()) {
        const int x = FromPicture(QPoint(picture_->plot.left() + hover_column_, 0)).x();
        const int top = FromPicture(picture_->plot.topLeft()).y();
        const int bottom = FromPicture(picture_->plot.bottomLeft()).y();
        QColor c = palette().color(QPalette::Text);
        c.setAlpha(110);
        painter.setPen(c);
        painter.drawLine(x, top, x, bottom);
      }
    } else if (view_->profile_ != nullptr) {
      painter.setPen(palette().color(QPalette::PlaceholderText));
      painter.drawText(rect(), Qt::AlignCenter, QStringLiteral("Drawing…"));
    }
  }

  void resizeEvent(QResizeEvent*) override {
    if (view_->profile_ != nullptr) debounce_.start();
  }

  void mousePressEvent(QMouseEvent* event) override {
    if (event->button() == Qt::LeftButton) Click(event->position().toPoint());
    event->accept();
  }

  void mouseMoveEvent(QMouseEvent* event) override {
    const int c = ColumnAt(event->position().toPoint());
    if (c != hover_column_) {
      hover_column_ = c;
      update();
    }
  }

  void leaveEvent(QEvent*) override {
    if (hover_column_ >= 0) {
      hover_column_ = -1;
      update();
    }
  }

  bool event(QEvent* event) override {
    if (event->type() == QEvent::ToolTip) {
      auto* help = static_cast<QHelpEvent*>(event);
      const QString text = TextAt(help->pos());
      if (text.isEmpty()) {
        QToolTip::hideText();
        event->ignore();
      } else {
        QToolTip::showText(help->globalPos(), text, this);
      }
      return true;
    }
    return QWidget::event(event);
  }

 private:
  // Draws the current profile at the current size on a worker; while one drawing runs, the
  // next waits for it (and then draws whatever is current).
  void Request() {
    if (view_->profile_ == nullptr) {
      picture_.reset();
      update();
      return;
    }
    if (in_flight_) {
      pending_ = true;
      return;
    }
    ChartRequest r;
    r.generation = generation_;
    r.profile = view_->profile_;
    if (view_->baseline_ != nullptr) {
      r.baseline_peak = view_->baseline_->peak.bytes;
      r.baseline_label = view_->base_label_;
    }
    r.by = view_->stack_by_;
    r.size = size().expandedTo(QSize(1, 1));
    r.dpr = devicePixelRatioF();
    const QPalette& pal = palette();
    r.style.font = font();
    r.style.base = pal.color(QPalette::Base);
    r.style.text = pal.color(QPalette::Text);
    r.style.grid = pal.color(QPalette::Mid);
    r.style.grid.setAlpha(90);
    const bool dark = r.style.base.lightness() < 128;
    r.style.peak = dark ? QColor(0xff6b6b) : QColor(0xc62828);
    r.style.xla = dark ? QColor(0x64b5f6) : QColor(0x1565c0);
    r.style.baseline = dark ? QColor(0xffd54f) : QColor(0x8d6e00);
    r.style.value_line = pal.color(QPalette::PlaceholderText);
    in_flight_ = true;
    pending_ = false;
    auto* watcher = new QFutureWatcher<std::shared_ptr<const ChartPicture>>(this);
    QObject::connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
      watcher->deleteLater();
      in_flight_ = false;
      std::shared_ptr<const ChartPicture> picture = watcher->result();
      if (picture->generation == generation_) {
        picture_ = std::move(picture);
        hover_column_ = -1;
        update();
      }
      if (pending_ || picture_ == nullptr || picture_->size != size()) {
        if (!debounce_.isActive()) Request();
        return;
      }
      view_->OnChartRendered();
    });
    watcher->setFuture(QtConcurrent::run([r = std::move(r)] { return DrawChart(r); }));
  }

  MemoryView* view_;
  QTimer debounce_;
  uint64_t generation_ = 0;
  bool in_flight_ = false;
  bool pending_ = false;
  int hover_column_ = -1;
  std::shared_ptr<const ChartPicture> picture_;
};

// --- The view. ---

MemoryView::MemoryView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(2);

  auto* bar = new QHBoxLayout();
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("memoryTitle"));
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A long state name is cut rather than widening the dock (its tooltip has it whole).
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);
  stack_by_box_ = new QComboBox(this);
  stack_by_box_->setObjectName(QStringLiteral("memoryStackBy"));
  stack_by_box_->addItem(QStringLiteral("Stacked by allocation"));
  stack_by_box_->addItem(QStringLiteral("Stacked by buffer"));
  stack_by_box_->setToolTip(
      QStringLiteral("Split the live bytes by allocation, or by buffer (the bytes of an "
                     "allocation that one or more values hold); the largest %1 are drawn, the "
                     "rest as \"other\"")
          .arg(kMaxSeries));
  bar->addWidget(title_, 1);
  bar->addWidget(stack_by_box_);
  layout->addLayout(bar);

  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("memoryMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(message_);
  busy_bar_ = new QProgressBar(this);
  busy_bar_->setObjectName(QStringLiteral("memoryBusy"));
  busy_bar_->setRange(0, 0);
  busy_bar_->setTextVisible(false);
  busy_bar_->setMaximumHeight(8);
  layout->addWidget(busy_bar_);

  content_ = new QWidget(this);
  auto* content = new QVBoxLayout(content_);
  content->setContentsMargins(0, 0, 0, 0);
  content->setSpacing(2);
  summary_ = new QLabel(content_);
  summary_->setObjectName(QStringLiteral("memorySummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  warnings_ = new QLabel(content_);
  warnings_->setObjectName(QStringLiteral("memoryWarnings"));
  warnings_->setWordWrap(true);
  warnings_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  warnings_->setStyleSheet(QStringLiteral("color: #b26a00;"));
  content->addWidget(summary_);
  content->addWidget(warnings_);

  auto* splitter = new QSplitter(Qt::Vertical, content_);
  auto* chart_box = new QWidget(splitter);
  auto* chart_layout = new QVBoxLayout(chart_box);
  chart_layout->setContentsMargins(0, 0, 0, 0);
  chart_layout->setSpacing(1);
  chart_ = new Chart(this, chart_box);
  chart_->setObjectName(QStringLiteral("memoryChart"));
  legend_ = new QLabel(chart_box);
  legend_->setObjectName(QStringLiteral("memoryLegend"));
  legend_->setWordWrap(true);
  legend_->setTextFormat(Qt::RichText);
  chart_layout->addWidget(chart_, 1);
  chart_layout->addWidget(legend_);

  auto* tables = new QSplitter(Qt::Horizontal, splitter);
  auto* buffers_box = new QWidget(tables);
  auto* buffers_layout = new QVBoxLayout(buffers_box);
  buffers_layout->setContentsMargins(0, 0, 0, 0);
  buffers_layout->setSpacing(1);
  buffer_caption_ = new QLabel(QStringLiteral("Buffers live at the peak"), buffers_box);
  buffer_caption_->setWordWrap(true);
  buffer_model_ = new BufferModel(this);
  buffer_table_ = new QTableView(buffers_box);
  buffer_table_->setObjectName(QStringLiteral("memoryBuffers"));
  buffer_table_->setModel(buffer_model_);
  buffer_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  buffer_table_->setSelectionMode(QAbstractItemView::SingleSelection);
  buffer_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  buffer_table_->setWordWrap(false);
  buffer_table_->verticalHeader()->hide();
  buffer_table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  buffer_table_->horizontalHeader()->setStretchLastSection(true);
  buffer_table_->setColumnWidth(0, 80);
  buffer_table_->setColumnWidth(1, 60);
  buffer_table_->setColumnWidth(2, 110);
  buffer_table_->setColumnWidth(3, 80);
  buffer_table_->setToolTip(QStringLiteral("Click a buffer to select its defining instruction"));
  buffers_layout->addWidget(buffer_caption_);
  buffers_layout->addWidget(buffer_table_, 1);

  totals_table_ = new QTableWidget(0, 0, tables);
  totals_table_->setObjectName(QStringLiteral("memoryTotals"));
  totals_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  totals_table_->setSelectionMode(QAbstractItemView::NoSelection);
  totals_table_->verticalHeader()->hide();
  totals_table_->horizontalHeader()->setStretchLastSection(true);
  tables->addWidget(buffers_box);
  tables->addWidget(totals_table_);
  tables->setStretchFactor(0, 3);
  tables->setStretchFactor(1, 2);
  splitter->addWidget(chart_box);
  splitter->addWidget(tables);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  content->addWidget(splitter, 1);
  layout->addWidget(content_, 1);

  connect(stack_by_box_, &QComboBox::currentIndexChanged, this, [this](int index) {
    SetStackBy(index == 1 ? StackBy::kBuffer : StackBy::kAllocation);
  });
  connect(buffer_table_, &QTableView::clicked, this, &MemoryView::OnBufferClicked);
  connect(buffer_table_, &QTableView::activated, this, &MemoryView::OnBufferClicked);
  Clear();
}

MemoryView::~MemoryView() = default;

QWidget* MemoryView::chart() const { return chart_; }

void MemoryView::ShowState(State state, const QString& message) {
  state_ = state;
  message_->setText(message);
  message_->setVisible(state != State::kProfile);
  message_->setStyleSheet(state == State::kError ? QStringLiteral("color: #c62828;")
                                                 : QString());
  busy_bar_->setVisible(state == State::kBusy);
  content_->setVisible(state == State::kProfile);
  stack_by_box_->setEnabled(state == State::kProfile);
}

void MemoryView::SetProfile(std::shared_ptr<const MemoryProfile> profile, const QString& label) {
  if (profile == nullptr) {
    Clear();
    return;
  }
  profile_ = std::move(profile);
  label_ = label;
  title_->setText(label_);
  title_->setToolTip(label_);
  ShowState(State::kProfile, QString());
  buffer_model_->SetProfile(profile_);
  // Offsets in a large temp allocation run to ten digits: wide enough for the largest shown.
  int64_t widest = 0;
  for (int64_t b : profile_->live_at_peak) widest = std::max(widest, profile_->buffers[b].offset);
  buffer_table_->setColumnWidth(
      3, std::max(80, buffer_table_->fontMetrics().horizontalAdvance(QString::number(widest)) +
                          16));
  ResolveMarkedPoint();
  buffer_caption_->setText(
      profile_->peak.point < 0
          ? QStringLiteral("Buffers live at the peak: none (no live ranges)")
          : QStringLiteral("Buffers live at the peak (point %1): %2")
                .arg(PointText(*profile_, profile_->peak.point))
                .arg(profile_->live_at_peak.size()));
  Rebuild();
}

void MemoryView::SetMarkedInstruction(const QString& name) {
  marked_name_ = name;
  ResolveMarkedPoint();
  chart_->update();
}

void MemoryView::ResolveMarkedPoint() {
  marked_point_ = -1;
  if (profile_ == nullptr || marked_name_.isEmpty()) return;
  const std::string name = marked_name_.toStdString();
  const int64_t points = static_cast<int64_t>(profile_->points.size());
  for (int64_t t = 0; t < points; ++t) {
    if (profile_->PointName(t) == name) {
      marked_point_ = t;
      return;
    }
  }
}

void MemoryView::SetBaseline(std::shared_ptr<const MemoryProfile> base,
                             const QString& base_label) {
  baseline_ = std::move(base);
  base_label_ = baseline_ != nullptr ? base_label : QString();
  if (profile_ != nullptr) Rebuild();
}

void MemoryView::SetBusy(const QString& message) {
  profile_.reset();
  buffer_model_->SetProfile(nullptr);
  ShowState(State::kBusy, message);
  chart_->Invalidate();
  ++summary_generation_;
  summary_pending_ = false;
}

void MemoryView::SetError(const QString& message) {
  profile_.reset();
  buffer_model_->SetProfile(nullptr);
  ShowState(State::kError, message);
  chart_->Invalidate();
  ++summary_generation_;
  summary_pending_ = false;
}

void MemoryView::Clear() {
  profile_.reset();
  marked_point_ = -1;
  baseline_.reset();
  label_.clear();
  base_label_.clear();
  title_->setText(QStringLiteral("Memory"));
  title_->setToolTip(QString());
  buffer_model_->SetProfile(nullptr);
  summary_text_.clear();
  warning_text_.clear();
  summary_->clear();
  warnings_->clear();
  legend_->clear();
  totals_table_->clear();
  totals_table_->setRowCount(0);
  totals_table_->setColumnCount(0);
  ShowState(State::kEmpty,
            QStringLiteral("No memory profile: show a module to see its memory over its "
                           "schedule."));
  chart_->Invalidate();
  ++summary_generation_;
  summary_pending_ = false;
}

void MemoryView::SetStackBy(StackBy by) {
  const int index = by == StackBy::kBuffer ? 1 : 0;
  if (stack_by_box_->currentIndex() != index) {
    stack_by_box_->setCurrentIndex(index);  // comes back here through the box's signal
    return;
  }
  if (by == stack_by_) return;
  stack_by_ = by;
  if (profile_ != nullptr) {
    legend_->clear();
    chart_->Invalidate();
  }
}

void MemoryView::Rebuild() {
  FillTotals();
  legend_->clear();
  summary_->setText(QStringLiteral("…"));
  warnings_->clear();
  warnings_->hide();
  StartSummary();
  chart_->Invalidate();
}

void MemoryView::FillTotals() {
  const MemoryProfile& p = *profile_;
  const MemoryProfile* base = baseline_.get();
  totals_table_->clear();
  QStringList headers;
  if (base == nullptr) {
    headers = {QStringLiteral("Kind"), QStringLiteral("Bytes"), QStringLiteral("Allocations"),
               QStringLiteral("Of total")};
  } else {
    headers = {QStringLiteral("Kind"), QStringLiteral("Before"), QStringLiteral("After"),
               QStringLiteral("Change"), QStringLiteral("Allocations")};
  }
  totals_table_->setColumnCount(static_cast<int>(headers.size()));
  totals_table_->setHorizontalHeaderLabels(headers);
  struct Row {
    QString kind;
    int64_t before = 0, after = 0, count_before = 0, count_after = 0;
    bool counts = true;  // allocation counts apply
  };
  std::vector<Row> rows;
  if (base != nullptr) {
    rows.push_back({QStringLiteral("peak (live bytes)"), base->peak.bytes, p.peak.bytes, 0, 0,
                    false});
  }
  int64_t count = 0, base_count = 0;
  for (int k = 0; k < kMemoryKindCount; ++k) {
    rows.push_back({Q(MemoryKindName(static_cast<MemoryKind>(k))),
                    base != nullptr ? base->kind_bytes[k] : 0, p.kind_bytes[k],
                    base != nullptr ? base->kind_count[k] : 0, p.kind_count[k], true});
    count += p.kind_count[k];
    if (base != nullptr) base_count += base->kind_count[k];
  }
  rows.push_back({QStringLiteral("total"), base != nullptr ? base->total_bytes : 0, p.total_bytes,
                  base_count, count, true});
  totals_table_->setRowCount(static_cast<int>(rows.size()));
  // Display text; the exact figure as Qt::UserRole and in the tooltip.
  auto cell = [](const QString& text, const QVariant& raw, const QString& tip) {
    auto* item = new QTableWidgetItem(text);
    if (raw.isValid()) {
      item->setData(Qt::UserRole, raw);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (!tip.isEmpty()) item->setToolTip(tip);
    return item;
  };
  auto bytes_cell = [&](int64_t v) {
    return cell(Bytes(v), QVariant::fromValue<qlonglong>(v), QStringLiteral("%1 bytes").arg(v));
  };
  for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
    const Row& row = rows[r];
    totals_table_->setItem(r, 0, cell(row.kind, QVariant(), QString()));
    if (base == nullptr) {
      const QString share =
          p.total_bytes > 0 ? QString::number(100.0 * static_cast<double>(row.after) /
                                                  static_cast<double>(p.total_bytes),
                                              'f', 1) +
                                  QStringLiteral("%")
                            : QString();
      totals_table_->setItem(r, 1, bytes_cell(row.after));
      totals_table_->setItem(r, 2,
                             cell(QString::number(row.count_after),
                                  QVariant::fromValue<qlonglong>(row.count_after), QString()));
      totals_table_->setItem(r, 3, cell(share, QVariant(), QString()));
    } else {
      const int64_t delta = row.after - row.before;
      totals_table_->setItem(r, 1, bytes_cell(row.before));
      totals_table_->setItem(r, 2, bytes_cell(row.after));
      totals_table_->setItem(
          r, 3,
          cell(QStringLiteral("%1 (%2)").arg(Signed(delta), Percent(delta, row.before)),
               QVariant::fromValue<qlonglong>(delta), QStringLiteral("%1 bytes").arg(delta)));
      totals_table_->setItem(
          r, 4,
          cell(row.counts ? QStringLiteral("%1 → %2").arg(row.count_before).arg(row.count_after)
                          : QString(),
               row.counts ? QVariant::fromValue<qlonglong>(row.count_after - row.count_before)
                          : QVariant(),
               QString()));
      if (delta != 0) {
        totals_table_->item(r, 3)->setForeground(delta > 0 ? QColor(0xc62828)
                                                           : QColor(0x2e7d32));
      }
    }
    if (row.kind == QStringLiteral("total") || !row.counts) {
      for (int c = 0; c < totals_table_->columnCount(); ++c) {
        QFont f = totals_table_->item(r, c)->font();
        f.setBold(true);
        totals_table_->item(r, c)->setFont(f);
      }
    }
  }
  totals_table_->resizeColumnsToContents();
}

void MemoryView::StartSummary() {
  const uint64_t generation = ++summary_generation_;
  summary_pending_ = true;
  auto* watcher = new QFutureWatcher<std::shared_ptr<const Summary>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
    watcher->deleteLater();
    ApplySummary(generation, watcher->result());
  });
  watcher->setFuture(
      QtConcurrent::run([profile = profile_, base = baseline_, base_label = base_label_] {
        return BuildSummary(profile, base, base_label);
      }));
}

void MemoryView::ApplySummary(uint64_t generation, const std::shared_ptr<const Summary>& summary) {
  if (generation != summary_generation_) return;  // another profile or baseline meanwhile
  summary_pending_ = false;
  summary_text_ = summary->text;
  warning_text_ = summary->warnings;
  summary_->setText(summary_text_);
  warnings_->setText(warning_text_);
  warnings_->setVisible(!warning_text_.isEmpty());
}

void MemoryView::OnChartRendered() {
  QStringList items;
  if (const ChartPicture* pic = chart_->picture()) {
    for (const ChartSeries& s : pic->series) {
      items << QStringLiteral("<span style=\"color:%1\">&#9632;</span>&nbsp;%2")
                   .arg(s.color.name(), s.name.toHtmlEscaped());
    }
  }
  items << QStringLiteral("<b>—</b>&nbsp;live bytes")
        << QStringLiteral("<b>┈</b>&nbsp;each live value counted (XLA's measure)");
  legend_->setText(items.join(QStringLiteral(" &nbsp; ")));
  emit chartRendered();
}

void MemoryView::OnBufferClicked(const QModelIndex& index) {
  if (!index.isValid()) return;
  const QString name = buffer_model_->data(index, kInstructionRole).toString();
  if (!name.isEmpty()) emit instructionActivated(name);
}

bool MemoryView::IsRendering() const { return summary_pending_ || chart_->IsRendering(); }

QString MemoryView::MessageText() const {
  return state_ == State::kProfile ? QString() : message_->text();
}

QString MemoryView::SummaryText() const { return summary_text_; }

QString MemoryView::WarningText() const { return warning_text_; }

QStringList MemoryView::SeriesNames() const {
  QStringList out;
  if (const ChartPicture* pic = chart_->picture()) {
    for (const ChartSeries& s : pic->series) out << s.name;
  }
  return out;
}

QPoint MemoryView::ToChart(const QPoint& pos) const { return chart_->mapFrom(this, pos); }

QPoint MemoryView::FromChart(const QPoint& pos) const { return chart_->mapTo(this, pos); }

QPoint MemoryView::PeakPosition() const {
  const ChartPicture* pic = chart_->picture();
  if (pic == nullptr || pic->peak.x() < 0 || !chart_->isVisible()) return QPoint(-1, -1);
  return FromChart(chart_->FromPicture(pic->peak));
}

QPoint MemoryView::XlaPeakPosition() const {
  const ChartPicture* pic = chart_->picture();
  if (pic == nullptr || pic->xla_peak.x() < 0 || !chart_->isVisible()) return QPoint(-1, -1);
  return FromChart(chart_->FromPicture(pic->xla_peak));
}

QPoint MemoryView::PointPosition(int64_t point) const {
  const ChartPicture* pic = chart_->picture();
  if (pic == nullptr || !chart_->isVisible()) return QPoint(-1, -1);
  const int x = pic->XOf(point);
  if (x < 0) return QPoint(-1, -1);
  return FromChart(chart_->FromPicture(QPoint(x, pic->plot.center().y())));
}

int64_t MemoryView::PointAt(const QPoint& pos) const {
  if (!chart_->isVisible()) return -1;
  return chart_->PointAt(ToChart(pos));
}

QString MemoryView::ToolTipAt(const QPoint& pos) const {
  if (!chart_->isVisible()) return {};
  return chart_->TextAt(ToChart(pos));
}

void MemoryView::mousePressEvent(QMouseEvent* event) {
  const QPoint at = ToChart(event->position().toPoint());
  if (event->button() == Qt::LeftButton && chart_->isVisible() && chart_->rect().contains(at)) {
    chart_->Click(at);
    event->accept();
    return;
  }
  QWidget::mousePressEvent(event);
}

void MemoryView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if ((event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) &&
      profile_ != nullptr) {
    chart_->Invalidate();
  }
}

}  // namespace hlowb::viewer
