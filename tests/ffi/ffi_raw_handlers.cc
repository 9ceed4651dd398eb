// FFI handlers written against the C API alone (xla/ffi/api/c_api.h), for what the ffi.h
// binding does not let a test control: the API version a handler reports, ignoring the
// metadata call, and finishing asynchronously through a future.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "xla/ffi/api/c_api.h"

namespace {

bool IsMetadataCall(XLA_FFI_CallFrame* frame) {
  return frame->extension_start != nullptr &&
         frame->extension_start->type == XLA_FFI_Extension_Metadata;
}

XLA_FFI_Error* MakeError(const XLA_FFI_Api* api, const char* message) {
  XLA_FFI_Error_Create_Args args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.message = message;
  args.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
  return api->XLA_FFI_Error_Create(&args);
}

XLA_FFI_Error* ReportVersion(XLA_FFI_CallFrame* frame, int major, int minor) {
  auto* extension = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
  extension->metadata->api_version.major_version = major;
  extension->metadata->api_version.minor_version = minor;
  extension->metadata->traits = 0;
  return nullptr;
}

}  // namespace

extern "C" {

// Claims an API minor version from the future.
XLA_FFI_Error* HlowbTestFutureVersion(XLA_FFI_CallFrame* frame) {
  if (IsMetadataCall(frame)) return ReportVersion(frame, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR + 7);
  return MakeError(frame->api, "must not run");
}

// Claims another major version.
XLA_FFI_Error* HlowbTestOtherMajor(XLA_FFI_CallFrame* frame) {
  if (IsMetadataCall(frame)) return ReportVersion(frame, XLA_FFI_API_MAJOR + 1, 0);
  return MakeError(frame->api, "must not run");
}

// Ignores the metadata call (and everything else).
XLA_FFI_Error* HlowbTestNoMetadata(XLA_FFI_CallFrame*) { return nullptr; }

// out = in + 1 for one f32 buffer, written on another thread that completes a future.
XLA_FFI_Error* HlowbTestAsyncAddOne(XLA_FFI_CallFrame* frame) {
  if (IsMetadataCall(frame)) return ReportVersion(frame, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
  if (frame->args.size != 1 || frame->rets.size != 1) {
    return MakeError(frame->api, "async_add_one takes one argument and one result");
  }
  auto* in = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  if (in->dtype != XLA_FFI_DataType_F32 || out->dtype != XLA_FFI_DataType_F32) {
    return MakeError(frame->api, "async_add_one takes f32");
  }
  int64_t n = 1;
  for (int64_t i = 0; i < in->rank; ++i) n *= in->dims[i];
  XLA_FFI_Future_Create_Args create;
  std::memset(&create, 0, sizeof(create));
  create.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_Future_Create(&create)) return error;
  const XLA_FFI_Api* api = frame->api;
  XLA_FFI_Future* future = create.future;
  const float* src = static_cast<const float*>(in->data);
  float* dst = static_cast<float*>(out->data);
  std::thread([api, future, src, dst, n] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] + 1.0f;
    XLA_FFI_Future_SetAvailable_Args done;
    std::memset(&done, 0, sizeof(done));
    done.struct_size = XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE;
    done.future = future;
    api->XLA_FFI_Future_SetAvailable(&done);
  }).detach();
  frame->future = future;
  return nullptr;
}

// Allocates scratch through the API, fails through a future's error, and so checks both paths.
XLA_FFI_Error* HlowbTestAsyncFail(XLA_FFI_CallFrame* frame) {
  if (IsMetadataCall(frame)) return ReportVersion(frame, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
  XLA_FFI_DeviceMemory_Allocate_Args alloc;
  std::memset(&alloc, 0, sizeof(alloc));
  alloc.struct_size = XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE;
  alloc.ctx = frame->ctx;
  alloc.size = 1000;
  alloc.alignment = 64;
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_DeviceMemory_Allocate(&alloc)) return error;
  if (reinterpret_cast<uintptr_t>(alloc.data) % 64 != 0) {
    return MakeError(frame->api, "scratch memory is not aligned");
  }
  std::memset(alloc.data, 1, 1000);  // left for the host to free
  XLA_FFI_Future_Create_Args create;
  std::memset(&create, 0, sizeof(create));
  create.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_Future_Create(&create)) return error;
  XLA_FFI_Future_SetError_Args fail;
  std::memset(&fail, 0, sizeof(fail));
  fail.struct_size = XLA_FFI_Future_SetError_Args_STRUCT_SIZE;
  fail.future = create.future;
  fail.error = MakeError(frame->api, "the asynchronous work failed on purpose");
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_Future_SetError(&fail)) return error;
  frame->future = create.future;
  return nullptr;
}

}  // extern "C"
