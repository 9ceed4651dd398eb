// The host side of XLA's FFI: runs a user's typed-FFI custom-call handlers (the functions a JAX
// user registers with jax.ffi.register_ffi_target) inside our replay. A handler library is a
// shared object built against the FFI headers that ship with jaxlib; we load it with dlopen,
// find each target's handler by symbol, ask the handler which FFI API version it was built
// against (XLA's metadata call) and refuse one we cannot serve, then call its execute stage
// with a call frame holding the operands as buffers, the results to fill and the attributes
// from backend_config (plugins/ffi/ffi_attributes.h).
//
// Our side of the API: errors, futures (waited for before the result is used), type
// registration, per-call state, host memory for DeviceMemory_Allocate, a thread pool that runs
// tasks inline, run id and device ordinal. No device stream (host replay) and no user data
// from an execution context; handlers asking for them get an error that says so.
//
// The C API header comes from the installed jaxlib at build time; a build without it still
// links, and loading a library then says how to get FFI support.
#ifndef HLOWB_PLUGINS_FFI_FFI_HOST_H_
#define HLOWB_PLUGINS_FFI_FFI_HOST_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

// `--custom_call_library=LIB.so[,target=symbol,...]`.
struct FfiLibrarySpec {
  std::string path;
  std::map<std::string, std::string> symbols;  // custom_call_target -> exported handler symbol
};
absl::StatusOr<FfiLibrarySpec> ParseFfiLibrarySpec(std::string_view flag);

// Whether this build can call FFI handlers, and the API version it speaks ("0.3"; "" without).
bool FfiHostAvailable();
std::string FfiHostVersion();

struct FfiRegistration {
  std::string target;
  std::string symbol;
  std::string handler_version;  // the FFI API version the handler was built against
};

// Loads the library and registers, in `registry` (replacing any built-in handler of the same
// target), a handler for every typed-FFI custom-call target of `module` that the library
// exports: under the symbol the spec maps it to, else under the target's own name. A mapped
// symbol the library lacks, a library that serves none of the module's FFI targets, and a
// handler built against an incompatible API version are errors naming the library, target and
// symbol. The library stays loaded for the life of the process.
absl::StatusOr<std::vector<FfiRegistration>> RegisterFfiLibrary(const FfiLibrarySpec& spec,
                                                                const Module& module,
                                                                CustomCallRegistry* registry);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_FFI_FFI_HOST_H_
