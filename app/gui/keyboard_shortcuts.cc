#include "app/gui/keyboard_shortcuts.h"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QKeySequence>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QTableWidget>
#include <QToolBar>
#include <QVBoxLayout>
#include <QWidget>

namespace hlowb::gui {
namespace {

QString Plain(QString text) {
  // "&Open File…" -> "Open File…" ("&&" is a literal ampersand).
  text.replace(QLatin1String("&&"), QString(QChar(0x1)));
  text.remove(QLatin1Char('&'));
  text.replace(QChar(0x1), QLatin1Char('&'));
  return text;
}

QString MenuPath(const QMenu* menu) {
  QString path = Plain(menu->title());
  for (const QWidget* w = menu->parentWidget(); w != nullptr; w = w->parentWidget()) {
    if (const auto* parent = qobject_cast<const QMenu*>(w)) {
      path = Plain(parent->title()) + QStringLiteral(" \u25B8 ") + path;
    }
  }
  return path;
}

QString Where(const QAction* action) {
  for (const QObject* o : action->associatedObjects()) {
    if (const auto* menu = qobject_cast<const QMenu*>(o)) return MenuPath(menu);
  }
  for (const QObject* o : action->associatedObjects()) {
    if (const auto* bar = qobject_cast<const QToolBar*>(o)) {
      return QObject::tr("%1 bar").arg(Plain(bar->windowTitle()));
    }
  }
  for (const QObject* o = action->parent(); o != nullptr; o = o->parent()) {
    if (const auto* w = qobject_cast<const QWidget*>(o); w && !w->windowTitle().isEmpty()) {
      return Plain(w->windowTitle());
    }
  }
  return QObject::tr("Window");
}

// Menu-bar order: the menus left to right, each top to bottom (submenus in place).
void CollectMenu(const QMenu* menu, std::vector<const QAction*>* out) {
  for (const QAction* a : menu->actions()) {
    if (a->menu() != nullptr) {
      CollectMenu(a->menu(), out);
    } else {
      out->push_back(a);
    }
  }
}

}  // namespace

std::vector<ShortcutRow> KeyboardShortcuts(const QWidget& window) {
  std::vector<const QAction*> actions;
  for (const QMenuBar* bar : window.findChildren<QMenuBar*>()) {
    for (const QAction* a : bar->actions()) {
      if (a->menu() != nullptr) CollectMenu(a->menu(), &actions);
    }
  }
  for (const QAction* a : window.findChildren<QAction*>()) actions.push_back(a);

  std::vector<ShortcutRow> rows;
  QSet<const QAction*> seen;
  for (const QAction* a : actions) {
    if (seen.contains(a)) continue;
    seen.insert(a);
    const QList<QKeySequence> keys = a->shortcuts();
    if (keys.isEmpty()) continue;
    QStringList texts;
    for (const QKeySequence& k : keys) {
      if (!k.isEmpty()) texts << k.toString(QKeySequence::NativeText);
    }
    if (texts.isEmpty()) continue;
    QString command = Plain(a->text());
    command.remove(QChar(0x2026));  // "Find…" reads as "Find" in a list
    rows.push_back({texts.join(QStringLiteral(", ")), command.trimmed(), Where(a)});
  }

  // Keys the views handle themselves (graph_canvas.cc, hlo_text_editor.cc, hlo_text_view.cc,
  // properties_panel.cc).
  auto key = [](const QKeySequence& k) { return k.toString(QKeySequence::NativeText); };
  const QString graph = QObject::tr("Graph"), text = QObject::tr("Text"),
                properties = QObject::tr("Properties");
  const std::vector<ShortcutRow> views = {
      {QObject::tr("Ctrl+Wheel"), QObject::tr("Zoom at the pointer"), graph},
      {key(QKeySequence(Qt::CTRL | Qt::Key_Equal)) + QStringLiteral(", ") +
           key(QKeySequence(Qt::CTRL | Qt::Key_Minus)),
       QObject::tr("Zoom in, zoom out (graph focused)"), graph},
      {key(QKeySequence(Qt::CTRL | Qt::Key_0)), QObject::tr("Fit the graph to the view"), graph},
      {key(QKeySequence(Qt::Key_F3)) + QStringLiteral(", ") +
           key(QKeySequence(Qt::SHIFT | Qt::Key_F3)),
       QObject::tr("Next, previous search match"), graph},
      {QObject::tr("Drag"), QObject::tr("Pan; in the overview map, move the view"), graph},
      {QObject::tr("Click"), QObject::tr("Select an instruction (in every view)"), graph},
      {QObject::tr("Double-click"), QObject::tr("Expand or collapse a fusion or call"), graph},
      {key(QKeySequence(Qt::Key_F2)) + QStringLiteral(", ") + key(QKeySequence(Qt::Key_Return)),
       QObject::tr("Go to the name under the cursor"), text},
      {key(QKeySequence(Qt::ALT | Qt::Key_Left)) + QStringLiteral(", ") +
           key(QKeySequence(Qt::ALT | Qt::Key_Right)),
       QObject::tr("Back, forward"), text},
      {key(QKeySequence::Find) + QStringLiteral(", ") + key(QKeySequence::FindNext) +
           QStringLiteral(", ") + key(QKeySequence::FindPrevious),
       QObject::tr("Find in the text, next, previous (text focused)"), text},
      {key(QKeySequence(Qt::Key_Escape)), QObject::tr("Close the find bar"), text},
      {key(QKeySequence::Find) + QStringLiteral(", ") + key(QKeySequence(Qt::Key_Return)) +
           QStringLiteral(", ") + key(QKeySequence(Qt::SHIFT | Qt::Key_Return)),
       QObject::tr("Search the artifact in front, next, previous match"), QObject::tr("Artifact")},
      {QObject::tr("Click"), QObject::tr("On an instruction or fusion name: select it in the HLO"),
       QObject::tr("Artifact")},
      {key(QKeySequence::Copy), QObject::tr("Copy the selected rows"), properties},
  };
  rows.insert(rows.end(), views.begin(), views.end());
  return rows;
}

QDialog* MakeKeyboardShortcutsDialog(QWidget* window) {
  auto* dialog = new QDialog(window);
  dialog->setObjectName(QStringLiteral("keyboardShortcuts"));
  dialog->setWindowTitle(QObject::tr("Keyboard Shortcuts"));
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  auto* layout = new QVBoxLayout(dialog);
  auto* filter = new QLineEdit;
  filter->setObjectName(QStringLiteral("shortcutsFilter"));
  filter->setPlaceholderText(QObject::tr("Filter by key or command"));
  filter->setClearButtonEnabled(true);
  layout->addWidget(filter);
  const std::vector<ShortcutRow> rows = KeyboardShortcuts(*window);
  auto* table = new QTableWidget(static_cast<int>(rows.size()), 3);
  table->setObjectName(QStringLiteral("shortcutsTable"));
  table->setHorizontalHeaderLabels(
      {QObject::tr("Keys"), QObject::tr("Command"), QObject::tr("Where")});
  table->verticalHeader()->hide();
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
    table->setItem(r, 0, new QTableWidgetItem(rows[r].keys));
    table->setItem(r, 1, new QTableWidgetItem(rows[r].command));
    table->setItem(r, 2, new QTableWidgetItem(rows[r].where));
  }
  table->resizeColumnsToContents();
  table->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(table, 1);
  QObject::connect(filter, &QLineEdit::textChanged, table, [table](const QString& query) {
    for (int r = 0; r < table->rowCount(); ++r) {
      bool match = query.isEmpty();
      for (int c = 0; c < 3 && !match; ++c) {
        match = table->item(r, c)->text().contains(query, Qt::CaseInsensitive);
      }
      table->setRowHidden(r, !match);
    }
  });
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
  layout->addWidget(buttons);
  dialog->resize(640, 560);
  return dialog;
}

}  // namespace hlowb::gui
