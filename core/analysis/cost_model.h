// A static cost estimate per instruction: floating-point operations, transcendental operations
// and bytes accessed (operands read + result written), counted roughly the way XLA's
// HloCostAnalysis counts them. It is an estimate for orientation in the properties panel and
// reports, not a performance model: no hardware, layouts, caches or fusion emitters.
//
// Counting rules (one "flop" per multiply or add; an FMA is two):
//   elementwise (unary, binary, select, clamp, compare, convert, reduce-precision):
//                  one flop per result element; transcendental opcodes (exp, log, tanh, sqrt,
//                  rsqrt, power, sin, ... see IsTranscendental) count one transcendental per
//                  element instead, and no flops. copy and bitcast-convert are free.
//   dot            2 · M · N · K · batch  (= 2 · result elements · contracted size)
//   convolution    2 · result elements · kernel spatial size · input features per group
//   reduce         input elements (of the reduced inputs, not the init values)
//   reduce-window  result elements · window size
//   map, scatter, all-reduce, reduce-scatter
//                  applications · flops of the applied computation (result elements for map
//                  and collectives, update elements for scatter)
//   fusion         the sum of its fused computation's flops; bytes are the fusion's own operands
//                  and result only (what crosses memory), never its fused instructions'
//   while          body and condition counted once (trip counts are unknown statically)
//   call, async-start
//                  the called computation once
//   conditional    the most expensive branch
//   everything else (data movement, sort, custom-call, collectives without a reducer, ...)
//                  zero flops.
// Bytes: arrays are elements × bytes per element (sub-byte types take one byte, as unpacked);
// tuples are the sum of their leaves. parameter, get-tuple-element, tuple, bitcast, after-all,
// add-dependency, domain and opt-barrier move no data (0 bytes). slice, dynamic-slice and gather
// read only the result-sized window of their first operand; dynamic-update-slice reads and
// writes only the update. Instructions with a dynamic-unbounded dimension count it as 0.
#ifndef HLOWB_CORE_ANALYSIS_COST_MODEL_H_
#define HLOWB_CORE_ANALYSIS_COST_MODEL_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"
#include "core/ir/shape.h"

namespace hlowb {

struct Cost {
  int64_t flops = 0;
  int64_t transcendentals = 0;
  int64_t operand_bytes = 0;  // bytes read from operands
  int64_t result_bytes = 0;   // bytes written to the result
  int64_t bytes_accessed() const { return operand_bytes + result_bytes; }

  Cost& operator+=(const Cost& other);
  bool operator==(const Cost&) const = default;
};

// Bytes of a value of this shape: arrays are elements × ByteWidth, tuples the sum of their
// elements, tokens and opaque values 0. Saturates instead of overflowing.
int64_t ShapeByteSize(const Shape& shape);

// A count at a glance: 1234 -> "1234", 1234567 -> "1.23 M" (K, M, G, T, P, E; three significant
// digits), for tooltips and summaries that sit beside exact counts.
std::string CountMagnitude(int64_t n);

// True for opcodes XLA counts as transcendental (exp, log, tanh, sqrt, rsqrt, power, ...).
bool IsTranscendental(Opcode opcode);

// Computes costs, caching per-computation totals so that every instruction of a module can be
// asked for in linear total time. Not thread-safe; the module must outlive the model.
class CostModel {
 public:
  // The cost of one instruction (including, for fusions, calls and loops, the flops of what it
  // calls, per the rules above).
  Cost InstructionCost(const Instruction& instruction);
  // The sum over a computation's instructions (flops, transcendentals and bytes).
  Cost ComputationCost(const Computation& computation);
  // The entry computation's total; zero for a module without one.
  Cost ModuleCost(const Module& module);

 private:
  absl::flat_hash_map<const Computation*, Cost> cache_;
  // Computations being summed (guards against malformed recursive call graphs).
  absl::flat_hash_map<const Computation*, bool> active_;
};

// One-off convenience: InstructionCost with a fresh model.
Cost EstimateInstructionCost(const Instruction& instruction);

// A roofline model of a device running one kernel (the GPU fusion pass's priorities, the cost
// overlay's estimated time): a launch overhead plus the longest of its arithmetic, its
// transcendental functions and its memory traffic at the device's peak rates. The defaults are
// a current data-centre GPU (about an H100's fp32 vector rate, special-function rate and HBM
// bandwidth); CpuHost() is a small current x86 host.
struct RooflineModel {
  double flops_per_second = 6.7e13;
  double transcendentals_per_second = 4.2e12;
  double bytes_per_second = 3.35e12;
  double launch_seconds = 1e-6;

  // Orders of magnitude of a small current x86 host (a few cores with AVX2 FMA), not measured on
  // the machine at hand: about 100 GFLOP/s of fp32 arithmetic (a few cores' sgemm rate), 4 G
  // transcendental functions/s (vectorised exp/tanh take several cycles per element), 20 GB/s
  // of sustained memory bandwidth (memcpy, read plus write) and 100 ns of dispatch per
  // instruction.
  static RooflineModel CpuHost() { return RooflineModel{1e11, 4e9, 2e10, 1e-7}; }

  // Seconds for a kernel that does `flops` and `transcendentals` and moves `bytes`.
  double KernelSeconds(double flops, double transcendentals, double bytes) const;
  double KernelSeconds(const Cost& cost) const {
    return KernelSeconds(static_cast<double>(cost.flops),
                         static_cast<double>(cost.transcendentals),
                         static_cast<double>(cost.bytes_accessed()));
  }
};

}  // namespace hlowb

#endif  // HLOWB_CORE_ANALYSIS_COST_MODEL_H_
