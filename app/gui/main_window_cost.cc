// MainWindow: the cost overlay. View ▸ Colour by Cost fills the graph's nodes by a static
// estimate of each instruction's flops, transcendentals, bytes accessed or time on a chosen
// device (core/analysis/cost_overlay.h, computed off the UI thread by the viewer's
// CostOverlayController) and adds the per-computation totals to the computations list. The
// overlay follows the shown computation. It and the replay's heat map share the graph's one
// heat map: whichever the user chose last draws, and turning the overlay off brings the
// replay's back.
#include <QActionGroup>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>

#include "app/gui/main_window.h"
#include "core/analysis/cost_overlay.h"
#include "viewer/graph/graph_cost_overlay.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/widgets/replay_panel.h"

namespace hlowb::gui {

namespace {

constexpr char kMetricKey[] = "view/costMetric";
constexpr char kDeviceKey[] = "view/costDevice";

}  // namespace

void MainWindow::BuildCostOverlay(QMenu* view) {
  cost_overlay_ = new viewer::CostOverlayController(graph_, this);
  cost_overlay_->SetComputationsModel(computations_model_);
  QMenu* menu = view->addMenu(tr("Colour by &Cost"));
  menu->setObjectName(QStringLiteral("costMenu"));
  menu->setToolTip(tr("Fill each node by the cost model's estimate (log scale) and add the "
                      "totals per computation to the computations list"));
  auto* metrics = new QActionGroup(this);
  const std::pair<CostMetric, const char*> kMetrics[] = {
      {CostMetric::kOff, "costOff"},
      {CostMetric::kFlops, "costFlops"},
      {CostMetric::kTranscendentals, "costTranscendentals"},
      {CostMetric::kBytesAccessed, "costBytes"},
      {CostMetric::kEstimatedTime, "costTime"}};
  const CostMetric saved =
      CostMetricFromKey(QSettings().value(kMetricKey).toString().toStdString())
          .value_or(CostMetric::kOff);
  for (const auto& [metric, name] : kMetrics) {
    QAction* a = menu->addAction(metric == CostMetric::kOff
                                     ? tr("&Off")
                                     : QString::fromStdString(std::string(CostMetricName(metric))));
    a->setObjectName(QString::fromLatin1(name));
    a->setCheckable(true);
    a->setChecked(metric == saved);
    metrics->addAction(a);
    connect(a, &QAction::triggered, this, [this, metric = metric] { SetCostMetric(metric); });
    cost_actions_.push_back({metric, a});
  }
  menu->addSeparator();
  auto* devices = new QActionGroup(this);
  const bool gpu = QSettings().value(kDeviceKey).toString() == QLatin1String("gpu");
  for (const CostDevice& device : {CostDevice::Cpu(), CostDevice::Gpu()}) {
    QAction* a = menu->addAction(QString::fromStdString(std::string(device.Name())));
    const bool is_gpu = device.kind == CostDevice::Kind::kGpu;
    a->setObjectName(is_gpu ? QStringLiteral("costDeviceGpu") : QStringLiteral("costDeviceCpu"));
    a->setCheckable(true);
    a->setChecked(is_gpu == gpu);
    a->setToolTip(tr("Estimated time: a roofline of this device's rates"));
    devices->addAction(a);
    connect(a, &QAction::triggered, this, [this, device] {
      cost_overlay_->SetDevice(device);
      QSettings().setValue(kDeviceKey, device.kind == CostDevice::Kind::kGpu
                                           ? QStringLiteral("gpu")
                                           : QStringLiteral("cpu"));
    });
  }
  cost_overlay_->SetDevice(gpu ? CostDevice::Gpu() : CostDevice::Cpu());
  cost_overlay_->SetMetric(saved);
  // Turning the overlay off (or a module change clearing it) gives the heat map back to the
  // replay's results, if any.
  connect(cost_overlay_, &viewer::CostOverlayController::overlayCleared, this, [this] {
    if (replay_panel_ != nullptr) ApplyHeatMap(replay_panel_->heat_metric());
  });
  connect(cost_overlay_, &viewer::CostOverlayController::failed, this,
          [this](const QString& message) {
            statusBar()->showMessage(tr("Cost overlay: %1").arg(message), 8000);
          });
}

void MainWindow::SetCostMetric(CostMetric metric) {
  for (const auto& [m, action] : cost_actions_) {
    if (m == metric && !action->isChecked()) action->setChecked(true);
  }
  QSettings().setValue(kMetricKey, QString::fromStdString(std::string(CostMetricKey(metric))));
  cost_overlay_->SetMetric(metric);
}

CostMetric MainWindow::cost_metric() const {
  return cost_overlay_ != nullptr ? cost_overlay_->metric() : CostMetric::kOff;
}

}  // namespace hlowb::gui
