// The GPU emulator: runs the cuda platform's kernels on the host CPU with a GPU's execution
// model, so that the kernels' code (grid-stride loops, warp shuffles, block barriers, shared
// memory) is checked on machines without a GPU. The kernels are the same LLVM IR the PTX comes
// from, compiled for the host (gpu_codegen.h, PtxOptions::emulate), with the NVVM intrinsics
// bound to the functions below.
//
// A launch runs its blocks one after another. Within a block every thread is a fiber with its
// own stack, scheduled cooperatively on the calling thread: a thread runs until it reaches a
// shuffle or a barrier, or ends. A shuffle completes when every lane of its mask has reached
// it; a barrier when every thread of the block has. What a GPU leaves undefined and a kernel
// must never do is reported as an error that says which block, warp and lanes: a lane that ends
// while others of its mask wait at a shuffle, a thread that ends while others wait at a
// barrier, threads waiting at different collectives (a deadlock), or shuffles whose masks
// disagree. Kernels without collectives run thread by thread without fibers.
//
// Shared memory is one block of kEmulatedSharedBytes per calling thread, reused by each block.
#ifndef HLOWB_REPLAY_CODEGEN_GPU_EMULATOR_H_
#define HLOWB_REPLAY_CODEGEN_GPU_EMULATOR_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "core/support/cancel.h"

namespace hlowb::codegen {

// A kernel's `.entry` function compiled for the host: (buffers table, element count).
using EmulatedKernelFn = void (*)(void* table, int64_t count);

inline constexpr size_t kEmulatedSharedBytes = 48 * 1024;
inline constexpr int kEmulatedMaxBlock = 1024;

struct EmulatedLaunch {
  EmulatedKernelFn fn = nullptr;
  void* table = nullptr;
  int64_t count = 0;
  int64_t grid = 1;
  int block = 1;
  // Whether the kernel may shuffle or wait at a barrier (its threads then run as fibers).
  bool collectives = false;
};

// Runs every thread of the grid. Errors: a bad grid or block, a collective misused (see above),
// Cancelled (checked between blocks).
absl::Status EmulateLaunch(const EmulatedLaunch& launch, const CancelToken* cancel = nullptr);

}  // namespace hlowb::codegen

// What emulated kernels call in place of the NVVM intrinsics (llvm.nvvm.read.ptx.sreg.*,
// llvm.nvvm.shfl.sync.down.i32, llvm.nvvm.barrier0) and of the shared-memory array. Outside a
// launch they return 0 (and a null pointer).
extern "C" {
int32_t hlowb_emu_tid_x();
int32_t hlowb_emu_ntid_x();
int32_t hlowb_emu_ctaid_x();
int32_t hlowb_emu_nctaid_x();
// shfl.sync.down.b32: the value of lane (lane + delta) when that lane is within the clamp of
// `c` (bits 0-4: the highest lane, bits 8-12: the segment mask), the caller's own value
// otherwise.
int32_t hlowb_emu_shfl_down_i32(int32_t mask, int32_t value, int32_t delta, int32_t c);
void hlowb_emu_barrier();
void* hlowb_emu_shared_memory();
}

#endif  // HLOWB_REPLAY_CODEGEN_GPU_EMULATOR_H_
