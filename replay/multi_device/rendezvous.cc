#include "replay/multi_device/rendezvous.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>
#include <utility>

#include "core/ir/computation.h"
#include "core/ir/opcode.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "replay/evaluator/collective_kernels.h"

namespace hlowb {
namespace {

using Operands = std::vector<const Literal*>;

std::string Ref(const Instruction& instr) {
  return StrCat("%", instr.name(), " (", OpcodeName(instr.opcode()), ")");
}

// "%ar (all-reduce, execution 2)": the instruction and which of this device's executions of it.
std::string RefAt(const Instruction& instr, int64_t occurrence) {
  return StrCat("%", instr.name(), " (", OpcodeName(instr.opcode()), ", execution ",
                occurrence + 1, ")");
}

// Checks that a declared result shape can be materialised (no unbounded dimensions).
absl::Status CheckMaterialisable(const Instruction& instr, const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (absl::Status st = CheckMaterialisable(instr, e); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (!s.IsArray()) return absl::OkStatus();
  for (int i = 0; i < s.rank(); ++i) {
    if (s.dimension(i) < 0) {
      return absl::UnimplementedError(StrCat("collective ", Ref(instr),
                                             " has a result with an unbounded dimension"));
    }
  }
  return absl::OkStatus();
}

Literal Tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal t(Shape::Tuple(shapes), /*allocate=*/false);
  *t.mutable_tuple_elements() = std::move(elements);
  return t;
}

// Copies the elements of `src` into `dst` (same element type and count; layouts may differ,
// the data is row-major either way).
absl::Status CopyInto(const Instruction& instr, const Literal& src, Literal* dst) {
  if (!src.shape().IsArray() || !dst->shape().IsArray() ||
      src.shape().element_type() != dst->shape().element_type() ||
      src.element_count() != dst->element_count()) {
    return absl::InvalidArgumentError(
        StrCat(Ref(instr), ": a device's value ", PrintShape(src.shape(), false),
               " does not fit the result ", PrintShape(dst->shape(), false)));
  }
  *dst->mutable_data() = src.data();
  return absl::OkStatus();
}

// The per-operand result shapes of a group collective, in operand order.
absl::StatusOr<std::vector<Shape>> OutputShapes(const Instruction& instr) {
  const Shape* s = &instr.shape();
  if (instr.opcode() == Opcode::kAllGatherStart) {
    if (!s->IsTuple() || s->tuple_count() != 2) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " must return (operands, gathered) but returns ", PrintShape(*s)));
    }
    s = &s->tuple_shape(1);
  }
  if (s->IsTuple()) return s->tuple_shapes();
  return std::vector<Shape>{*s};
}

int64_t SingleDimension(const Instruction& instr, absl::Status* st) {
  if (instr.dimensions().size() != 1) {
    *st = absl::InvalidArgumentError(StrCat(Ref(instr), " needs dimensions={d}"));
    return 0;
  }
  return instr.dimensions()[0];
}

}  // namespace

// One device's DeviceCollectives: turns each collective op into Post / Collect / Release /
// Withdraw calls on the shared rendezvous and computes this device's result.
class DeviceEndpoint final : public DeviceCollectives {
 public:
  DeviceEndpoint(Rendezvous* r, int64_t device) : r_(r), d_(device) {}

  int64_t replica_id() const override { return r_->grid().Replica(d_); }
  int64_t partition_id() const override { return r_->grid().Partition(d_); }

  absl::StatusOr<Literal> RunCollective(const Instruction& instr, const Operands& ops,
                                        const ComputationCaller& call) override {
    const int64_t occurrence = occurrences_[&instr]++;
    if (instr.opcode() == Opcode::kCollectivePermute ||
        instr.opcode() == Opcode::kCollectivePermuteStart) {
      return RunPermute(instr, occurrence, ops);
    }
    return RunGroup(instr, occurrence, ops, call);
  }

  absl::StatusOr<Literal> RunSendRecv(const Instruction& instr, const Operands& ops) override {
    const int64_t occurrence = occurrences_[&instr]++;
    const Rendezvous::SlotKey key{&instr, occurrence, d_};
    const Opcode op = instr.opcode();
    const InstructionAttrs& a = instr.attrs_or_default();
    std::optional<int64_t> channel_attr = a.channel_id;
    if (!channel_attr && (op == Opcode::kSendDone || op == Opcode::kRecvDone) &&
        instr.operand_count() == 1) {
      channel_attr = instr.operand(0)->attrs_or_default().channel_id;
    }
    const int64_t channel = channel_attr.value_or(0);
    if (op == Opcode::kSend || op == Opcode::kRecv) {
      auto it = send_recv_.find(&instr);
      if (it == send_recv_.end()) {
        absl::StatusOr<Peer> peer = Peer{};
        auto pairs = SendRecvDevicePairs(instr, r_->grid());
        auto bounds = SendRecvValidationBounds(instr, r_->grid());
        if (!pairs.ok()) {
          peer = pairs.status();
        } else if (!bounds.ok()) {
          peer = bounds.status();
        } else {
          for (size_t i = 0; i < pairs->size(); ++i) {
            const auto [s, t] = (*pairs)[i];
            if ((op == Opcode::kSend && s == d_) || (op == Opcode::kRecv && t == d_)) {
              peer->device = op == Opcode::kSend ? t : s;
              if (!bounds->empty()) peer->executions = (*bounds)[i];
            }
          }
        }
        it = send_recv_.emplace(&instr, std::move(peer)).first;
      }
      if (!it->second.ok()) return it->second.status();
      // With _xla_send_recv_validation, only the executions in range transfer; the others
      // send nothing and receive zeros (XLA leaves the buffer as it was).
      std::optional<int64_t> peer = it->second->device;
      if (const auto& range = it->second->executions;
          range && (occurrence < range->first || occurrence > range->second)) {
        peer.reset();
      }
      const Shape& s = instr.shape();
      if (!s.IsTuple() || s.tuple_count() != 3) {
        return absl::InvalidArgumentError(
            StrCat(Ref(instr), " must return (data, u32[], token[]), not ", PrintShape(s)));
      }
      if (absl::Status st = CheckMaterialisable(instr, s); !st.ok()) return st;
      if (op == Opcode::kSend) {
        if (ops.empty() || !ops[0]->shape().IsArray() || !s.tuple_shape(0).IsArray() ||
            ops[0]->shape().element_type() != s.tuple_shape(0).element_type() ||
            ops[0]->shape().dimensions() != s.tuple_shape(0).dimensions()) {
          return absl::InvalidArgumentError(StrCat(Ref(instr), " sends a value that is not its ",
                                                   "declared data ",
                                                   PrintShape(s.tuple_shape(0), false)));
        }
        const int64_t sequence = sends_[channel]++;
        if (peer) r_->PostMessage({channel, d_, sequence}, *ops[0]);
        pending_sends_[channel].push_back({&instr, sequence, peer});
        std::vector<Literal> elems;
        elems.push_back(*ops[0]);
        elems.emplace_back(s.tuple_shape(1));
        elems.emplace_back(Shape::Token());
        return Tuple(std::move(elems));
      }
      const int64_t sequence = recvs_[channel]++;
      r_->PostRecv(channel, d_);
      pending_recvs_[channel].push_back({&instr, sequence, peer});
      std::vector<Literal> elems;
      elems.emplace_back(s.tuple_shape(0));  // the data arrives at recv-done
      elems.emplace_back(s.tuple_shape(1));
      elems.emplace_back(Shape::Token());
      return Tuple(std::move(elems));
    }
    // send-done / recv-done: the oldest transfer in flight on the channel.
    const bool send = op == Opcode::kSendDone;
    std::deque<Pending>& queue = send ? pending_sends_[channel] : pending_recvs_[channel];
    if (queue.empty()) {
      return absl::InvalidArgumentError(StrCat(
          Ref(instr), " on channel ", channel, " has no ", send ? "send" : "recv",
          " in flight on ", r_->grid().Describe(d_)));
    }
    // The transfer of the start op this -done names, when its operand is that op; through a
    // loop or tuple, the oldest on the channel.
    auto it = queue.begin();
    if (instr.operand_count() == 1) {
      const Instruction* start = instr.operand(0);
      auto named = std::find_if(queue.begin(), queue.end(),
                                [start](const Pending& q) { return q.start == start; });
      if (named != queue.end()) it = named;
    }
    const Pending p = *it;
    queue.erase(it);
    if (send) {
      if (p.peer) {
        if (absl::Status st = r_->AwaitRecv(key, channel, *p.peer, p.sequence); !st.ok()) {
          return st;
        }
      }
      return Literal(Shape::Token());
    }
    const Shape& s = instr.shape();
    if (!s.IsTuple() || s.tuple_count() != 2) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " must return (data, token[]), not ", PrintShape(s)));
    }
    if (absl::Status st = CheckMaterialisable(instr, s); !st.ok()) return st;
    Literal data(s.tuple_shape(0));  // zeros when no pair targets this device
    if (p.peer) {
      auto got = r_->TakeMessage(key, {channel, *p.peer, p.sequence});
      if (!got.ok()) return got.status();
      if (absl::Status st = CopyInto(instr, *got, &data); !st.ok()) {
        r_->Abort(absl::Status(st.code(), StrCat(r_->grid().Describe(d_), ": ", st.message())));
        return st;
      }
    }
    std::vector<Literal> elems;
    elems.push_back(std::move(data));
    elems.emplace_back(Shape::Token());
    return Tuple(std::move(elems));
  }

  std::vector<int64_t> ReplicaDevices() const override {
    const DeviceGrid& g = r_->grid();
    std::vector<int64_t> devices;
    for (int64_t p = 0; p < g.num_partitions; ++p) devices.push_back(g.Device(g.Replica(d_), p));
    return devices;
  }
  int64_t device_index() const override { return d_; }

  absl::StatusOr<std::vector<Literal>> ExchangeValues(const Instruction& instr,
                                                      const std::vector<int64_t>& devices,
                                                      const Literal& value) override {
    const int64_t occurrence = occurrences_[&instr]++;
    if (std::find(devices.begin(), devices.end(), d_) == devices.end()) {
      return absl::InvalidArgumentError(StrCat(r_->grid().Describe(d_), " exchanges values of ",
                                               Ref(instr), " with devices it is not among"));
    }
    std::vector<int64_t> others;
    for (int64_t g : devices) {
      if (g < 0 || g >= r_->grid().size()) {
        return absl::InvalidArgumentError(
            StrCat(Ref(instr), ": device ", g, " is not in the run of ", r_->grid().size()));
      }
      if (g != d_ && std::find(others.begin(), others.end(), g) == others.end()) {
        others.push_back(g);
      }
    }
    std::vector<Literal> values;
    if (others.empty()) {
      for (size_t i = 0; i < devices.size(); ++i) values.push_back(value);
      return values;
    }
    const Rendezvous::SlotKey key{&instr, occurrence, d_};
    const Operands mine{&value};
    r_->Post(key, &mine, others);
    std::vector<const Operands*> got;
    if (absl::Status st = r_->Collect(key, others, &got); !st.ok()) {
      r_->Withdraw(key);
      return st;
    }
    for (int64_t g : devices) {
      if (g == d_) {
        values.push_back(value);
      } else {
        size_t j = std::find(others.begin(), others.end(), g) - others.begin();
        values.push_back(*(*got[j])[0]);
      }
    }
    r_->Release(key, others);
    r_->Withdraw(key);
    return values;
  }

 private:
  using Contributions = std::vector<const Operands*>;

  // This device's group for `instr` (empty when it is in none), computed once per instruction.
  absl::StatusOr<const std::vector<int64_t>*> GroupOf(const Instruction& instr) {
    auto it = groups_.find(&instr);
    if (it == groups_.end()) {
      absl::StatusOr<std::vector<int64_t>> mine = std::vector<int64_t>{};
      auto all = CollectiveDeviceGroups(instr, r_->grid());
      if (!all.ok()) {
        mine = all.status();
      } else {
        for (auto& g : *all) {
          if (std::find(g.begin(), g.end(), d_) != g.end()) {
            mine = std::move(g);
            break;
          }
        }
      }
      it = groups_.emplace(&instr, std::move(mine)).first;
    }
    if (!it->second.ok()) return it->second.status();
    return &*it->second;
  }

  absl::StatusOr<Literal> RunGroup(const Instruction& instr, int64_t occurrence,
                                   const Operands& ops, const ComputationCaller& call) {
    auto group_or = GroupOf(instr);
    if (!group_or.ok()) return group_or.status();
    const std::vector<int64_t>& group = **group_or;
    auto shapes = OutputShapes(instr);
    if (!shapes.ok()) return shapes.status();
    if (absl::Status st = CheckMaterialisable(instr, instr.shape()); !st.ok()) return st;
    if (group.empty()) {
      if (instr.opcode() == Opcode::kCollectiveBroadcast) return Literal(instr.shape());
      return absl::InvalidArgumentError(
          StrCat(r_->grid().Describe(d_), " is in no replica group of ", Ref(instr),
                 "; every device that runs it must be in one"));
    }
    const int64_t n = static_cast<int64_t>(group.size());
    const int64_t rank = std::find(group.begin(), group.end(), d_) - group.begin();
    std::vector<int64_t> others;
    for (int64_t g : group) {
      if (g != d_) others.push_back(g);
    }
    const Rendezvous::SlotKey key{&instr, occurrence, d_};
    const bool exchange = n > 1;
    Contributions contributions(n, nullptr);
    contributions[rank] = &ops;
    if (exchange) {
      r_->Post(key, &ops, others);
      std::vector<const Operands*> got;
      if (absl::Status st = r_->Collect(key, others, &got); !st.ok()) {
        r_->Withdraw(key);
        return st;
      }
      for (size_t i = 0, j = 0; i < group.size(); ++i) {
        if (group[i] != d_) contributions[i] = got[j++];
      }
    }
    std::vector<Literal> outs;
    for (const Shape& s : *shapes) outs.emplace_back(s);
    absl::Status st = Compute(instr, key, rank, contributions, others, call, &outs);
    if (exchange) {
      if (!st.ok()) {
        r_->Abort(absl::Status(st.code(),
                               StrCat(r_->grid().Describe(d_), ": ", st.message())));
      }
      r_->Release(key, others);
      r_->Withdraw(key);  // after this nobody reads `outs` any more
    }
    if (!st.ok()) return st;
    if (instr.opcode() == Opcode::kAllGatherStart) {
      Literal input = ops.size() == 1 ? *ops[0] : [&] {
        std::vector<Literal> copies;
        for (const Literal* o : ops) copies.push_back(*o);
        return Tuple(std::move(copies));
      }();
      Literal gathered = instr.shape().tuple_shape(1).IsTuple() ? Tuple(std::move(outs))
                                                                : std::move(outs[0]);
      std::vector<Literal> pair;
      pair.push_back(std::move(input));
      pair.push_back(std::move(gathered));
      return Tuple(std::move(pair));
    }
    if (instr.shape().IsTuple()) return Tuple(std::move(outs));
    return std::move(outs[0]);
  }

  absl::Status Compute(const Instruction& instr, const Rendezvous::SlotKey& key, int64_t rank,
                       const Contributions& c, const std::vector<int64_t>& others,
                       const ComputationCaller& call, std::vector<Literal>* outs) {
    const size_t n_ops = c[rank]->size();
    for (const Operands* o : c) {
      if (o->size() != n_ops) {
        return absl::InvalidArgumentError(
            StrCat(Ref(instr), ": the devices pass different numbers of operands"));
      }
    }
    const Opcode op = instr.opcode();
    const bool tuple_all_to_all = op == Opcode::kAllToAll && !instr.has_dimensions();
    if (op == Opcode::kRaggedAllToAll) {
      if (n_ops != 6 || outs->size() != 1) {
        return absl::InvalidArgumentError(
            StrCat(Ref(instr), " takes 6 operands and returns the updated output buffer"));
      }
    } else if (tuple_all_to_all) {
      if (n_ops != c.size() || outs->size() != c.size()) {
        return absl::InvalidArgumentError(StrCat(
            Ref(instr), " without dimensions= needs one operand and one result per group "
            "member (", c.size(), ") but has ", n_ops, " operand(s) and ", outs->size(),
            " result(s)"));
      }
    } else if (outs->size() != n_ops) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " returns ", outs->size(), " value(s) for ", n_ops, " operand(s)"));
    }
    const int64_t n = static_cast<int64_t>(c.size());
    absl::Status st;
    switch (op) {
      case Opcode::kAllReduce:
      case Opcode::kAllReduceStart:
        return AllReduce(instr, key, rank, c, others, call, outs);
      case Opcode::kReduceScatter: {
        const int64_t dim = SingleDimension(instr, &st);
        if (!st.ok()) return st;
        const Computation* reducer =
            instr.called_computations().empty() ? nullptr : instr.called_computations()[0];
        for (size_t i = 0; i < n_ops; ++i) {
          const Literal& mine = *(*c[rank])[i];
          if (dim < 0 || dim >= mine.shape().rank() || mine.shape().dimension(dim) % n != 0) {
            return absl::InvalidArgumentError(
                StrCat(Ref(instr), " cannot split dimension ", dim, " of ",
                       PrintShape(mine.shape(), false), " into ", n, " shards"));
          }
          const int64_t shard = mine.shape().dimension(dim) / n;
          std::vector<Literal> slices;
          for (int64_t g = 0; g < n; ++g) {
            auto s = SliceAlongDimension(*(*c[g])[i], dim, rank * shard, shard);
            if (!s.ok()) {
              return absl::InvalidArgumentError(StrCat(Ref(instr), ": ", s.status().message()));
            }
            slices.push_back(std::move(*s));
          }
          auto reduce = ElementwiseReducer::Create(instr, reducer, mine.shape().element_type());
          if (!reduce.ok()) return reduce.status();
          Literal& out = (*outs)[i];
          if (out.element_count() != slices[0].element_count() ||
              out.shape().element_type() != mine.shape().element_type()) {
            return absl::InvalidArgumentError(
                StrCat(Ref(instr), " declares ", PrintShape(out.shape(), false),
                       " but a shard of ", n, " devices is ",
                       PrintShape(slices[0].shape(), false)));
          }
          std::vector<const Literal*> ptrs;
          for (const Literal& s : slices) ptrs.push_back(&s);
          if (absl::Status r = reduce->Reduce(ptrs, &out, 0, out.element_count(), call);
              !r.ok()) {
            return r;
          }
        }
        return absl::OkStatus();
      }
      case Opcode::kAllGather:
      case Opcode::kAllGatherStart: {
        const int64_t dim = SingleDimension(instr, &st);
        if (!st.ok()) return st;
        for (size_t i = 0; i < n_ops; ++i) {
          std::vector<const Literal*> parts;
          for (int64_t g = 0; g < n; ++g) parts.push_back((*c[g])[i]);
          if (absl::Status s = ConcatenateAlongDimension(parts, dim, &(*outs)[i]); !s.ok()) {
            return absl::InvalidArgumentError(StrCat(Ref(instr), " over ", n, " devices: ",
                                                     s.message()));
          }
        }
        return absl::OkStatus();
      }
      case Opcode::kAllToAll: {
        if (tuple_all_to_all) {
          for (int64_t g = 0; g < n; ++g) {
            if (absl::Status s = CopyInto(instr, *(*c[g])[rank], &(*outs)[g]); !s.ok()) return s;
          }
          return absl::OkStatus();
        }
        const int64_t dim = SingleDimension(instr, &st);
        if (!st.ok()) return st;
        for (size_t i = 0; i < n_ops; ++i) {
          const Literal& mine = *(*c[rank])[i];
          if (dim < 0 || dim >= mine.shape().rank() || mine.shape().dimension(dim) % n != 0) {
            return absl::InvalidArgumentError(
                StrCat(Ref(instr), " cannot split dimension ", dim, " of ",
                       PrintShape(mine.shape(), false), " into ", n, " chunks"));
          }
          const int64_t chunk = mine.shape().dimension(dim) / n;
          std::vector<Literal> parts;
          for (int64_t g = 0; g < n; ++g) {
            auto s = SliceAlongDimension(*(*c[g])[i], dim, rank * chunk, chunk);
            if (!s.ok()) {
              return absl::InvalidArgumentError(StrCat(Ref(instr), ": ", s.status().message()));
            }
            parts.push_back(std::move(*s));
          }
          std::vector<const Literal*> ptrs;
          for (const Literal& p : parts) ptrs.push_back(&p);
          if (absl::Status s = ConcatenateAlongDimension(ptrs, dim, &(*outs)[i]); !s.ok()) {
            return absl::InvalidArgumentError(StrCat(Ref(instr), ": ", s.message()));
          }
        }
        return absl::OkStatus();
      }
      case Opcode::kCollectiveBroadcast:
        for (size_t i = 0; i < n_ops; ++i) {
          if (absl::Status s = CopyInto(instr, *(*c[0])[i], &(*outs)[i]); !s.ok()) return s;
        }
        return absl::OkStatus();
      case Opcode::kRaggedAllToAll:
        return RaggedAllToAll(instr, rank, c, outs);
      default:
        return absl::UnimplementedError(
            StrCat("multi-device replay does not run ", Ref(instr), " yet"));
    }
  }

  absl::Status AllReduce(const Instruction& instr, const Rendezvous::SlotKey& key, int64_t rank,
                         const Contributions& c, const std::vector<int64_t>& others,
                         const ComputationCaller& call, std::vector<Literal>* outs) {
    const Computation* reducer =
        instr.called_computations().empty() ? nullptr : instr.called_computations()[0];
    const int64_t n = static_cast<int64_t>(c.size());
    const size_t n_ops = c[rank]->size();
    auto slice_of = [n](int64_t count, int64_t r) {
      return std::pair<int64_t, int64_t>{count * r / n, count * (r + 1) / n};
    };
    // Phase 1: this device's slice of every operand, folded over the members in rank order.
    for (size_t i = 0; i < n_ops; ++i) {
      Literal& out = (*outs)[i];
      const Literal& mine = *(*c[rank])[i];
      if (out.shape().element_type() != mine.shape().element_type() ||
          out.element_count() != mine.element_count()) {
        return absl::InvalidArgumentError(StrCat(Ref(instr), " declares ",
                                                 PrintShape(out.shape(), false), " for operand ",
                                                 PrintShape(mine.shape(), false)));
      }
      auto reduce = ElementwiseReducer::Create(instr, reducer, mine.shape().element_type());
      if (!reduce.ok()) return reduce.status();
      std::vector<const Literal*> inputs;
      for (int64_t g = 0; g < n; ++g) inputs.push_back((*c[g])[i]);
      auto [begin, end] = slice_of(out.element_count(), rank);
      if (absl::Status st = reduce->Reduce(inputs, &out, begin, end, call); !st.ok()) return st;
    }
    if (n == 1) return absl::OkStatus();
    // Phase 2: the other members' slices.
    r_->PublishPartial(key, outs);
    std::vector<const std::vector<Literal>*> partials;
    if (absl::Status st = r_->CollectPartials(key, others, &partials); !st.ok()) return st;
    size_t j = 0;
    for (int64_t g = 0; g < n; ++g) {
      if (g == rank) continue;
      const std::vector<Literal>& theirs = *partials[j++];
      for (size_t i = 0; i < n_ops; ++i) {
        auto [begin, end] = slice_of((*outs)[i].element_count(), g);
        CopyElementRange(theirs[i], &(*outs)[i], begin, end);
      }
    }
    return absl::OkStatus();
  }

  absl::Status RaggedAllToAll(const Instruction& instr, int64_t rank, const Contributions& c,
                              std::vector<Literal>* outs) {
    const int64_t n = static_cast<int64_t>(c.size());
    const Operands& mine = *c[rank];
    if (mine.size() != 6) {
      return absl::InvalidArgumentError(StrCat(Ref(instr), " takes 6 operands"));
    }
    Literal& out = (*outs)[0];
    if (absl::Status st = CopyInto(instr, *mine[1], &out); !st.ok()) return st;
    if (out.shape().rank() < 1) {
      return absl::InvalidArgumentError(StrCat(Ref(instr), " needs arrays of rank >= 1"));
    }
    int64_t row_elems = 1;
    for (int d = 1; d < out.shape().rank(); ++d) row_elems *= out.shape().dimension(d);
    const int64_t row_bytes = row_elems * out.element_bytes();
    for (int64_t g = 0; g < n; ++g) {
      const Operands& p = *c[g];
      for (int k : {2, 3, 4}) {
        if (!p[k]->shape().IsArray() || p[k]->shape().rank() != 1 ||
            p[k]->element_count() != n || !IsIntegral(p[k]->shape().element_type())) {
          return absl::UnimplementedError(StrCat(
              Ref(instr), ": offsets and sizes other than one integer per group member (", n,
              ") are not modelled"));
        }
      }
      const Literal& input = *p[0];
      if (input.shape().element_type() != out.shape().element_type() ||
          input.shape().rank() != out.shape().rank() ||
          input.element_count() / std::max<int64_t>(input.shape().dimension(0), 1) !=
              row_elems) {
        return absl::InvalidArgumentError(StrCat(Ref(instr), ": input ",
                                                 PrintShape(input.shape(), false),
                                                 " and output rows differ"));
      }
      const int64_t in_off = p[2]->GetInt(rank);
      const int64_t size = p[3]->GetInt(rank);
      const int64_t out_off = p[4]->GetInt(rank);
      if (size < 0 || in_off < 0 || out_off < 0 || in_off + size > input.shape().dimension(0) ||
          out_off + size > out.shape().dimension(0)) {
        return absl::InvalidArgumentError(StrCat(
            Ref(instr), ": ", r_->grid().Describe(d_), " receives rows [", out_off, ", ",
            out_off + size, ") from input rows [", in_off, ", ", in_off + size,
            ") of the member of rank ", g, ", outside the buffers"));
      }
      if (size > 0) {
        std::memcpy(out.mutable_data()->data() + out_off * row_bytes,
                    input.data().data() + in_off * row_bytes,
                    static_cast<size_t>(size * row_bytes));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Literal> RunPermute(const Instruction& instr, int64_t occurrence,
                                     const Operands& ops) {
    // Several array operands (the combined form) are permuted alike, each into its own result.
    if (ops.size() == 4 && ops[2]->shape().IsTuple()) {
      return absl::UnimplementedError(
          StrCat(Ref(instr), ": the four-operand (in-place slice) form of collective-permute is "
                 "not modelled by multi-device replay"));
    }
    const bool combined = ops.size() > 1;
    auto it = permutes_.find(&instr);
    if (it == permutes_.end()) {
      absl::StatusOr<Permute> p = Permute{};
      auto pairs = PermuteDevicePairs(instr, r_->grid());
      if (!pairs.ok()) {
        p = pairs.status();
      } else {
        for (const auto& [s, t] : *pairs) {
          if (t == d_) p->source = s;
          if (s == d_ && t != d_) p->readers.push_back(t);
        }
      }
      it = permutes_.emplace(&instr, std::move(p)).first;
    }
    if (!it->second.ok()) return it->second.status();
    const Permute& plan = *it->second;
    const bool start = instr.opcode() == Opcode::kCollectivePermuteStart;
    if (start && (!instr.shape().IsTuple() || instr.shape().tuple_count() < 2)) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " must return (operand, received, ...)"));
    }
    const Shape& out_shape = start ? instr.shape().tuple_shape(1) : instr.shape();
    if (absl::Status st = CheckMaterialisable(instr, instr.shape()); !st.ok()) return st;
    if (combined && (!out_shape.IsTuple() || out_shape.tuple_count() != static_cast<int>(ops.size()))) {
      return absl::InvalidArgumentError(StrCat(Ref(instr), " permutes ", ops.size(),
                                               " operands and must return a tuple of as many"));
    }
    std::vector<Literal> received;
    for (size_t i = 0; i < ops.size(); ++i) {
      received.emplace_back(combined ? out_shape.tuple_shape(static_cast<int>(i)) : out_shape);
    }
    const Rendezvous::SlotKey key{&instr, occurrence, d_};
    if (!plan.readers.empty()) r_->Post(key, &ops, plan.readers);
    absl::Status st;
    auto copy_all = [&](const Operands& from) {
      if (from.size() != ops.size()) {
        return absl::InvalidArgumentError(
            StrCat(Ref(instr), ": the devices pass different numbers of operands"));
      }
      for (size_t i = 0; i < ops.size(); ++i) {
        if (absl::Status c = CopyInto(instr, *from[i], &received[i]); !c.ok()) return c;
      }
      return absl::OkStatus();
    };
    if (plan.source && *plan.source != d_) {
      std::vector<int64_t> from{*plan.source};
      std::vector<const Operands*> got;
      st = r_->Collect(key, from, &got);
      if (st.ok()) {
        st = copy_all(*got[0]);
        if (!st.ok()) {
          r_->Abort(absl::Status(st.code(),
                                 StrCat(r_->grid().Describe(d_), ": ", st.message())));
        }
        r_->Release(key, from);
      }
    } else if (plan.source) {
      st = copy_all(ops);
    }
    if (!plan.readers.empty()) r_->Withdraw(key);
    if (!st.ok()) return st;
    Literal result = combined ? Tuple(std::move(received)) : std::move(received[0]);
    if (!start) return result;
    std::vector<Literal> elems;
    if (combined) {
      std::vector<Literal> inputs;
      for (const Literal* o : ops) inputs.push_back(*o);
      elems.push_back(Tuple(std::move(inputs)));
    } else {
      elems.push_back(*ops[0]);
    }
    elems.push_back(std::move(result));
    for (int k = 2; k < instr.shape().tuple_count(); ++k) {
      elems.emplace_back(instr.shape().tuple_shape(k));
    }
    return Tuple(std::move(elems));
  }

  struct Permute {
    std::optional<int64_t> source;  // the device whose value this one receives
    std::vector<int64_t> readers;   // the other devices that receive this one's value
  };

  struct Peer {
    std::optional<int64_t> device;  // send: the target; recv: the source
    // The executions [first, last] that transfer (_xla_send_recv_validation); unset: all.
    std::optional<std::pair<int64_t, int64_t>> executions;
  };
  struct Pending {
    const Instruction* start = nullptr;
    int64_t sequence = 0;
    std::optional<int64_t> peer;
  };

  Rendezvous* r_;
  int64_t d_;
  std::map<const Instruction*, absl::StatusOr<Peer>> send_recv_;
  std::map<int64_t, int64_t> sends_, recvs_;  // per channel: how many this device has run
  std::map<int64_t, std::deque<Pending>> pending_sends_, pending_recvs_;
  std::map<const Instruction*, int64_t> occurrences_;
  std::map<const Instruction*, absl::StatusOr<std::vector<int64_t>>> groups_;
  std::map<const Instruction*, absl::StatusOr<Permute>> permutes_;
};

Rendezvous::Rendezvous(RendezvousOptions options) : options_(std::move(options)) {
  const int64_t n = options_.grid.size();
  devices_.resize(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) endpoints_.push_back(std::make_unique<DeviceEndpoint>(this, d));
}

Rendezvous::~Rendezvous() = default;

DeviceCollectives* Rendezvous::device(int64_t d) { return endpoints_[d].get(); }

absl::Status Rendezvous::abort_status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abort_;
}

void Rendezvous::Abort(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  AbortLocked(status);
}

void Rendezvous::AbortLocked(const absl::Status& status) {
  if (!abort_.ok() || status.ok()) return;
  abort_ = status;
  abort_token_.Cancel();
  cv_.notify_all();
}

void Rendezvous::Finish(int64_t d, const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  devices_[d].state = status.ok() ? State::kFinished : State::kFailed;
  if (!status.ok() && abort_.ok()) {
    AbortLocked(absl::Status(status.code(),
                             StrCat(options_.grid.Describe(d), ": ", status.message())));
  }
  CheckDeadlockLocked();
  cv_.notify_all();
}

void Rendezvous::Post(const SlotKey& key, const std::vector<const Literal*>* operands,
                      std::vector<int64_t> readers) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& s = slots_[key];
  s.operands = operands;
  s.readers = std::move(readers);
  cv_.notify_all();
}

absl::Status Rendezvous::Collect(const SlotKey& key, const std::vector<int64_t>& from,
                                 std::vector<const std::vector<const Literal*>*>* operands) {
  std::unique_lock<std::mutex> lock(mu_);
  auto missing = [&] {
    std::vector<int64_t> out;
    for (int64_t f : from) {
      if (!slots_.contains({key.instr, key.occurrence, f})) out.push_back(f);
    }
    return out;
  };
  Wait(lock, key, "for the operands of",
       [&] { return !abort_.ok() || missing().empty(); }, missing);
  if (!abort_.ok()) return abort_;
  for (int64_t f : from) {
    Slot& s = slots_.at({key.instr, key.occurrence, f});
    ++s.active_readers;
    operands->push_back(s.operands);
  }
  return absl::OkStatus();
}

void Rendezvous::PublishPartial(const SlotKey& key, const std::vector<Literal>* partial) {
  std::lock_guard<std::mutex> lock(mu_);
  slots_.at(key).partial = partial;
  cv_.notify_all();
}

absl::Status Rendezvous::CollectPartials(const SlotKey& key, const std::vector<int64_t>& from,
                                         std::vector<const std::vector<Literal>*>* partials) {
  std::unique_lock<std::mutex> lock(mu_);
  auto missing = [&] {
    std::vector<int64_t> out;
    for (int64_t f : from) {
      auto it = slots_.find({key.instr, key.occurrence, f});
      if (it == slots_.end() || it->second.partial == nullptr) out.push_back(f);
    }
    return out;
  };
  Wait(lock, key, "for the partial results of",
       [&] { return !abort_.ok() || missing().empty(); }, missing);
  if (!abort_.ok()) return abort_;
  for (int64_t f : from) partials->push_back(slots_.at({key.instr, key.occurrence, f}).partial);
  return absl::OkStatus();
}

void Rendezvous::Release(const SlotKey& key, const std::vector<int64_t>& from) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int64_t f : from) {
    auto it = slots_.find({key.instr, key.occurrence, f});
    if (it == slots_.end()) continue;
    --it->second.active_readers;
    it->second.done_readers.insert(key.device);
  }
  cv_.notify_all();
}

void Rendezvous::Withdraw(const SlotKey& key) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = slots_.find(key);
  if (it == slots_.end()) return;
  Slot& s = it->second;
  auto pending = [&s] {
    std::vector<int64_t> out;
    for (int64_t r : s.readers) {
      if (!s.done_readers.contains(r)) out.push_back(r);
    }
    return out;
  };
  Wait(lock, key, "until its operands have been read by",
       [&] {
         return s.done_readers.size() >= s.readers.size() ||
                (!abort_.ok() && s.active_readers == 0);
       },
       pending);
  slots_.erase(it);
  cv_.notify_all();
}

void Rendezvous::PostMessage(const MessageKey& key, Literal value) {
  std::lock_guard<std::mutex> lock(mu_);
  messages_[key] = std::move(value);
  cv_.notify_all();
}

void Rendezvous::PostRecv(int64_t channel, int64_t receiver) {
  std::lock_guard<std::mutex> lock(mu_);
  ++recvs_issued_[{channel, receiver}];
  cv_.notify_all();
}

absl::Status Rendezvous::AwaitRecv(const SlotKey& waiter, int64_t channel, int64_t receiver,
                                   int64_t sequence) {
  std::unique_lock<std::mutex> lock(mu_);
  auto issued = [&] {
    auto it = recvs_issued_.find({channel, receiver});
    return it != recvs_issued_.end() && it->second > sequence;
  };
  Wait(lock, waiter, StrCat("until the recv of channel ", channel, " is issued by"),
       [&] { return !abort_.ok() || issued(); },
       [&] { return issued() ? std::vector<int64_t>{} : std::vector<int64_t>{receiver}; });
  return abort_;
}

absl::StatusOr<Literal> Rendezvous::TakeMessage(const SlotKey& waiter, const MessageKey& key) {
  std::unique_lock<std::mutex> lock(mu_);
  Wait(lock, waiter, StrCat("for the value sent on channel ", key.channel, " by"),
       [&] { return !abort_.ok() || messages_.contains(key); },
       [&] {
         return messages_.contains(key) ? std::vector<int64_t>{}
                                        : std::vector<int64_t>{key.sender};
       });
  if (!abort_.ok()) return abort_;
  auto it = messages_.find(key);
  Literal value = std::move(it->second);
  messages_.erase(it);
  return value;
}

void Rendezvous::Wait(std::unique_lock<std::mutex>& lock, const SlotKey& key, std::string what,
                      std::function<bool()> ready,
                      std::function<std::vector<int64_t>()> blockers) {
  if (ready()) return;
  DeviceInfo& me = devices_[key.device];
  me.state = State::kWaiting;
  me.instr = key.instr;
  me.occurrence = key.occurrence;
  me.what = std::move(what);
  me.ready = ready;
  me.blockers = blockers;
  me.since = std::chrono::steady_clock::now();
  CheckDeadlockLocked();
  const auto timeout = std::chrono::duration<double>(options_.timeout_seconds);
  while (!ready()) {
    if (abort_.ok() && std::chrono::steady_clock::now() - me.since > timeout) {
      AbortLocked(absl::DeadlineExceededError(
          StrCat("collective timeout: ", DescribeWaitLocked(key.device), ", for more than ",
                 options_.timeout_seconds, " s")));
      continue;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  me.state = State::kRunning;
  me.ready = nullptr;
  me.blockers = nullptr;
}

void Rendezvous::CheckDeadlockLocked() {
  if (!abort_.ok()) return;
  bool any_waiting = false;
  for (const DeviceInfo& d : devices_) {
    if (d.state == State::kRunning) return;
    if (d.state == State::kWaiting) {
      any_waiting = true;
      if (d.ready()) return;
    }
  }
  if (!any_waiting) return;
  std::string msg = "collective deadlock: no device can continue";
  for (int64_t d = 0; d < static_cast<int64_t>(devices_.size()); ++d) {
    if (devices_[d].state == State::kWaiting) StrAppend(&msg, "\n  ", DescribeWaitLocked(d));
  }
  AbortLocked(absl::FailedPreconditionError(msg));
}

std::string Rendezvous::DescribeDeviceLocked(int64_t d) const {
  const DeviceInfo& info = devices_[d];
  std::string who = options_.grid.Describe(d);
  switch (info.state) {
    case State::kRunning:
      return StrCat(who, ", which is still running");
    case State::kFinished:
      return StrCat(who, ", which finished without reaching it");
    case State::kFailed:
      return StrCat(who, ", which failed");
    case State::kWaiting:
      return StrCat(who, ", which waits at ", RefAt(*info.instr, info.occurrence));
  }
  return who;
}

std::string Rendezvous::DescribeWaitLocked(int64_t d) const {
  const DeviceInfo& info = devices_[d];
  std::string msg = StrCat(options_.grid.Describe(d), " waits at ",
                           RefAt(*info.instr, info.occurrence), " ", info.what, " ");
  std::vector<int64_t> blockers = info.blockers ? info.blockers() : std::vector<int64_t>{};
  for (size_t i = 0; i < blockers.size(); ++i) {
    StrAppend(&msg, i == 0 ? "" : "; ", DescribeDeviceLocked(blockers[i]));
  }
  return msg;
}

}  // namespace hlowb
