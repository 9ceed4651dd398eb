// The graph's cost overlay: colours the shown computation's nodes by a static cost metric
// (core/analysis/cost_overlay.h: flops, transcendentals, bytes accessed or an estimated time on
// the host CPU or an H100-class GPU) through the graph view's heat map, and fills the
// computations list's cost columns with every computation's totals.
//
// The numbers are computed on a worker thread; every change (computation, metric, device) starts
// a new run with a new generation and cancels the previous one, whose result, should it still
// arrive, is dropped. The UI thread only hands the finished map to the view.
//
// Sharing the heat map with the replay: while the metric is not Off the overlay owns the view's
// heat map and draws each result over whatever was there. Turning it Off (or showing no
// computation) clears the heat map only when the map shown is still the one the overlay drew
// (same legend); a heat map someone else drew since is left alone. overlayCleared() tells the
// owner of the other heat map that it may draw again.
#ifndef HLOWB_VIEWER_GRAPH_GRAPH_COST_OVERLAY_H_
#define HLOWB_VIEWER_GRAPH_GRAPH_COST_OVERLAY_H_

#include <QObject>
#include <QPointer>
#include <QString>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/analysis/cost_overlay.h"
#include "core/ir/computation.h"
#include "core/ir/module.h"

class QThreadPool;

namespace hlowb::viewer {

class ComputationsModel;
class GraphView;

class CostOverlayController : public QObject {
  Q_OBJECT

 public:
  // `view` must outlive the controller or be deleted with the same parent (it is watched).
  explicit CostOverlayController(GraphView* view, QObject* parent = nullptr);
  ~CostOverlayController() override;

  // The computation to colour (which belongs to `module`); nullptr for none. Keeps the module
  // alive while its instructions are in the heat map. Showing another module clears the map
  // drawn for the old one at once (its pointers must not reach the new graph).
  void SetComputation(std::shared_ptr<const Module> module, const Computation* computation);
  // The metric to colour by; kOff turns the overlay off (see the header comment).
  void SetMetric(CostMetric metric);
  // The device the estimated time is for (totals and the kEstimatedTime heat map).
  void SetDevice(const CostDevice& device);
  // Optional: a computations list whose cost columns follow the overlay (filled with each
  // result, emptied when it is turned off). The model must outlive the controller or share its
  // parent.
  void SetComputationsModel(ComputationsModel* model);

  CostMetric metric() const { return metric_; }
  const CostDevice& device() const { return device_; }
  const Computation* computation() const { return computation_; }
  // A run of the latest request is in flight.
  bool IsComputing() const { return computing_; }
  // The latest result drawn (nullptr before the first and after turning off).
  std::shared_ptr<const CostOverlay> overlay() const { return overlay_; }
  // The view's heat map is the one this overlay drew.
  bool OwnsHeatMap() const;
  // The error of the latest run (empty when it succeeded).
  QString last_error() const { return last_error_; }

 signals:
  // A result of the latest request: the module's computations' totals (and the rest).
  void totalsReady(std::shared_ptr<const hlowb::CostOverlay> overlay);
  // The result's heat map was handed to the view.
  void overlayApplied();
  // The overlay was turned off (or lost its computation) and cleared what it drew.
  void overlayCleared();
  // A run failed (bad input); the heat map is left as it was.
  void failed(const QString& message);

 private:
  // Starts a run for the current request (or none when off or without a computation).
  void Restart();
  // Drops the request in flight and what this overlay drew.
  void Stop();
  void Adopt(uint64_t generation, std::shared_ptr<const CostOverlay> overlay,
             const QString& error);
  void ClearOwnHeatMap();

  QPointer<GraphView> view_;
  QPointer<ComputationsModel> computations_model_;
  QThreadPool* pool_ = nullptr;
  std::shared_ptr<const Module> module_;
  const Computation* computation_ = nullptr;
  CostMetric metric_ = CostMetric::kOff;
  CostDevice device_;
  uint64_t generation_ = 0;
  std::shared_ptr<std::atomic<bool>> cancel_;  // of the run in flight
  bool computing_ = false;
  std::shared_ptr<const CostOverlay> overlay_;
  QString drawn_legend_;  // the legend text of the heat map this overlay drew; empty when none
  QString last_error_;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_GRAPH_GRAPH_COST_OVERLAY_H_
