// Compiling and linking kernels: instructions are split into chunks (one LLVM module each),
// chunks are emitted, optimised at O2 for the host CPU and compiled to objects on a few threads
// (one LLVMContext and TargetMachine per thread), objects are cached on disk by content, and
// the objects are linked into one ORC LLJIT whose symbol lookups give the kernels' entry points.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <functional>

#include "core/support/strings.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "replay/codegen/cpu_jit.h"
#include "replay/codegen/llvm_passes.h"
#include "replay/codegen/runtime_support.h"

namespace hlowb::codegen {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The functions that make up kernel `name` in `m`: its entry point and the functions named
// after it (its body).
std::vector<llvm::Function*> KernelFunctions(llvm::Module& m, const std::string& name) {
  std::vector<llvm::Function*> out;
  const std::string prefix = name + ".";
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    const llvm::StringRef n = f.getName();
    if (n == name || n.startswith(prefix)) out.push_back(&f);
  }
  std::sort(out.begin(), out.end(),
            [](llvm::Function* a, llvm::Function* b) { return a->getName() < b->getName(); });
  return out;
}

// Kernel `name`'s IR with its own name replaced, so that two kernels compute the same thing
// exactly when their texts are equal (calls to helpers and math functions keep their names).
std::string KernelCode(llvm::Module& m, const std::string& name) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (llvm::Function* f : KernelFunctions(m, name)) f->print(os);
  os.flush();
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0;;) {
    const size_t hit = text.find(name, at);
    if (hit == std::string::npos) {
      out.append(text, at, std::string::npos);
      break;
    }
    out.append(text, at, hit - at);
    out += "@K";
    at = hit + name.size();
  }
  return out;
}

// Removes kernel `name`'s functions from `m` (another kernel's code runs for it).
void DropKernel(llvm::Module* m, const std::string& name) {
  std::vector<llvm::Function*> fns = KernelFunctions(*m, name);
  for (llvm::Function* f : fns) f->dropAllReferences();
  for (llvm::Function* f : fns) f->eraseFromParent();
}

void InitializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}


std::string HostFeatures() {
  llvm::StringMap<bool> features;
  std::string out;
  if (llvm::sys::getHostCPUFeatures(features)) {
    std::vector<std::string> on;
    for (const auto& f : features) {
      if (f.getValue()) on.push_back(f.getKey().str());
    }
    std::sort(on.begin(), on.end());
    for (const std::string& f : on) StrAppend(&out, "+", f, ",");
  }
  return out;
}

// Cache entries: magic, payload size, payload hash, payload (the object file).
constexpr char kCacheMagic[8] = {'H', 'L', 'W', 'B', 'O', 'B', 'J', '1'};

std::optional<std::string> ReadCacheEntry(const std::string& path, bool* corrupt) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < 24 || std::memcmp(data.data(), kCacheMagic, 8) != 0) {
    *corrupt = true;
    return std::nullopt;
  }
  uint64_t size = 0, hash = 0;
  std::memcpy(&size, data.data() + 8, 8);
  std::memcpy(&hash, data.data() + 16, 8);
  std::string payload = data.substr(24);
  if (payload.size() != size || llvm::xxHash64(payload) != hash) {
    *corrupt = true;
    return std::nullopt;
  }
  return payload;
}

void WriteCacheEntry(const std::string& dir, const std::string& path, const std::string& payload) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return;  // a cache that cannot be written is no cache, not an error
  std::string tmp = StrCat(path, ".tmp", std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    uint64_t size = payload.size(), hash = llvm::xxHash64(payload);
    out.write(kCacheMagic, 8);
    out.write(reinterpret_cast<const char*>(&size), 8);
    out.write(reinterpret_cast<const char*>(&hash), 8);
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) return absl::InternalError(StrCat("cannot write ", path));
  return absl::OkStatus();
}


// glibc's vector math library (libmvec): when it loads, the vectoriser may call its vector
// exp, log, sin, cos and pow.
bool LoadVectorMathLibrary() {
  static const bool loaded = [] {
    std::string error;
    return !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1", &error);
  }();
  return loaded;
}

void Optimize(llvm::Module* m, llvm::TargetMachine* tm, int opt_level) {
  llvm::TargetLibraryInfoImpl tlii(tm->getTargetTriple());
  if (LoadVectorMathLibrary()) {
    tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86,
                                            tm->getTargetTriple());
  }
  RunDefaultPipeline(m, tm, opt_level, &tlii, /*loop_vectorize=*/true);
}

absl::StatusOr<std::string> Codegen(llvm::Module* m, llvm::TargetMachine* tm,
                                    llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  {
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, type)) {
      return absl::InternalError("the host target cannot emit this file type");
    }
    pm.run(*m);
  }
  return std::string(buffer.begin(), buffer.end());
}


}  // namespace

std::string ErrorText(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

absl::StatusOr<llvm::orc::JITTargetMachineBuilder> HostMachineBuilder(int opt_level) {
  InitializeLlvm();
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> jtmb =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return absl::InternalError(StrCat("LLVM: ", ErrorText(jtmb.takeError())));
  jtmb->setCodeGenOptLevel(opt_level >= 2 ? llvm::CodeGenOpt::Aggressive
                                          : llvm::CodeGenOpt::Default);
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeModel(llvm::CodeModel::Small);
  return *jtmb;
}

std::string DefaultKernelCacheDir() {
  if (const char* d = std::getenv("HLOWB_CACHE_DIR"); d != nullptr && *d != '\0') {
    return StrCat(d, "/cpu-kernels");
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    return StrCat(x, "/hlowb/cpu-kernels");
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return StrCat(h, "/.cache/hlowb/cpu-kernels");
  }
  return "";
}

std::string LlvmVersionString() { return LLVM_VERSION_STRING; }

std::string HostCpuName() { return llvm::sys::getHostCPUName().str(); }

struct CpuJit::Impl {
  JitOptions options;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb;
  std::string cache_salt;
  JitStats stats;
  int64_t chunk_counter = 0;
};

CpuJit::CpuJit() : impl_(std::make_unique<Impl>()) {}
CpuJit::~CpuJit() = default;

const JitStats& CpuJit::stats() const { return impl_->stats; }

absl::StatusOr<std::unique_ptr<CpuJit>> CpuJit::Create(const JitOptions& options) {
  absl::StatusOr<llvm::orc::JITTargetMachineBuilder> jtmb = HostMachineBuilder(options.opt_level);
  if (!jtmb.ok()) return jtmb.status();
  std::unique_ptr<CpuJit> self(new CpuJit());
  Impl& impl = *self->impl_;
  impl.options = options;
  impl.jtmb = *jtmb;
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
  if (!jit) return absl::InternalError(StrCat("LLVM ORC: ", ErrorText(jit.takeError())));
  impl.jit = std::move(*jit);
  llvm::orc::JITDylib& lib = impl.jit->getMainJITDylib();
  LoadVectorMathLibrary();
  // The C library (libm's expf, tanh, ...) from this process, and the runtime's helpers.
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>> gen =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          impl.jit->getDataLayout().getGlobalPrefix());
  if (!gen) return absl::InternalError(StrCat("LLVM ORC: ", ErrorText(gen.takeError())));
  lib.addGenerator(std::move(*gen));
  llvm::orc::SymbolMap helpers;
  auto add = [&](const char* name, auto* fn) {
    helpers[impl.jit->mangleAndIntern(name)] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(fn), llvm::JITSymbolFlags::Exported);
  };
  add("hlowb_narrow_to_f64", &hlowb_narrow_to_f64);
  add("hlowb_f64_to_narrow", &hlowb_f64_to_narrow);
  add("hlowb_round_through", &hlowb_round_through);
  add("hlowb_complex64", &hlowb_complex64);
  add("hlowb_complex128", &hlowb_complex128);
  if (llvm::Error e = lib.define(llvm::orc::absoluteSymbols(std::move(helpers)))) {
    return absl::InternalError(StrCat("LLVM ORC: ", ErrorText(std::move(e))));
  }
  impl.cache_salt = StrCat("llvm ", LLVM_VERSION_STRING, "; cpu ", HostCpuName(), "; features ",
                           HostFeatures(), "; O", options.opt_level, "; emitter 1\n");
  return self;
}

absl::StatusOr<std::vector<KernelInfo>> CpuJit::Compile(
    const std::vector<const Instruction*>& instructions, std::vector<RefusedInstruction>* refused) {
  Impl& impl = *impl_;
  auto start = std::chrono::steady_clock::now();
  const JitOptions& opt = impl.options;
  const int per_module = std::max(1, opt.kernels_per_module);
  const int chunks = static_cast<int>((instructions.size() + per_module - 1) / per_module);
  struct Chunk {
    std::unique_ptr<llvm::LLVMContext> ctx;
    std::unique_ptr<llvm::Module> module;
    std::vector<EmittedKernel> kernels;
    // Per kernel: its code with its own names taken out, and the kernel whose code it runs when
    // another kernel's code is the same (empty: its own).
    std::vector<std::string> code;
    std::vector<std::string> runs;
    std::vector<RefusedInstruction> refused;
    std::string object;
    absl::Status status;
    double emit_seconds = 0, codegen_seconds = 0;
    std::vector<std::string> dump_files;
    bool cache_hit = false, corrupt = false;
  };
  std::vector<Chunk> results(chunks);
  const int64_t chunk_base = impl.chunk_counter;
  impl.chunk_counter += chunks;
  const bool dumping = !opt.dump_dir.empty();
  const std::string salt = impl.cache_salt;
  int threads = opt.compile_threads > 0 ? opt.compile_threads
                                        : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min(threads, chunks));
  // Runs body(chunk, target machine) over every chunk on `threads` threads, one TargetMachine
  // per thread.
  auto for_each_chunk = [&](const std::function<void(Chunk&, int, llvm::TargetMachine*)>& body) {
    std::atomic<int> next{0};
    auto worker = [&]() {
      llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = impl.jtmb->createTargetMachine();
      for (int c = next++; c < chunks; c = next++) {
        Chunk& chunk = results[c];
        if (!chunk.status.ok()) continue;
        if (!tm) {
          chunk.status = absl::InternalError(StrCat("LLVM: ", ErrorText(tm.takeError())));
          continue;
        }
        if (opt.cancel != nullptr && opt.cancel->IsCancelled()) {
          chunk.status = absl::CancelledError("compilation cancelled");
          continue;
        }
        body(chunk, c, tm->get());
      }
      if (!tm) llvm::consumeError(tm.takeError());
    };
    if (threads <= 1) {
      worker();
    } else {
      std::vector<std::thread> pool;
      for (int k = 0; k < threads; ++k) pool.emplace_back(worker);
      for (std::thread& t : pool) t.join();
    }
  };

  // 1. Emit every chunk, and note each kernel's code without its names.
  for_each_chunk([&](Chunk& chunk, int c, llvm::TargetMachine* tm) {
    auto t0 = std::chrono::steady_clock::now();
    chunk.ctx = std::make_unique<llvm::LLVMContext>();
    chunk.module = std::make_unique<llvm::Module>(StrCat("hlowb_chunk", chunk_base + c), *chunk.ctx);
    chunk.module->setDataLayout(tm->createDataLayout());
    chunk.module->setTargetTriple(tm->getTargetTriple().str());
    const size_t first = static_cast<size_t>(c) * per_module;
    const size_t last = std::min(instructions.size(), first + per_module);
    std::vector<const Instruction*> part(instructions.begin() + first, instructions.begin() + last);
    chunk.status = EmitKernels(chunk.module.get(), part, static_cast<int>(first), &chunk.kernels,
                               &chunk.refused);
    if (chunk.status.ok()) {
      for (const EmittedKernel& k : chunk.kernels) {
        chunk.code.push_back(KernelCode(*chunk.module, k.info.function_name));
      }
      chunk.runs.assign(chunk.kernels.size(), std::string());
    }
    chunk.emit_seconds = Since(t0);
  });
  // 2. Kernels whose code is another's run that one's: layers repeated in a model give the same
  // fusions again and again, and each distinct kernel is optimised and compiled once.
  {
    std::unordered_map<std::string_view, const std::string*> first_with_code;
    for (Chunk& chunk : results) {
      if (!chunk.status.ok()) continue;
      for (size_t k = 0; k < chunk.kernels.size(); ++k) {
        auto [it, inserted] =
            first_with_code.emplace(chunk.code[k], &chunk.kernels[k].info.function_name);
        if (!inserted) {
          chunk.runs[k] = *it->second;
          if (chunk.kernels[k].info.in_place_operand < 0) ++impl.stats.shared_kernels;
        }
      }
    }
  }
  // 3. Drop the repeated kernels' functions, then optimise, compile and cache what is left.
  for_each_chunk([&](Chunk& chunk, int c, llvm::TargetMachine* tm) {
    chunk.code.clear();
    bool own_code = false;
    for (size_t k = 0; k < chunk.kernels.size(); ++k) {
      if (chunk.runs[k].empty()) {
        own_code = true;
        continue;
      }
      DropKernel(chunk.module.get(), chunk.kernels[k].info.function_name);
    }
    if (!own_code) {
      chunk.module.reset();
      chunk.ctx.reset();
      return;
    }
    llvm::Module* module = chunk.module.get();
    auto t1 = std::chrono::steady_clock::now();
    const std::string text = ModuleText(*module);
    std::string key = StrCat(salt, text);
    char hex[40];
    std::snprintf(hex, sizeof hex, "%016llx%016llx",
                  static_cast<unsigned long long>(llvm::xxHash64(key)),
                  static_cast<unsigned long long>(llvm::xxHash64(StrCat(key, "#2"))));
    const std::string cache_path =
        opt.cache_dir.empty() ? std::string() : StrCat(opt.cache_dir, "/", hex, ".o");
    auto finish = [&] {
      chunk.module.reset();
      chunk.ctx.reset();
    };
    if (!cache_path.empty() && !dumping) {
      std::optional<std::string> obj = ReadCacheEntry(cache_path, &chunk.corrupt);
      if (obj) {
        chunk.object = std::move(*obj);
        chunk.cache_hit = true;
        chunk.codegen_seconds = Since(t1);
        finish();
        return;
      }
    }
    const std::string dump_base =
        c == 0 ? StrCat(opt.dump_dir, "/", opt.dump_prefix)
               : StrCat(opt.dump_dir, "/", opt.dump_prefix, ".", c);
    if (dumping) {
      for (const char* ext : {".ir-no-opt.ll", ".ir-with-opt.ll", ".s"}) {
        chunk.dump_files.push_back(StrCat(dump_base, ext));
      }
      if (absl::Status st = WriteText(StrCat(dump_base, ".ir-no-opt.ll"), text); !st.ok()) {
        chunk.status = st;
        finish();
        return;
      }
    }
    Optimize(module, tm, opt.opt_level);
    if (dumping) {
      if (absl::Status st = WriteText(StrCat(dump_base, ".ir-with-opt.ll"), ModuleText(*module));
          !st.ok()) {
        chunk.status = st;
        finish();
        return;
      }
      absl::StatusOr<std::string> asm_text = Codegen(module, tm, llvm::CGFT_AssemblyFile);
      if (!asm_text.ok()) {
        chunk.status = asm_text.status();
        finish();
        return;
      }
      if (absl::Status st = WriteText(StrCat(dump_base, ".s"), *asm_text); !st.ok()) {
        chunk.status = st;
        finish();
        return;
      }
    }
    absl::StatusOr<std::string> obj = Codegen(module, tm, llvm::CGFT_ObjectFile);
    finish();
    if (!obj.ok()) {
      chunk.status = obj.status();
      return;
    }
    chunk.object = std::move(*obj);
    chunk.codegen_seconds = Since(t1);
    if (!cache_path.empty()) WriteCacheEntry(opt.cache_dir, cache_path, chunk.object);
  });

  // Link, in chunk order, and look the entry points up.
  auto link_start = std::chrono::steady_clock::now();
  for (int c = 0; c < chunks; ++c) {
    Chunk& chunk = results[c];
    if (!chunk.status.ok()) return chunk.status;
    impl.stats.emit_seconds += chunk.emit_seconds;
    impl.stats.optimize_and_codegen_seconds += chunk.codegen_seconds;
    for (RefusedInstruction& r : chunk.refused) refused->push_back(std::move(r));
    for (std::string& f : chunk.dump_files) impl.stats.dump_files.push_back(std::move(f));
    if (chunk.object.empty()) continue;
    ++impl.stats.modules;
    if (chunk.corrupt) ++impl.stats.corrupt_cache_entries;
    (chunk.cache_hit ? impl.stats.cache_hits : impl.stats.cache_misses)++;
    std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBufferCopy(
        chunk.object, StrCat("hlowb_chunk", chunk_base + c, ".o"));
    if (llvm::Error e = impl.jit->addObjectFile(std::move(buffer))) {
      return absl::InternalError(StrCat("LLVM ORC cannot add a kernel object: ", ErrorText(std::move(e))));
    }
  }
  std::vector<KernelInfo> out;
  for (Chunk& chunk : results) {
    for (size_t k = 0; k < chunk.kernels.size(); ++k) {
      EmittedKernel& kernel = chunk.kernels[k];
      const std::string& name = chunk.runs[k].empty() ? kernel.info.function_name : chunk.runs[k];
      llvm::Expected<llvm::orc::ExecutorAddr> addr = impl.jit->lookup(name);
      if (!addr) {
        return absl::InternalError(StrCat("LLVM ORC cannot find kernel ", name, ": ",
                                          ErrorText(addr.takeError())));
      }
      kernel.info.fn = addr->toPtr<KernelFn>();
      ++(kernel.info.in_place_operand < 0 ? impl.stats.kernels : impl.stats.in_place_kernels);
      out.push_back(std::move(kernel.info));
    }
  }
  impl.stats.link_seconds += Since(link_start);
  impl.stats.total_seconds += Since(start);
  return out;
}

absl::StatusOr<std::vector<ScalarFn>> CpuJit::CompileScalarFunctions(
    const std::vector<const Computation*>& computations, std::vector<std::string>* refused) {
  Impl& impl = *impl_;
  auto start = std::chrono::steady_clock::now();
  std::vector<ScalarFn> out(computations.size(), nullptr);
  refused->assign(computations.size(), std::string());
  if (computations.empty()) return out;
  if (impl.options.cancel != nullptr && impl.options.cancel->IsCancelled()) {
    return absl::CancelledError("compilation cancelled");
  }
  // One small module on this thread: comparators and combiners are a handful of instructions.
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = impl.jtmb->createTargetMachine();
  if (!tm) return absl::InternalError(StrCat("LLVM: ", ErrorText(tm.takeError())));
  const int64_t chunk = impl.chunk_counter++;
  llvm::LLVMContext ctx;
  auto module = std::make_unique<llvm::Module>(StrCat("hlowb_scalar", chunk), ctx);
  module->setDataLayout((*tm)->createDataLayout());
  module->setTargetTriple((*tm)->getTargetTriple().str());
  std::vector<std::string> names;
  auto t0 = std::chrono::steady_clock::now();
  if (absl::Status st = EmitScalarFunctions(module.get(), computations,
                                            StrCat("hlowb_s", chunk, "_"), &names, refused);
      !st.ok()) {
    return st;
  }
  impl.stats.emit_seconds += Since(t0);
  if (std::all_of(names.begin(), names.end(), [](const std::string& n) { return n.empty(); })) {
    return out;
  }
  auto t1 = std::chrono::steady_clock::now();
  Optimize(module.get(), tm->get(), impl.options.opt_level);
  absl::StatusOr<std::string> obj = Codegen(module.get(), tm->get(), llvm::CGFT_ObjectFile);
  module.reset();
  if (!obj.ok()) return obj.status();
  impl.stats.optimize_and_codegen_seconds += Since(t1);
  auto link_start = std::chrono::steady_clock::now();
  ++impl.stats.modules;
  if (llvm::Error e = impl.jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
          *obj, StrCat("hlowb_scalar", chunk, ".o")))) {
    return absl::InternalError(
        StrCat("LLVM ORC cannot add a scalar function object: ", ErrorText(std::move(e))));
  }
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k].empty()) continue;
    llvm::Expected<llvm::orc::ExecutorAddr> addr = impl.jit->lookup(names[k]);
    if (!addr) {
      return absl::InternalError(StrCat("LLVM ORC cannot find scalar function ", names[k], ": ",
                                        ErrorText(addr.takeError())));
    }
    out[k] = addr->toPtr<ScalarFn>();
  }
  impl.stats.link_seconds += Since(link_start);
  impl.stats.total_seconds += Since(start);
  return out;
}

absl::StatusOr<std::string> EmitLlvmIrText(const std::vector<const Instruction*>& instructions,
                                           bool optimized) {
  absl::StatusOr<llvm::orc::JITTargetMachineBuilder> jtmb = HostMachineBuilder(2);
  if (!jtmb.ok()) return jtmb.status();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = jtmb->createTargetMachine();
  if (!tm) return absl::InternalError(StrCat("LLVM: ", ErrorText(tm.takeError())));
  llvm::LLVMContext ctx;
  llvm::Module module("hlowb_kernels", ctx);
  module.setDataLayout((*tm)->createDataLayout());
  module.setTargetTriple((*tm)->getTargetTriple().str());
  std::vector<EmittedKernel> emitted;
  std::vector<RefusedInstruction> refused;
  if (absl::Status st = EmitKernels(&module, instructions, 0, &emitted, &refused); !st.ok()) {
    return st;
  }
  if (optimized) Optimize(&module, tm->get(), 2);
  std::string out = StrCat("; ", emitted.size(), " kernel(s); ", refused.size(),
                           " instruction(s) left to the interpreter\n");
  for (const RefusedInstruction& r : refused) StrAppend(&out, "; not compiled: ", r.reason, "\n");
  StrAppend(&out, ModuleText(module));
  return out;
}

}  // namespace hlowb::codegen
