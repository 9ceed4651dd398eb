#include "replay/backends/cpu/cpu_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/analysis/verifier.h"
#include "core/ir/computation.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/pipelines.h"
#include "core/support/strings.h"
#include "replay/backends/cpu/cpu_arena.h"
#include "replay/backends/cpu/cpu_fft.h"
#include "replay/backends/cpu/cpu_library_calls.h"
#include "replay/backends/cpu/cpu_sort_scatter.h"
#include "replay/backends/kernel_io.h"
#include "replay/codegen/cpu_jit.h"
#include "replay/evaluator/constant_evaluator.h"

namespace hlowb {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The computations the driver walks instruction by instruction, in the order first reached: the
// entry and what control flow (while, conditional, call, async) calls from it. Fused
// computations are compiled through their fusion instruction; reducers and other to_apply
// computations run per element inside their caller (a kernel, a library call, or the
// interpreter's typed loops).
std::vector<const Computation*> DriverComputations(const Module& module) {
  std::vector<const Computation*> order;
  std::set<const Computation*> seen;
  std::vector<const Computation*> stack;
  if (module.entry() != nullptr) stack.push_back(module.entry());
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    if (!seen.insert(c).second) continue;
    order.push_back(c);
    for (const Instruction* h : c->instructions()) {
      const Opcode op = h->opcode();
      if (op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall ||
          op == Opcode::kAsyncStart) {
        for (const Computation* callee : h->called_computations()) stack.push_back(callee);
      }
    }
  }
  return order;
}

// A fixed pool of worker threads for splitting one kernel's range. One ParallelFor at a time;
// a caller that finds the pool busy (another device's thread) runs its range itself.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int k = 1; k < threads; ++k) workers_.emplace_back([this] { Work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(begin, end) over [0, n) in `pieces` contiguous parts, boundaries rounded to `align`.
  void ParallelFor(int64_t n, int pieces, int64_t align,
                   const std::function<void(int64_t, int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(call_mu_, std::try_to_lock);
    if (!busy.owns_lock() || workers_.empty() || pieces <= 1) {
      fn(0, n);
      return;
    }
    std::vector<int64_t> bounds{0};
    for (int p = 1; p < pieces; ++p) {
      int64_t b = n * p / pieces;
      if (align > 1) b = b / align * align;
      if (b > bounds.back() && b < n) bounds.push_back(b);
    }
    bounds.push_back(n);
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      bounds_ = std::move(bounds);
      next_ = 1;  // piece 0 is the caller's
      remaining_ = static_cast<int>(bounds_.size()) - 1;
      ++generation_;
    }
    cv_.notify_all();
    RunPieces(true);
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [this] { return remaining_ == 0; });
    fn_ = nullptr;
  }

 private:
  // Takes pieces until none are left; the caller starts with piece 0.
  void RunPieces(bool caller) {
    for (bool first = caller;; first = false) {
      int piece;
      const std::function<void(int64_t, int64_t)>* fn;
      int64_t b, e;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (first) {
          piece = 0;
        } else {
          if (fn_ == nullptr || next_ >= static_cast<int>(bounds_.size()) - 1) return;
          piece = next_++;
        }
        fn = fn_;
        b = bounds_[piece];
        e = bounds_[piece + 1];
      }
      (*fn)(b, e);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (--remaining_ == 0) done_cv_.notify_all();
      }
    }
  }
  void Work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      RunPieces(false);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex call_mu_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  std::vector<int64_t> bounds_;
  int next_ = 0;
  int remaining_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace

// Instructions the code generator may take: everything computed elementally. Control flow,
// tuples, parameters and constants stay with the driver; the emitter refuses the rest itself.
bool IsKernelCandidate(const Instruction& h, bool convolutions) {
  if (h.opcode() == Opcode::kConvolution && convolutions) return h.shape().IsArray();
  switch (h.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kCustomCall:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDot:
    case Opcode::kConvolution:
      return false;
    default: break;
  }
  if (!h.shape().IsArray() && !(h.opcode() == Opcode::kFusion || h.opcode() == Opcode::kReduce)) {
    return false;
  }
  switch (OpcodeCategoryOf(h.opcode())) {
    case OpcodeCategory::kCollective:
    case OpcodeCategory::kAsync: return false;
    default: return true;
  }
}


std::vector<const Instruction*> KernelCandidates(const Module& module, bool convolutions) {
  std::vector<const Instruction*> candidates;
  for (const Computation* c : DriverComputations(module)) {
    for (const Instruction* h : c->instructions()) {
      if (IsKernelCandidate(*h, convolutions)) candidates.push_back(h);
    }
  }
  return candidates;
}

absl::StatusOr<std::string> CpuKernelIr(const Module& module, bool optimized) {
  return codegen::EmitLlvmIrText(KernelCandidates(module), optimized);
}

CpuTolerance CpuToleranceFor(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF64:
    case PrimitiveType::kC128: return {1e-9, 1e-9};
    case PrimitiveType::kF32:
    case PrimitiveType::kC64: return {1e-5, 1e-5};
    case PrimitiveType::kF16: return {1.0 / 1024, 1.0 / 1024};
    case PrimitiveType::kBF16: return {1.0 / 128, 1.0 / 128};
    default:
      if (IsSmallFloat(type)) return {0.25, 0.25};  // f8: one unit in the last place
      return {0, 0};
  }
}

struct CpuExecutable::Impl {
  std::unique_ptr<Module> module;
  std::unique_ptr<codegen::CpuJit> jit;
  std::unordered_map<const Instruction*, codegen::KernelInfo> kernels;
  // In-place forms of dynamic-update-slices and of fusions whose root is one.
  std::unordered_map<const Instruction*, codegen::KernelInfo> in_place_kernels;
  // Compiled comparators and combiners of the sorts and scatters the driver meets.
  std::unordered_map<const Instruction*, codegen::ScalarFn> sort_scatter_fns;
  CpuCompileStats stats;
  std::vector<std::pair<std::string, std::string>> not_compiled;
  std::unique_ptr<ThreadPool> pool;
  // The arena runtime's plan; null when the module runs on the driver (arena_refused says why).
  std::unique_ptr<cpu::ArenaProgram> arena;
};

CpuExecutable::CpuExecutable() : impl_(std::make_unique<Impl>()) {}
CpuExecutable::~CpuExecutable() = default;
const Module& CpuExecutable::module() const { return *impl_->module; }
const CpuCompileStats& CpuExecutable::stats() const { return impl_->stats; }
bool CpuExecutable::RunsInArena() const { return impl_->arena != nullptr; }
bool CpuExecutable::IsCompiled(const Instruction& instr) const {
  return impl_->kernels.count(&instr) > 0;
}
const std::vector<std::pair<std::string, std::string>>& CpuExecutable::not_compiled() const {
  return impl_->not_compiled;
}

absl::StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::Compile(
    const Module& module, const CpuCompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CpuExecutable> exe(new CpuExecutable());
  Impl& impl = *exe->impl_;
  absl::StatusOr<std::unique_ptr<Module>> prepared = PrepareModuleForKernels(
      module, "cpu", options.run_hlo_passes, options.pass_options, options.dump_options,
      options.cancel, &impl.stats.pass_seconds, &impl.stats.dump_files);
  if (!prepared.ok()) return prepared.status();
  impl.module = std::move(*prepared);
  std::string dump_prefix;
  {
    ModuleDumper dumper(options.dump_options, *impl.module);
    if (dumper.enabled()) dump_prefix = dumper.file_prefix();
  }
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  impl.pool = std::make_unique<ThreadPool>(threads);

  codegen::JitOptions jo;
  jo.opt_level = options.opt_level;
  jo.cache_dir = options.cache_dir;
  jo.compile_threads = threads;
  jo.cancel = options.cancel;
  if (!dump_prefix.empty()) {
    jo.dump_dir = options.dump_options.dump_to;
    jo.dump_prefix = dump_prefix;
  }
  auto cg_start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<codegen::CpuJit>> jit = codegen::CpuJit::Create(jo);
  if (!jit.ok()) return jit.status();
  impl.jit = std::move(*jit);

  std::vector<const Instruction*> candidates = KernelCandidates(*impl.module);
  std::vector<codegen::RefusedInstruction> refused;
  absl::StatusOr<std::vector<codegen::KernelInfo>> kernels = impl.jit->Compile(candidates, &refused);
  if (!kernels.ok()) return kernels.status();
  auto keep = [&impl](std::vector<codegen::KernelInfo>& compiled) {
    for (codegen::KernelInfo& k : compiled) {
      (k.in_place_operand < 0 ? impl.kernels : impl.in_place_kernels)
          .emplace(k.instruction, std::move(k));
    }
  };
  keep(*kernels);
  // A fusion the generator refused runs its fused computation on the driver: compile that
  // computation's instructions one by one instead.
  std::vector<const Instruction*> second;
  std::vector<codegen::RefusedInstruction> final_refused;
  for (const codegen::RefusedInstruction& r : refused) {
    if (r.instruction->opcode() == Opcode::kFusion && !r.instruction->called_computations().empty()) {
      for (const Instruction* h : r.instruction->called_computations()[0]->instructions()) {
        if (IsKernelCandidate(*h)) second.push_back(h);
      }
    }
    final_refused.push_back(r);
  }
  // Sorts and scatters the driver meets (tuple-shaped, variadic ones too, which are not kernel
  // candidates): their comparators and combiners are compiled for the library calls.
  std::vector<const Instruction*> sorts_and_scatters;
  {
    const std::vector<const Computation*> driven = DriverComputations(*impl.module);
    std::set<const Computation*> walked(driven.begin(), driven.end());
    for (const Instruction* h : second) walked.insert(h->parent());
    for (const auto& c : impl.module->computations()) {
      if (walked.count(c.get()) == 0) continue;
      for (const Instruction* h : c->instructions()) {
        if ((h->opcode() == Opcode::kSort || h->opcode() == Opcode::kScatter) &&
            cpu::LibrarySortScatterTakes(*h)) {
          sorts_and_scatters.push_back(h);
        }
      }
    }
  }
  std::unordered_map<const Instruction*, std::string> sort_scatter_refused;
  if (!sorts_and_scatters.empty()) {
    std::vector<const Computation*> computations;
    for (const Instruction* h : sorts_and_scatters) {
      computations.push_back(h->called_computations()[0]);
    }
    std::vector<std::string> reasons;
    absl::StatusOr<std::vector<codegen::ScalarFn>> fns =
        impl.jit->CompileScalarFunctions(computations, &reasons);
    if (!fns.ok()) return fns.status();
    for (size_t k = 0; k < sorts_and_scatters.size(); ++k) {
      if ((*fns)[k] != nullptr) {
        impl.sort_scatter_fns[sorts_and_scatters[k]] = (*fns)[k];
      } else {
        sort_scatter_refused[sorts_and_scatters[k]] =
            StrCat("comparator or combiner: ", reasons[k]);
      }
    }
  }
  if (!second.empty()) {
    std::vector<codegen::RefusedInstruction> refused2;
    absl::StatusOr<std::vector<codegen::KernelInfo>> more = impl.jit->Compile(second, &refused2);
    if (!more.ok()) return more.status();
    keep(*more);
    for (codegen::RefusedInstruction& r : refused2) final_refused.push_back(std::move(r));
  }
  impl.stats.codegen_seconds = Since(cg_start);
  // What the interpreter computes: refused candidates, custom calls, and the dots,
  // convolutions and rng-bit-generators the library calls do not take.
  for (const auto& c : impl.module->computations()) {
    for (const Instruction* h : c->instructions()) {
      const bool product = h->opcode() == Opcode::kDot || h->opcode() == Opcode::kConvolution;
      const bool rng = h->opcode() == Opcode::kRngBitGenerator;
      if (((product || rng) && cpu::LibraryTakes(*h)) ||
          (!IsKernelCandidate(*h) && impl.sort_scatter_fns.count(h) > 0)) {
        ++impl.stats.library_calls;  // variadic sorts and scatters are not among the refused
        continue;
      }
      if (!product && !rng && h->opcode() != Opcode::kCustomCall) continue;
      ++impl.stats.interpreted;
      ++impl.stats.interpreted_by_opcode[std::string(OpcodeName(h->opcode()))];
      if (product) {
        impl.not_compiled.emplace_back(
            h->name(), "the library calls take f32, bf16 and f16 dots and convolutions "
                       "(no batch groups, sparsity or empty shapes)");
      } else if (rng) {
        impl.not_compiled.emplace_back(
            h->name(), "the library call takes philox generators of 8- to 64-bit types");
      }
    }
  }
  for (const codegen::RefusedInstruction& r : final_refused) {
    if (r.instruction->opcode() == Opcode::kFusion) continue;  // counted through its body
    if (cpu::LibraryTakes(*r.instruction) || impl.sort_scatter_fns.count(r.instruction) > 0) {
      ++impl.stats.library_calls;
      continue;
    }
    ++impl.stats.interpreted;
    ++impl.stats.interpreted_by_opcode[std::string(OpcodeName(r.instruction->opcode()))];
    auto why = sort_scatter_refused.find(r.instruction);
    impl.not_compiled.emplace_back(r.instruction->name(),
                                   why != sort_scatter_refused.end() ? why->second : r.reason);
  }
  const codegen::JitStats& js = impl.jit->stats();
  impl.stats.kernels = static_cast<int64_t>(impl.kernels.size());
  impl.stats.in_place_kernels = static_cast<int64_t>(impl.in_place_kernels.size());
  impl.stats.cache_hits = js.cache_hits;
  impl.stats.shared_kernels = js.shared_kernels;
  impl.stats.cache_misses = js.cache_misses;
  impl.stats.corrupt_cache_entries = js.corrupt_cache_entries;
  impl.stats.dump_files.insert(impl.stats.dump_files.end(), js.dump_files.begin(),
                               js.dump_files.end());
  if (!options.run_hlo_passes) {
    impl.stats.arena_refused = "the module was not compiled by the cpu pipeline (its copies "
                               "may not make buffer sharing safe)";
  } else if (!options.arena) {
    impl.stats.arena_refused = "switched off";
  } else {
    absl::StatusOr<std::unique_ptr<cpu::ArenaProgram>> arena =
        cpu::ArenaProgram::Plan(*impl.module);
    if (arena.ok()) {
      impl.arena = *std::move(arena);
      impl.stats.arena_bytes = impl.arena->stats().total_bytes();
    } else {
      impl.stats.arena_refused = std::string(arena.status().message());
    }
  }
  impl.stats.total_seconds = Since(start);
  return exe;
}

std::string CpuExecutable::Summary() const {
  const CpuCompileStats& s = impl_->stats;
  std::string by;
  std::vector<std::pair<int64_t, std::string>> sorted;
  for (const auto& [op, n] : s.interpreted_by_opcode) sorted.emplace_back(-n, op);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [n, op] : sorted) StrAppend(&by, by.empty() ? "" : ", ", op, " ", -n);
  char secs[160];
  std::snprintf(secs, sizeof secs, "compiled in %.2f s (passes %.2f s, LLVM %.2f s; cache %lld hit%s, %lld miss%s)",
                s.total_seconds, s.pass_seconds, s.codegen_seconds,
                static_cast<long long>(s.cache_hits), s.cache_hits == 1 ? "" : "s",
                static_cast<long long>(s.cache_misses), s.cache_misses == 1 ? "" : "es");
  return StrCat(s.kernels, " kernel", s.kernels == 1 ? "" : "s",
                s.shared_kernels > 0 ? StrCat(" (", s.kernels - s.shared_kernels, " distinct)")
                                     : std::string(),
                s.in_place_kernels > 0
                    ? StrCat(" (", s.in_place_kernels, " with an in-place form)")
                    : std::string(),
                "; ", s.library_calls,
                " library call", s.library_calls == 1 ? "" : "s", "; ", s.interpreted,
                " instruction", s.interpreted == 1 ? "" : "s", " on the interpreter",
                by.empty() ? std::string() : StrCat(" (", by, ")"), "; ",
                s.arena_refused.empty()
                    ? StrCat("runs in a ", HumanReadableNumBytes(s.arena_bytes), " arena")
                    : StrCat("runs on the driver (", s.arena_refused, ")"),
                "; ", secs);
}

namespace {

// Runs kernel `k` over its iteration space (`dims`, row-major) on `pool`, split into pieces
// when the work pays for the threads.
void LaunchKernel(const codegen::KernelInfo& k, const std::vector<void*>& buffers,
                  const std::vector<int64_t>& dims, ThreadPool* pool) {
  const int64_t n = k.iteration_count;
  if (n <= 0) return;
  const int64_t work = n * k.cost_per_element;
  const int threads = pool->size();
  int pieces = 1;
  if (work >= (int64_t{1} << 15) && threads > 1) {
    pieces = static_cast<int>(std::min<int64_t>(threads * 4, std::max<int64_t>(1, work >> 14)));
    pieces = static_cast<int>(std::min<int64_t>(pieces, n));
  }
  const int64_t inner = dims.empty() ? 1 : dims.back();
  const codegen::KernelFn fn = k.fn;
  void* const* bufs = buffers.data();
  pool->ParallelFor(n, pieces, inner > 0 && n / std::max<int64_t>(inner, 1) >= pieces ? inner : 1,
                    [fn, bufs](int64_t b, int64_t e) { fn(bufs, b, e); });
}

// The input buffers of kernel `k`: the operands' storage, then the array constants it reads.
// std::nullopt when an operand is not an array or a constant has no value (the instruction is
// then computed another way); an error naming a constant whose elided data cannot be made.
std::optional<absl::Status> KernelInputs(
    const codegen::KernelInfo& k, const std::vector<void*>& ops,
    const std::function<absl::StatusOr<Literal>(const Instruction&)>& elided_constant,
    ConstantCache* constant_cache, std::vector<void*>* buffers) {
  buffers->reserve(ops.size() + k.constants.size() + k.num_outputs);
  buffers->insert(buffers->end(), ops.begin(), ops.end());
  std::optional<absl::StatusOr<std::vector<const Literal*>>> constants =
      KernelConstantLiterals(k.constants, elided_constant, constant_cache);
  if (!constants.has_value()) return std::nullopt;
  if (!constants->ok()) return constants->status();
  for (const Literal* lit : **constants) {
    buffers->push_back(const_cast<uint8_t*>(lit->data().data()));
  }
  return absl::OkStatus();
}

// Runs kernel `k` of `instr`, reading `ops` (its operands' storage) and writing `outs`: the
// result's arrays, or for an in-place kernel the updated operand's storage, over the update.
// std::nullopt and errors as KernelInputs.
std::optional<absl::Status> RunKernel(
    const codegen::KernelInfo& k, const Instruction& instr, const std::vector<void*>& ops,
    const std::vector<void*>& outs,
    const std::function<absl::StatusOr<Literal>(const Instruction&)>& elided_constant,
    ConstantCache* constant_cache, ThreadPool* pool) {
  std::vector<void*> buffers;
  std::optional<absl::Status> inputs =
      KernelInputs(k, ops, elided_constant, constant_cache, &buffers);
  if (!inputs.has_value() || !inputs->ok()) return inputs;
  buffers.insert(buffers.end(), outs.begin(), outs.end());
  if (k.in_place_operand >= 0) {
    const Instruction* root =
        instr.opcode() == Opcode::kFusion ? instr.called_computations()[0]->root() : &instr;
    LaunchKernel(k, buffers, root->operand(1)->shape().dimensions(), pool);
  } else {
    const Shape& shape = instr.shape();
    LaunchKernel(k, buffers, shape.IsArray() ? shape.dimensions() : std::vector<int64_t>{}, pool);
  }
  return absl::OkStatus();
}

// The storage of array operands; std::nullopt when one is not an array.
std::optional<std::vector<void*>> ArrayData(const std::vector<const Literal*>& ops) {
  std::vector<void*> out;
  out.reserve(ops.size());
  for (const Literal* op : ops) {
    if (!op->shape().IsArray()) return std::nullopt;
    out.push_back(const_cast<uint8_t*>(op->data().data()));
  }
  return out;
}

// Whether every operand of `instr` is an array (kernels read arrays only).
bool ArrayOperands(const Instruction& instr) {
  for (const Instruction* op : instr.operands()) {
    if (!op->shape().IsArray()) return false;
  }
  return true;
}

// A cache for elided constants when the caller gives none: one per hook.
ConstantCache* OwnCacheIfNone(ConstantCache* cache, std::shared_ptr<ConstantCache>* own) {
  if (cache != nullptr) return cache;
  *own = std::make_shared<ConstantCache>();
  return own->get();
}

}  // namespace

std::function<std::optional<absl::Status>(const Instruction&, const std::vector<const Literal*>&,
                                          Literal*)>
CpuExecutable::InPlaceHook(
    std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant,
    ConstantCache* constant_cache) const {
  const Impl* impl = impl_.get();
  std::shared_ptr<ConstantCache> own_cache;
  constant_cache = OwnCacheIfNone(constant_cache, &own_cache);
  return [impl, elided_constant, constant_cache, own_cache](
             const Instruction& instr, const std::vector<const Literal*>& ops,
             Literal* value) -> std::optional<absl::Status> {
    auto it = impl->in_place_kernels.find(&instr);
    if (it == impl->in_place_kernels.end()) return std::nullopt;
    const codegen::KernelInfo& k = it->second;
    if (k.in_place_operand < 0 || k.in_place_operand >= static_cast<int>(ops.size()) ||
        ops[k.in_place_operand] != value || !value->shape().IsArray()) {
      return std::nullopt;
    }
    std::optional<std::vector<void*>> data = ArrayData(ops);
    if (!data.has_value()) return std::nullopt;
    return RunKernel(k, instr, *data, {value->mutable_data()->data()}, elided_constant,
                     constant_cache, impl->pool.get());
  };
}

std::function<std::optional<absl::StatusOr<Literal>>(const Instruction&,
                                                     const std::vector<const Literal*>&)>
CpuExecutable::Hook(std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant,
                    ConstantCache* constant_cache) const {
  const Impl* impl = impl_.get();
  std::shared_ptr<ConstantCache> own_cache;
  constant_cache = OwnCacheIfNone(constant_cache, &own_cache);
  // The library calls split their conversions and unrolling across the kernels' pool.
  ThreadPool* pool = impl->pool.get();
  cpu::ParallelFor parallel_for = [pool](int64_t n, int64_t grain,
                                         const std::function<void(int64_t, int64_t)>& body) {
    if (n <= 0) return;
    const int64_t parts = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
    pool->ParallelFor(n, static_cast<int>(std::min<int64_t>(pool->size() * 4, parts)), 1, body);
  };
  return [impl, elided_constant, constant_cache, own_cache, parallel_for](
             const Instruction& instr,
             const std::vector<const Literal*>& ops) -> std::optional<absl::StatusOr<Literal>> {
    // Library calls: std::nullopt for what they do not take (the kernels or the interpreter
    // compute it). The working buffers they allocate (f32 or f64 copies, unrolled windows,
    // permutations) are outside the evaluator's memory budget, so running out of memory there
    // is an error naming the instruction.
    auto library_call = [&]() -> std::optional<absl::StatusOr<Literal>> {
      switch (instr.opcode()) {
        case Opcode::kFft:
          if (ops.size() != 1) return std::nullopt;
          return cpu::LibraryFft(instr, *ops[0], parallel_for);
        case Opcode::kRngBitGenerator:
          if (ops.size() != 1) return std::nullopt;
          return cpu::LibraryRngBitGenerator(instr, *ops[0], parallel_for);
        case Opcode::kSort:
        case Opcode::kScatter: {
          auto fn = impl->sort_scatter_fns.find(&instr);
          if (fn == impl->sort_scatter_fns.end()) return std::nullopt;
          return instr.opcode() == Opcode::kSort
                     ? cpu::LibrarySort(instr, ops, fn->second, parallel_for)
                     : cpu::LibraryScatter(instr, ops, fn->second, parallel_for);
        }
        case Opcode::kDot:
        case Opcode::kConvolution:
        case Opcode::kGather:
          if (ops.size() != 2) return std::nullopt;
          if (instr.opcode() == Opcode::kDot) {
            return cpu::LibraryDot(instr, *ops[0], *ops[1], parallel_for);
          }
          if (instr.opcode() == Opcode::kConvolution) {
            return cpu::LibraryConvolution(instr, *ops[0], *ops[1], parallel_for);
          }
          return cpu::LibraryGather(instr, *ops[0], *ops[1], parallel_for);
        default:
          return std::nullopt;
      }
    };
    try {
      if (std::optional<absl::StatusOr<Literal>> r = library_call(); r.has_value()) return r;
    } catch (const std::bad_alloc&) {
      return absl::StatusOr<Literal>(absl::ResourceExhaustedError(
          StrCat("cpu: out of memory for the working buffers of %", instr.name(), " (",
                 OpcodeName(instr.opcode()), ")")));
    }
    auto it = impl->kernels.find(&instr);
    if (it == impl->kernels.end()) return std::nullopt;
    const codegen::KernelInfo& k = it->second;
    std::optional<std::vector<void*>> data = ArrayData(ops);
    if (!data.has_value()) return std::nullopt;
    Literal result;
    std::vector<Literal*> outs;
    MakeKernelResult(instr.shape(), &result, &outs);
    if (static_cast<int>(outs.size()) != k.num_outputs) return std::nullopt;
    std::vector<void*> out_data;
    for (Literal* o : outs) out_data.push_back(o->mutable_data()->data());
    std::optional<absl::Status> ran = RunKernel(k, instr, *data, out_data, elided_constant,
                                                constant_cache, impl->pool.get());
    if (!ran.has_value()) return std::nullopt;
    if (!ran->ok()) return absl::StatusOr<Literal>(*ran);
    return absl::StatusOr<Literal>(std::move(result));
  };
}

cpu::ArenaCode CpuExecutable::ArenaCodeFor(
    std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant,
    ConstantCache* constant_cache) const {
  const Impl* impl = impl_.get();
  std::shared_ptr<ConstantCache> own_cache;
  constant_cache = OwnCacheIfNone(constant_cache, &own_cache);
  cpu::ArenaCode code;
  code.kernel = [impl, elided_constant, constant_cache, own_cache](
                    const Instruction& instr, const std::vector<void*>& ops,
                    const std::vector<void*>& outs) -> std::optional<absl::Status> {
    auto it = impl->kernels.find(&instr);
    if (it == impl->kernels.end() || !ArrayOperands(instr)) return std::nullopt;
    const codegen::KernelInfo& k = it->second;
    if (static_cast<int>(outs.size()) != k.num_outputs) return std::nullopt;
    return RunKernel(k, instr, ops, outs, elided_constant, constant_cache, impl->pool.get());
  };
  code.in_place_kernel = [impl, elided_constant, constant_cache, own_cache](
                             const Instruction& instr,
                             const std::vector<void*>& ops) -> std::optional<absl::Status> {
    auto it = impl->in_place_kernels.find(&instr);
    if (it == impl->in_place_kernels.end() || !ArrayOperands(instr)) return std::nullopt;
    const codegen::KernelInfo& k = it->second;
    if (k.in_place_operand < 0 || k.in_place_operand >= static_cast<int>(ops.size())) {
      return std::nullopt;
    }
    return RunKernel(k, instr, ops, {ops[k.in_place_operand]}, elided_constant, constant_cache,
                     impl->pool.get());
  };
  return code;
}

absl::StatusOr<Literal> CpuExecutable::Run(const std::vector<Literal>& arguments,
                                           EvaluatorOptions options) const {
  options.compiled = Hook(options.elided_constant, options.constant_cache);
  options.compiled_in_place = InPlaceHook(options.elided_constant, options.constant_cache);
  if (impl_->arena != nullptr) {
    const cpu::ArenaCode code = ArenaCodeFor(options.elided_constant, options.constant_cache);
    return impl_->arena->Run(arguments, options, code);
  }
  return EvaluateModule(*impl_->module, arguments, options);
}

}  // namespace hlowb
