// An event-loop latency probe for the offscreen GUI tests: a 10 ms timer that records the
// longest gap between its ticks and the most UI-thread CPU time spent within one gap. Each
// maximum remembers the phase the test had set when it occurred.
//
// The gap leaves out the time the UI thread was runnable but waiting for a CPU (the kernel's
// per-thread run-queue wait, /proc/thread-self/schedstat), so other processes holding both
// cores do not count as the UI thread blocking; where that file is missing the gap is the
// wall-clock gap and tests fall back to MachineOverloaded().
#ifndef HLOWB_TESTS_GUI_LATENCY_PROBE_H_
#define HLOWB_TESTS_GUI_LATENCY_PROBE_H_

#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <cstdio>
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

// The calling thread's total time waiting for a CPU while runnable, in ms, from the kernel's
// scheduler statistics; false where they cannot be read.
inline bool ReadRunQueueWait(double* waiting_ms) {
  FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
  if (f == nullptr) return false;
  unsigned long long run_ns = 0, wait_ns = 0;
  const bool ok = std::fscanf(f, "%llu %llu", &run_ns, &wait_ns) == 2;
  std::fclose(f);
  if (ok) *waiting_ms = static_cast<double>(wait_ns) / 1e6;
  return ok;
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
    has_schedstat_ = ReadRunQueueWait(&last_wait_);
    timer_.start();
  }
  void Stop() {
    Tick();
    timer_.stop();
  }
  void SetPhase(const QString& phase) { phase_ = phase; }

  // The longest gap between ticks less the time the UI thread waited for a CPU.
  qint64 max_gap() const { return max_gap_; }
  // The longest wall-clock gap between ticks, waiting for a CPU included.
  qint64 max_wall_gap() const { return max_wall_gap_; }
  // Whether max_gap() leaves out run-queue waits (the scheduler statistics were readable).
  bool excludes_cpu_waits() const { return has_schedstat_; }
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
    double waited = 0;
    if (has_schedstat_) {
      double wait = 0;
      if (ReadRunQueueWait(&wait)) {
        waited = std::max(0.0, wait - last_wait_);
        last_wait_ = wait;
      }
    }
    max_wall_gap_ = std::max(max_wall_gap_, now - last_);
    const qint64 own = std::max<qint64>(0, now - last_ - static_cast<qint64>(waited));
    if (own > max_gap_) {
      max_gap_ = own;
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
  qint64 max_wall_gap_ = 0;
  bool has_schedstat_ = false;
  double last_wait_ = 0;
  double max_cpu_gap_ = 0;
  QString phase_;
  QString worst_;
  QString worst_cpu_;
};

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_GUI_LATENCY_PROBE_H_
