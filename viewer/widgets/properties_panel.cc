// The panel is a two-column tree (property, value) with one section per group. Operands,
// users, control edges and called computations are links: a click (or Enter) on one emits
// instructionActivated — for a called computation, with its root instruction. Backend configs
// that parse as JSON are shown indented; anything else verbatim. Ctrl+C copies the selected
// rows as "key: value" lines; the context menu also copies everything.
#include "viewer/widgets/properties_panel.h"

#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QKeyEvent>
#include <QLocale>
#include <QMenu>
#include <QSet>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/analysis/cost_model.h"
#include "core/ir/computation.h"
#include "core/ir/opcode.h"
#include "core/ir/primitive_type.h"
#include "core/text/printer.h"
#include "viewer/graph/sharding_info.h"

namespace hlowb::viewer {
namespace {

enum ItemRole {
  kInstructionRole = Qt::UserRole + 1,  // quintptr of the Instruction a row links to
  kPlainKeyRole,                        // the key used in PlainText()
};

QString Q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString Count(int64_t n) { return QLocale::system().toString(static_cast<qlonglong>(n)); }

// "8,192 (8.19 K)" for large numbers; plain for small ones.
QString Quantity(int64_t n) {
  if (n < 10000) return Count(n);
  return QStringLiteral("%1 (%2)").arg(Count(n), QString::fromStdString(CountMagnitude(n)));
}

QString Bytes(int64_t n) {
  if (n < 1024) return QStringLiteral("%1 B").arg(n);
  return QStringLiteral("%1 B (%2)").arg(
      Count(n), QLocale::system().formattedDataSize(n, 1, QLocale::DataSizeIecFormat));
}

// Splits ", key=value, key=value" at top level (outside braces, brackets, parens and strings).
std::vector<std::pair<std::string, std::string>> SplitAttributes(std::string_view s) {
  std::vector<std::pair<std::string, std::string>> out;
  int depth = 0;
  bool quoted = false;
  size_t item_start = 0;
  auto flush = [&](size_t end) {
    std::string_view item = s.substr(item_start, end - item_start);
    while (!item.empty() && (item.front() == ',' || item.front() == ' ')) item.remove_prefix(1);
    if (item.empty()) return;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      out.emplace_back(std::string(item), std::string());
    } else {
      out.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    }
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == '{' || c == '[' || c == '(') {
      ++depth;
    } else if (c == '}' || c == ']' || c == ')') {
      --depth;
    } else if (c == ',' && depth == 0) {
      flush(i);
      item_start = i;
    }
  }
  flush(s.size());
  return out;
}

// Attributes shown in their own sections (or as links) rather than under "Attributes".
bool ShownElsewhere(std::string_view key) {
  return key == "metadata" || key == "backend_config" || key == "sharding" ||
         key == "frontend_attributes" || key == "control-predecessors" || key == "calls" ||
         key == "to_apply" || key == "body" || key == "condition" || key == "true_computation" ||
         key == "false_computation" || key == "branch_computations" ||
         key == "called_computations" || key == "select" || key == "scatter";
}

QString CalledRole(const Instruction& instr, int i) {
  switch (instr.opcode()) {
    case Opcode::kWhile: return i == 0 ? QStringLiteral("condition") : QStringLiteral("body");
    case Opcode::kConditional: return QStringLiteral("branch %1").arg(i);
    case Opcode::kFusion:
    case Opcode::kAsyncStart: return QStringLiteral("calls");
    case Opcode::kSelectAndScatter: return i == 0 ? QStringLiteral("select") : QStringLiteral("scatter");
    default: return instr.called_computations().size() == 1 ? QStringLiteral("to_apply")
                                                             : QStringLiteral("called %1").arg(i);
  }
}

class PropertiesTree : public QTreeWidget {
 public:
  using QTreeWidget::QTreeWidget;
  std::function<void()> copy_selected;

 protected:
  bool event(QEvent* event) override {
    // Ctrl+C copies rows here even when the window has a Copy action of its own.
    if (event->type() == QEvent::ShortcutOverride && copy_selected &&
        static_cast<QKeyEvent*>(event)->matches(QKeySequence::Copy)) {
      event->accept();
      return true;
    }
    return QTreeWidget::event(event);
  }
  void keyPressEvent(QKeyEvent* event) override {
    if (event->matches(QKeySequence::Copy) && copy_selected) {
      copy_selected();
      event->accept();
      return;
    }
    QTreeWidget::keyPressEvent(event);
  }
};

}  // namespace

class PropertiesPanel::Impl {
 public:
  explicit Impl(PropertiesPanel* q);

  void Rebuild();
  QTreeWidgetItem* Section(const QString& title);
  QTreeWidgetItem* Row(QTreeWidgetItem* section, const QString& key, const QString& value,
                       const QString& plain_key = QString());
  QTreeWidgetItem* Link(QTreeWidgetItem* section, const QString& key, const Instruction* target,
                        const QString& plain_key, const QString& extra = QString());
  QTreeWidgetItem* Block(QTreeWidgetItem* section, const QString& plain_key, const QString& text);
  void AddMetadata(const Instruction& instr);
  void AddSharding(const Instruction& instr);
  // Rows of one decoded sharding under `parent`; plain keys start with `prefix`.
  void AddDecodedSharding(QTreeWidgetItem* parent, const graph::DecodedSharding& d,
                          const QString& prefix);
  void AddStackFrames(QTreeWidgetItem* section, int32_t frame_id);
  void Activate(QTreeWidgetItem* item);
  QString ItemLine(const QTreeWidgetItem* item) const;

  PropertiesPanel* q;
  PropertiesTree* tree = nullptr;
  std::shared_ptr<const Module> module;
  const Instruction* instruction = nullptr;
  QString ghost_status;  // non-empty: `instruction` is a removed one, from another state
  std::unique_ptr<CostModel> cost_model;  // per module (caches computation totals)
  // Whether `module` is a per-partition program (computed once per module).
  const Module* partitioning_of = nullptr;
  graph::ModulePartitioning partitioning;
  QSet<QString> collapsed;                // section titles the user collapsed
  bool rebuilding = false;
};

PropertiesPanel::Impl::Impl(PropertiesPanel* panel) : q(panel) {
  auto* layout = new QVBoxLayout(q);
  layout->setContentsMargins(0, 0, 0, 0);
  tree = new PropertiesTree(q);
  tree->setObjectName(QStringLiteral("propertiesTree"));
  tree->setColumnCount(2);
  tree->setHeaderLabels({PropertiesPanel::tr("Property"), PropertiesPanel::tr("Value")});
  tree->setUniformRowHeights(false);
  tree->setRootIsDecorated(true);
  tree->setAlternatingRowColors(true);
  tree->setSelectionMode(QAbstractItemView::ExtendedSelection);
  tree->setTextElideMode(Qt::ElideMiddle);
  tree->setContextMenuPolicy(Qt::CustomContextMenu);
  tree->header()->setSectionResizeMode(0, QHeaderView::Interactive);
  tree->header()->setStretchLastSection(true);
  tree->setColumnWidth(0, 140);
  layout->addWidget(tree);

  tree->copy_selected = [this] {
    QStringList lines;
    for (QTreeWidgetItem* item : tree->selectedItems()) {
      const QString line = ItemLine(item);
      if (!line.isEmpty()) lines << line;
    }
    if (!lines.isEmpty()) QApplication::clipboard()->setText(lines.join(QLatin1Char('\n')));
  };
  QObject::connect(tree, &QTreeWidget::itemClicked, q,
                   [this](QTreeWidgetItem* item, int) { Activate(item); });
  QObject::connect(tree, &QTreeWidget::itemActivated, q,
                   [this](QTreeWidgetItem* item, int) { Activate(item); });
  QObject::connect(tree, &QWidget::customContextMenuRequested, q, [this](const QPoint& pos) {
    QMenu menu;
    QAction* copy = menu.addAction(PropertiesPanel::tr("Copy"));
    copy->setShortcut(QKeySequence::Copy);
    copy->setEnabled(!tree->selectedItems().isEmpty());
    QObject::connect(copy, &QAction::triggered, q, [this] { tree->copy_selected(); });
    QAction* all = menu.addAction(PropertiesPanel::tr("Copy all"));
    all->setEnabled(instruction != nullptr);
    QObject::connect(all, &QAction::triggered, q,
                     [this] { QApplication::clipboard()->setText(q->PlainText()); });
    menu.exec(tree->viewport()->mapToGlobal(pos));
  });
}

QTreeWidgetItem* PropertiesPanel::Impl::Section(const QString& title) {
  auto* item = new QTreeWidgetItem(tree, {title});
  QFont font = item->font(0);
  font.setBold(true);
  item->setFont(0, font);
  item->setFirstColumnSpanned(true);
  item->setFlags(Qt::ItemIsEnabled);
  return item;
}

QTreeWidgetItem* PropertiesPanel::Impl::Row(QTreeWidgetItem* section, const QString& key,
                                            const QString& value, const QString& plain_key) {
  auto* item = new QTreeWidgetItem(section, {key, value});
  item->setData(0, kPlainKeyRole, plain_key.isEmpty() ? key : plain_key);
  item->setToolTip(1, value.size() > 60 ? value.left(2000) : QString());
  return item;
}

QTreeWidgetItem* PropertiesPanel::Impl::Link(QTreeWidgetItem* section, const QString& key,
                                             const Instruction* target, const QString& plain_key,
                                             const QString& extra) {
  QString value = QStringLiteral("%") + Q(target->name());
  if (!extra.isEmpty()) value += QStringLiteral("  ") + extra;
  QTreeWidgetItem* item = Row(section, key, value, plain_key);
  item->setData(0, kInstructionRole, QVariant::fromValue(reinterpret_cast<quintptr>(target)));
  QFont font = item->font(1);
  font.setUnderline(true);
  item->setFont(1, font);
  item->setForeground(1, tree->palette().brush(QPalette::Link));
  item->setToolTip(1, PropertiesPanel::tr("Go to %1 (%2)")
                          .arg(Q(target->name()), Q(OpcodeName(target->opcode()))));
  return item;
}

QTreeWidgetItem* PropertiesPanel::Impl::Block(QTreeWidgetItem* section, const QString& plain_key,
                                              const QString& text) {
  auto* item = new QTreeWidgetItem(section, {text});
  item->setData(0, kPlainKeyRole, plain_key);
  item->setData(1, Qt::UserRole, text);
  item->setFirstColumnSpanned(true);
  item->setFont(0, QFontDatabase::systemFont(QFontDatabase::FixedFont));
  return item;
}

QString PropertiesPanel::Impl::ItemLine(const QTreeWidgetItem* item) const {
  const QString key = item->data(0, kPlainKeyRole).toString();
  if (key.isEmpty()) return QString();
  const QVariant block = item->data(1, Qt::UserRole);
  return key + QStringLiteral(": ") + (block.isValid() ? block.toString() : item->text(1));
}

void PropertiesPanel::Impl::Activate(QTreeWidgetItem* item) {
  if (item == nullptr) return;
  const QVariant v = item->data(0, kInstructionRole);
  if (!v.isValid()) return;
  const auto* target = reinterpret_cast<const Instruction*>(v.value<quintptr>());
  if (target != nullptr) emit q->instructionActivated(target);
}

void PropertiesPanel::Impl::AddStackFrames(QTreeWidgetItem* section, int32_t frame_id) {
  if (!module) return;
  const StackFrameIndex& sf = module->stack_frames();
  int depth = 0;
  // Ids are 1-based; a frame's parent id 0 means none. Bound the walk against cycles.
  while (frame_id > 0 && frame_id <= static_cast<int32_t>(sf.stack_frames.size()) &&
         depth < 256) {
    const StackFrame& frame = sf.stack_frames[frame_id - 1];
    QString where = QStringLiteral("?");
    if (frame.file_location_id > 0 &&
        frame.file_location_id <= static_cast<int32_t>(sf.file_locations.size())) {
      const FileLocation& loc = sf.file_locations[frame.file_location_id - 1];
      const QString file = loc.file_name_id > 0 &&
                                   loc.file_name_id <= static_cast<int32_t>(sf.file_names.size())
                               ? Q(sf.file_names[loc.file_name_id - 1])
                               : QStringLiteral("?");
      const QString function =
          loc.function_name_id > 0 &&
                  loc.function_name_id <= static_cast<int32_t>(sf.function_names.size())
              ? Q(sf.function_names[loc.function_name_id - 1])
              : QString();
      where = QStringLiteral("%1:%2").arg(file).arg(loc.line);
      if (loc.column > 0) where += QStringLiteral(":%1").arg(loc.column);
      if (!function.isEmpty()) where += QStringLiteral("  ") + function;
    }
    Row(section, QStringLiteral("frame %1").arg(depth), where,
        QStringLiteral("stack frame %1").arg(depth));
    const int32_t parent = frame.parent_frame_id;
    if (parent >= frame_id && parent != 0) break;  // parents come first; anything else loops
    frame_id = parent;
    ++depth;
  }
}

void PropertiesPanel::Impl::AddMetadata(const Instruction& instr) {
  const OpMetadata* m = instr.metadata();
  if (m == nullptr || m->empty()) return;
  QTreeWidgetItem* s = Section(PropertiesPanel::tr("Metadata"));
  if (!m->op_name.empty()) Row(s, QStringLiteral("op_name"), Q(m->op_name));
  if (!m->op_type.empty()) Row(s, QStringLiteral("op_type"), Q(m->op_type));
  if (!m->source_file.empty() || m->source_line != 0) {
    QString source = Q(m->source_file);
    if (m->source_line != 0) source += QStringLiteral(":%1").arg(m->source_line);
    if (m->source_column != 0) source += QStringLiteral(":%1").arg(m->source_column);
    if (m->source_end_line != 0 && m->source_end_line != m->source_line) {
      source += QStringLiteral(" \u2013 %1").arg(m->source_end_line);
    }
    Row(s, QStringLiteral("source"), source);
  }
  if (!m->deduplicated_name.empty()) Row(s, QStringLiteral("deduplicated_name"), Q(m->deduplicated_name));
  if (!m->scheduling_name.empty()) Row(s, QStringLiteral("scheduling_name"), Q(m->scheduling_name));
  if (!m->profile_type.empty()) {
    QStringList types;
    for (int64_t t : m->profile_type) types << QString::number(t);
    Row(s, QStringLiteral("profile_type"), types.join(QStringLiteral(", ")));
  }
  if (m->preserve_layout) Row(s, QStringLiteral("preserve_layout"), QStringLiteral("true"));
  if (m->stack_frame_id != 0) {
    Row(s, QStringLiteral("stack_frame_id"), QString::number(m->stack_frame_id));
    if (module && !module->stack_frames().empty()) {
      QTreeWidgetItem* frames = Row(s, PropertiesPanel::tr("stack frames"), QString(), QString());
      frames->setData(0, kPlainKeyRole, QString());  // the frames below carry the text
      AddStackFrames(frames, m->stack_frame_id);
      const int n = frames->childCount();
      frames->setText(1, n == 1 ? PropertiesPanel::tr("1 frame") : PropertiesPanel::tr("%1 frames").arg(n));
      frames->setExpanded(true);
    }
  }
}

void PropertiesPanel::Impl::AddDecodedSharding(QTreeWidgetItem* parent,
                                               const graph::DecodedSharding& d,
                                               const QString& prefix) {
  using graph::ShardingKind;
  auto row = [&](const QString& key, const QString& value) {
    return Row(parent, key, value, prefix + key);
  };
  auto join = [](const std::vector<int64_t>& v) {
    QStringList parts;
    for (int64_t x : v) parts << QString::number(x);
    return parts.join(QLatin1Char(','));
  };
  row(QStringLiteral("kind"), Q(graph::ShardingKindName(d.kind)));
  if (d.kind == ShardingKind::kInvalid) {
    QTreeWidgetItem* error = row(QStringLiteral("error"), Q(d.error));
    error->setForeground(1, QColor(0xC6, 0x28, 0x28));
    return;
  }
  if (d.kind == ShardingKind::kUndecoded) {
    row(QStringLiteral("form"),
        PropertiesPanel::tr("not decoded by this version: %1").arg(Q(d.text)));
    return;
  }
  if (d.kind == ShardingKind::kTuple) {
    row(QStringLiteral("elements"), QString::number(d.elements.size()));
    for (size_t i = 0; i < d.elements.size(); ++i) {
      const graph::DecodedSharding& e = d.elements[i];
      const QString key = QStringLiteral("element %1").arg(i);
      QTreeWidgetItem* item = Row(parent, key, Q(e.text), prefix + key);
      AddDecodedSharding(item, e, prefix + key + QLatin1Char(' '));
      item->setExpanded(d.elements.size() <= 8);
    }
    return;
  }
  switch (d.kind) {
    case ShardingKind::kReplicated:
      row(QStringLiteral("meaning"), PropertiesPanel::tr("every device holds all of it"));
      break;
    case ShardingKind::kMaximal:
      row(QStringLiteral("device"), QString::number(d.device));
      row(QStringLiteral("meaning"),
          PropertiesPanel::tr("device %1 holds all of it").arg(d.device));
      break;
    case ShardingKind::kManual:
      row(QStringLiteral("meaning"),
          PropertiesPanel::tr("partitioned by the program itself: each device holds its own data "
                              "of this shape"));
      break;
    case ShardingKind::kUnknown:
      row(QStringLiteral("meaning"),
          PropertiesPanel::tr("left for sharding propagation to decide"));
      break;
    case ShardingKind::kUnreduced:
      row(QStringLiteral("meaning"),
          PropertiesPanel::tr("each device holds a partial result not yet reduced"));
      break;
    default:
      break;
  }
  if (d.kind == ShardingKind::kTiled || d.kind == ShardingKind::kPartiallyReplicated) {
    QStringList per_dim;
    for (size_t i = 0; i < d.data_tiles.size(); ++i) {
      per_dim << PropertiesPanel::tr("dimension %1 in %2").arg(i).arg(d.data_tiles[i]);
    }
    const QString split =
        per_dim.isEmpty()
            ? QString()
            : QStringLiteral(" (") + per_dim.join(QStringLiteral(", ")) + QLatin1Char(')');
    row(QStringLiteral("tile grid"), QStringLiteral("[%1]%2").arg(join(d.grid), split));
    if (!d.subgroups.empty()) {
      QStringList groups;
      for (const graph::ShardingSubgroup& g : d.subgroups) {
        const char* name = g.type == SubgroupType::kReplicated ? "replicated"
                           : g.type == SubgroupType::kManual   ? "manual"
                           : g.type == SubgroupType::kUnreduced ? "unreduced"
                                                               : "maximal";
        groups << QStringLiteral("%1 \u00d7%2").arg(QLatin1String(name)).arg(g.size);
      }
      row(QStringLiteral("subgroups"), groups.join(QStringLiteral(", ")));
    }
    if (d.last_tile_dim_replicate) {
      row(QStringLiteral("last_tile_dim_replicate"),
          PropertiesPanel::tr("true: the last grid dimension (%1) replicates each tile")
              .arg(d.grid.back()));
    }
    if (!d.iota.empty()) {
      row(QStringLiteral("iota"), Q(d.iota));
      row(QStringLiteral("iota means"), Q(d.iota_meaning));
    }
    row(QStringLiteral("devices"), QString::number(d.num_devices));
    if (d.replication > 1) {
      row(QStringLiteral("replication"),
          PropertiesPanel::tr("each tile on %1 devices").arg(d.replication));
    }
    if (d.devices.empty()) {
      row(QStringLiteral("device list"),
          PropertiesPanel::tr("%1 devices: too many to list").arg(d.num_devices));
    } else {
      QString list = join(d.devices);
      if (d.devices.size() > 1024) {
        list = join(std::vector<int64_t>(d.devices.begin(), d.devices.begin() + 1024)) +
               PropertiesPanel::tr(",\u2026 (%1 in all)").arg(d.devices.size());
      }
      row(QStringLiteral("device list"), list);
      // Which devices hold each tile of the data.
      constexpr size_t kMaxTiles = 64;
      const std::vector<graph::ShardingTile> tiles = graph::ShardingTiles(d, kMaxTiles);
      int64_t tile_count = 1;
      for (int64_t t : d.data_tiles) tile_count *= t;
      QTreeWidgetItem* grid = row(QStringLiteral("device grid"),
                                  PropertiesPanel::tr("%1 tiles").arg(tile_count));
      for (const graph::ShardingTile& t : tiles) {
        const QString key = QStringLiteral("tile [%1]").arg(join(t.index));
        const QString holders = t.devices.size() == 1 ? PropertiesPanel::tr("device %1")
                                                       : PropertiesPanel::tr("devices %1");
        Row(grid, key, holders.arg(join(t.devices)), prefix + key);
      }
      if (tile_count > static_cast<int64_t>(tiles.size())) {
        const int64_t more = tile_count - static_cast<int64_t>(tiles.size());
        Row(grid, QStringLiteral("\u2026"), PropertiesPanel::tr("%1 more tiles").arg(more),
            prefix + QStringLiteral("more tiles"));
      }
      grid->setExpanded(tiles.size() <= 16);
    }
  }
  if (!d.full_shape.empty()) {
    row(QStringLiteral("per-partition shape"), Q(d.shard_shape));
    if (d.full_shape != d.shard_shape) row(QStringLiteral("full shape"), Q(d.full_shape));
  } else if (!d.shard_shape.empty()) {
    row(QStringLiteral("per-device shape"), Q(d.shard_shape));
    if (!d.padding.empty()) row(QStringLiteral("padding"), Q(d.padding));
  }
  if (!d.shard_group.empty()) row(QStringLiteral("shard group"), Q(d.shard_group));
  if (!d.metadata.empty()) row(QStringLiteral("sharding metadata"), Q(d.metadata));
}

void PropertiesPanel::Impl::AddSharding(const Instruction& instr) {
  if (module && partitioning_of != module.get()) {
    partitioning = graph::PartitioningOf(*module);
    partitioning_of = module.get();
  }
  const bool per_partition = module && partitioning.per_partition_program;
  if (instr.sharding() == nullptr && !per_partition) return;
  QTreeWidgetItem* sh = Section(PropertiesPanel::tr("Sharding"));
  if (per_partition) {
    Row(sh, QStringLiteral("program"),
        PropertiesPanel::tr("per-partition program (%1 partitions): the shapes are each "
                            "partition's")
            .arg(partitioning.num_partitions));
  }
  if (instr.sharding() == nullptr) {
    Row(sh, QStringLiteral("per-partition shape"), Q(PrintShape(instr.shape(), false)));
    return;
  }
  Row(sh, QStringLiteral("sharding"), Q(PrintSharding(*instr.sharding())));
  AddDecodedSharding(sh, graph::DecodeInstructionSharding(instr, per_partition), QString());
}

void PropertiesPanel::Impl::Rebuild() {
  rebuilding = true;
  tree->setUpdatesEnabled(false);
  tree->clear();
  if (instruction == nullptr) {
    tree->setUpdatesEnabled(true);
    rebuilding = false;
    return;
  }
  const Instruction& instr = *instruction;
  const Shape& shape = instr.shape();

  // Instruction.
  QTreeWidgetItem* s = Section(PropertiesPanel::tr("Instruction"));
  if (!ghost_status.isEmpty()) {
    QTreeWidgetItem* status = Row(s, QStringLiteral("status"), ghost_status);
    QFont bold = status->font(1);
    bold.setBold(true);
    status->setFont(1, bold);
  }
  Row(s, QStringLiteral("name"), Q(instr.name()));
  Row(s, QStringLiteral("opcode"), Q(OpcodeName(instr.opcode())));
  if (instr.parent() != nullptr) {
    Row(s, QStringLiteral("computation"),
        Q(instr.parent()->name()) + (instr.IsRoot() ? PropertiesPanel::tr("  (root)") : QString()));
  }
  Row(s, QStringLiteral("shape"), Q(PrintShape(shape, true)));
  if (shape.IsArray()) {
    Row(s, QStringLiteral("element type"), Q(PrimitiveTypeName(shape.element_type())));
    if (shape.has_layout()) {
      Row(s, QStringLiteral("layout"), Q(PrintLayout(shape.layout())));
    } else {
      Row(s, QStringLiteral("layout"), PropertiesPanel::tr("(none)"));
    }
    Row(s, QStringLiteral("elements"), Count(std::max<int64_t>(shape.ElementCount(), 0)));
  } else if (shape.IsTuple()) {
    Row(s, QStringLiteral("tuple elements"), QString::number(shape.tuple_count()));
  }
  Row(s, QStringLiteral("size"), Bytes(ShapeByteSize(shape)));
  if (instr.opcode() == Opcode::kParameter) {
    Row(s, QStringLiteral("parameter"), QString::number(instr.parameter_number()));
  }
  if (instr.opcode() == Opcode::kConstant && instr.literal() != nullptr) {
    QString value = Q(PrintLiteralData(*instr.literal()));
    if (value.size() > 400) value = value.left(400) + QStringLiteral(" \u2026");
    Row(s, QStringLiteral("value"), value);
  }

  // Operands and users.
  if (instr.operand_count() > 0) {
    QTreeWidgetItem* ops = Section(PropertiesPanel::tr("Operands (%1)").arg(instr.operand_count()));
    for (int i = 0; i < instr.operand_count(); ++i) {
      const Instruction* op = instr.operand(i);
      if (op != nullptr) {
        Link(ops, QStringLiteral("#%1").arg(i), op, QStringLiteral("operand %1").arg(i),
             Q(PrintShape(op->shape(), true)));
      }
    }
  }
  std::vector<const Instruction*> users;
  std::vector<const Instruction*> control_successors;
  if (instr.parent() != nullptr) {
    for (const Instruction* other : instr.parent()->instructions()) {
      for (const Instruction* op : other->operands()) {
        if (op == &instr) {
          users.push_back(other);
          break;
        }
      }
      for (const Instruction* p : other->control_predecessors()) {
        if (p == &instr) {
          control_successors.push_back(other);
          break;
        }
      }
    }
  }
  QTreeWidgetItem* us = Section(PropertiesPanel::tr("Users (%1)").arg(users.size()));
  if (users.empty()) {
    Row(us, QStringLiteral("users"),
        instr.IsRoot() ? PropertiesPanel::tr("none (root)") : PropertiesPanel::tr("none"));
  }
  for (size_t i = 0; i < users.size(); ++i) {
    Link(us, QStringLiteral("#%1").arg(i), users[i], QStringLiteral("user %1").arg(i),
         Q(OpcodeName(users[i]->opcode())));
  }
  if (!instr.control_predecessors().empty() || !control_successors.empty()) {
    QTreeWidgetItem* cs = Section(PropertiesPanel::tr("Control dependencies"));
    int i = 0;
    for (const Instruction* p : instr.control_predecessors()) {
      Link(cs, PropertiesPanel::tr("after"), p, QStringLiteral("control predecessor %1").arg(i++));
    }
    i = 0;
    for (const Instruction* p : control_successors) {
      Link(cs, PropertiesPanel::tr("before"), p, QStringLiteral("control successor %1").arg(i++));
    }
  }

  // Called computations (a click goes to the computation's root).
  const auto& called = instr.called_computations();
  if (!called.empty()) {
    QTreeWidgetItem* cc = Section(PropertiesPanel::tr("Called computations"));
    for (int i = 0; i < static_cast<int>(called.size()); ++i) {
      const Computation* c = called[i];
      if (c == nullptr) continue;
      const QString role = CalledRole(instr, i);
      const int n = c->instruction_count();
      const QString text = Q(c->name()) + (n == 1 ? PropertiesPanel::tr("  (1 instruction)")
                                                  : PropertiesPanel::tr("  (%1 instructions)").arg(n));
      if (c->root() != nullptr) {
        QTreeWidgetItem* item = Link(cc, role, c->root(), role);
        item->setText(1, text);
        item->setToolTip(1, PropertiesPanel::tr("Go to the root of %1").arg(Q(c->name())));
      } else {
        Row(cc, role, text);
      }
    }
  }

  AddMetadata(instr);

  AddSharding(instr);

  if (!instr.backend_config().empty()) {
    QTreeWidgetItem* bc = Section(PropertiesPanel::tr("Backend config"));
    const QByteArray raw = QByteArray::fromStdString(instr.backend_config());
    QJsonParseError error;
    const QJsonDocument json = QJsonDocument::fromJson(raw, &error);
    if (error.error == QJsonParseError::NoError && !json.isNull()) {
      QString pretty = QString::fromUtf8(json.toJson(QJsonDocument::Indented)).trimmed();
      Block(bc, QStringLiteral("backend_config"), pretty);
    } else {
      Block(bc, QStringLiteral("backend_config"), QString::fromUtf8(raw));
    }
  }

  if (instr.frontend_attributes() != nullptr && !instr.frontend_attributes()->entries.empty()) {
    QTreeWidgetItem* fa = Section(PropertiesPanel::tr("Frontend attributes"));
    for (const FrontendAttributes::Entry& e : instr.frontend_attributes()->entries) {
      Row(fa, Q(e.key), Q(e.value));
    }
  }

  // Everything else the printer writes for this instruction.
  {
    const std::string signature = InstructionAttributeSignature(instr);
    // Skip the payload "(...)": operand count, literal or parameter number.
    size_t start = 0;
    if (!signature.empty() && signature[0] == '(') {
      int depth = 0;
      bool quoted = false;
      for (size_t i = 0; i < signature.size(); ++i) {
        const char c = signature[i];
        if (quoted) {
          if (c == '\\') ++i;
          else if (c == '"') quoted = false;
          continue;
        }
        if (c == '"') quoted = true;
        if (c == '(' || c == '{' || c == '[') ++depth;
        if (c == ')' || c == '}' || c == ']') {
          if (--depth == 0 && c == ')') {
            start = i + 1;
            break;
          }
        }
      }
    }
    std::vector<std::pair<std::string, std::string>> attrs;
    for (auto& kv : SplitAttributes(std::string_view(signature).substr(start))) {
      if (!ShownElsewhere(kv.first)) attrs.push_back(std::move(kv));
    }
    if (!attrs.empty()) {
      QTreeWidgetItem* at = Section(PropertiesPanel::tr("Attributes"));
      for (const auto& [key, value] : attrs) Row(at, Q(key), Q(value));
    }
  }

  // Cost estimate.
  {
    if (!cost_model) cost_model = std::make_unique<CostModel>();
    const Cost cost = cost_model->InstructionCost(instr);
    QTreeWidgetItem* cs = Section(PropertiesPanel::tr("Cost estimate"));
    Row(cs, QStringLiteral("flops"), Quantity(cost.flops));
    if (cost.transcendentals > 0) {
      Row(cs, QStringLiteral("transcendentals"), Quantity(cost.transcendentals));
    }
    Row(cs, QStringLiteral("bytes accessed"), Bytes(cost.bytes_accessed()));
    Row(cs, QStringLiteral("bytes read"), Bytes(cost.operand_bytes));
    Row(cs, QStringLiteral("bytes written"), Bytes(cost.result_bytes));
    if (cost.bytes_accessed() > 0 && cost.flops > 0) {
      Row(cs, QStringLiteral("intensity"),
          PropertiesPanel::tr("%1 flops/byte")
              .arg(QString::number(static_cast<double>(cost.flops) /
                                       static_cast<double>(cost.bytes_accessed()),
                                   'g', 3)));
    }
    if (instr.opcode() == Opcode::kFusion || instr.opcode() == Opcode::kWhile ||
        instr.opcode() == Opcode::kCall || instr.opcode() == Opcode::kConditional) {
      cs->setToolTip(0, PropertiesPanel::tr(
                            "Flops include the called computations (loop bodies once); bytes "
                            "are this instruction's own operands and result."));
    }
  }

  for (int i = 0; i < tree->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = tree->topLevelItem(i);
    // Titles like "Operands (3)" are remembered without their count.
    item->setExpanded(!collapsed.contains(item->text(0).section(QLatin1String(" ("), 0, 0)));
  }
  tree->resizeColumnToContents(0);
  tree->setColumnWidth(0, std::clamp(tree->columnWidth(0), 110, 260));
  tree->setUpdatesEnabled(true);
  rebuilding = false;
}

PropertiesPanel::PropertiesPanel(QWidget* parent)
    : QWidget(parent), impl_(std::make_unique<Impl>(this)) {
  QObject::connect(impl_->tree, &QTreeWidget::itemCollapsed, this, [this](QTreeWidgetItem* item) {
    if (!impl_->rebuilding && item->parent() == nullptr) {
      impl_->collapsed.insert(item->text(0).section(QLatin1String(" ("), 0, 0));
    }
  });
  QObject::connect(impl_->tree, &QTreeWidget::itemExpanded, this, [this](QTreeWidgetItem* item) {
    if (!impl_->rebuilding && item->parent() == nullptr) {
      impl_->collapsed.remove(item->text(0).section(QLatin1String(" ("), 0, 0));
    }
  });
  setFocusProxy(impl_->tree);
}

PropertiesPanel::~PropertiesPanel() = default;

void PropertiesPanel::SetInstruction(std::shared_ptr<const Module> module,
                                     const Instruction* instruction) {
  if (module.get() != impl_->module.get()) {
    impl_->cost_model.reset();
    impl_->partitioning_of = nullptr;
  }
  impl_->module = std::move(module);
  impl_->instruction = instruction;
  impl_->ghost_status.clear();
  impl_->Rebuild();
}

void PropertiesPanel::SetGhost(std::shared_ptr<const Module> base, const Instruction* instruction,
                               const QString& status) {
  if (base.get() != impl_->module.get()) {
    impl_->cost_model.reset();
    impl_->partitioning_of = nullptr;
  }
  impl_->module = std::move(base);
  impl_->instruction = instruction;
  impl_->ghost_status = status;
  impl_->Rebuild();
}

QString PropertiesPanel::ghost_status() const { return impl_->ghost_status; }

void PropertiesPanel::Clear() {
  impl_->ghost_status.clear();
  impl_->instruction = nullptr;
  impl_->module.reset();
  impl_->cost_model.reset();
  impl_->partitioning_of = nullptr;
  impl_->Rebuild();
}

const Instruction* PropertiesPanel::instruction() const { return impl_->instruction; }

QString PropertiesPanel::PlainText() const {
  QStringList lines;
  std::function<void(const QTreeWidgetItem*)> walk = [&](const QTreeWidgetItem* item) {
    const QString line = impl_->ItemLine(item);
    if (!line.isEmpty()) lines << line;
    for (int i = 0; i < item->childCount(); ++i) walk(item->child(i));
  };
  for (int i = 0; i < impl_->tree->topLevelItemCount(); ++i) walk(impl_->tree->topLevelItem(i));
  return lines.join(QLatin1Char('\n'));
}

QTreeWidget* PropertiesPanel::tree() const { return impl_->tree; }

QTreeWidgetItem* PropertiesPanel::FindRow(const QString& plain_key) const {
  QTreeWidgetItem* found = nullptr;
  std::function<void(QTreeWidgetItem*)> walk = [&](QTreeWidgetItem* item) {
    if (found != nullptr) return;
    if (item->data(0, kPlainKeyRole).toString() == plain_key) {
      found = item;
      return;
    }
    for (int i = 0; i < item->childCount(); ++i) walk(item->child(i));
  };
  for (int i = 0; i < impl_->tree->topLevelItemCount() && found == nullptr; ++i) {
    walk(impl_->tree->topLevelItem(i));
  }
  return found;
}

}  // namespace hlowb::viewer
