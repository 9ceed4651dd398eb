#include "core/analysis/diff.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/analysis/fingerprint.h"
#include "core/support/json.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {

std::string_view DiffKindName(DiffKind kind) {
  switch (kind) {
    case DiffKind::kUnchanged: return "unchanged";
    case DiffKind::kChanged: return "changed";
    case DiffKind::kAdded: return "added";
    case DiffKind::kRemoved: return "removed";
  }
  return "";
}

std::string_view MatchReasonName(MatchReason reason) {
  switch (reason) {
    case MatchReason::kNone: return "none";
    case MatchReason::kName: return "name";
    case MatchReason::kStructure: return "structure";
    case MatchReason::kSimilarity: return "similarity";
  }
  return "";
}

namespace {

std::string_view NameStem(std::string_view name) {
  size_t dot = name.find('.');
  return dot == std::string_view::npos ? name : name.substr(0, dot);
}

class Differ {
 public:
  Differ(const Module& a, const Module& b) : a_(a), b_(b) {}

  ModuleDiff Run() {
    for (const auto& c : a_.computations()) {
      for (const Instruction* i : c->instructions()) sig_a_[i] = HashString(InstructionSignature(*i));
    }
    for (const auto& c : b_.computations()) {
      for (const Instruction* i : c->instructions()) sig_b_[i] = HashString(InstructionSignature(*i));
    }
    MatchComputations();
    ModuleDiff diff;
    for (auto& [ca, cb] : comp_pairs_) diff.computations.push_back(BuildRows(ca, cb));
    for (const auto& c : a_.computations()) {
      if (!comp_a_to_b_.contains(c.get())) diff.computations.push_back(BuildRows(c.get(), nullptr));
    }
    for (const auto& c : b_.computations()) {
      if (!comp_b_to_a_.contains(c.get())) diff.computations.push_back(BuildRows(nullptr, c.get()));
    }
    // Present computations in B's definition order, removed ones last.
    absl::flat_hash_map<const Computation*, int> order;
    for (size_t i = 0; i < b_.computations().size(); ++i) order[b_.computations()[i].get()] = static_cast<int>(i);
    std::stable_sort(diff.computations.begin(), diff.computations.end(),
                     [&](const ComputationDiff& x, const ComputationDiff& y) {
                       int ox = x.b ? order[x.b] : 1 << 30;
                       int oy = y.b ? order[y.b] : 1 << 30;
                       return ox < oy;
                     });
    for (const ComputationDiff& c : diff.computations) {
      for (const InstructionDiff& r : c.rows) {
        switch (r.kind) {
          case DiffKind::kUnchanged: ++diff.counts.unchanged; break;
          case DiffKind::kChanged: ++diff.counts.changed; break;
          case DiffKind::kAdded: ++diff.counts.added; break;
          case DiffKind::kRemoved: ++diff.counts.removed; break;
        }
        if (r.a && r.b && r.a->name() != r.b->name()) ++diff.counts.renamed;
      }
    }
    NoteFusedAway(&diff);
    a_to_b_out_ = std::move(a_to_b_);
    b_to_a_out_ = std::move(b_to_a_);
    return diff;
  }

  absl::flat_hash_map<const Instruction*, const Instruction*> a_to_b_out_, b_to_a_out_;

 private:
  // A removed instruction that reappears inside the computation of a fusion of B — a new
  // fusion, or an existing one that grew — was fused into it. Its twin there is an instruction
  // that has no match in A, of the same opcode and shape, that reads what the removed one read
  // (fusion parameters standing for its matched operands, or the twins of its removed
  // operands), with the same metadata or name stem. The best-scoring twin not already taken
  // wins; XLA duplicates cheap producers into several fusions, so a taken one still counts
  // when nothing else fits.
  void NoteFusedAway(ModuleDiff* diff) {
    struct Candidate {
      const Instruction* inst;
      const Instruction* fusion;
    };
    auto key = [](const Instruction* i) {
      uint64_t h = HashCombine(static_cast<uint64_t>(i->opcode()),
                               static_cast<uint64_t>(i->shape().element_type()));
      for (int64_t d : i->shape().dimensions()) h = HashCombine(h, static_cast<uint64_t>(d));
      return h;
    };
    // By opcode and shape, and again by op_name too: big fusion passes remove thousands of
    // instructions, and comparing each with every candidate of its shape would be quadratic.
    absl::flat_hash_map<uint64_t, std::vector<Candidate>> candidates, by_op_name;
    auto named_key = [&key](const Instruction* i) -> std::optional<uint64_t> {
      const OpMetadata* md = i->metadata();
      if (md == nullptr || md->op_name.empty()) return std::nullopt;
      return HashCombine(key(i), HashString(md->op_name));
    };
    for (const auto& c : b_.computations()) {
      for (const Instruction* f : c->instructions()) {
        if (f->opcode() != Opcode::kFusion) continue;
        for (const Computation* fc : f->called_computations()) {
          if (!fc) continue;
          for (const Instruction* i : fc->instructions()) {
            if (i->opcode() == Opcode::kParameter || b_to_a_.contains(i)) continue;
            candidates[key(i)].push_back({i, f});
            if (auto k = named_key(i)) by_op_name[*k].push_back({i, f});
          }
        }
      }
    }
    if (candidates.empty()) return;
    absl::flat_hash_map<const Instruction*, InstructionDiff*> removed;
    for (ComputationDiff& c : diff->computations) {
      for (InstructionDiff& r : c.rows) {
        if (r.kind == DiffKind::kRemoved && r.a) removed[r.a] = &r;
      }
    }
    absl::flat_hash_map<const Instruction*, Candidate> twin;  // removed A -> where it went in B
    absl::flat_hash_set<const Instruction*> taken;
    // In A's order, so that operands find their twins before their users.
    for (const auto& c : a_.computations()) {
      for (const Instruction* x : c->instructions()) {
        auto r = removed.find(x);
        if (r == removed.end()) continue;
        const Candidate* best = nullptr;
        const std::vector<Candidate>* list = nullptr;
        if (auto k = named_key(x)) {
          if (auto named = by_op_name.find(*k); named != by_op_name.end()) list = &named->second;
        }
        if (list == nullptr) {
          if (auto all = candidates.find(key(x)); all != candidates.end()) list = &all->second;
        }
        if (list == nullptr) {
          // A fusion merged into another: it went where its fused root went.
          if (x->opcode() == Opcode::kFusion && !x->called_computations().empty() &&
              x->called_computations()[0] != nullptr) {
            auto t = twin.find(x->called_computations()[0]->root());
            if (t != twin.end()) {
              r->second->fused_into = t->second.fusion;
              r->second->fused_as = t->second.inst;
              twin.emplace(x, t->second);
            }
          }
          continue;
        }
        int best_score = 0;
        for (const Candidate& y : *list) {
          if (y.inst->opcode() != x->opcode() || !y.inst->shape().Compatible(x->shape())) continue;
          int score = TwinScore(*x, *y.inst, *y.fusion, twin);
          if (score <= 0) continue;
          if (taken.contains(y.inst)) score -= 4;  // another removed instruction's twin already
          if (best == nullptr || score > best_score) {
            best = &y;
            best_score = score;
          }
        }
        if (best == nullptr) continue;
        r->second->fused_into = best->fusion;
        r->second->fused_as = best->inst;
        twin.emplace(x, *best);
        taken.insert(best->inst);
      }
    }
  }

  // How much speaks for `y` (inside the computation `fusion` calls) being removed `x`: 0 when
  // nothing does.
  template <typename TwinMap>
  int TwinScore(const Instruction& x, const Instruction& y, const Instruction& fusion,
                const TwinMap& twin) const {
    int score = 0;
    const int n = std::min(x.operand_count(), y.operand_count());
    for (int k = 0; k < n; ++k) {
      const Instruction* xo = x.operand(k);
      const Instruction* yo = y.operand(k);
      if (yo->opcode() == Opcode::kParameter && yo->parameter_number() < fusion.operand_count()) {
        // A parameter of the fused computation: the fusion's operand stands for it.
        const Instruction* outside = fusion.operand(static_cast<int>(yo->parameter_number()));
        auto m = a_to_b_.find(xo);
        if (m != a_to_b_.end() && m->second == outside) score += 3;
        auto t = twin.find(xo);
        if (t != twin.end() && t->second.fusion == outside) score += 3;
      } else if (auto t = twin.find(xo); t != twin.end() && t->second.inst == yo) {
        score += 3;
      } else if (xo->opcode() == yo->opcode()) {
        score += 1;
      }
    }
    const OpMetadata* mx = x.metadata();
    const OpMetadata* my = y.metadata();
    if (mx && my && !mx->op_name.empty() && mx->op_name == my->op_name) {
      score += 2;
      if (mx->source_line != 0 && mx->source_line == my->source_line) score += 1;
    }
    if (NameStem(x.name()) == NameStem(y.name())) score += 1;
    if (sig_a_.at(&x) == sig_b_.at(&y)) score += 1;
    return score;
  }

  void PairComputations(const Computation* ca, const Computation* cb) {
    if (comp_a_to_b_.contains(ca) || comp_b_to_a_.contains(cb)) return;
    comp_a_to_b_[ca] = cb;
    comp_b_to_a_[cb] = ca;
    comp_pairs_.emplace_back(ca, cb);
  }

  void MatchComputations() {
    absl::flat_hash_map<std::string, const Computation*> b_by_name;
    for (const auto& c : b_.computations()) b_by_name[c->name()] = c.get();
    if (a_.entry() && b_.entry()) PairComputations(a_.entry(), b_.entry());
    for (const auto& c : a_.computations()) {
      auto it = b_by_name.find(c->name());
      if (it != b_by_name.end()) PairComputations(c.get(), it->second);
    }
    // Match instructions in paired computations; matched callers pair their callees.
    for (size_t done = 0; done < comp_pairs_.size(); ++done) {
      auto [ca, cb] = comp_pairs_[done];
      MatchInstructions(*ca, *cb);
      for (const Instruction* ia : ca->instructions()) {
        auto it = a_to_b_.find(ia);
        if (it == a_to_b_.end()) continue;
        const auto& called_a = ia->called_computations();
        const auto& called_b = it->second->called_computations();
        for (size_t k = 0; k < std::min(called_a.size(), called_b.size()); ++k) {
          if (called_a[k] && called_b[k]) PairComputations(called_a[k], called_b[k]);
        }
      }
    }
  }

  void Pair(const Instruction* a, const Instruction* b, MatchReason reason) {
    a_to_b_[a] = b;
    b_to_a_[b] = a;
    reason_[b] = reason;
  }

  void MatchInstructions(const Computation& ca, const Computation& cb) {
    // 1. By name.
    absl::flat_hash_map<std::string_view, const Instruction*> a_by_name;
    for (const Instruction* i : ca.instructions()) a_by_name[i->name()] = i;
    for (const Instruction* ib : cb.instructions()) {
      auto it = a_by_name.find(ib->name());
      if (it != a_by_name.end() && !a_to_b_.contains(it->second)) Pair(it->second, ib, MatchReason::kName);
    }
    // Parameters by number.
    for (int p = 0; p < std::min(ca.parameter_count(), cb.parameter_count()); ++p) {
      const Instruction* pa = ca.parameter(p);
      const Instruction* pb = cb.parameter(p);
      if (pa && pb && !a_to_b_.contains(pa) && !b_to_a_.contains(pb)) Pair(pa, pb, MatchReason::kStructure);
    }
    // 2. By structure: equal signature and operands that are matched to each other. Repeat
    // until nothing new matches, so chains of renamed instructions resolve in order.
    for (bool progress = true; progress;) {
      progress = false;
      absl::flat_hash_map<uint64_t, std::vector<const Instruction*>> a_by_key;
      for (const Instruction* ia : ca.instructions()) {
        if (a_to_b_.contains(ia)) continue;
        a_by_key[StructureKey(ia, sig_a_, nullptr)].push_back(ia);
      }
      for (const Instruction* ib : cb.instructions()) {
        if (b_to_a_.contains(ib)) continue;
        bool ok = true;
        uint64_t key = StructureKey(ib, sig_b_, &ok);
        if (!ok) continue;
        auto it = a_by_key.find(key);
        if (it == a_by_key.end()) continue;
        for (const Instruction*& candidate : it->second) {
          if (candidate && !a_to_b_.contains(candidate)) {
            Pair(candidate, ib, MatchReason::kStructure);
            candidate = nullptr;
            progress = true;
            break;
          }
        }
      }
    }
    // 3. By similarity: greedy best pairs among what is left.
    std::vector<const Instruction*> left_a, left_b;
    for (const Instruction* i : ca.instructions()) {
      if (!a_to_b_.contains(i)) left_a.push_back(i);
    }
    for (const Instruction* i : cb.instructions()) {
      if (!b_to_a_.contains(i)) left_b.push_back(i);
    }
    if (left_a.empty() || left_b.empty() || left_a.size() * left_b.size() > 4'000'000) return;
    struct Candidate {
      double score;
      size_t ia, ib;
    };
    std::vector<Candidate> candidates;
    for (size_t x = 0; x < left_a.size(); ++x) {
      for (size_t y = 0; y < left_b.size(); ++y) {
        // Different opcodes are only ever matched by name: similarity would pair unrelated
        // instructions that happen to share operands (an add and the fusion replacing it).
        if (left_a[x]->opcode() != left_b[y]->opcode()) continue;
        double s = Similarity(*left_a[x], *left_b[y]);
        if (s >= 3.0) candidates.push_back({s, x, y});
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& p, const Candidate& q) { return p.score > q.score; });
    for (const Candidate& c : candidates) {
      if (a_to_b_.contains(left_a[c.ia]) || b_to_a_.contains(left_b[c.ib])) continue;
      Pair(left_a[c.ia], left_b[c.ib], MatchReason::kSimilarity);
    }
  }

  // Signature hash combined with the identities of the operands, expressed in A's terms (for
  // B instructions, through the match; ok=false when an operand is not matched yet).
  uint64_t StructureKey(const Instruction* i,
                        const absl::flat_hash_map<const Instruction*, uint64_t>& sigs, bool* ok) {
    uint64_t h = sigs.at(i);
    for (const Instruction* op : i->operands()) {
      const Instruction* in_a = op;
      if (ok) {
        auto it = b_to_a_.find(op);
        if (it == b_to_a_.end()) {
          *ok = false;
          return 0;
        }
        in_a = it->second;
      }
      h = HashCombine(h, reinterpret_cast<uintptr_t>(in_a));
    }
    return h;
  }

  double Similarity(const Instruction& a, const Instruction& b) {
    double s = 0;
    if (a.opcode() == b.opcode()) s += 2;
    if (a.shape().Compatible(b.shape())) s += 1;
    if (NameStem(a.name()) == NameStem(b.name())) s += 1;
    if (sig_a_[&a] == sig_b_[&b]) s += 1;
    int matched = 0;
    int n = std::min(a.operand_count(), b.operand_count());
    for (int k = 0; k < n; ++k) {
      auto it = a_to_b_.find(a.operand(k));
      if (it != a_to_b_.end() && it->second == b.operand(k)) ++matched;
    }
    if (std::max(a.operand_count(), b.operand_count()) > 0) {
      s += 2.0 * matched / std::max(a.operand_count(), b.operand_count());
    }
    return s;
  }

  InstructionDiff Compare(const Instruction* a, const Instruction* b) {
    InstructionDiff d;
    d.a = a;
    d.b = b;
    d.reason = reason_[b];
    if (a->name() != b->name()) d.changes.push_back("name");
    if (a->opcode() != b->opcode()) d.changes.push_back("opcode");
    if (!a->shape().Compatible(b->shape())) {
      d.changes.push_back("shape");
    } else if (!(a->shape() == b->shape())) {
      d.changes.push_back("layout");
    }
    if (a->opcode() == b->opcode() && sig_a_[a] != sig_b_[b] &&
        (a->shape() == b->shape() ||
         InstructionAttributeSignature(*a) != InstructionAttributeSignature(*b))) {
      d.changes.push_back("attributes");
    }
    bool operands_same = a->operand_count() == b->operand_count();
    for (int k = 0; operands_same && k < a->operand_count(); ++k) {
      auto it = a_to_b_.find(a->operand(k));
      operands_same = it != a_to_b_.end() && it->second == b->operand(k);
    }
    if (!operands_same) d.changes.push_back("operands");
    const auto& ca = a->called_computations();
    const auto& cb = b->called_computations();
    bool calls_same = ca.size() == cb.size();
    for (size_t k = 0; calls_same && k < ca.size(); ++k) {
      auto it = comp_a_to_b_.find(ca[k]);
      calls_same = it != comp_a_to_b_.end() && it->second == cb[k];
    }
    if (!calls_same) d.changes.push_back("called computations");
    // A rename alone is not a change of what is computed.
    bool only_name = d.changes.size() == 1 && d.changes[0] == "name";
    d.kind = d.changes.empty() || only_name ? DiffKind::kUnchanged : DiffKind::kChanged;
    return d;
  }

  ComputationDiff BuildRows(const Computation* ca, const Computation* cb) {
    ComputationDiff cd;
    cd.a = ca;
    cd.b = cb;
    // Removed A instructions are emitted after the B row of their nearest matched
    // predecessor in A's order (or first, when none).
    std::map<const Instruction*, std::vector<const Instruction*>> removed_after;
    std::vector<const Instruction*> removed_first;
    if (ca) {
      const Instruction* last_matched = nullptr;
      for (const Instruction* ia : ca->instructions()) {
        auto it = a_to_b_.find(ia);
        if (cb && it != a_to_b_.end() && it->second->parent() == cb) {
          last_matched = it->second;
        } else if (last_matched) {
          removed_after[last_matched].push_back(ia);
        } else {
          removed_first.push_back(ia);
        }
      }
    }
    auto removed_row = [](const Instruction* ia) {
      InstructionDiff d;
      d.kind = DiffKind::kRemoved;
      d.a = ia;
      return d;
    };
    for (const Instruction* ia : removed_first) cd.rows.push_back(removed_row(ia));
    if (cb) {
      for (const Instruction* ib : cb->instructions()) {
        auto it = b_to_a_.find(ib);
        if (it != b_to_a_.end() && it->second->parent() == ca) {
          cd.rows.push_back(Compare(it->second, ib));
        } else {
          InstructionDiff d;
          d.kind = DiffKind::kAdded;
          d.b = ib;
          cd.rows.push_back(d);
        }
        auto r = removed_after.find(ib);
        if (r != removed_after.end()) {
          for (const Instruction* ia : r->second) cd.rows.push_back(removed_row(ia));
        }
      }
    }
    return cd;
  }

  const Module& a_;
  const Module& b_;
  absl::flat_hash_map<const Instruction*, uint64_t> sig_a_, sig_b_;
  absl::flat_hash_map<const Computation*, const Computation*> comp_a_to_b_, comp_b_to_a_;
  std::vector<std::pair<const Computation*, const Computation*>> comp_pairs_;
  absl::flat_hash_map<const Instruction*, const Instruction*> a_to_b_, b_to_a_;
  absl::flat_hash_map<const Instruction*, MatchReason> reason_;
};

std::string ShortLine(const Instruction& i) {
  PrintOptions o = PrintOptions::Short();
  o.print_metadata = false;
  return PrintInstruction(i, o);
}

}  // namespace

ModuleDiff DiffModules(const Module& a, const Module& b) {
  Differ differ(a, b);
  ModuleDiff diff = differ.Run();
  return diff;
}

const Instruction* ModuleDiff::MatchOfA(const Instruction* a) const {
  for (const ComputationDiff& c : computations) {
    for (const InstructionDiff& r : c.rows) {
      if (r.a == a) return r.b;
    }
  }
  return nullptr;
}

const Instruction* ModuleDiff::MatchOfB(const Instruction* b) const {
  for (const ComputationDiff& c : computations) {
    for (const InstructionDiff& r : c.rows) {
      if (r.b == b) return r.a;
    }
  }
  return nullptr;
}

std::string FormatDiffText(const ModuleDiff& diff, bool include_unchanged) {
  const DiffCounts& n = diff.counts;
  std::string out = StrCat(n.unchanged, " unchanged, ", n.changed, " changed, ", n.added,
                           " added, ", n.removed, " removed (", n.renamed, " renamed)\n");
  for (const ComputationDiff& c : diff.computations) {
    std::string header;
    if (c.a && c.b) {
      header = c.a->name() == c.b->name() ? c.b->name() : StrCat(c.a->name(), " -> ", c.b->name());
    } else {
      header = StrCat(c.b ? c.b->name() : c.a->name(), c.b ? " (added)" : " (removed)");
    }
    bool printed_header = false;
    for (const InstructionDiff& r : c.rows) {
      if (r.kind == DiffKind::kUnchanged && !include_unchanged &&
          !(r.a && r.b && r.a->name() != r.b->name())) {
        continue;
      }
      if (!printed_header) {
        StrAppend(&out, "computation ", header, "\n");
        printed_header = true;
      }
      switch (r.kind) {
        case DiffKind::kAdded:
          StrAppend(&out, "  + ", r.b->name(), " ", OpcodeName(r.b->opcode()), "\n");
          break;
        case DiffKind::kRemoved:
          StrAppend(&out, "  - ", r.a->name(), " ", OpcodeName(r.a->opcode()),
                    r.fused_into ? StrCat(" [fused into ", r.fused_into->name(), "]") : "", "\n");
          break;
        case DiffKind::kChanged:
        case DiffKind::kUnchanged: {
          std::string names = r.a->name() == r.b->name() ? r.b->name()
                                                           : StrCat(r.a->name(), " -> ", r.b->name());
          std::string changes;
          for (const std::string& ch : r.changes) StrAppend(&changes, changes.empty() ? "" : ", ", ch);
          StrAppend(&out, r.kind == DiffKind::kChanged ? "  ~ " : "  = ", names, " ",
                    OpcodeName(r.b->opcode()), " [", changes.empty() ? "same" : changes,
                    "; matched by ", MatchReasonName(r.reason), "]\n");
          break;
        }
      }
    }
  }
  return out;
}

std::string FormatDiffJson(const ModuleDiff& diff) {
  const DiffCounts& n = diff.counts;
  std::string out = StrCat("{\"counts\":{\"unchanged\":", n.unchanged, ",\"changed\":", n.changed,
                           ",\"added\":", n.added, ",\"removed\":", n.removed,
                           ",\"renamed\":", n.renamed, "},\"computations\":[");
  bool first_comp = true;
  for (const ComputationDiff& c : diff.computations) {
    StrAppend(&out, first_comp ? "" : ",", "{\"a\":", c.a ? JsonQuote(c.a->name()) : "null",
              ",\"b\":", c.b ? JsonQuote(c.b->name()) : "null", ",\"rows\":[");
    first_comp = false;
    bool first = true;
    for (const InstructionDiff& r : c.rows) {
      StrAppend(&out, first ? "" : ",", "{\"kind\":\"", DiffKindName(r.kind), "\",\"a\":",
                r.a ? JsonQuote(r.a->name()) : "null", ",\"b\":",
                r.b ? JsonQuote(r.b->name()) : "null", ",\"match\":\"", MatchReasonName(r.reason),
                "\",", r.fused_into ? StrCat("\"fused_into\":", JsonQuote(r.fused_into->name()), ",") : "",
                "\"changes\":[");
      for (size_t k = 0; k < r.changes.size(); ++k) {
        StrAppend(&out, k ? "," : "", JsonQuote(r.changes[k]));
      }
      out += "]}";
      first = false;
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

std::string FormatUnifiedDiff(const ModuleDiff& diff, const std::string& label_a,
                              const std::string& label_b) {
  std::string out = StrCat("--- ", label_a, "\n+++ ", label_b, "\n");
  for (const ComputationDiff& c : diff.computations) {
    bool any_change = !c.a || !c.b;
    for (const InstructionDiff& r : c.rows) any_change |= r.kind != DiffKind::kUnchanged;
    if (!any_change) continue;
    StrAppend(&out, "@@ ", c.a ? c.a->name() : "(none)", " -> ", c.b ? c.b->name() : "(none)",
              " @@\n");
    for (const InstructionDiff& r : c.rows) {
      switch (r.kind) {
        case DiffKind::kUnchanged:
          StrAppend(&out, " ", ShortLine(*r.b), "\n");
          break;
        case DiffKind::kChanged:
          StrAppend(&out, "-", ShortLine(*r.a), "\n+", ShortLine(*r.b), "\n");
          break;
        case DiffKind::kAdded:
          StrAppend(&out, "+", ShortLine(*r.b), "\n");
          break;
        case DiffKind::kRemoved:
          StrAppend(&out, "-", ShortLine(*r.a), "\n");
          break;
      }
    }
  }
  return out;
}

std::vector<SideBySideLine> BuildSideBySide(const ModuleDiff& diff) {
  std::vector<SideBySideLine> lines;
  auto header = [](const Computation* c) {
    if (c == nullptr) return std::string();
    const bool entry = c->parent() != nullptr && c->parent()->entry() == c;
    return StrCat(entry ? "ENTRY %" : "%", c->name(), " {");
  };
  for (const ComputationDiff& c : diff.computations) {
    if (!lines.empty()) lines.push_back(SideBySideLine{});
    const DiffKind comp_kind = c.a == nullptr   ? DiffKind::kAdded
                               : c.b == nullptr ? DiffKind::kRemoved
                                                : DiffKind::kUnchanged;
    SideBySideLine head;
    head.type = SideBySideLine::Type::kHeader;
    head.kind = comp_kind;
    head.left = header(c.a);
    head.right = header(c.b);
    lines.push_back(std::move(head));
    for (const InstructionDiff& r : c.rows) {
      SideBySideLine line;
      line.type = SideBySideLine::Type::kInstruction;
      line.kind = r.kind;
      line.a = r.a;
      line.b = r.b;
      if (r.a != nullptr) line.left = StrCat("  ", ShortLine(*r.a));
      if (r.b != nullptr) line.right = StrCat("  ", ShortLine(*r.b));
      switch (r.kind) {
        case DiffKind::kChanged: {
          std::string what;
          for (const std::string& c : r.changes) {
            if (c != "name") StrAppend(&what, what.empty() ? "" : ", ", c);
          }
          if (!what.empty()) line.note = StrCat("changed: ", what);
          break;
        }
        case DiffKind::kAdded:
          line.note = "added";
          break;
        case DiffKind::kRemoved:
          line.note = r.fused_into != nullptr ? StrCat("removed (fused into ", r.fused_into->name(), ")")
                                              : "removed";
          break;
        case DiffKind::kUnchanged:
          break;
      }
      if (r.a != nullptr && r.b != nullptr && r.a->name() != r.b->name()) {
        StrAppend(&line.note, line.note.empty() ? "" : "; ", "renamed from ", r.a->name(),
                  " (matched by ", MatchReasonName(r.reason), ")");
      }
      lines.push_back(std::move(line));
    }
    SideBySideLine close;
    close.type = SideBySideLine::Type::kClose;
    close.kind = comp_kind;
    if (c.a != nullptr) close.left = "}";
    if (c.b != nullptr) close.right = "}";
    lines.push_back(std::move(close));
  }
  return lines;
}

}  // namespace hlowb
