#include "plugins/ffi/ffi_host.h"

#include <dlfcn.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "core/support/strings.h"
#include "absl/strings/str_split.h"
#include "core/ir/instruction.h"
#include "core/ir/layout_offsets.h"
#include "plugins/ffi/ffi_attributes.h"

#if HLOWB_HAVE_XLA_FFI
#include "xla/ffi/api/c_api.h"
#endif

namespace hlowb {

absl::StatusOr<FfiLibrarySpec> ParseFfiLibrarySpec(std::string_view flag) {
  std::vector<std::string> parts = absl::StrSplit(AsAbsl(flag), ',');
  FfiLibrarySpec spec;
  spec.path = parts[0];
  if (spec.path.empty()) {
    return absl::InvalidArgumentError(
        "--custom_call_library needs a path: LIB.so[,target=symbol,...]");
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == parts[i].size()) {
      return absl::InvalidArgumentError(StrCat(
          "--custom_call_library: expected target=symbol after the path, got '", parts[i], "'"));
    }
    const std::string target = parts[i].substr(0, eq);
    if (!spec.symbols.emplace(target, parts[i].substr(eq + 1)).second) {
      return absl::InvalidArgumentError(
          StrCat("--custom_call_library: target '", target, "' mapped twice"));
    }
  }
  return spec;
}

#if !HLOWB_HAVE_XLA_FFI

bool FfiHostAvailable() { return false; }
std::string FfiHostVersion() { return ""; }

absl::StatusOr<std::vector<FfiRegistration>> RegisterFfiLibrary(const FfiLibrarySpec& spec,
                                                                const Module&,
                                                                CustomCallRegistry*) {
  return absl::FailedPreconditionError(StrCat(
      "cannot load ", spec.path,
      ": this hlowb was built without XLA FFI support, whose C API header ships with jaxlib; "
      "run scripts/setup (it installs jax into .venv) and rebuild, or configure with "
      "-DHLOWB_XLA_FFI_INCLUDE_DIR=<jax.ffi.include_dir()>"));
}

#else  // HLOWB_HAVE_XLA_FFI

}  // namespace hlowb

// The API's opaque types, as this host defines them.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  std::string message;
};

struct XLA_FFI_Future {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  XLA_FFI_Error* error = nullptr;
};

struct XLA_FFI_ExecutionContext {
  int32_t device_ordinal = 0;
  int64_t run_id = 0;
  std::map<int64_t, void*> states;  // by type id
  std::map<void*, size_t> allocations;
};

namespace hlowb {
namespace {

XLA_FFI_Error* MakeError(XLA_FFI_Error_Code code, std::string message) {
  return new XLA_FFI_Error{code, std::move(message)};
}

// Types registered through Type_Register, shared by every library.
struct TypeRegistry {
  std::mutex mu;
  std::map<std::string, int64_t> ids;
  std::map<int64_t, void (*)(void*)> deleters;
  int64_t next = 1;
};
TypeRegistry& Types() {
  static TypeRegistry* types = new TypeRegistry;
  return *types;
}

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  return MakeError(args->errc, args->message ? args->message : "");
}
void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  args->message = args->error ? args->error->message.c_str() : "";
}
void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) { delete args->error; }

XLA_FFI_Error* HandlerRegister(XLA_FFI_Handler_Register_Args*) {
  return MakeError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                   "hlowb finds handlers by their exported symbol (--custom_call_library=LIB,"
                   "target=symbol); registering through the API is not supported");
}

XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args*) {
  return MakeError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                   "hlowb replays FFI handlers on the host: there is no device stream");
}

XLA_FFI_Error* TypeRegister(XLA_FFI_Type_Register_Args* args) {
  TypeRegistry& types = Types();
  std::lock_guard<std::mutex> lock(types.mu);
  const std::string name(args->name.ptr, args->name.len);
  auto it = types.ids.find(name);
  if (it != types.ids.end()) {
    if (args->type_id->type_id != 0 && args->type_id->type_id != it->second) {
      return MakeError(XLA_FFI_Error_Code_ALREADY_EXISTS,
                       StrCat("type '", name, "' is registered with another id"));
    }
    args->type_id->type_id = it->second;
    return nullptr;
  }
  int64_t id = args->type_id->type_id;
  if (id == 0) {
    while (types.deleters.count(types.next) > 0) ++types.next;
    id = types.next++;
  } else if (types.deleters.count(id) > 0) {
    return MakeError(XLA_FFI_Error_Code_ALREADY_EXISTS,
                     StrCat("type id ", id, " is taken (registering '", name, "')"));
  }
  types.ids[name] = id;
  types.deleters[id] = args->type_info ? args->type_info->deleter : nullptr;
  args->type_id->type_id = id;
  return nullptr;
}

XLA_FFI_Error* ExecutionContextGet(XLA_FFI_ExecutionContext_Get_Args* args) {
  return MakeError(XLA_FFI_Error_Code_NOT_FOUND,
                   StrCat("no user data of type id ",
                                args->type_id ? args->type_id->type_id : 0,
                                " in a hlowb replay (it has no execution context user data)"));
}

XLA_FFI_Error* StateSet(XLA_FFI_State_Set_Args* args) {
  if (!args->ctx || !args->type_id) {
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT, "State_Set without a context or type");
  }
  auto [it, inserted] = args->ctx->states.emplace(args->type_id->type_id, args->state);
  if (!inserted) {
    return MakeError(XLA_FFI_Error_Code_ALREADY_EXISTS, "state is already set for this call");
  }
  return nullptr;
}

XLA_FFI_Error* StateGet(XLA_FFI_State_Get_Args* args) {
  if (!args->ctx || !args->type_id) {
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT, "State_Get without a context or type");
  }
  auto it = args->ctx->states.find(args->type_id->type_id);
  if (it == args->ctx->states.end()) {
    return MakeError(XLA_FFI_Error_Code_NOT_FOUND,
                     "no state of that type: hlowb runs only the execute stage of a handler, so "
                     "state made by an instantiate stage does not exist");
  }
  args->state = it->second;
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryAllocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  size_t alignment = args->alignment < 16 ? 16 : args->alignment;
  if ((alignment & (alignment - 1)) != 0) {
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     StrCat("alignment ", args->alignment, " is not a power of two"));
  }
  const size_t size = (args->size + alignment - 1) / alignment * alignment;
  void* data = std::aligned_alloc(alignment, size == 0 ? alignment : size);
  if (!data) {
    return MakeError(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                     StrCat("cannot allocate ", args->size, " bytes"));
  }
  if (args->ctx) args->ctx->allocations[data] = args->size;
  args->data = data;
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryFree(XLA_FFI_DeviceMemory_Free_Args* args) {
  if (args->ctx && args->ctx->allocations.erase(args->data) == 0) {
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "DeviceMemory_Free of memory this call did not allocate");
  }
  std::free(args->data);
  return nullptr;
}

// Tasks run at once on the calling thread: whatever the handler waits for is done by then.
XLA_FFI_Error* ThreadPoolSchedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  if (!args->task) return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT, "no task to schedule");
  args->task(args->data);
  return nullptr;
}

XLA_FFI_Error* ThreadPoolNumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  *args->num_threads = 1;
  return nullptr;
}

XLA_FFI_Error* FutureCreate(XLA_FFI_Future_Create_Args* args) {
  args->future = new XLA_FFI_Future;
  return nullptr;
}

XLA_FFI_Error* FutureSetAvailable(XLA_FFI_Future_SetAvailable_Args* args) {
  std::lock_guard<std::mutex> lock(args->future->mu);
  if (args->future->done) {
    return MakeError(XLA_FFI_Error_Code_FAILED_PRECONDITION, "future completed twice");
  }
  args->future->done = true;
  args->future->cv.notify_all();
  return nullptr;
}

XLA_FFI_Error* FutureSetError(XLA_FFI_Future_SetError_Args* args) {
  std::lock_guard<std::mutex> lock(args->future->mu);
  if (args->future->done) {
    delete args->error;
    return MakeError(XLA_FFI_Error_Code_FAILED_PRECONDITION, "future completed twice");
  }
  args->future->error = args->error;
  args->future->done = true;
  args->future->cv.notify_all();
  return nullptr;
}

XLA_FFI_Error* RunIdGet(XLA_FFI_RunId_Get_Args* args) {
  args->run_id = args->ctx ? args->ctx->run_id : 0;
  return nullptr;
}

XLA_FFI_Error* DeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  args->device_ordinal = args->ctx ? args->ctx->device_ordinal : 0;
  return nullptr;
}

const XLA_FFI_Api* HostApi() {
  static const XLA_FFI_Api api = [] {
    XLA_FFI_Api a;
    std::memset(&a, 0, sizeof(a));
    a.struct_size = XLA_FFI_Api_STRUCT_SIZE;
    a.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
    a.api_version.major_version = XLA_FFI_API_MAJOR;
    a.api_version.minor_version = XLA_FFI_API_MINOR;
    a.XLA_FFI_Error_Create = ErrorCreate;
    a.XLA_FFI_Error_GetMessage = ErrorGetMessage;
    a.XLA_FFI_Error_Destroy = ErrorDestroy;
    a.XLA_FFI_Handler_Register = HandlerRegister;
    a.XLA_FFI_Stream_Get = StreamGet;
    a.XLA_FFI_Type_Register = TypeRegister;
    a.XLA_FFI_ExecutionContext_Get = ExecutionContextGet;
    a.XLA_FFI_State_Set = StateSet;
    a.XLA_FFI_State_Get = StateGet;
    a.XLA_FFI_DeviceMemory_Allocate = DeviceMemoryAllocate;
    a.XLA_FFI_DeviceMemory_Free = DeviceMemoryFree;
    a.XLA_FFI_ThreadPool_Schedule = ThreadPoolSchedule;
    a.XLA_FFI_ThreadPool_NumThreads = ThreadPoolNumThreads;
    a.XLA_FFI_Future_Create = FutureCreate;
    a.XLA_FFI_Future_SetAvailable = FutureSetAvailable;
    a.XLA_FFI_Future_SetError = FutureSetError;
    a.XLA_FFI_RunId_Get = RunIdGet;
    a.XLA_FFI_DeviceOrdinal_Get = DeviceOrdinalGet;
    return a;
  }();
  return &api;
}

absl::StatusCode ToStatusCode(XLA_FFI_Error_Code code) {
  // The FFI codes are absl's numbering.
  if (code <= XLA_FFI_Error_Code_OK || code > XLA_FFI_Error_Code_UNAUTHENTICATED) {
    return absl::StatusCode::kUnknown;
  }
  return static_cast<absl::StatusCode>(static_cast<int>(code));
}

// Consumes `error`.
absl::Status TakeError(XLA_FFI_Error* error, std::string_view context) {
  absl::Status status(ToStatusCode(error->code), StrCat(context, ": ", error->message));
  delete error;
  return status;
}

XLA_FFI_CallFrame EmptyFrame(XLA_FFI_ExecutionContext* ctx) {
  XLA_FFI_CallFrame frame;
  std::memset(&frame, 0, sizeof(frame));
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = HostApi();
  frame.ctx = ctx;
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  frame.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  frame.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  return frame;
}

// The API version a handler was built against, through XLA's metadata call.
absl::StatusOr<std::pair<int, int>> HandlerVersion(XLA_FFI_Handler* handler,
                                                   std::string_view what) {
  XLA_FFI_Metadata metadata;
  std::memset(&metadata, 0, sizeof(metadata));
  metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  metadata.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension extension;
  std::memset(&extension, 0, sizeof(extension));
  extension.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  extension.extension_base.type = XLA_FFI_Extension_Metadata;
  extension.metadata = &metadata;
  XLA_FFI_ExecutionContext ctx;
  XLA_FFI_CallFrame frame = EmptyFrame(&ctx);
  frame.extension_start = &extension.extension_base;
  if (XLA_FFI_Error* error = handler(&frame)) {
    return TakeError(error, StrCat(what, " did not report its FFI API version"));
  }
  if (metadata.api_version.major_version == 0 && metadata.api_version.minor_version == 0) {
    return absl::FailedPreconditionError(StrCat(
        what, " did not report its FFI API version (it ignores XLA's metadata call; build it "
              "with the xla/ffi/api/ffi.h binding from a recent jaxlib)"));
  }
  return std::make_pair(metadata.api_version.major_version, metadata.api_version.minor_version);
}

// Everything a call frame's attributes point at.
struct AttrStorage {
  std::deque<XLA_FFI_ByteSpan> spans;
  std::deque<XLA_FFI_Scalar> scalars;
  std::deque<XLA_FFI_Array> arrays;
  std::deque<XLA_FFI_Attrs> dictionaries;
  std::deque<std::vector<XLA_FFI_AttrType>> types;
  std::deque<std::vector<XLA_FFI_ByteSpan*>> names;
  std::deque<std::vector<void*>> values;
};

XLA_FFI_Attrs EncodeAttributes(const FfiAttributeMap& map, AttrStorage* storage) {
  std::vector<XLA_FFI_AttrType>& types = storage->types.emplace_back();
  std::vector<XLA_FFI_ByteSpan*>& names = storage->names.emplace_back();
  std::vector<void*>& values = storage->values.emplace_back();
  for (const auto& [name, attr] : map) {
    names.push_back(&storage->spans.emplace_back(XLA_FFI_ByteSpan{name.data(), name.size()}));
    switch (attr.kind) {
      case FfiAttribute::Kind::kScalar:
        types.push_back(XLA_FFI_AttrType_SCALAR);
        values.push_back(&storage->scalars.emplace_back(XLA_FFI_Scalar{
            static_cast<XLA_FFI_DataType>(attr.type),
            const_cast<uint8_t*>(attr.bytes.data())}));
        break;
      case FfiAttribute::Kind::kArray:
        types.push_back(XLA_FFI_AttrType_ARRAY);
        values.push_back(&storage->arrays.emplace_back(
            XLA_FFI_Array{static_cast<XLA_FFI_DataType>(attr.type),
                          static_cast<size_t>(attr.count),
                          const_cast<uint8_t*>(attr.bytes.data())}));
        break;
      case FfiAttribute::Kind::kString:
        types.push_back(XLA_FFI_AttrType_STRING);
        values.push_back(
            &storage->spans.emplace_back(XLA_FFI_ByteSpan{attr.text.data(), attr.text.size()}));
        break;
      case FfiAttribute::Kind::kDictionary:
        types.push_back(XLA_FFI_AttrType_DICTIONARY);
        values.push_back(
            &storage->dictionaries.emplace_back(EncodeAttributes(attr.entries, storage)));
        break;
    }
  }
  XLA_FFI_Attrs attrs;
  std::memset(&attrs, 0, sizeof(attrs));
  attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  attrs.size = static_cast<int64_t>(map.size());
  attrs.types = types.data();
  attrs.names = names.data();
  attrs.attrs = values.data();
  return attrs;
}

bool HasDefaultLayout(const Shape& shape) {
  if (!shape.has_layout() || shape.layout().minor_to_major.empty()) return true;
  const auto& m2m = shape.layout().minor_to_major;
  for (int i = 0; i < shape.rank(); ++i) {
    if (m2m[i] != shape.rank() - 1 - i) return false;
  }
  return true;
}


// One loaded handler.
struct FfiHandler {
  std::string target;
  std::string symbol;
  std::string library;
  XLA_FFI_Handler* execute = nullptr;
};

std::atomic<int64_t> g_run_id{0};

absl::StatusOr<Literal> CallHandler(const FfiHandler& handler, const Instruction& instr,
                                    const std::vector<const Literal*>& operands,
                                    int32_t device_ordinal) {
  const std::string what = StrCat("FFI handler ", handler.symbol, " (", handler.library,
                                        ") for ", instr.name());
  if (instr.attrs_or_default().api_version != CustomCallApiVersion::kTypedFfi) {
    return absl::InvalidArgumentError(StrCat(
        instr.name(), " calls \"", handler.target,
        "\" without api_version=API_VERSION_TYPED_FFI; FFI handlers take typed-FFI calls only"));
  }
  absl::StatusOr<FfiAttributeMap> attributes = ParseFfiAttributes(instr.backend_config());
  if (!attributes.ok()) {
    return absl::InvalidArgumentError(
        StrCat(instr.name(), ": backend_config: ", attributes.status().message()));
  }

  // Operands.
  std::deque<std::vector<uint8_t>> relaid;
  std::vector<XLA_FFI_Buffer> arg_buffers(operands.size());
  std::vector<XLA_FFI_ArgType> arg_types(operands.size(), XLA_FFI_ArgType_BUFFER);
  std::vector<void*> arg_ptrs(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    const Literal& value = *operands[i];
    if (!value.shape().IsArray()) {
      return absl::InvalidArgumentError(StrCat(
          what, ": operand ", i, " is not an array (FFI passes array buffers only)"));
    }
    XLA_FFI_Buffer& buffer = arg_buffers[i];
    std::memset(&buffer, 0, sizeof(buffer));
    buffer.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
    buffer.dtype = static_cast<XLA_FFI_DataType>(value.shape().element_type());
    buffer.data = const_cast<uint8_t*>(value.data().data());
    buffer.rank = value.shape().rank();
    buffer.dims = const_cast<int64_t*>(value.shape().dimensions().data());
    const Shape& declared = i < instr.operands().size() ? instr.operand(static_cast<int>(i))->shape()
                                                        : value.shape();
    if (!HasDefaultLayout(declared) && declared.rank() == value.shape().rank()) {
      auto bytes = RelayoutBytes(value.data().data(), declared, value.element_bytes(), true);
      if (!bytes.ok()) return absl::InvalidArgumentError(StrCat(what, ": ", bytes.status().message()));
      buffer.data = relaid.emplace_back(std::move(*bytes)).data();
    }
    arg_ptrs[i] = &buffer;
  }

  // Results, zero-filled.
  const Shape& shape = instr.shape();
  std::vector<const Shape*> result_shapes;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) result_shapes.push_back(&element);
  } else {
    result_shapes.push_back(&shape);
  }
  std::vector<Literal> results;
  for (const Shape* s : result_shapes) {
    if (!s->IsArray()) {
      return absl::InvalidArgumentError(
          StrCat(what, ": results must be arrays or a tuple of arrays"));
    }
    results.emplace_back(*s);
  }
  std::vector<XLA_FFI_Buffer> ret_buffers(results.size());
  std::vector<XLA_FFI_RetType> ret_types(results.size(), XLA_FFI_RetType_BUFFER);
  std::vector<void*> ret_ptrs(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    XLA_FFI_Buffer& buffer = ret_buffers[i];
    std::memset(&buffer, 0, sizeof(buffer));
    buffer.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
    buffer.dtype = static_cast<XLA_FFI_DataType>(results[i].shape().element_type());
    buffer.data = results[i].mutable_data()->data();
    buffer.rank = results[i].shape().rank();
    buffer.dims = const_cast<int64_t*>(results[i].shape().dimensions().data());
    ret_ptrs[i] = &buffer;
  }

  AttrStorage storage;
  XLA_FFI_ExecutionContext ctx;
  ctx.device_ordinal = device_ordinal;
  ctx.run_id = ++g_run_id;
  XLA_FFI_CallFrame frame = EmptyFrame(&ctx);
  frame.args.size = static_cast<int64_t>(operands.size());
  frame.args.types = arg_types.data();
  frame.args.args = arg_ptrs.data();
  frame.rets.size = static_cast<int64_t>(results.size());
  frame.rets.types = ret_types.data();
  frame.rets.rets = ret_ptrs.data();
  frame.attrs = EncodeAttributes(*attributes, &storage);

  absl::Status status;
  if (XLA_FFI_Error* error = handler.execute(&frame)) {
    status = TakeError(error, what);
  } else if (frame.future) {
    XLA_FFI_Future* future = frame.future;
    XLA_FFI_Error* error = nullptr;
    {
      std::unique_lock<std::mutex> lock(future->mu);
      future->cv.wait(lock, [&] { return future->done; });
      error = future->error;
    }
    delete future;
    if (error) status = TakeError(error, what);
  }
  // What the handler left behind.
  for (auto& [data, size] : ctx.allocations) std::free(data);
  {
    TypeRegistry& types = Types();
    std::lock_guard<std::mutex> lock(types.mu);
    for (auto& [type_id, state] : ctx.states) {
      auto it = types.deleters.find(type_id);
      if (it != types.deleters.end() && it->second) it->second(state);
    }
  }
  if (!status.ok()) return status;

  for (size_t i = 0; i < results.size(); ++i) {
    if (!HasDefaultLayout(*result_shapes[i])) {
      auto bytes = RelayoutBytes(results[i].data().data(), *result_shapes[i],
                            results[i].element_bytes(), false);
      if (!bytes.ok()) return absl::InvalidArgumentError(StrCat(what, ": ", bytes.status().message()));
      std::memcpy(results[i].mutable_data()->data(), bytes->data(), bytes->size());
    }
  }
  if (!shape.IsTuple()) return std::move(results[0]);
  Literal tuple(shape);
  *tuple.mutable_tuple_elements() = std::move(results);
  return tuple;
}

}  // namespace

bool FfiHostAvailable() { return true; }
std::string FfiHostVersion() { return StrCat(XLA_FFI_API_MAJOR, ".", XLA_FFI_API_MINOR); }

absl::StatusOr<std::vector<FfiRegistration>> RegisterFfiLibrary(const FfiLibrarySpec& spec,
                                                                const Module& module,
                                                                CustomCallRegistry* registry) {
  // The module's typed-FFI targets.
  std::set<std::string> targets;
  for (const auto& computation : module.computations()) {
    for (const Instruction* instr : computation->instructions()) {
      if (instr->opcode() == Opcode::kCustomCall &&
          instr->attrs_or_default().api_version == CustomCallApiVersion::kTypedFfi) {
        targets.insert(instr->attrs_or_default().custom_call_target);
      }
    }
  }
  for (const auto& [target, symbol] : spec.symbols) {
    if (targets.count(target) == 0) {
      return absl::InvalidArgumentError(StrCat(
          "--custom_call_library ", spec.path, ": the module has no typed-FFI custom call to '",
          target, "'"));
    }
  }

  // Kept loaded for the life of the process: handlers may hold static state.
  void* library = dlopen(spec.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    return absl::NotFoundError(
        StrCat("cannot load FFI handler library ", spec.path, ": ", why ? why : "dlopen failed"));
  }

  std::vector<FfiRegistration> registered;
  for (const std::string& target : targets) {
    auto mapped = spec.symbols.find(target);
    const std::string symbol = mapped != spec.symbols.end() ? mapped->second : target;
    dlerror();
    void* address = dlsym(library, symbol.c_str());
    if (!address) {
      if (mapped != spec.symbols.end()) {
        return absl::NotFoundError(StrCat("FFI handler library ", spec.path,
                                                " has no symbol '", symbol, "' (for target '",
                                                target, "')"));
      }
      continue;  // another library, a built-in plugin or the fallback serves it
    }
    auto handler = std::make_shared<FfiHandler>();
    handler->target = target;
    handler->symbol = symbol;
    handler->library = spec.path;
    handler->execute = reinterpret_cast<XLA_FFI_Handler*>(address);
    const std::string what =
        StrCat("FFI handler ", symbol, " in ", spec.path, " (target ", target, ")");
    absl::StatusOr<std::pair<int, int>> version = HandlerVersion(handler->execute, what);
    if (!version.ok()) return version.status();
    const auto [major, minor] = *version;
    if (major != XLA_FFI_API_MAJOR || minor > XLA_FFI_API_MINOR) {
      return absl::FailedPreconditionError(StrCat(
          what, " was built against XLA FFI API ", major, ".", minor, "; this hlowb serves ",
          FfiHostVersion(), " and handlers of ", XLA_FFI_API_MAJOR, ".0 to ", FfiHostVersion(),
          ": rebuild the handler against the FFI headers of a jaxlib that speaks ",
          FfiHostVersion(), ", or rebuild hlowb against a newer jaxlib"));
    }
    CustomCallHandlerInfo info;
    info.target = target;
    info.platform = "";
    info.plugin = StrCat("ffi:", spec.path);
    info.summary = StrCat("XLA FFI handler ", symbol, " (API ", major, ".", minor, ")");
    info.handler = [handler](const Instruction& instr, const std::vector<const Literal*>& ops) {
      return CallHandler(*handler, instr, ops, 0);
    };
    info.device_handler = [handler](const Instruction& instr,
                                    const std::vector<const Literal*>& ops,
                                    DeviceCollectives& device) {
      return CallHandler(*handler, instr, ops, static_cast<int32_t>(device.device_index()));
    };
    if (absl::Status st = registry->Override(std::move(info)); !st.ok()) return st;
    registered.push_back({target, symbol, StrCat(major, ".", minor)});
  }
  if (registered.empty()) {
    std::string list;
    for (const std::string& t : targets) list += (list.empty() ? "" : ", ") + t;
    return absl::NotFoundError(StrCat(
        "FFI handler library ", spec.path, " exports no handler for the module's typed-FFI targets",
        targets.empty() ? std::string(" (the module has none)") : StrCat(" (", list, ")"),
        "; map a target to its symbol with --custom_call_library=", spec.path,
        ",target=symbol"));
  }
  return registered;
}

#endif  // HLOWB_HAVE_XLA_FFI

}  // namespace hlowb
