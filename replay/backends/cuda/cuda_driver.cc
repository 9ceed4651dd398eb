#include "replay/backends/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/ir/float_types.h"
#include "core/ir/primitive_type.h"
#include "core/support/strings.h"

namespace hlowb::cuda {
namespace {

// The few driver API types and constants used here (cuda.h's values), so building needs no
// CUDA headers.
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUevent = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;  // NOLINT
struct CUmemLocation {
  int type;  // CU_MEM_LOCATION_TYPE_DEVICE = 1
  int id;
};

constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSizeBytes = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;

struct DriverApi {
  void* library = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemAllocManaged)(CUdeviceptr*, size_t, unsigned) = nullptr;
  // Optional (CUDA 12.2 and later); without it managed memory moves on first touch.
  CUresult (*cuMemPrefetchAsync_v2)(CUdeviceptr, size_t, CUmemLocation, unsigned,
                                    CUstream) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
};

std::string ErrorText(const DriverApi& api, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName != nullptr) api.cuGetErrorName(r, &name);
  if (api.cuGetErrorString != nullptr) api.cuGetErrorString(r, &text);
  return StrCat(name != nullptr ? name : "CUDA error", " (", r, ")",
                text != nullptr ? StrCat(": ", text) : std::string());
}

struct Loaded {
  DriverApi api;
  absl::Status status = absl::OkStatus();
};

const Loaded& Load() {
  static Loaded* loaded = [] {
    auto* l = new Loaded();
    DriverApi& a = l->api;
    a.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (a.library == nullptr) {
      const char* e = dlerror();
      l->status = absl::FailedPreconditionError(
          StrCat("no CUDA driver: ", e != nullptr ? e : "libcuda.so.1 not found"));
      return l;
    }
    std::string missing;
    auto bind = [&](auto& fn, const char* name) {
      void* sym = dlsym(a.library, name);
      if (sym == nullptr && missing.empty()) missing = name;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
    };
    bind(a.cuInit, "cuInit");
    bind(a.cuDriverGetVersion, "cuDriverGetVersion");
    bind(a.cuDeviceGetCount, "cuDeviceGetCount");
    bind(a.cuDeviceGet, "cuDeviceGet");
    bind(a.cuDeviceGetName, "cuDeviceGetName");
    bind(a.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    bind(a.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
    bind(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    bind(a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    bind(a.cuCtxSetCurrent, "cuCtxSetCurrent");
    bind(a.cuMemAlloc, "cuMemAlloc_v2");
    bind(a.cuMemAllocManaged, "cuMemAllocManaged");
    bind(a.cuMemFree, "cuMemFree_v2");
    bind(a.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    bind(a.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    bind(a.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
    bind(a.cuMemsetD8, "cuMemsetD8_v2");
    bind(a.cuModuleLoadDataEx, "cuModuleLoadDataEx");
    bind(a.cuModuleUnload, "cuModuleUnload");
    bind(a.cuModuleGetFunction, "cuModuleGetFunction");
    bind(a.cuLaunchKernel, "cuLaunchKernel");
    bind(a.cuEventCreate, "cuEventCreate");
    bind(a.cuEventRecord, "cuEventRecord");
    bind(a.cuEventSynchronize, "cuEventSynchronize");
    bind(a.cuEventElapsedTime, "cuEventElapsedTime");
    bind(a.cuEventDestroy, "cuEventDestroy_v2");
    bind(a.cuGetErrorName, "cuGetErrorName");
    bind(a.cuGetErrorString, "cuGetErrorString");
    bind(a.cuCtxSynchronize, "cuCtxSynchronize");
    if (!missing.empty()) {
      l->status = absl::FailedPreconditionError(
          StrCat("the CUDA driver (libcuda.so.1) lacks ", missing, "; it is too old"));
      return l;
    }
    a.cuMemPrefetchAsync_v2 = reinterpret_cast<decltype(a.cuMemPrefetchAsync_v2)>(
        dlsym(a.library, "cuMemPrefetchAsync_v2"));
    if (CUresult r = a.cuInit(0); r != 0) {
      l->status = absl::FailedPreconditionError(StrCat("cuInit failed: ", ErrorText(a, r)));
      return l;
    }
    int count = 0;
    if (CUresult r = a.cuDeviceGetCount(&count); r != 0) {
      l->status = absl::FailedPreconditionError(StrCat("cuDeviceGetCount failed: ", ErrorText(a, r)));
    } else if (count == 0) {
      l->status = absl::FailedPreconditionError("the CUDA driver found no GPU");
    }
    return l;
  }();
  return *loaded;
}

absl::Status Check(CUresult r, const char* what) {
  if (r == 0) return absl::OkStatus();
  return absl::InternalError(StrCat(what, " failed: ", ErrorText(Load().api, r)));
}

}  // namespace

absl::Status DriverAvailable() { return Load().status; }

absl::StatusOr<DeviceInfo> GetDeviceInfo(int ordinal) {
  const Loaded& l = Load();
  if (!l.status.ok()) return l.status;
  const DriverApi& a = l.api;
  CUdevice dev = 0;
  if (absl::Status st = Check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet"); !st.ok()) return st;
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  if (absl::Status st = Check(a.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
      !st.ok()) {
    return st;
  }
  info.name = name;
  a.cuDeviceGetAttribute(&info.sm_major, kAttrComputeCapabilityMajor, dev);
  a.cuDeviceGetAttribute(&info.sm_minor, kAttrComputeCapabilityMinor, dev);
  a.cuDeviceGetAttribute(&info.multiprocessors, kAttrMultiprocessorCount, dev);
  size_t total = 0;
  a.cuDeviceTotalMem(&total, dev);
  info.total_memory = static_cast<int64_t>(total);
  a.cuDriverGetVersion(&info.driver_version);
  return info;
}

absl::StatusOr<std::unique_ptr<Context>> Context::Create(int ordinal) {
  absl::StatusOr<DeviceInfo> info = GetDeviceInfo(ordinal);
  if (!info.ok()) return info.status();
  const DriverApi& a = Load().api;
  std::unique_ptr<Context> c(new Context());
  c->ordinal_ = ordinal;
  c->info_ = *info;
  CUdevice dev = 0;
  if (absl::Status st = Check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet"); !st.ok()) return st;
  if (absl::Status st = Check(a.cuDevicePrimaryCtxRetain(&c->ctx_, dev), "cuDevicePrimaryCtxRetain");
      !st.ok()) {
    return st;
  }
  c->MakeCurrent();
  return c;
}

std::unique_ptr<Context> Context::CreateEmulated() {
  std::unique_ptr<Context> c(new Context());
  c->emulated_ = true;
  c->info_.name = "hlowb GPU emulator (host memory)";
  c->info_.sm_major = 8;
  c->info_.multiprocessors = 1;
  return c;
}

Context::~Context() {
  if (ctx_ == nullptr) return;
  const DriverApi& a = Load().api;
  CUdevice dev = 0;
  if (a.cuDeviceGet(&dev, ordinal_) == 0) a.cuDevicePrimaryCtxRelease(dev);
}

void Context::MakeCurrent() const {
  if (!emulated_) Load().api.cuCtxSetCurrent(ctx_);
}

absl::StatusOr<DevicePtr> Context::Alloc(size_t bytes) {
  if (emulated_) {
    // 256-byte aligned, as cuMemAlloc's.
    void* p = std::aligned_alloc(256, (std::max<size_t>(bytes, 1) + 255) / 256 * 256);
    if (p == nullptr) {
      return absl::ResourceExhaustedError(StrCat("emulated device allocation of ", bytes,
                                                 " bytes failed"));
    }
    return reinterpret_cast<DevicePtr>(p);
  }
  MakeCurrent();
  CUdeviceptr p = 0;
  CUresult r = Load().api.cuMemAlloc(&p, bytes == 0 ? 1 : bytes);
  if (r != 0) {
    return absl::ResourceExhaustedError(
        StrCat("cuMemAlloc of ", bytes, " bytes failed: ", ErrorText(Load().api, r)));
  }
  return static_cast<DevicePtr>(p);
}

absl::StatusOr<DevicePtr> Context::AllocManaged(size_t bytes) {
  if (emulated_) return Alloc(bytes);
  MakeCurrent();
  CUdeviceptr p = 0;
  constexpr unsigned kAttachGlobal = 1;  // CU_MEM_ATTACH_GLOBAL
  CUresult r = Load().api.cuMemAllocManaged(&p, bytes == 0 ? 1 : bytes, kAttachGlobal);
  if (r != 0) {
    return absl::ResourceExhaustedError(
        StrCat("cuMemAllocManaged of ", bytes, " bytes failed: ", ErrorText(Load().api, r)));
  }
  return static_cast<DevicePtr>(p);
}

absl::Status Context::PrefetchToDevice(DevicePtr ptr, size_t bytes) {
  if (emulated_ || bytes == 0 || Load().api.cuMemPrefetchAsync_v2 == nullptr) {
    return absl::OkStatus();
  }
  MakeCurrent();
  const DriverApi& a = Load().api;
  if (absl::Status st = Check(a.cuMemPrefetchAsync_v2(ptr, bytes, CUmemLocation{1, ordinal_}, 0,
                                                     nullptr),
                              "cuMemPrefetchAsync");
      !st.ok()) {
    return st;
  }
  return Check(a.cuCtxSynchronize(), "cuCtxSynchronize");
}

void Context::Free(DevicePtr ptr) {
  if (ptr == 0) return;
  if (emulated_) {
    std::free(reinterpret_cast<void*>(ptr));
    return;
  }
  MakeCurrent();
  Load().api.cuMemFree(ptr);
}

absl::Status Context::CopyToDevice(DevicePtr dst, const void* src, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  if (emulated_) {
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    return absl::OkStatus();
  }
  MakeCurrent();
  return Check(Load().api.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

absl::Status Context::CopyToHost(void* dst, DevicePtr src, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  if (emulated_) {
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
    return absl::OkStatus();
  }
  MakeCurrent();
  return Check(Load().api.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

absl::Status Context::CopyDeviceToDevice(DevicePtr dst, DevicePtr src, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  if (emulated_) {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    return absl::OkStatus();
  }
  MakeCurrent();
  return Check(Load().api.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
}

absl::Status Context::Memset(DevicePtr dst, uint8_t value, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  if (emulated_) {
    std::memset(reinterpret_cast<void*>(dst), value, bytes);
    return absl::OkStatus();
  }
  MakeCurrent();
  return Check(Load().api.cuMemsetD8(dst, value, bytes), "cuMemsetD8");
}

absl::StatusOr<float> Context::TimeMs(const std::function<absl::Status()>& work) {
  if (emulated_) {
    auto t0 = std::chrono::steady_clock::now();
    if (absl::Status st = work(); !st.ok()) return st;
    return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  MakeCurrent();
  const DriverApi& a = Load().api;
  CUevent start = nullptr, stop = nullptr;
  if (absl::Status st = Check(a.cuEventCreate(&start, 0), "cuEventCreate"); !st.ok()) return st;
  if (absl::Status st = Check(a.cuEventCreate(&stop, 0), "cuEventCreate"); !st.ok()) {
    a.cuEventDestroy(start);
    return st;
  }
  absl::Status st = Check(a.cuEventRecord(start, nullptr), "cuEventRecord");
  if (st.ok()) st = work();
  if (st.ok()) st = Check(a.cuEventRecord(stop, nullptr), "cuEventRecord");
  if (st.ok()) st = Check(a.cuEventSynchronize(stop), "cuEventSynchronize");
  float ms = 0;
  if (st.ok()) st = Check(a.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  a.cuEventDestroy(start);
  a.cuEventDestroy(stop);
  if (!st.ok()) return st;
  return ms;
}

struct Module::Functions {
  std::unordered_map<std::string, CUfunction> by_name;
};

absl::StatusOr<std::unique_ptr<Module>> Context::LoadPtx(const std::string& ptx) {
  MakeCurrent();
  const DriverApi& a = Load().api;
  std::vector<char> info_log(1 << 14, 0), error_log(1 << 14, 0);
  int keys[] = {kJitInfoLogBuffer, kJitInfoLogBufferSizeBytes, kJitErrorLogBuffer,
                kJitErrorLogBufferSizeBytes};
  void* values[] = {info_log.data(), reinterpret_cast<void*>(info_log.size() - 1),
                    error_log.data(), reinterpret_cast<void*>(error_log.size() - 1)};
  CUmodule m = nullptr;
  CUresult r = a.cuModuleLoadDataEx(&m, ptx.c_str(), 4, keys, values);
  if (r != 0) {
    return absl::InternalError(StrCat("the CUDA driver could not load the PTX: ", ErrorText(a, r),
                                      "; log: ", std::string(error_log.data())));
  }
  std::unique_ptr<Module> mod(new Module());
  mod->context_ = this;
  mod->module_ = m;
  mod->functions_ = std::make_unique<Module::Functions>();
  return mod;
}

std::unique_ptr<Module> Context::LoadEmulated(EmulatedLauncher launch) {
  std::unique_ptr<Module> mod(new Module());
  mod->context_ = this;
  mod->emulated_ = std::move(launch);
  mod->functions_ = std::make_unique<Module::Functions>();
  return mod;
}

Module::~Module() {
  if (module_ == nullptr) return;
  context_->MakeCurrent();
  Load().api.cuModuleUnload(module_);
}

absl::Status Module::Launch(const std::string& name, int grid, int block, void** params) {
  if (emulated_) return emulated_(name, grid, block, params);
  context_->MakeCurrent();
  const DriverApi& a = Load().api;
  CUfunction f = nullptr;
  auto it = functions_->by_name.find(name);
  if (it != functions_->by_name.end()) {
    f = it->second;
  } else {
    if (absl::Status st = Check(a.cuModuleGetFunction(&f, module_, name.c_str()),
                                "cuModuleGetFunction");
        !st.ok()) {
      return st;
    }
    functions_->by_name.emplace(name, f);
  }
  return Check(a.cuLaunchKernel(f, static_cast<unsigned>(grid), 1, 1, static_cast<unsigned>(block),
                                1, 1, 0, nullptr, params, nullptr),
               "cuLaunchKernel");
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Make(Context* context, size_t bytes) {
  absl::StatusOr<DevicePtr> p = context->Alloc(bytes);
  if (!p.ok()) return p.status();
  return DeviceBuffer(context, *p, bytes);
}

// ---- cuBLAS ----

struct Blas::Api {
  using Handle = void*;
  int (*create)(Handle*) = nullptr;
  int (*destroy)(Handle) = nullptr;
  int (*set_math_mode)(Handle, int) = nullptr;
  int (*sgemm_strided)(Handle, int, int, int, int, int, const float*, const float*, int,
                       long long, const float*, int, long long, const float*,  // NOLINT
                       float*, int, long long, int) = nullptr;                 // NOLINT
  int (*dgemm_strided)(Handle, int, int, int, int, int, const double*, const double*, int,
                       long long, const double*, int, long long, const double*,  // NOLINT
                       double*, int, long long, int) = nullptr;                  // NOLINT
  int (*gemm_ex_strided)(Handle, int, int, int, int, int, const void*, const void*, int, int,
                         long long, const void*, int, int, long long, const void*,  // NOLINT
                         void*, int, int, long long, int, int, int) = nullptr;      // NOLINT
};

absl::StatusOr<std::unique_ptr<Blas>> Blas::Create(Context* context, bool allow_tf32) {
  std::unique_ptr<Blas> blas(new Blas());
  blas->context_ = context;
  blas->api_ = std::make_unique<Api>();
  void* lib = nullptr;
  std::string tried;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      blas->path_ = name;
      break;
    }
    StrAppend(&tried, tried.empty() ? "" : ", ", name);
  }
  if (lib == nullptr) {
    return absl::FailedPreconditionError(
        StrCat("cuBLAS not found (tried ", tried, "; add its folder to LD_LIBRARY_PATH)"));
  }
  Api& a = *blas->api_;
  auto bind = [&](auto& fn, const char* name) -> bool {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    return fn != nullptr;
  };
  if (!bind(a.create, "cublasCreate_v2") || !bind(a.destroy, "cublasDestroy_v2") ||
      !bind(a.set_math_mode, "cublasSetMathMode") ||
      !bind(a.sgemm_strided, "cublasSgemmStridedBatched") ||
      !bind(a.dgemm_strided, "cublasDgemmStridedBatched") ||
      !bind(a.gemm_ex_strided, "cublasGemmStridedBatchedEx")) {
    return absl::FailedPreconditionError(StrCat(blas->path_, " lacks the GEMM entry points"));
  }
  context->MakeCurrent();
  if (int r = a.create(&blas->handle_); r != 0) {
    return absl::InternalError(StrCat("cublasCreate failed with status ", r));
  }
  // CUBLAS_DEFAULT_MATH = 0 (f32 GEMMs in full f32); CUBLAS_TF32_TENSOR_OP_MATH = 3.
  a.set_math_mode(blas->handle_, allow_tf32 ? 3 : 0);
  return blas;
}

std::unique_ptr<Blas> Blas::CreateEmulated(Context* context) {
  std::unique_ptr<Blas> blas(new Blas());
  blas->context_ = context;
  blas->path_ = "the GPU emulator's host GEMM";
  return blas;
}

namespace {

// C = alpha * op(A) op(B) + beta * C, column-major, as cublas<t>gemmStridedBatched; C is not
// read when beta is 0.
// `load` and `store` convert elements of type T to and from double (16-bit floats are stored as
// their bits).
template <typename T, typename Load, typename Store>
void HostGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
              const T* a, int64_t lda, int64_t stride_a, const T* b, int64_t ldb,
              int64_t stride_b, double beta, T* c, int64_t ldc, int64_t stride_c, int64_t batch,
              Load load, Store store) {
  for (int64_t q = 0; q < batch; ++q) {
    const T* aq = a + q * stride_a;
    const T* bq = b + q * stride_b;
    T* cq = c + q * stride_c;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < m; ++i) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l) {
          const double x = load(trans_a ? aq[l + i * lda] : aq[i + l * lda]);
          const double y = load(trans_b ? bq[j + l * ldb] : bq[l + j * ldb]);
          sum += x * y;
        }
        T& out = cq[i + j * ldc];
        out = store(alpha * sum + (beta == 0 ? 0.0 : beta * load(out)));
      }
    }
  }
}

}  // namespace

Blas::~Blas() {
  if (handle_ != nullptr && api_ != nullptr) {
    context_->MakeCurrent();
    api_->destroy(handle_);
  }
}

absl::Status Blas::Gemm(Type type, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                        double alpha, DevicePtr a, int64_t lda, int64_t stride_a, DevicePtr b,
                        int64_t ldb, int64_t stride_b, double beta, DevicePtr c, int64_t ldc,
                        int64_t stride_c, int64_t batch) {
  const int64_t limit = int64_t{1} << 31;
  if (m >= limit || n >= limit || k >= limit || lda >= limit || ldb >= limit || ldc >= limit ||
      batch >= limit) {
    return absl::InvalidArgumentError("GEMM dimensions past cuBLAS's 32-bit limits");
  }
  if (api_ == nullptr) {  // emulated
    if (type == Type::kF32) {
      HostGemm(trans_a, trans_b, m, n, k, alpha, reinterpret_cast<const float*>(a), lda, stride_a,
               reinterpret_cast<const float*>(b), ldb, stride_b, beta,
               reinterpret_cast<float*>(c), ldc, stride_c, batch,
               [](float x) { return static_cast<double>(x); },
               [](double x) { return static_cast<float>(x); });
    } else if (type == Type::kF64) {
      HostGemm(trans_a, trans_b, m, n, k, alpha, reinterpret_cast<const double*>(a), lda,
               stride_a, reinterpret_cast<const double*>(b), ldb, stride_b, beta,
               reinterpret_cast<double*>(c), ldc, stride_c, batch, [](double x) { return x; },
               [](double x) { return x; });
    } else {
      const PrimitiveType t = type == Type::kF16 ? PrimitiveType::kF16 : PrimitiveType::kBF16;
      HostGemm(trans_a, trans_b, m, n, k, alpha, reinterpret_cast<const uint16_t*>(a), lda,
               stride_a, reinterpret_cast<const uint16_t*>(b), ldb, stride_b, beta,
               reinterpret_cast<uint16_t*>(c), ldc, stride_c, batch,
               [t](uint16_t x) { return FloatBitsToDouble(t, x); },
               [t](double x) { return static_cast<uint16_t>(DoubleToFloatBits(t, x)); });
    }
    return absl::OkStatus();
  }
  context_->MakeCurrent();
  const int ta = trans_a ? 1 : 0, tb = trans_b ? 1 : 0;  // CUBLAS_OP_N = 0, CUBLAS_OP_T = 1
  int r;
  if (type == Type::kF32) {
    const float fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
    r = api_->sgemm_strided(handle_, ta, tb, static_cast<int>(m), static_cast<int>(n),
                            static_cast<int>(k), &fa, reinterpret_cast<const float*>(a),
                            static_cast<int>(lda), stride_a, reinterpret_cast<const float*>(b),
                            static_cast<int>(ldb), stride_b, &fb, reinterpret_cast<float*>(c),
                            static_cast<int>(ldc), stride_c, static_cast<int>(batch));
  } else if (type == Type::kF16 || type == Type::kBF16) {
    // CUDA_R_16F = 2, CUDA_R_16BF = 14; CUBLAS_COMPUTE_32F = 68; CUBLAS_GEMM_DEFAULT = -1.
    const int data = type == Type::kF16 ? 2 : 14;
    const float fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
    r = api_->gemm_ex_strided(handle_, ta, tb, static_cast<int>(m), static_cast<int>(n),
                              static_cast<int>(k), &fa, reinterpret_cast<const void*>(a), data,
                              static_cast<int>(lda), stride_a, reinterpret_cast<const void*>(b),
                              data, static_cast<int>(ldb), stride_b, &fb,
                              reinterpret_cast<void*>(c), data, static_cast<int>(ldc), stride_c,
                              static_cast<int>(batch), 68, -1);
  } else {
    r = api_->dgemm_strided(handle_, ta, tb, static_cast<int>(m), static_cast<int>(n),
                            static_cast<int>(k), &alpha, reinterpret_cast<const double*>(a),
                            static_cast<int>(lda), stride_a, reinterpret_cast<const double*>(b),
                            static_cast<int>(ldb), stride_b, &beta, reinterpret_cast<double*>(c),
                            static_cast<int>(ldc), stride_c, static_cast<int>(batch));
  }
  if (r != 0) return absl::InternalError(StrCat("cuBLAS GEMM failed with status ", r));
  return absl::OkStatus();
}

}  // namespace hlowb::cuda
