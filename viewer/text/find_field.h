// The search field of the text views (the HLO text's find bar, an artifact tab's search box):
// Enter / F3 find the next match, Shift+Enter / Shift+F3 the previous one, Ctrl+F selects what
// is typed, Escape leaves. It keeps these keys from window-wide shortcuts while it has focus.
#ifndef HLOWB_VIEWER_TEXT_FIND_FIELD_H_
#define HLOWB_VIEWER_TEXT_FIND_FIELD_H_

#include <QLineEdit>
#include <functional>

class QKeyEvent;

namespace hlowb::viewer {

class FindField : public QLineEdit {
 public:
  using QLineEdit::QLineEdit;
  // Called for Enter / F3 (false) and Shift+Enter / Shift+F3 (true).
  std::function<void(bool backwards)> find;
  // Called for Escape (closing the bar, or going back to the text).
  std::function<void()> leave;

 protected:
  bool event(QEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_FIND_FIELD_H_
