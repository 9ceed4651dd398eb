#include "viewer/graph/graph_cost_overlay.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"

namespace hlowb::viewer {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

CostOverlayController::CostOverlayController(GraphView* view, QObject* parent)
    : QObject(parent), view_(view), pool_(new QThreadPool(this)) {
  // One run at a time: a newer request cancels the older one, which then ends quickly.
  pool_->setMaxThreadCount(1);
}

CostOverlayController::~CostOverlayController() {
  ++generation_;
  if (cancel_) cancel_->store(true);
  // The pool (a child) waits for a run in flight when it is deleted; cancelled, it ends soon.
}

void CostOverlayController::SetComputation(std::shared_ptr<const Module> module,
                                           const Computation* computation) {
  if (module.get() == module_.get() && computation == computation_) return;
  if (module.get() != module_.get()) {
    // The map names the old module's instructions: never let them reach another module's graph.
    ClearOwnHeatMap();
    overlay_.reset();
  }
  module_ = computation != nullptr ? std::move(module) : nullptr;
  computation_ = module_ ? computation : nullptr;
  if (computation_ == nullptr && metric_ != CostMetric::kOff) {
    Stop();
    emit overlayCleared();
    return;
  }
  Restart();
}

void CostOverlayController::SetMetric(CostMetric metric) {
  if (metric == metric_) return;
  metric_ = metric;
  if (metric_ == CostMetric::kOff) {
    Stop();
    if (computations_model_) computations_model_->SetCostTotals(nullptr, {});
    emit overlayCleared();
    return;
  }
  Restart();
}

void CostOverlayController::SetDevice(const CostDevice& device) {
  device_ = device;
  Restart();
}

void CostOverlayController::SetComputationsModel(ComputationsModel* model) {
  computations_model_ = model;
  if (model != nullptr && overlay_) {
    model->SetCostTotals(overlay_->module.get(), overlay_->all_totals,
                         Q(std::string(overlay_->device.Name())));
  }
}

bool CostOverlayController::OwnsHeatMap() const {
  return view_ && !drawn_legend_.isEmpty() && view_->HeatLegendText() == drawn_legend_;
}

void CostOverlayController::ClearOwnHeatMap() {
  if (OwnsHeatMap()) view_->ClearHeatMap();
  drawn_legend_.clear();
}

void CostOverlayController::Stop() {
  ++generation_;  // a result on its way is dropped
  if (cancel_) cancel_->store(true);
  cancel_.reset();
  computing_ = false;
  overlay_.reset();
  ClearOwnHeatMap();
}

void CostOverlayController::Restart() {
  const uint64_t generation = ++generation_;
  if (cancel_) cancel_->store(true);
  cancel_.reset();
  if (metric_ == CostMetric::kOff || !module_ || computation_ == nullptr) {
    computing_ = false;
    return;
  }
  computing_ = true;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  cancel_ = cancel;
  QPointer<CostOverlayController> self(this);
  // The run holds the module (and the flag) itself; the controller may be gone when it ends.
  (void)QtConcurrent::run(pool_, [self, generation, cancel, module = module_,
                                  computation = computation_, metric = metric_, device = device_] {
    absl::StatusOr<CostOverlay> result =
        ComputeCostOverlay(module, computation, metric, device, cancel.get());
    if (cancel->load()) return;  // superseded: nobody waits for it
    std::shared_ptr<const CostOverlay> overlay;
    QString error;
    if (result.ok()) {
      overlay = std::make_shared<const CostOverlay>(*std::move(result));
    } else {
      error = Q(std::string(result.status().message()));
    }
    // Posted to the application: the controller is checked on the UI thread, where it dies.
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [self, generation, overlay = std::move(overlay), error] {
          if (self) self->Adopt(generation, overlay, error);
        },
        Qt::QueuedConnection);
  });
}

void CostOverlayController::Adopt(uint64_t generation, std::shared_ptr<const CostOverlay> overlay,
                                  const QString& error) {
  if (generation != generation_ || metric_ == CostMetric::kOff) return;  // stale
  computing_ = false;
  cancel_.reset();
  if (!overlay) {
    last_error_ = error;
    emit failed(error);
    return;
  }
  last_error_.clear();
  overlay_ = overlay;
  if (computations_model_) {
    computations_model_->SetCostTotals(overlay->module.get(), overlay->all_totals,
                                       Q(std::string(overlay->device.Name())));
  }
  emit totalsReady(overlay);
  if (!view_) return;
  view_->SetHeatMap(overlay->heat, Q(overlay->title), Q(overlay->low), Q(overlay->high));
  drawn_legend_ = view_->HeatLegendText();
  emit overlayApplied();
}

}  // namespace hlowb::viewer
