// The properties panel: everything known about one instruction — opcode, shape and layout,
// operands and users (clickable), metadata (op_name, op_type, source file:line, stack frames),
// sharding decoded (kind, tile grid, devices with iota forms expanded, subgroups, the shape each
// device holds, per tuple element; in a per-partition program, each partition's shape),
// backend_config pretty-printed as JSON, frontend attributes, other attributes, and a cost
// estimate (flops, bytes).
//
// It shows; it does not edit. Callers keep the module alive while an instruction is shown.
#ifndef HLOWB_VIEWER_WIDGETS_PROPERTIES_PANEL_H_
#define HLOWB_VIEWER_WIDGETS_PROPERTIES_PANEL_H_

#include <QWidget>
#include <memory>

#include "core/ir/instruction.h"
#include "core/ir/module.h"

class QTreeWidget;
class QTreeWidgetItem;

namespace hlowb::viewer {

class PropertiesPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PropertiesPanel(QWidget* parent = nullptr);
  ~PropertiesPanel() override;

  void SetInstruction(std::shared_ptr<const Module> module, const Instruction* instruction);
  // An instruction that is not in the shown state (removed by it, shown from the state it was
  // compared with): its properties under a first "status" row saying so (`status`, e.g.
  // "removed (fused into fusion.2)"). SetInstruction and Clear end it.
  void SetGhost(std::shared_ptr<const Module> base, const Instruction* instruction,
                const QString& status);
  // The ghost's status; empty when an instruction of the shown state is shown.
  QString ghost_status() const;
  void Clear();
  const Instruction* instruction() const;
  // "key: value" lines of what is shown (for tests and copy).
  QString PlainText() const;

  // Additions beyond the pinned API (for tests): the tree shown, and the row whose
  // PlainText() key is `plain_key` ("opcode", "operand 0", "user 1", "op_name", "flops", ...).
  QTreeWidget* tree() const;
  QTreeWidgetItem* FindRow(const QString& plain_key) const;

 signals:
  // The user clicked an operand or user.
  void instructionActivated(const hlowb::Instruction* instruction);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_WIDGETS_PROPERTIES_PANEL_H_
