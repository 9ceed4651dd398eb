#include "plugins/builtin/builtin_plugins.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "plugins/cublas/cublas_plugin.h"
#include "plugins/cudnn/cudnn_plugin.h"
#include "plugins/lapack/lapack_plugin.h"
#include "plugins/onednn/onednn_plugin.h"
#include "plugins/spmd/spmd_plugin.h"
#include "plugins/topk/topk_plugin.h"

namespace hlowb {

absl::Status RegisterBuiltinPlugins(CustomCallRegistry* registry) {
  for (auto reg : {RegisterCublasPlugin, RegisterCudnnPlugin, RegisterSpmdPlugin,
                   RegisterTopKPlugin, RegisterOneDnnPlugin, RegisterLapackPlugin}) {
    if (absl::Status st = reg(registry); !st.ok()) return st;
  }
  return absl::OkStatus();
}

CustomCallRegistry BuiltinCustomCallRegistry() {
  CustomCallRegistry registry;
  absl::Status st = RegisterBuiltinPlugins(&registry);
  if (!st.ok()) {
    // The built-ins use distinct targets; a clash is a programming error in this file.
    std::fprintf(stderr, "internal error: %s\n", std::string(st.message()).c_str());
    std::abort();
  }
  return registry;
}

}  // namespace hlowb
