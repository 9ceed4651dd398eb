// The CUDA driver API and cuBLAS, loaded at run time with dlopen: hlowb links neither, so the
// app and every other backend start and work on machines without a driver or GPU, and the
// `cuda` platform says why it is missing instead. Only the entry points the cuda backend uses
// are bound. Every call is made with the device's primary context current on the calling
// thread.
#ifndef HLOWB_REPLAY_BACKENDS_CUDA_CUDA_DRIVER_H_
#define HLOWB_REPLAY_BACKENDS_CUDA_CUDA_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace hlowb::cuda {

using DevicePtr = uint64_t;

struct DeviceInfo {
  int ordinal = 0;
  std::string name;             // "NVIDIA H200"
  int sm_major = 0, sm_minor = 0;
  int64_t total_memory = 0;     // bytes
  int multiprocessors = 0;
  int driver_version = 0;       // 13000 for CUDA 13.0
  std::string arch() const { return "sm_" + std::to_string(sm_major * 10 + sm_minor); }
};

// Whether a usable driver and at least one GPU are present; the error says what is missing
// ("no CUDA driver: libcuda.so.1: cannot open shared object file", "cuInit failed:
// CUDA_ERROR_NO_DEVICE ..."). Loads and initialises the driver once per process.
absl::Status DriverAvailable();
absl::StatusOr<DeviceInfo> GetDeviceInfo(int ordinal);

class Module;

// A kernel launch on the GPU emulator: kernel name, grid, block, the launch's parameters.
using EmulatedLauncher =
    std::function<absl::Status(const std::string& name, int grid, int block, void** params)>;

// One device's primary context, kept for the object's life.
class Context {
 public:
  static absl::StatusOr<std::unique_ptr<Context>> Create(int ordinal = 0);
  // A context on the host's GPU emulator (replay/codegen/gpu_emulator.h), which needs no
  // driver: device memory is host memory (a DevicePtr is its address), copies are memcpy,
  // modules are emulated programs (LoadEmulated), and times are the host's wall clock.
  static std::unique_ptr<Context> CreateEmulated();
  bool emulated() const { return emulated_; }
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }

  absl::StatusOr<DevicePtr> Alloc(size_t bytes);  // 0 bytes: a 1-byte allocation
  // Managed memory (cuMemAllocManaged): one address for the host and the device, pages moving
  // to whichever touches them. Freed with Free.
  absl::StatusOr<DevicePtr> AllocManaged(size_t bytes);
  // Moves managed memory to this device before kernels touch it, and waits (nothing where the
  // driver has no cuMemPrefetchAsync_v2, or on the emulator).
  absl::Status PrefetchToDevice(DevicePtr ptr, size_t bytes);
  void Free(DevicePtr ptr);
  absl::Status CopyToDevice(DevicePtr dst, const void* src, size_t bytes);
  absl::Status CopyToHost(void* dst, DevicePtr src, size_t bytes);
  absl::Status CopyDeviceToDevice(DevicePtr dst, DevicePtr src, size_t bytes);
  absl::Status Memset(DevicePtr dst, uint8_t value, size_t bytes);

  // Loads PTX (the driver compiles it for this device); the error carries the driver's log.
  absl::StatusOr<std::unique_ptr<Module>> LoadPtx(const std::string& ptx);
  // An emulated context's module: its launches go to `launch`.
  std::unique_ptr<Module> LoadEmulated(EmulatedLauncher launch);

  // Milliseconds between two events recorded around `work` on the default stream.
  absl::StatusOr<float> TimeMs(const std::function<absl::Status()>& work);

  void MakeCurrent() const;

 private:
  Context() = default;
  int ordinal_ = 0;
  void* ctx_ = nullptr;
  bool emulated_ = false;
  DeviceInfo info_;
};

class Module {
 public:
  ~Module();
  // Launches kernel `name` (params: buffers table, element count) on a 1-D grid.
  absl::Status Launch(const std::string& name, int grid, int block, void** params);

 private:
  friend class Context;
  Module() = default;
  const Context* context_ = nullptr;
  void* module_ = nullptr;
  EmulatedLauncher emulated_;
  struct Functions;
  std::unique_ptr<Functions> functions_;
};

// A device allocation freed with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Context* context, DevicePtr ptr, size_t bytes)
      : context_(context), ptr_(ptr), bytes_(bytes) {}
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Reset();
      context_ = o.context_;
      ptr_ = o.ptr_;
      bytes_ = o.bytes_;
      o.context_ = nullptr;
      o.ptr_ = 0;
      o.bytes_ = 0;
    }
    return *this;
  }
  static absl::StatusOr<DeviceBuffer> Make(Context* context, size_t bytes);
  DevicePtr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void Reset() {
    if (context_ != nullptr && ptr_ != 0) context_->Free(ptr_);
    context_ = nullptr;
    ptr_ = 0;
  }

 private:
  Context* context_ = nullptr;
  DevicePtr ptr_ = 0;
  size_t bytes_ = 0;
};

// cuBLAS GEMMs in cuBLAS's column-major convention: C = alpha * op(A) * op(B) + beta * C for
// `batch` matrices `stride_*` elements apart. TF32 tensor cores are off unless `allow_tf32`.
class Blas {
 public:
  // dlopen libcublas.so.13 (then .12, .11); error says which names were tried.
  static absl::StatusOr<std::unique_ptr<Blas>> Create(Context* context, bool allow_tf32 = false);
  // An emulated context's cuBLAS: the same call computed on the host (one f64 sum per element,
  // so f32 results are at least as accurate as cuBLAS's), for checking how GEMMs are planned.
  static std::unique_ptr<Blas> CreateEmulated(Context* context);
  ~Blas();
  // f16 and bf16 GEMMs (cublasGemmStridedBatchedEx) multiply and sum in f32 and round the
  // result once.
  enum class Type { kF32, kF64, kF16, kBF16 };
  absl::Status Gemm(Type type, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                    double alpha, DevicePtr a, int64_t lda, int64_t stride_a, DevicePtr b,
                    int64_t ldb, int64_t stride_b, double beta, DevicePtr c, int64_t ldc,
                    int64_t stride_c, int64_t batch);

 private:
  Blas() = default;
  Context* context_ = nullptr;
  void* handle_ = nullptr;
  std::string path_;
  struct Api;
  std::unique_ptr<Api> api_;
};

}  // namespace hlowb::cuda

#endif  // HLOWB_REPLAY_BACKENDS_CUDA_CUDA_DRIVER_H_
