// An event-loop latency probe for the offscreen GUI tests: a 10 ms timer that records the
// longest wall-clock gap between its ticks and, to tell the UI thread's own blocking from an
// overloaded machine's scheduling, the most UI-thread CPU time spent within one gap. Each
// maximum remembers the phase the test had set when it occurred.
#ifndef HLOWB_TESTS_GUI_LATENCY_PROBE_H_
#define HLOWB_TESTS_GUI_LATENCY_PROBE_H_

#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <ctime>

namespace hlowb::testing {

inline double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The 1-minute load average (runnable processes), 0 when unknown.
inline double SystemLoad() {
  QFile f("/proc/loadavg");
  if (!f.open(QIODevice::ReadOnly)) return 0;
  return f.readLine().split(' ').value(0).toDouble();
}

class LatencyProbe {
 public:
  LatencyProbe() {
    timer_.setInterval(10);
    QObject::connect(&timer_, &QTimer::timeout, [this] { Tick(); });
  }
  void Start() {
    clock_.start();
    last_ = clock_.elapsed();
    last_cpu_ = ThreadCpuMs();
    timer_.start();
  }
  void Stop() {
    Tick();
    timer_.stop();
  }
  void SetPhase(const QString& phase) { phase_ = phase; }

  qint64 max_gap() const { return max_gap_; }
  double max_cpu_gap() const { return max_cpu_gap_; }
  const QString& worst() const { return worst_; }
  const QString& worst_cpu() const { return worst_cpu_; }
  // Whether other processes may explain a long wall-clock gap (more runnable than CPUs).
  static bool MachineOverloaded() {
    return SystemLoad() > std::max(1, QThread::idealThreadCount());
  }

 private:
  void Tick() {
    const qint64 now = clock_.elapsed();
    const double cpu = ThreadCpuMs();
    if (now - last_ > max_gap_) {
      max_gap_ = now - last_;
      worst_ = phase_;
    }
    if (cpu - last_cpu_ > max_cpu_gap_) {
      max_cpu_gap_ = cpu - last_cpu_;
      worst_cpu_ = phase_;
    }
    last_ = now;
    last_cpu_ = cpu;
  }

  QTimer timer_;
  QElapsedTimer clock_;
  qint64 last_ = 0;
  double last_cpu_ = 0;
  qint64 max_gap_ = 0;
  double max_cpu_gap_ = 0;
  QString phase_;
  QString worst_;
  QString worst_cpu_;
};

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_GUI_LATENCY_PROBE_H_
