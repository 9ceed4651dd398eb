// PTX from the elemental emitter: the emitter writes each kernel in its CPU form,
// `void name(ptr buffers, i64 begin, i64 end)`; here that function becomes an always-inlined
// helper of a `.entry` kernel `name(ptr buffers, i64 count)` that walks the elements with a
// grid-stride loop, one element per thread per step, so neighbouring threads touch neighbouring
// elements. Math calls (LLVM intrinsics the NVPTX backend cannot select, and the C library names
// the emitter calls) are bound to libdevice's __nv_* functions, libdevice is linked in (only what
// is used), everything but the kernels is internalised, and the module is optimised at the
// requested level (NVPTX's own pipeline hooks resolve __nvvm_reflect) and printed as PTX.
#include "replay/codegen/gpu_codegen.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "core/ir/computation.h"
#include "core/support/strings.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"
#include "replay/codegen/gpu_emulator.h"
#include "replay/codegen/llvm_passes.h"

namespace hlowb::codegen {
namespace {

constexpr char kTriple[] = "nvptx64-nvidia-cuda";

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What the NVPTX code generator is doing on this thread, for the message of a fatal LLVM error
// (LLVM ends the process after one; in the app, replays run in a worker process).
thread_local std::string current_work;

void OnFatalLlvmError(void*, const char* reason, bool) {
  std::fprintf(stderr,
               "hlowb: the GPU code generator (LLVM NVPTX) failed%s%s: %s\n"
               "This is a bug in hlowb's cuda platform; the module still runs with "
               "--platform=cpu or --platform=interpreter.\n",
               current_work.empty() ? "" : " while ", current_work.c_str(), reason);
}

void InitializeNvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(OnFatalLlvmError, nullptr);
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}


// The libdevice function for an LLVM math intrinsic the NVPTX backend does not select (or
// selects only approximately), by intrinsic and float width.
std::string LibdeviceForIntrinsic(llvm::Intrinsic::ID id, bool f32) {
  const char* base = nullptr;
  switch (id) {
    case llvm::Intrinsic::exp: base = "exp"; break;
    case llvm::Intrinsic::exp2: base = "exp2"; break;
    case llvm::Intrinsic::log: base = "log"; break;
    case llvm::Intrinsic::log2: base = "log2"; break;
    case llvm::Intrinsic::log10: base = "log10"; break;
    case llvm::Intrinsic::sin: base = "sin"; break;
    case llvm::Intrinsic::cos: base = "cos"; break;
    case llvm::Intrinsic::pow: base = "pow"; break;
    case llvm::Intrinsic::round: base = "round"; break;
    case llvm::Intrinsic::copysign: base = "copysign"; break;
    default: return "";
  }
  return StrCat("__nv_", base, f32 ? "f" : "");
}

// C library names the emitter calls (CallMath), with and without the f32 "f" suffix.
bool IsLibmName(const std::string& name) {
  static const std::set<std::string> names = [] {
    std::set<std::string> s;
    for (const char* b : {"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt",
                          "cosh", "erf", "expm1", "log1p", "sinh", "tan", "tanh", "exp", "log",
                          "sin", "cos", "pow", "exp2", "log2", "log10", "round", "copysign",
                          "fmod", "hypot", "erfc", "lgamma", "tgamma"}) {
      s.insert(b);
      s.insert(StrCat(b, "f"));
    }
    return s;
  }();
  return names.count(name) > 0;
}

// Binds every math declaration in `m` to its libdevice name.
void BindMathToLibdevice(llvm::Module* m) {
  std::vector<llvm::Function*> decls;
  for (llvm::Function& f : *m) {
    if (f.isDeclaration()) decls.push_back(&f);
  }
  for (llvm::Function* f : decls) {
    std::string target;
    if (f->isIntrinsic()) {
      llvm::Type* t = f->getReturnType();
      if (!t->isFloatTy() && !t->isDoubleTy()) continue;
      target = LibdeviceForIntrinsic(f->getIntrinsicID(), t->isFloatTy());
    } else if (IsLibmName(f->getName().str())) {
      target = StrCat("__nv_", f->getName().str());
    }
    if (target.empty()) continue;
    llvm::FunctionCallee callee = m->getOrInsertFunction(target, f->getFunctionType());
    f->replaceAllUsesWith(callee.getCallee());
    f->eraseFromParent();
  }
}

// Functions reachable from `root` through direct calls.
std::set<const llvm::Function*> Reachable(const llvm::Function* root) {
  std::set<const llvm::Function*> seen{root};
  std::vector<const llvm::Function*> stack{root};
  while (!stack.empty()) {
    const llvm::Function* f = stack.back();
    stack.pop_back();
    for (const llvm::BasicBlock& bb : *f) {
      for (const llvm::Instruction& i : bb) {
        const auto* call = llvm::dyn_cast<llvm::CallBase>(&i);
        if (call == nullptr) continue;
        const llvm::Function* callee = call->getCalledFunction();
        if (callee != nullptr && seen.insert(callee).second) stack.push_back(callee);
      }
    }
  }
  return seen;
}

// Erases internal functions nothing uses any more, until none is left.
void EraseDeadFunctions(llvm::Module* m) {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = m->begin(); it != m->end();) {
      llvm::Function& f = *it++;
      if ((f.hasLocalLinkage() || f.isDeclaration()) && f.use_empty() && !f.isIntrinsic()) {
        f.eraseFromParent();
        changed = true;
      }
    }
  }
}

absl::StatusOr<int> ParseSm(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5) {
    return absl::InvalidArgumentError(StrCat("GPU target '", arch, "' is not of the form sm_NN"));
  }
  int sm = 0;
  for (size_t i = 3; i < arch.size(); ++i) {
    const char c = arch[i];
    if (c == 'a' && i + 1 == arch.size()) break;  // sm_90a: the same PTX target here
    if (c < '0' || c > '9' || sm > 10000) {
      return absl::InvalidArgumentError(StrCat("GPU target '", arch, "' is not of the form sm_NN"));
    }
    sm = sm * 10 + (c - '0');
  }
  if (sm < 30) return absl::InvalidArgumentError(StrCat("GPU target '", arch, "' is too old"));
  return sm;
}

// Whether `h` (or what it fuses) reduces: such kernels do much work per element, so each thread
// takes one element.
bool Reduces(const Instruction& h) {
  auto reducing = [](Opcode op) {
    return op == Opcode::kReduce || op == Opcode::kReduceWindow ||
           op == Opcode::kSelectAndScatter || op == Opcode::kDot || op == Opcode::kConvolution;
  };
  if (reducing(h.opcode())) return true;
  if (h.opcode() == Opcode::kFusion && !h.called_computations().empty()) {
    for (const Instruction* f : h.called_computations()[0]->instructions()) {
      if (reducing(f->opcode())) return true;
    }
  }
  return false;
}

constexpr int kBlockSize = 256;

// The `.entry` kernel around the emitter's range function: block b covers the elements
// [b * B * per_thread, (b + 1) * B * per_thread) for its B = kBlockSize threads, thread t taking
// every B-th of them from the block's start + t; blocks then stride by the grid.
// A cooperative kernel (`group` > 1 threads per element) gives each group of `group`
// consecutive threads one element per step instead: group g of the block takes element
// b * (B / group) + g, and the groups stride by the grid.
void AddKernel(llvm::Module* m, llvm::Function* range, const std::string& name, int per_thread,
               int group) {
  llvm::LLVMContext& ctx = m->getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Function* k = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt64Ty()}, false),
      llvm::GlobalValue::ExternalLinkage, name, m);
  k->addFnAttr(llvm::Attribute::NoUnwind);
  k->addParamAttr(0, llvm::Attribute::NoAlias);
  k->addParamAttr(0, llvm::Attribute::ReadOnly);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", k);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "loop", k);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", k);
  b.SetInsertPoint(entry);
  auto sreg = [&](llvm::Intrinsic::ID id) -> llvm::Value* {
    llvm::Function* f = llvm::Intrinsic::getDeclaration(m, id);
    return b.CreateZExt(b.CreateCall(f), b.getInt64Ty());
  };
  llvm::Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* ntid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* ctaid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* nctaid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
  llvm::Value* per = b.getInt64(per_thread);
  llvm::Value* first = nullptr;
  llvm::Value* stride = nullptr;
  if (group > 1) {
    llvm::Value* groups = b.CreateUDiv(ntid, b.getInt64(group));
    first = b.CreateAdd(b.CreateMul(ctaid, groups), b.CreateUDiv(tid, b.getInt64(group)), "first");
    stride = b.CreateMul(nctaid, groups, "stride");
  } else {
    first = b.CreateAdd(b.CreateMul(b.CreateMul(ctaid, ntid), per), tid, "first");
    stride = b.CreateMul(b.CreateMul(nctaid, ntid), per, "stride");
  }
  llvm::Value* count = k->getArg(1);
  b.CreateCondBr(b.CreateICmpSLT(first, count), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(first, entry);
  // One element per call takes [i, i + 1); more take i + k * B below the count.
  llvm::Value* last = per_thread == 1 ? b.CreateAdd(i, per) : count;
  b.CreateCall(range, {k->getArg(0), i, last});
  llvm::Value* next = b.CreateAdd(i, stride, "next");
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, count), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  llvm::NamedMDNode* annotations = m->getOrInsertNamedMetadata("nvvm.annotations");
  annotations->addOperand(llvm::MDNode::get(
      ctx, {llvm::ValueAsMetadata::get(k), llvm::MDString::get(ctx, "kernel"),
            llvm::ConstantAsMetadata::get(b.getInt32(1))}));
}

// The buffers a kernel reads from its table are device (global) memory: saying so lets the
// backend use ld.global/st.global instead of generic accesses. Done after optimisation (the
// kernel's body is inlined by then), since instcombine would fold the cast pair away; the
// NVPTX code generator's address-space inference then moves the accesses to the global space.
void MarkBuffersGlobal(llvm::Function* kernel) {
  llvm::Argument* table = kernel->getArg(0);
  std::vector<llvm::LoadInst*> loads;
  for (llvm::BasicBlock& bb : *kernel) {
    for (llvm::Instruction& i : bb) {
      auto* load = llvm::dyn_cast<llvm::LoadInst>(&i);
      if (load == nullptr || !load->getType()->isPointerTy()) continue;
      llvm::Value* from = load->getPointerOperand()->stripInBoundsConstantOffsets();
      if (from == table) loads.push_back(load);
    }
  }
  llvm::LLVMContext& ctx = kernel->getContext();
  llvm::MDNode* align = llvm::MDNode::get(
      ctx, {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), 256))});
  for (llvm::LoadInst* load : loads) {
    load->setMetadata(llvm::LLVMContext::MD_align, align);
    llvm::IRBuilder<> b(load->getNextNode());
    llvm::Value* global = b.CreateAddrSpaceCast(load, b.getPtrTy(1));
    llvm::Value* generic = b.CreateAddrSpaceCast(global, b.getPtrTy(0));
    load->replaceUsesWithIf(generic, [&](llvm::Use& u) { return u.getUser() != global; });
  }
}

// Even at O0 the always-inline pass runs, and NVPTX's pipeline-start hook resolves
// __nvvm_reflect, which libdevice needs before code generation. One element per thread leaves
// the loop vectoriser nothing to do.
void Optimize(llvm::Module* m, llvm::TargetMachine* tm, int opt_level) {
  RunDefaultPipeline(m, tm, opt_level, nullptr, /*loop_vectorize=*/false);
}

absl::Status WriteFile(const std::string& path, const std::string& text,
                       std::vector<std::string>* written) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) return absl::InternalError(StrCat("cannot write ", path));
  written->push_back(path);
  return absl::OkStatus();
}

}  // namespace

std::string FindLibdevice() {
  if (const char* p = std::getenv("HLOWB_LIBDEVICE"); p != nullptr && *p != 0) {
    if (std::filesystem::exists(p)) return p;
  }
  std::vector<std::string> roots;
  for (const char* env : {"CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"}) {
    if (const char* p = std::getenv(env); p != nullptr && *p != 0) roots.push_back(p);
  }
  roots.push_back("/usr/local/cuda");
  roots.push_back("/usr/lib/cuda");
  roots.push_back("/usr/lib/nvidia-cuda-toolkit");
  for (const std::string& r : roots) {
    std::error_code ec;
    std::string path = r + "/nvvm/libdevice/libdevice.10.bc";
    if (std::filesystem::exists(path, ec)) return path;
  }
  return "";
}

int MaxNvptxSm() { return 90; }

absl::StatusOr<std::string> ClampGpuArch(const std::string& arch) {
  absl::StatusOr<int> sm = ParseSm(arch);
  if (!sm.ok()) return sm.status();
  return StrCat("sm_", std::min(*sm, MaxNvptxSm()));
}

struct GpuEmulation::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::map<std::string, EmulatedKernelFn> entries;
};

GpuEmulation::GpuEmulation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuEmulation::~GpuEmulation() = default;

absl::Status GpuEmulation::Launch(const GpuKernelInfo& kernel, void* table, int64_t count,
                                  int64_t grid, const CancelToken* cancel) const {
  auto it = impl_->entries.find(kernel.kernel_name);
  if (it == impl_->entries.end()) {
    return absl::NotFoundError(StrCat("GPU emulator: no kernel ", kernel.kernel_name));
  }
  EmulatedLaunch launch;
  launch.fn = it->second;
  launch.table = table;
  launch.count = count;
  launch.grid = grid;
  launch.block = kernel.block_size;
  launch.collectives = kernel.threads_per_element > 1;
  return EmulateLaunch(launch, cancel);
}

namespace {

// Emulated kernels call the emulator where PTX reads special registers, shuffles and waits at
// barriers. Error: an NVVM intrinsic the emulator does not provide.
absl::Status BindNvvmToEmulator(llvm::Module* m) {
  std::vector<llvm::Function*> intrinsics;
  for (llvm::Function& f : *m) {
    if (f.isIntrinsic() && f.getName().startswith("llvm.nvvm.")) intrinsics.push_back(&f);
  }
  for (llvm::Function* f : intrinsics) {
    const char* target = nullptr;
    switch (f->getIntrinsicID()) {
      case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x: target = "hlowb_emu_tid_x"; break;
      case llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x: target = "hlowb_emu_ntid_x"; break;
      case llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x: target = "hlowb_emu_ctaid_x"; break;
      case llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x: target = "hlowb_emu_nctaid_x"; break;
      case llvm::Intrinsic::nvvm_shfl_sync_down_i32: target = "hlowb_emu_shfl_down_i32"; break;
      case llvm::Intrinsic::nvvm_barrier0: target = "hlowb_emu_barrier"; break;
      default:
        return absl::InternalError(
            StrCat("the GPU emulator has no ", f->getName().str(), " (used by a kernel)"));
    }
    llvm::FunctionCallee callee = m->getOrInsertFunction(target, f->getFunctionType());
    auto* fn = llvm::cast<llvm::Function>(callee.getCallee());
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    if (f->getIntrinsicID() == llvm::Intrinsic::nvvm_shfl_sync_down_i32 ||
        f->getIntrinsicID() == llvm::Intrinsic::nvvm_barrier0) {
      fn->addFnAttr(llvm::Attribute::Convergent);
    }
    f->replaceAllUsesWith(fn);
    f->eraseFromParent();
  }
  return absl::OkStatus();
}

// The emulated program: `m` compiled for the host and linked into its own JIT, with the
// emulator's functions and, for libdevice's __nv_* names, the C library's.
absl::StatusOr<std::shared_ptr<const GpuEmulation>> LinkForEmulation(
    llvm::Module* m, llvm::TargetMachine* tm, llvm::orc::JITTargetMachineBuilder jtmb,
    const std::vector<std::string>& kernels) {
  llvm::SmallVector<char, 0> buffer;
  {
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile)) {
      return absl::InternalError("the host target cannot emit the emulated kernels");
    }
    pm.run(*m);
  }
  auto impl = std::make_unique<GpuEmulation::Impl>();
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) return absl::InternalError(StrCat("LLVM ORC: ", ErrorText(jit.takeError())));
  impl->jit = std::move(*jit);
  llvm::orc::JITDylib& lib = impl->jit->getMainJITDylib();
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>> gen =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          impl->jit->getDataLayout().getGlobalPrefix());
  if (!gen) return absl::InternalError(StrCat("LLVM ORC: ", ErrorText(gen.takeError())));
  lib.addGenerator(std::move(*gen));
  llvm::orc::SymbolMap symbols;
  auto add = [&](const std::string& name, void* address) {
    symbols[impl->jit->mangleAndIntern(name)] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(address), llvm::JITSymbolFlags::Exported);
  };
  add("hlowb_emu_tid_x", reinterpret_cast<void*>(&hlowb_emu_tid_x));
  add("hlowb_emu_ntid_x", reinterpret_cast<void*>(&hlowb_emu_ntid_x));
  add("hlowb_emu_ctaid_x", reinterpret_cast<void*>(&hlowb_emu_ctaid_x));
  add("hlowb_emu_nctaid_x", reinterpret_cast<void*>(&hlowb_emu_nctaid_x));
  add("hlowb_emu_shfl_down_i32", reinterpret_cast<void*>(&hlowb_emu_shfl_down_i32));
  add("hlowb_emu_barrier", reinterpret_cast<void*>(&hlowb_emu_barrier));
  add("hlowb_emu_shared_memory", reinterpret_cast<void*>(&hlowb_emu_shared_memory));
  for (const llvm::Function& f : *m) {
    const std::string name = f.getName().str();
    if (!f.isDeclaration() || name.rfind("__nv_", 0) != 0) continue;
    const std::string libm = name.substr(5);
    void* address = llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(libm);
    if (address == nullptr) {
      return absl::InternalError(StrCat("the GPU emulator has no host function for ", name));
    }
    add(name, address);
  }
  if (llvm::Error e = lib.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    return absl::InternalError(StrCat("LLVM ORC: ", ErrorText(std::move(e))));
  }
  if (llvm::Error e = impl->jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(buffer.data(), buffer.size()), "hlowb_gpu_emulated.o"))) {
    return absl::InternalError(StrCat("LLVM ORC: ", ErrorText(std::move(e))));
  }
  for (const std::string& k : kernels) {
    llvm::Expected<llvm::orc::ExecutorAddr> addr = impl->jit->lookup(k);
    if (!addr) {
      return absl::InternalError(
          StrCat("LLVM ORC cannot find emulated kernel ", k, ": ", ErrorText(addr.takeError())));
    }
    impl->entries[k] = addr->toPtr<EmulatedKernelFn>();
  }
  return std::shared_ptr<const GpuEmulation>(std::make_shared<GpuEmulation>(std::move(impl)));
}

}  // namespace

absl::StatusOr<PtxProgram> CompileToPtx(const std::vector<const Instruction*>& instructions,
                                        const PtxOptions& options) {
  absl::StatusOr<std::string> arch = ClampGpuArch(options.gpu_arch);
  if (!arch.ok()) return arch.status();
  const bool emulate = options.emulate;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::optional<llvm::orc::JITTargetMachineBuilder> host;
  if (emulate) {
    absl::StatusOr<llvm::orc::JITTargetMachineBuilder> jtmb = HostMachineBuilder(options.opt_level);
    if (!jtmb.ok()) return jtmb.status();
    host = *jtmb;
    llvm::Expected<std::unique_ptr<llvm::TargetMachine>> made = host->createTargetMachine();
    if (!made) return absl::InternalError(StrCat("LLVM: ", ErrorText(made.takeError())));
    tm = std::move(*made);
  } else {
    InitializeNvptx();
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
    if (target == nullptr) return absl::InternalError(StrCat("LLVM has no NVPTX target: ", error));
    llvm::TargetOptions to;
    tm.reset(target->createTargetMachine(
        kTriple, *arch, "+ptx78", to, std::nullopt, std::nullopt,
        options.opt_level >= 2 ? llvm::CodeGenOpt::Aggressive : llvm::CodeGenOpt::Default));
    if (tm == nullptr) return absl::InternalError("LLVM could not make an NVPTX target machine");
  }

  PtxProgram program;
  program.arch = emulate ? "the host's GPU emulator" : *arch;
  auto t0 = std::chrono::steady_clock::now();
  llvm::LLVMContext ctx;
  llvm::Module module("hlowb_gpu_kernels", ctx);
  module.setTargetTriple(emulate ? tm->getTargetTriple().str() : std::string(kTriple));
  module.setDataLayout(tm->createDataLayout());
  std::vector<EmittedKernel> emitted;
  std::map<const Instruction*, int> per_thread;
  for (size_t k = 0; k < instructions.size(); ++k) {
    const int per = Reduces(*instructions[k]) ? 1 : 4;
    per_thread[instructions[k]] = per;
    KernelForm form;
    form.elements_per_call = per;
    form.element_stride = kBlockSize;
    form.cooperative_reductions = true;
    form.tiled_transposes = true;
    form.block_size = kBlockSize;
    form.emulated = emulate;
    if (absl::Status st = EmitKernels(&module, {instructions[k]}, static_cast<int>(k), &emitted,
                                      &program.refused, form);
        !st.ok()) {
      return st;
    }
  }
  if (options.cancel != nullptr && options.cancel->IsCancelled()) {
    return absl::CancelledError("cancelled");
  }
  BindMathToLibdevice(&module);
  // Which kernels need what GPU code cannot have: host helpers, or libdevice when it is missing
  // (the emulator takes the C library's functions instead).
  const std::string libdevice =
      options.libdevice_path.empty() ? FindLibdevice() : options.libdevice_path;
  bool needs_libdevice = false;
  std::vector<EmittedKernel> kept;
  for (EmittedKernel& k : emitted) {
    llvm::Function* range = module.getFunction(k.info.function_name);
    if (range == nullptr) return absl::InternalError("an emitted kernel is missing");
    std::string missing;
    bool uses_libdevice = false;
    for (const llvm::Function* f : Reachable(range)) {
      if (!f->isDeclaration() || f->isIntrinsic()) continue;
      const std::string name = f->getName().str();
      if (name.rfind("__nv_", 0) == 0) {
        uses_libdevice = true;
        if (!libdevice.empty() || emulate) continue;
      }
      if (name == "hlowb_emu_shared_memory" && emulate) continue;
      missing = name;
      break;
    }
    if (!missing.empty()) {
      std::string why =
          missing.rfind("hlowb_complex", 0) == 0
              ? StrCat("needs the host's complex function helper ", missing,
                       " (complex divide, power, sign and transcendental functions), which has "
                       "no GPU version")
          : missing.rfind("hlowb_", 0) == 0
              ? StrCat("needs the host's narrow-float conversion ", missing,
                       ", which has no GPU version")
              : missing.rfind("__nv_", 0) == 0
                    ? StrCat("calls ", missing, ", and no libdevice.10.bc was found (set "
                                                "CUDA_PATH or HLOWB_LIBDEVICE)")
                    : StrCat("calls ", missing, ", which has no GPU version");
      program.refused.push_back(
          {k.info.instruction, StrCat("%", k.info.instruction->name(), " (",
                                      OpcodeName(k.info.instruction->opcode()), "): ", why)});
      range->replaceAllUsesWith(llvm::UndefValue::get(range->getType()));
      range->eraseFromParent();
      continue;
    }
    needs_libdevice = needs_libdevice || uses_libdevice;
    // A block or warp per element (cooperative reductions, transpose tiles): one at a time.
    if (k.info.threads_per_element > 1) per_thread[k.info.instruction] = 1;
    // The range function becomes the kernel's inlined body.
    const std::string name = k.info.function_name;
    range->setName(name + "_range");
    range->setLinkage(llvm::GlobalValue::InternalLinkage);
    range->addFnAttr(llvm::Attribute::AlwaysInline);
    AddKernel(&module, range, name, per_thread[k.info.instruction], k.info.threads_per_element);
    kept.push_back(std::move(k));
  }
  EraseDeadFunctions(&module);
  {
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(module, &os)) {
      return absl::InternalError(StrCat("the GPU emitter made invalid IR: ", os.str()));
    }
  }
  if (emulate) {
    if (absl::Status st = BindNvvmToEmulator(&module); !st.ok()) return st;
  }
  program.emit_seconds = Since(t0);
  if (!options.dump_dir.empty()) {
    if (absl::Status st = WriteFile(StrCat(options.dump_dir, "/", options.dump_prefix,
                                           ".ir-no-opt.ll"),
                                    ModuleText(module), &program.dump_files);
        !st.ok()) {
      return st;
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  if (needs_libdevice && !emulate) {
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(libdevice, diag, ctx);
    if (lib == nullptr) {
      return absl::FailedPreconditionError(
          StrCat("cannot read libdevice ", libdevice, ": ", diag.getMessage().str()));
    }
    lib->setTargetTriple(kTriple);
    lib->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded)) {
      return absl::InternalError(StrCat("linking ", libdevice, " failed"));
    }
  }
  std::set<std::string> kernel_names;
  for (const EmittedKernel& k : kept) kernel_names.insert(k.info.function_name);
  llvm::internalizeModule(module, [&](const llvm::GlobalValue& gv) {
    return kernel_names.count(gv.getName().str()) > 0;
  });
  if (!emulate) module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  Optimize(&module, tm.get(), options.opt_level);
  EraseDeadFunctions(&module);
  for (const std::string& name : kernel_names) {
    if (llvm::Function* k = module.getFunction(name); k != nullptr && !emulate) {
      MarkBuffersGlobal(k);
    }
  }
  program.optimize_seconds = Since(t1);
  if (options.cancel != nullptr && options.cancel->IsCancelled()) {
    return absl::CancelledError("cancelled");
  }
  if (!options.dump_dir.empty()) {
    if (absl::Status st = WriteFile(StrCat(options.dump_dir, "/", options.dump_prefix,
                                           ".ir-with-opt.ll"),
                                    ModuleText(module), &program.dump_files);
        !st.ok()) {
      return st;
    }
  }
  auto t2 = std::chrono::steady_clock::now();
  if (emulate) {
    absl::StatusOr<std::shared_ptr<const GpuEmulation>> emulation = LinkForEmulation(
        &module, tm.get(), *host,
        std::vector<std::string>(kernel_names.begin(), kernel_names.end()));
    if (!emulation.ok()) return emulation.status();
    program.emulation = *std::move(emulation);
  } else {
    current_work = StrCat("compiling ", kept.size(), " kernel(s) to PTX for ", *arch,
                          " (the first: ",
                          kept.empty() ? std::string("none") : kept[0].info.instruction->name(),
                          ")");
    // LLVM 16's loop strength reduction can narrow index arithmetic on one-bit values to an i1
    // multiply that the NVPTX instruction selector cannot select, a fatal error (a reduce over
    // a [.., 2] output is enough). Code generation for NVPTX runs without it: the option is
    // process-wide, so it is set only while PTX is emitted, one emission at a time.
    static std::mutex codegen_mu;
    std::lock_guard<std::mutex> lock(codegen_mu);
    llvm::StringMap<llvm::cl::Option*>& registered = llvm::cl::getRegisteredOptions();
    auto found = registered.find("disable-lsr");
    auto* disable_lsr = found == registered.end()
                            ? nullptr
                            : static_cast<llvm::cl::opt<bool>*>(found->second);
    const bool was = disable_lsr != nullptr && disable_lsr->getValue();
    if (disable_lsr != nullptr) disable_lsr->setValue(true);
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    const bool cannot = tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_AssemblyFile);
    if (!cannot) pm.run(module);
    if (disable_lsr != nullptr) disable_lsr->setValue(was);
    current_work.clear();
    if (cannot) return absl::InternalError("the NVPTX target cannot emit PTX");
    program.ptx.assign(buffer.begin(), buffer.end());
  }
  program.codegen_seconds = Since(t2);
  if (!options.dump_dir.empty() && !emulate) {
    if (absl::Status st = WriteFile(StrCat(options.dump_dir, "/", options.dump_prefix, ".ptx"),
                                    program.ptx, &program.dump_files);
        !st.ok()) {
      return st;
    }
  }
  for (EmittedKernel& k : kept) {
    GpuKernelInfo g;
    g.instruction = k.info.instruction;
    g.kernel_name = k.info.function_name;
    g.constants = k.info.constants;
    g.num_outputs = k.info.num_outputs;
    g.iteration_count = k.info.iteration_count;
    g.cost_per_element = k.info.cost_per_element;
    g.elements_per_thread = per_thread[k.info.instruction];
    g.threads_per_element = k.info.threads_per_element;
    g.tiled_transpose = k.info.tiled_transpose;
    g.block_size = kBlockSize;
    program.kernels.push_back(std::move(g));
  }
  return program;
}

}  // namespace hlowb::codegen
