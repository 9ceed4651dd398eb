#include "replay/codegen/llvm_passes.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"

namespace hlowb::codegen {

void RunDefaultPipeline(llvm::Module* m, llvm::TargetMachine* tm, int opt_level,
                        const llvm::TargetLibraryInfoImpl* tlii, bool loop_vectorize) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  if (tlii != nullptr) fam.registerPass([&] { return llvm::TargetLibraryAnalysis(*tlii); });
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = loop_vectorize && opt_level >= 2;
  pto.SLPVectorization = opt_level >= 2;
  llvm::PassBuilder pb(tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = opt_level <= 0 ? pb.buildO0DefaultPipeline(level)
                                               : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(*m, mam);
}

std::string ModuleText(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return os.str();
}

}  // namespace hlowb::codegen
