#include "viewer/text/find_field.h"

#include <QEvent>
#include <QKeyEvent>
#include <QKeySequence>

namespace hlowb::viewer {

namespace {

bool IsOwnKey(const QKeyEvent* e) {
  return e->matches(QKeySequence::Find) || e->matches(QKeySequence::FindNext) ||
         e->matches(QKeySequence::FindPrevious) || e->key() == Qt::Key_Escape ||
         e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter;
}

}  // namespace

bool FindField::event(QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride && IsOwnKey(static_cast<QKeyEvent*>(event))) {
    event->accept();
    return true;
  }
  return QLineEdit::event(event);
}

void FindField::keyPressEvent(QKeyEvent* event) {
  if ((event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) && find) {
    find((event->modifiers() & Qt::ShiftModifier) != 0);
  } else if (event->matches(QKeySequence::FindNext) && find) {
    find(false);
  } else if (event->matches(QKeySequence::FindPrevious) && find) {
    find(true);
  } else if (event->matches(QKeySequence::Find)) {
    selectAll();
  } else if (event->key() == Qt::Key_Escape && leave) {
    leave();
  } else {
    QLineEdit::keyPressEvent(event);
    return;
  }
  event->accept();
}

}  // namespace hlowb::viewer
