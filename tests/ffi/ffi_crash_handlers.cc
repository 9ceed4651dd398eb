// An FFI handler that crashes the process it runs in, written against the C API alone: what a
// buggy user plugin does, for `hlowb reduce --until=crash`.
#include <csignal>
#include <cstring>

#include "xla/ffi/api/c_api.h"

extern "C" {

// Answers the metadata call like a well-behaved handler, then dies of SIGSEGV when run.
XLA_FFI_Error* HlowbTestCrash(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr &&
      frame->extension_start->type == XLA_FFI_Extension_Metadata) {
    auto* extension = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
    extension->metadata->api_version.major_version = XLA_FFI_API_MAJOR;
    extension->metadata->api_version.minor_version = XLA_FFI_API_MINOR;
    extension->metadata->traits = 0;
    return nullptr;
  }
  std::raise(SIGSEGV);
  return nullptr;
}

}  // extern "C"
