// Help ▸ Keyboard Shortcuts: every key the window answers to, in one table. The window's own
// shortcuts are read from its actions when the table is made (so a new menu entry is listed
// without anyone remembering to add it); keys that views handle themselves (graph zoom, text
// links, find bars) come from a fixed list kept next to them here.
//
// It does not let the user rebind keys.
#ifndef HLOWB_APP_GUI_KEYBOARD_SHORTCUTS_H_
#define HLOWB_APP_GUI_KEYBOARD_SHORTCUTS_H_

#include <QString>
#include <vector>

class QDialog;
class QWidget;

namespace hlowb::gui {

struct ShortcutRow {
  QString keys;     // "Ctrl+Shift+H", several sequences joined by ", "
  QString command;  // "Show History"
  QString where;    // "View ▸ Theme", "Graph", "Text"
};

// The shortcuts of every action under `window` (menus, toolbars, bars; in menu order), then the
// keys and mouse gestures the graph, text and properties views handle themselves.
std::vector<ShortcutRow> KeyboardShortcuts(const QWidget& window);

// A non-modal dialog (object name "keyboardShortcuts") with KeyboardShortcuts(window) in a table
// (object name "shortcutsTable") and a filter field; deleted when closed.
QDialog* MakeKeyboardShortcutsDialog(QWidget* window);

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_KEYBOARD_SHORTCUTS_H_
