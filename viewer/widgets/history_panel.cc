#include "viewer/widgets/history_panel.h"

#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QTableWidget>
#include <QVBoxLayout>

namespace hlowb::viewer {

HistoryPanel::HistoryPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(2);
  subject_ = new QLabel(this);
  subject_->setObjectName(QStringLiteral("historySubject"));
  subject_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  subject_->setWordWrap(true);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("historyMessage"));
  message_->setWordWrap(true);
  message_->hide();
  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("historyProgress"));
  progress_->setTextVisible(true);
  progress_->hide();
  table_ = new QTableWidget(0, 4, this);
  table_->setObjectName(QStringLiteral("historyTable"));
  table_->setHorizontalHeaderLabels({tr("State"), tr("Pass"), tr("Name"), tr("What happened")});
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setToolTip(tr("Click a state to show it with the instruction selected"));
  layout->addWidget(subject_);
  layout->addWidget(progress_);
  layout->addWidget(message_);
  layout->addWidget(table_, 1);
  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) {
    if (row < 0 || row >= static_cast<int>(rows_.size())) return;
    emit stateActivated(rows_[row].state, rows_[row].name);
  });
  connect(table_, &QTableWidget::cellActivated, this, [this](int row, int) {
    if (row < 0 || row >= static_cast<int>(rows_.size())) return;
    emit stateActivated(rows_[row].state, rows_[row].name);
  });
}

HistoryPanel::~HistoryPanel() = default;

void HistoryPanel::SetSubject(const QString& subject) { subject_->setText(subject); }

void HistoryPanel::SetProgress(const QString& what, int done, int total) {
  progress_->setRange(0, total);
  progress_->setValue(total > 0 ? done : 0);
  progress_->setFormat(total > 0 ? what + QStringLiteral(" %v/%m") : what);
  progress_->show();
}

void HistoryPanel::SetRows(std::vector<Row> rows) {
  progress_->hide();
  message_->hide();
  rows_ = std::move(rows);
  table_->setRowCount(static_cast<int>(rows_.size()));
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    const Row& row = rows_[r];
    const QString cells[4] = {row.label, row.pass, row.name.isEmpty() ? QStringLiteral("—") : row.name,
                              row.event};
    for (int c = 0; c < 4; ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (row.eventful) {
        QFont f = item->font();
        f.setBold(true);
        item->setFont(f);
      } else if (row.name.isEmpty()) {
        item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
      }
      table_->setItem(r, c, item);
    }
  }
  table_->resizeColumnsToContents();
}

void HistoryPanel::SetMessage(const QString& message) {
  progress_->hide();
  rows_.clear();
  table_->setRowCount(0);
  message_->setText(message);
  message_->setVisible(!message.isEmpty());
}

void HistoryPanel::Clear() {
  subject_->clear();
  SetMessage(QString());
}

bool HistoryPanel::busy() const { return progress_->isVisibleTo(this); }
QString HistoryPanel::subject() const { return subject_->text(); }
QString HistoryPanel::message() const { return message_->text(); }

}  // namespace hlowb::viewer
