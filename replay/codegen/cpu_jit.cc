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

void InitializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string ErrorText(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
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

}  // namespace

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
    std::vector<EmittedKernel> kernels;
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
  std::atomic<int> next{0};
  auto worker = [&]() {
    absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = absl::UnknownError("");
    {
      llvm::Expected<std::unique_ptr<llvm::TargetMachine>> t = impl.jtmb->createTargetMachine();
      if (!t) {
        tm = absl::InternalError(StrCat("LLVM: ", ErrorText(t.takeError())));
      } else {
        tm = std::move(*t);
      }
    }
    for (int c = next++; c < chunks; c = next++) {
      Chunk& chunk = results[c];
      if (!tm.ok()) {
        chunk.status = tm.status();
        continue;
      }
      if (opt.cancel != nullptr && opt.cancel->IsCancelled()) {
        chunk.status = absl::CancelledError("compilation cancelled");
        continue;
      }
      auto t0 = std::chrono::steady_clock::now();
      llvm::LLVMContext ctx;
      auto module = std::make_unique<llvm::Module>(StrCat("hlowb_chunk", chunk_base + c), ctx);
      module->setDataLayout((*tm)->createDataLayout());
      module->setTargetTriple((*tm)->getTargetTriple().str());
      const size_t first = static_cast<size_t>(c) * per_module;
      const size_t last = std::min(instructions.size(), first + per_module);
      std::vector<const Instruction*> part(instructions.begin() + first, instructions.begin() + last);
      chunk.status = EmitKernels(module.get(), part, static_cast<int>(first), &chunk.kernels,
                                 &chunk.refused);
      chunk.emit_seconds = Since(t0);
      if (!chunk.status.ok() || chunk.kernels.empty()) continue;
      auto t1 = std::chrono::steady_clock::now();
      const std::string text = ModuleText(*module);
      std::string key = StrCat(salt, text);
      char hex[40];
      std::snprintf(hex, sizeof hex, "%016llx%016llx",
                    static_cast<unsigned long long>(llvm::xxHash64(key)),
                    static_cast<unsigned long long>(llvm::xxHash64(StrCat(key, "#2"))));
      const std::string cache_path =
          opt.cache_dir.empty() ? std::string() : StrCat(opt.cache_dir, "/", hex, ".o");
      if (!cache_path.empty() && !dumping) {
        std::optional<std::string> obj = ReadCacheEntry(cache_path, &chunk.corrupt);
        if (obj) {
          chunk.object = std::move(*obj);
          chunk.cache_hit = true;
          chunk.codegen_seconds = Since(t1);
          continue;
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
          continue;
        }
      }
      Optimize(module.get(), tm->get(), opt.opt_level);
      if (dumping) {
        if (absl::Status st = WriteText(StrCat(dump_base, ".ir-with-opt.ll"), ModuleText(*module));
            !st.ok()) {
          chunk.status = st;
          continue;
        }
        absl::StatusOr<std::string> asm_text =
            Codegen(module.get(), tm->get(), llvm::CGFT_AssemblyFile);
        if (!asm_text.ok()) {
          chunk.status = asm_text.status();
          continue;
        }
        if (absl::Status st = WriteText(StrCat(dump_base, ".s"), *asm_text); !st.ok()) {
          chunk.status = st;
          continue;
        }
      }
      absl::StatusOr<std::string> obj = Codegen(module.get(), tm->get(), llvm::CGFT_ObjectFile);
      if (!obj.ok()) {
        chunk.status = obj.status();
        continue;
      }
      chunk.object = std::move(*obj);
      chunk.codegen_seconds = Since(t1);
      if (!cache_path.empty()) WriteCacheEntry(opt.cache_dir, cache_path, chunk.object);
    }
  };
  int threads = opt.compile_threads > 0 ? opt.compile_threads
                                        : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min(threads, chunks));
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
  }

  // Link, in chunk order, and look the entry points up.
  auto link_start = std::chrono::steady_clock::now();
  std::vector<KernelInfo> out;
  for (int c = 0; c < chunks; ++c) {
    Chunk& chunk = results[c];
    if (!chunk.status.ok()) return chunk.status;
    impl.stats.emit_seconds += chunk.emit_seconds;
    impl.stats.optimize_and_codegen_seconds += chunk.codegen_seconds;
    for (RefusedInstruction& r : chunk.refused) refused->push_back(std::move(r));
    for (std::string& f : chunk.dump_files) impl.stats.dump_files.push_back(std::move(f));
    if (chunk.kernels.empty()) continue;
    ++impl.stats.modules;
    if (chunk.corrupt) ++impl.stats.corrupt_cache_entries;
    (chunk.cache_hit ? impl.stats.cache_hits : impl.stats.cache_misses)++;
    std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBufferCopy(
        chunk.object, StrCat("hlowb_chunk", chunk_base + c, ".o"));
    if (llvm::Error e = impl.jit->addObjectFile(std::move(buffer))) {
      return absl::InternalError(StrCat("LLVM ORC cannot add a kernel object: ", ErrorText(std::move(e))));
    }
    for (EmittedKernel& k : chunk.kernels) {
      llvm::Expected<llvm::orc::ExecutorAddr> addr = impl.jit->lookup(k.info.function_name);
      if (!addr) {
        return absl::InternalError(StrCat("LLVM ORC cannot find kernel ", k.info.function_name,
                                          ": ", ErrorText(addr.takeError())));
      }
      k.info.fn = addr->toPtr<KernelFn>();
      out.push_back(std::move(k.info));
      ++impl.stats.kernels;
    }
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
