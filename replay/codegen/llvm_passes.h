// Internal to replay/codegen (it names LLVM types): the optimisation pipeline and IR printing
// that the CPU JIT and the PTX generator share.
#ifndef HLOWB_REPLAY_CODEGEN_LLVM_PASSES_H_
#define HLOWB_REPLAY_CODEGEN_LLVM_PASSES_H_

#include <string>

#include "absl/status/statusor.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace hlowb::codegen {

// LLVM's default module pipeline at `opt_level` (0-3) for `tm`'s target, with the target's own
// pipeline hooks. `tlii`: the target library info to use (a vector math library), or null for
// the target's default. The loop vectoriser runs only with `loop_vectorize`; SLP from O2.
void RunDefaultPipeline(llvm::Module* m, llvm::TargetMachine* tm, int opt_level,
                        const llvm::TargetLibraryInfoImpl* tlii, bool loop_vectorize);

// The module as LLVM prints it (.ll text).
std::string ModuleText(const llvm::Module& m);

// An LLVM error's text (consumes it).
std::string ErrorText(llvm::Error e);
// The host CPU's target, for JIT-compiled code (cpu_jit.cc).
absl::StatusOr<llvm::orc::JITTargetMachineBuilder> HostMachineBuilder(int opt_level);

}  // namespace hlowb::codegen

#endif  // HLOWB_REPLAY_CODEGEN_LLVM_PASSES_H_
