// The elemental emitter: LLVM IR for one HLO instruction (a fusion or a single op) as a loop
// over its output elements. Every value is produced "elementally": the emitter asks for operand
// X's element at index I and gets an LLVM value, recursing through the fused computation, so a
// chain of elementwise and data-movement ops becomes one loop body with no temporaries. Index
// transforms (broadcast, transpose, reshape, slice, pad, concatenate, reverse, dynamic-slice)
// map the output index onto operand indices; reductions open an inner loop over the reduced
// dimensions in row-major order (the interpreter's order, so sums agree bit for bit). On the
// GPU a long reduction is cooperative instead (CooperativeReduce): the threads of a warp or a
// block fold strided elements and combine them through shuffles and shared memory.
//
// Element types: pred (i1 in registers, a byte in memory), s8–s64, u8–u64, f32 and f64 natively;
// every narrow float (f16, bf16, the f8 variants) is computed in f64 and rounded to its type
// after each instruction through the runtime's exact converters (runtime_support.cc), which is
// what the interpreter does. Sub-byte integers (s1/s2/s4, u1/u2/u4) take a byte each, as the
// interpreter stores them (sign-extended for signed types, zero-extended for unsigned), compute
// in that byte with 8-bit semantics and are wrapped back to their width after each instruction
// (the interpreter's NormalizeSubByte); no odd-width LLVM integer is ever made. Complex values
// are {re, im} pairs of f32 (c64) or f64 (c128), interleaved in memory: add, subtract,
// multiply (C's Annex G rules, what std::complex compiles to), abs (hypot), real, imag,
// complex, converts and EQ/NE compares are inline; divide, power, sign and the transcendental
// functions call the runtime's std::complex helpers (so on the GPU, which has no helpers, those
// kernels are refused); other complex opcodes are refused.
//
// Semantics follow replay/evaluator/semantics.h (integer division by zero, shifts past the
// width, NaN-propagating min/max, saturating float-to-int converts, total-order compares);
// transcendental functions call the C library's, as the interpreter does.
#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "core/ir/computation.h"
#include "core/ir/float_types.h"
#include "core/ir/primitive_type.h"
#include "core/passes/copy_insertion.h"
#include "core/support/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "replay/codegen/cpu_jit.h"

namespace hlowb::codegen {
namespace {

using llvm::Value;

// The GPU kernels' shared memory, in 64-bit slots (kTile x (kTile + 1) for a transpose tile).
constexpr int kTile = 32;
constexpr int kSharedSlots = kTile * (kTile + 1);

bool IsNarrowFloat(PrimitiveType t) {
  return IsFloatingPoint(t) && t != PrimitiveType::kF32 && t != PrimitiveType::kF64;
}

// bf16 and f16 compute in f32: for +, -, *, / and sqrt, rounding the f32 result to the narrow
// type gives the correctly rounded result (f32 has at least 2p+2 bits for both), which is what
// the interpreter gets by computing in f64; and the conversions are a few vector instructions.
bool IsF32Narrow(PrimitiveType t) { return t == PrimitiveType::kBF16 || t == PrimitiveType::kF16; }

bool IsSubByte(PrimitiveType t) { return IsIntegral(t) && BitWidth(t) < 8; }

bool Supported(PrimitiveType t) {
  if (t == PrimitiveType::kPred || t == PrimitiveType::kF32 || t == PrimitiveType::kF64) return true;
  if (IsIntegral(t) || IsComplex(t)) return true;
  if (IsNarrowFloat(t)) return ByteWidth(t) <= 2;
  return false;
}


absl::Status Refuse(const Instruction& h, const std::string& why) {
  return absl::UnimplementedError(StrCat("%", h.name(), " (", OpcodeName(h.opcode()), "): ", why));
}

// A position in an array: its row-major linear offset and its per-dimension coordinates, both
// computed where the index is made so they dominate every later use.
struct Index {
  int id = 0;
  std::vector<int64_t> dims;
  Value* linear = nullptr;
  std::vector<Value*> multi;
};

class Emitter {
 public:
  Emitter(llvm::Module* module, const KernelForm& form)
      : module_(module), ctx_(module->getContext()), b_(ctx_), form_(form),
        elements_per_call_(form.elements_per_call), element_stride_(form.element_stride) {}

  // With `in_place`, the in-place form of a dynamic-update-slice or of a fusion whose root is
  // one (KernelInfo::in_place_operand), or Unimplemented when it has none.
  absl::StatusOr<KernelInfo> EmitKernel(const Instruction& instr, const std::string& name,
                                        bool in_place = false);
  // `void name(ptr args)` computing the scalar computation `c` (see EmitScalarFunctions).
  absl::Status EmitScalarFunction(const Computation& c, const std::string& name);

 private:
  // Types.
  llvm::Type* I64() { return b_.getInt64Ty(); }
  llvm::Type* ComputeType(PrimitiveType t) {
    if (t == PrimitiveType::kPred) return b_.getInt1Ty();
    if (IsIntegral(t)) return b_.getIntNTy(std::max(8, BitWidth(t)));  // sub-byte: their byte
    if (IsComplex(t)) {
      llvm::Type* part = ComputeType(ComplexComponentType(t));
      return llvm::StructType::get(ctx_, {part, part});
    }
    if (t == PrimitiveType::kF32 || IsF32Narrow(t)) return b_.getFloatTy();
    return b_.getDoubleTy();  // f64 and the f8 types
  }
  // Complex pairs are stored as computed: {re, im} has the interleaved layout of a literal.
  llvm::Type* StorageType(PrimitiveType t) {
    if (t == PrimitiveType::kPred) return b_.getInt8Ty();
    if (IsNarrowFloat(t)) return b_.getIntNTy(8 * ByteWidth(t));
    return ComputeType(t);
  }
  Value* C64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  // Indices.
  Index MakeFromLinear(const std::vector<int64_t>& dims, Value* linear);
  Index MakeFromMulti(const std::vector<int64_t>& dims, std::vector<Value*> multi);
  Index Scalar() { return MakeFromMulti({}, {}); }

  // Loops: [begin, end) in steps of one; the body runs with the builder in the loop body and
  // may add blocks of its own.
  absl::Status Loop(Value* begin, Value* end, const std::string& name,
                    const std::function<absl::Status(Value*)>& body);

  // Values.
  absl::StatusOr<Value*> Elem(const Instruction& h, const Index& idx);
  absl::StatusOr<Value*> ElemUncached(const Instruction& h, const Index& idx);
  absl::StatusOr<std::vector<Value*>> ReduceElems(const Instruction& h, const Index& idx);
  // A convolution's element: the sum over the window and the input features of its group.
  absl::StatusOr<Value*> ConvolutionElem(const Instruction& h, const Index& idx);
  // A gather's element: the operand at the clamped start its index vector gives, plus the
  // element's offset in the slice.
  absl::StatusOr<Value*> GatherElem(const Instruction& h, const Index& idx);
  absl::Status ReducedDims(const Instruction& h, std::vector<bool>* reduced,
                           std::vector<int>* red_dims);
  absl::StatusOr<std::vector<Value*>> CallScalar(const Computation& c,
                                                 const std::vector<Value*>& args);
  absl::StatusOr<Value*> Load(const Instruction& h, int buffer, const Index& idx);
  // The start indices of dynamic-slice or dynamic-update-slice `h` (operands from `first_index`,
  // one integer scalar per dimension), clamped so that a block of `sizes` fits the operand.
  absl::StatusOr<std::vector<Value*>> ClampedStarts(const Instruction& h, int first_index,
                                                    const std::vector<int64_t>& sizes);
  // A value loaded with StorageType(t) as the compute value.
  Value* FromStorage(PrimitiveType t, Value* raw);
  Value* Store(PrimitiveType t, Value* v, Value* ptr, Value* linear);
  absl::StatusOr<Value*> ConstantElem(const Instruction& h);
  absl::StatusOr<Value*> Unary(const Instruction& h, PrimitiveType t, Value* x);
  absl::StatusOr<Value*> Binary(const Instruction& h, Opcode op, PrimitiveType t, Value* a,
                                Value* c);
  absl::StatusOr<Value*> Compare(const Instruction& h, PrimitiveType t, Value* a, Value* c);
  absl::StatusOr<Value*> Convert(const Instruction& h, PrimitiveType from, PrimitiveType to,
                                 Value* x);
  Value* RoundNarrow(PrimitiveType t, Value* v);
  // A sub-byte integer computed in its byte, wrapped to its width in the stored form: the
  // low BitWidth(t) bits, sign-extended for signed types and zero-extended for unsigned ones.
  Value* WrapSubByte(PrimitiveType t, Value* v);
  // A sub-byte integer's logical bits (the byte masked to its width); other values unchanged.
  Value* LogicalBits(PrimitiveType t, Value* v);
  // Complex values: parts, a pair from parts, and what the elementwise ops do with them.
  Value* Re(Value* z) { return b_.CreateExtractValue(z, 0); }
  Value* Im(Value* z) { return b_.CreateExtractValue(z, 1); }
  Value* MakeComplex(Value* re, Value* im);
  Value* ComplexMultiply(Value* x, Value* y);
  // The runtime's std::complex helper for `op` (runtime_support.h); `y` is null for unary ops.
  Value* ComplexCall(Opcode op, Value* x, Value* y);
  absl::StatusOr<Value*> ComplexUnary(const Instruction& h, PrimitiveType t, Value* x);
  absl::StatusOr<Value*> ComplexBinary(const Instruction& h, Opcode op, PrimitiveType t, Value* a,
                                       Value* c);
  // Narrow storage bits (zero-extended to i64 or the storage width) to the compute value, and
  // back; and an f64 to a narrow type with one rounding.
  Value* FromNarrowBits(PrimitiveType t, Value* raw);
  Value* ToNarrowBits(PrimitiveType t, Value* v);
  Value* NarrowFromF64(PrimitiveType t, Value* d);
  Value* HelperCall(const char* name, llvm::Type* ret, std::vector<Value*> args);
  Value* NanMax(Value* a, Value* c, bool is_float, bool is_signed, bool max);
  Value* CallMath(const std::string& base, PrimitiveType t, std::vector<Value*> args);
  Value* TanhF32(Value* x);
  Value* Exp(Value* x);
  Value* Intrinsic(llvm::Intrinsic::ID id, Value* x);
  Value* Clamp(Value* v, int64_t lo, int64_t hi);
  absl::Status OutputRange(Value* begin, Value* end, const std::vector<int64_t>& dims,
                           const std::function<absl::Status(const Index&)>& body);
  const Instruction* ColumnReduction(const std::vector<const Instruction*>& outputs);
  // Cooperative reductions (KernelForm::cooperative_reductions): the group size for a kernel
  // whose iteration space is `dims`, 0 when it is not one; the reduces computed cooperatively
  // go to coop_reduces_.
  int CooperativeGroup(const Instruction& instr, const std::vector<int64_t>& dims);
  absl::StatusOr<std::vector<Value*>> CooperativeReduce(const Instruction& h, const Index& idx);
  // Tiled transposes (KernelForm::tiled_transposes): the kernel's transpose when it is one, and
  // the kernel computing tile `tile` of it.
  const Instruction* TiledTranspose(const std::vector<const Instruction*>& outputs);
  std::vector<int64_t> TileSpace(const Instruction& t);
  absl::Status EmitTiledTranspose(const Instruction& t, PrimitiveType out_type, Value* out,
                                  Value* tile);
  // GPU collectives and shared memory (NVVM intrinsics; the emulator binds them on the host).
  Value* ShuffleDown(Value* v, int delta);
  void Barrier();
  Value* SharedMemory();
  // A value of a cooperative accumulator's type as 64 bits, and back.
  Value* ToBits64(Value* v);
  Value* FromBits64(llvm::Type* t, Value* bits);
  absl::Status EmitColumnReduction(const Instruction& r, PrimitiveType out_type, Value* out,
                                   Value* begin, Value* end);

  llvm::Module* module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  KernelForm form_;
  // GPU kernels (> 0): each call computes the elements begin + k * element_stride_ below `end`
  // (k < elements_per_call_), every value before any store when the call is full; 0: the CPU's
  // loop over the range [begin, end).
  int elements_per_call_ = 0;
  int64_t element_stride_ = 1;
  llvm::Function* fn_ = nullptr;
  // Where operand values come from: buffers (fusion parameters, or the operands of a single op)
  // and values bound for a scalar computation's parameters.
  std::map<const Instruction*, int> leaf_buffer_;
  std::map<const Instruction*, Value*> bound_;
  std::vector<Value*> buffer_ptrs_;
  std::vector<const Instruction*> constants_;
  int next_index_id_ = 1;
  // The fused computation of the kernel being emitted (null for other kernels).
  const Computation* kernel_computation_ = nullptr;
  // Memoised element values, one map per loop scope (values of an inner loop do not dominate
  // code after it).
  std::vector<std::map<std::pair<const Instruction*, int>, Value*>> memo_;
  // Results of variadic reduces (read through get-tuple-element), scoped like memo_.
  std::vector<std::map<std::pair<const Instruction*, int>, std::vector<Value*>>> multi_memo_;
  int64_t cost_ = 0;
  // Cooperative reductions: the group size (0: none), the thread's lane in its group, and the
  // reduces the group computes together.
  int coop_group_ = 0;
  Value* lane_ = nullptr;
  std::set<const Instruction*> coop_reduces_;
};

Index Emitter::MakeFromLinear(const std::vector<int64_t>& dims, Value* linear) {
  Index idx;
  idx.id = next_index_id_++;
  idx.dims = dims;
  idx.linear = linear;
  idx.multi.resize(dims.size());
  Value* rest = linear;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    if (dims[d] == 1) {
      idx.multi[d] = C64(0);
      continue;
    }
    if (d == 0) {
      idx.multi[d] = rest;
      break;
    }
    idx.multi[d] = b_.CreateURem(rest, C64(dims[d]));
    rest = b_.CreateUDiv(rest, C64(dims[d]));
  }
  return idx;
}

Index Emitter::MakeFromMulti(const std::vector<int64_t>& dims, std::vector<Value*> multi) {
  Index idx;
  idx.id = next_index_id_++;
  idx.dims = dims;
  idx.multi = std::move(multi);
  Value* lin = C64(0);
  int64_t stride = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    if (dims[d] != 1) lin = b_.CreateAdd(lin, b_.CreateMul(idx.multi[d], C64(stride)));
    stride *= dims[d];
  }
  idx.linear = lin;
  return idx;
}

absl::Status Emitter::Loop(Value* begin, Value* end, const std::string& name,
                           const std::function<absl::Status(Value*)>& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, name + ".header", fn_);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx_, name + ".body", fn_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, name + ".exit", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(I64(), 2, name + ".iv");
  iv->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, end), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  memo_.emplace_back();
  multi_memo_.emplace_back();
  absl::Status st = body(iv);
  memo_.pop_back();
  multi_memo_.pop_back();
  if (!st.ok()) return st;
  Value* next = b_.CreateAdd(iv, C64(1), name + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
  iv->addIncoming(next, b_.GetInsertBlock());
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

Value* Emitter::Clamp(Value* v, int64_t lo, int64_t hi) {
  Value* c = b_.CreateSelect(b_.CreateICmpSLT(v, C64(lo)), C64(lo), v);
  return b_.CreateSelect(b_.CreateICmpSGT(c, C64(hi)), C64(hi), c);
}

Value* Emitter::Intrinsic(llvm::Intrinsic::ID id, Value* x) {
  llvm::Function* f = llvm::Intrinsic::getDeclaration(module_, id, {x->getType()});
  return b_.CreateCall(f, {x});
}

Value* Emitter::CallMath(const std::string& base, PrimitiveType t, std::vector<Value*> args) {
  const bool f32 = t == PrimitiveType::kF32;
  llvm::Type* ft = f32 ? b_.getFloatTy() : b_.getDoubleTy();
  std::vector<llvm::Type*> params(args.size(), ft);
  llvm::FunctionCallee callee =
      module_->getOrInsertFunction(f32 ? base + "f" : base, llvm::FunctionType::get(ft, params, false));
  llvm::CallInst* call = b_.CreateCall(callee, args);
  // errno is of no interest: pure calls hoist, and vectorise through the vector math library.
  call->setDoesNotAccessMemory();
  call->setDoesNotThrow();
  return call;
}

// tanh for f32 as a rational function of x (odd numerator of degree 13 over an even
// denominator of degree 6; Eigen's coefficients), exact to a few ulp and vectorisable. Inputs
// beyond ±7.905 give ±1, and tiny ones give x itself.
Value* Emitter::TanhF32(Value* x) {
  llvm::Type* ty = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(ty, v); };
  Value* clamped = b_.CreateSelect(b_.CreateFCmpOGT(x, c(7.90531110763549805)),
                                   c(7.90531110763549805), x);
  clamped = b_.CreateSelect(b_.CreateFCmpOLT(clamped, c(-7.90531110763549805)),
                            c(-7.90531110763549805), clamped);
  Value* x2 = b_.CreateFMul(clamped, clamped);
  auto horner = [&](std::initializer_list<double> coeffs) {
    Value* acc = nullptr;
    for (double k : coeffs) acc = acc == nullptr ? c(k) : b_.CreateFAdd(b_.CreateFMul(acc, x2), c(k));
    return acc;
  };
  Value* p = horner({-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                     5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                     4.89352455891786e-03});
  p = b_.CreateFMul(p, clamped);
  Value* q = horner({1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                     4.89352518554385e-03});
  Value* r = b_.CreateFDiv(p, q);
  Value* tiny = b_.CreateFCmpOLT(Intrinsic(llvm::Intrinsic::fabs, x), c(0.0004));
  // NaN stays NaN: the comparisons above are ordered, so a NaN input flows through p / q.
  return b_.CreateSelect(tiny, x, r);
}

// exp. For f32 on the CPU, inline: n = rint(x / ln 2), r = x - n ln 2 in two parts (the
// first exact), e^r by Cephes' degree-6 polynomial (about 1 ulp), times 2^n applied as two
// powers of two so that subnormal results round once. The vector library's expf takes a
// scalar slow path for every lane once any lane overflows or underflows, which made softmax
// over large logits ten times slower; this form has no special path: inputs are clamped to
// [-104, 89] (giving 0 and infinity) and NaN is passed through. f64 and the GPU use the
// platform's exp.
Value* Emitter::Exp(Value* x) {
  llvm::Type* ty = x->getType();
  if (elements_per_call_ > 0 || !ty->isFloatTy()) return Intrinsic(llvm::Intrinsic::exp, x);
  auto c = [&](double v) { return llvm::ConstantFP::get(ty, v); };
  Value* nan = b_.CreateFCmpUNO(x, x);
  Value* xc = b_.CreateSelect(b_.CreateFCmpOGT(x, c(89.0)), c(89.0), x);
  xc = b_.CreateSelect(b_.CreateFCmpOLT(xc, c(-104.0)), c(-104.0), xc);
  xc = b_.CreateSelect(nan, c(0.0), xc);
  Value* n = Intrinsic(llvm::Intrinsic::rint, b_.CreateFMul(xc, c(1.44269504088896341)));
  Value* r = b_.CreateFSub(xc, b_.CreateFMul(n, c(0.693359375)));
  r = b_.CreateFSub(r, b_.CreateFMul(n, c(-2.12194440e-4)));
  Value* p = c(1.9875691500e-4);
  for (double k : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
                   5.0000001201e-1}) {
    p = b_.CreateFAdd(b_.CreateFMul(p, r), c(k));
  }
  Value* y = b_.CreateFAdd(b_.CreateFAdd(b_.CreateFMul(p, b_.CreateFMul(r, r)), r), c(1.0));
  Value* ni = b_.CreateFPToSI(n, b_.getInt32Ty());
  Value* n1 = b_.CreateAShr(ni, b_.getInt32(1));
  Value* n2 = b_.CreateSub(ni, n1);
  auto pow2 = [&](Value* e) {
    return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(e, b_.getInt32(127)), 23), ty);
  };
  Value* out = b_.CreateFMul(b_.CreateFMul(y, pow2(n1)), pow2(n2));
  return b_.CreateSelect(nan, x, out);
}

Value* Emitter::HelperCall(const char* name, llvm::Type* ret, std::vector<Value*> args) {
  std::vector<llvm::Type*> types;
  for (Value* a : args) types.push_back(a->getType());
  llvm::FunctionCallee callee =
      module_->getOrInsertFunction(name, llvm::FunctionType::get(ret, types, false));
  llvm::CallInst* call = b_.CreateCall(callee, args);
  call->setDoesNotAccessMemory();
  call->setDoesNotThrow();
  return call;
}

Value* Emitter::FromNarrowBits(PrimitiveType t, Value* raw) {
  if (t == PrimitiveType::kBF16) {
    Value* wide = b_.CreateShl(b_.CreateZExtOrTrunc(raw, b_.getInt32Ty()), 16);
    return b_.CreateBitCast(wide, b_.getFloatTy());
  }
  if (t == PrimitiveType::kF16) {
    Value* h = b_.CreateBitCast(b_.CreateZExtOrTrunc(raw, b_.getInt16Ty()), b_.getHalfTy());
    return b_.CreateFPExt(h, b_.getFloatTy());
  }
  return HelperCall("hlowb_narrow_to_f64", b_.getDoubleTy(),
                    {b_.CreateZExtOrTrunc(raw, I64()), b_.getInt32(static_cast<int32_t>(t))});
}

Value* Emitter::ToNarrowBits(PrimitiveType t, Value* v) {
  if (t == PrimitiveType::kBF16) {
    // Round to nearest even on the f32 bits; NaNs stay NaN (quiet, sign kept).
    Value* bits = b_.CreateBitCast(v, b_.getInt32Ty());
    Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), b_.getInt32(1));
    Value* rounded = b_.CreateAdd(bits, b_.CreateAdd(b_.getInt32(0x7fff), lsb));
    Value* nan = b_.CreateOr(bits, b_.getInt32(0x400000));
    Value* out = b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, rounded);
    return b_.CreateTrunc(b_.CreateLShr(out, 16), b_.getInt16Ty());
  }
  if (t == PrimitiveType::kF16) {
    return b_.CreateBitCast(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getInt16Ty());
  }
  return b_.CreateTrunc(HelperCall("hlowb_f64_to_narrow", b_.getInt64Ty(),
                                   {v, b_.getInt32(static_cast<int32_t>(t))}),
                        StorageType(t));
}

Value* Emitter::NarrowFromF64(PrimitiveType t, Value* d) {
  if (IsF32Narrow(t)) {
    // f64 to f32 rounded to odd (truncated toward zero, lowest bit set when inexact), then to
    // nearest even in the narrow type: f32 has at least two more bits than bf16 and f16, so the
    // two steps round like one. Inline and vectorisable, unlike the runtime converter.
    Value* r = b_.CreateFPTrunc(d, b_.getFloatTy());
    Value* back = b_.CreateFPExt(r, b_.getDoubleTy());
    Value* inexact = b_.CreateFCmpONE(back, d);
    Value* away = b_.CreateFCmpOGT(Intrinsic(llvm::Intrinsic::fabs, back),
                                   Intrinsic(llvm::Intrinsic::fabs, d));
    Value* rb = b_.CreateBitCast(r, b_.getInt32Ty());
    Value* toward_zero = b_.CreateSelect(away, b_.CreateSub(rb, b_.getInt32(1)), rb);
    Value* odd = b_.CreateSelect(inexact, b_.CreateOr(toward_zero, b_.getInt32(1)), rb);
    return FromNarrowBits(t, ToNarrowBits(t, b_.CreateBitCast(odd, b_.getFloatTy())));
  }
  Value* bits = HelperCall("hlowb_f64_to_narrow", b_.getInt64Ty(),
                           {d, b_.getInt32(static_cast<int32_t>(t))});
  return FromNarrowBits(t, bits);
}

// After an instruction computed in a wider type: narrow floats rounded to their type, sub-byte
// integers wrapped to their width.
Value* Emitter::RoundNarrow(PrimitiveType t, Value* v) {
  if (IsSubByte(t)) return WrapSubByte(t, v);
  if (!IsNarrowFloat(t)) return v;
  if (IsF32Narrow(t)) return FromNarrowBits(t, ToNarrowBits(t, v));
  return HelperCall("hlowb_round_through", b_.getDoubleTy(),
                    {v, b_.getInt32(static_cast<int32_t>(t))});
}

Value* Emitter::WrapSubByte(PrimitiveType t, Value* v) {
  if (!IsSubByte(t)) return v;
  const int bits = BitWidth(t);
  if (IsSignedIntegral(t)) {
    return b_.CreateAShr(b_.CreateShl(v, 8 - bits), 8 - bits);
  }
  return b_.CreateAnd(v, b_.getInt8(static_cast<uint8_t>((1u << bits) - 1)));
}

Value* Emitter::LogicalBits(PrimitiveType t, Value* v) {
  if (!IsSubByte(t)) return v;
  return b_.CreateAnd(v, b_.getInt8(static_cast<uint8_t>((1u << BitWidth(t)) - 1)));
}

Value* Emitter::FromStorage(PrimitiveType t, Value* raw) {
  if (t == PrimitiveType::kPred) return b_.CreateICmpNE(raw, b_.getInt8(0));
  if (IsNarrowFloat(t)) return FromNarrowBits(t, raw);
  // Integers (sub-byte ones already in their stored form), f32, f64 and complex pairs.
  return raw;
}

absl::StatusOr<Value*> Emitter::Load(const Instruction& h, int buffer, const Index& idx) {
  PrimitiveType t = h.shape().element_type();
  llvm::Type* st = StorageType(t);
  Value* ptr = b_.CreateInBoundsGEP(st, buffer_ptrs_[buffer], idx.linear);
  return FromStorage(t, b_.CreateLoad(st, ptr));
}

Value* Emitter::Store(PrimitiveType t, Value* v, Value* base, Value* linear) {
  llvm::Type* st = StorageType(t);
  Value* ptr = b_.CreateInBoundsGEP(st, base, linear);
  if (t == PrimitiveType::kPred) {
    v = b_.CreateZExt(v, b_.getInt8Ty());
  } else if (IsNarrowFloat(t)) {
    v = ToNarrowBits(t, v);
  }
  return b_.CreateStore(v, ptr);
}

absl::StatusOr<Value*> Emitter::ConstantElem(const Instruction& h) {
  const Literal* lit = h.literal();
  PrimitiveType t = h.shape().element_type();
  if (lit == nullptr) return Refuse(h, "constant without a literal");
  if (h.shape().ElementCount() != 1 || lit->elided()) {
    return Refuse(h, "an array or elided constant outside a fused computation");
  }
  uint64_t bits = lit->GetBits(0);
  if (t == PrimitiveType::kPred) return b_.getInt1(bits != 0);
  if (IsIntegral(t)) return WrapSubByte(t, llvm::ConstantInt::get(ComputeType(t), bits));
  if (IsComplex(t)) {
    // Components 0 and 1 are the real and imaginary parts; their bits are kept exactly.
    const bool f32 = t == PrimitiveType::kC64;
    auto part = [&](int k) -> Value* {
      const uint64_t b = lit->GetBits(k);
      return llvm::ConstantFP::get(
          ctx_, f32 ? llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, b))
                    : llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, b)));
    };
    return MakeComplex(part(0), part(1));
  }
  if (t == PrimitiveType::kF32) {
    uint32_t b32 = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b32, sizeof f);
    return llvm::ConstantFP::get(b_.getFloatTy(), f);
  }
  double d = FloatBitsToDouble(t, bits);
  return llvm::ConstantFP::get(ComputeType(t), d);
}

Value* Emitter::NanMax(Value* a, Value* c, bool is_float, bool is_signed, bool max) {
  if (!is_float) {
    // std::max(a, b): a < b ? b : a (ties keep lhs); std::min: b < a ? b : a.
    Value* lt = max ? (is_signed ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c))
                    : (is_signed ? b_.CreateICmpSLT(c, a) : b_.CreateICmpULT(c, a));
    return b_.CreateSelect(lt, c, a);
  }
  Value* plain = max ? b_.CreateSelect(b_.CreateFCmpOLT(a, c), c, a)
                     : b_.CreateSelect(b_.CreateFCmpOLT(c, a), c, a);
  Value* c_nan = b_.CreateFCmpUNO(c, c);
  Value* a_nan = b_.CreateFCmpUNO(a, a);
  return b_.CreateSelect(a_nan, a, b_.CreateSelect(c_nan, c, plain));
}

Value* Emitter::MakeComplex(Value* re, Value* im) {
  llvm::Type* pair = llvm::StructType::get(ctx_, {re->getType(), re->getType()});
  return b_.CreateInsertValue(b_.CreateInsertValue(llvm::PoisonValue::get(pair), re, 0), im, 1);
}

// (a + bi)(c + di) the way std::complex's multiply compiles (C's Annex G): ac - bd and ad + bc,
// unless both come out NaN; then infinities are recovered: an infinite factor is "boxed" to
// components of ±1 and ±0 with the other factor's NaNs read as zeros, or, when no factor is
// infinite but a partial product overflowed, every NaN is read as zero, and the products are
// recomputed times infinity. Selects only (no branches or calls), so the GPU has it too.
Value* Emitter::ComplexMultiply(Value* x, Value* y) {
  Value* a = Re(x);
  Value* b = Im(x);
  Value* c = Re(y);
  Value* d = Im(y);
  llvm::Type* ty = a->getType();
  Value* inf = llvm::ConstantFP::getInfinity(ty);
  auto k = [&](double v) { return llvm::ConstantFP::get(ty, v); };
  auto is_nan = [&](Value* v) { return b_.CreateFCmpUNO(v, v); };
  auto is_inf = [&](Value* v) {
    return b_.CreateFCmpOEQ(Intrinsic(llvm::Intrinsic::fabs, v), inf);
  };
  llvm::Function* copysign =
      llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::copysign, {ty});
  auto with_sign_of = [&](Value* magnitude, Value* v) {
    return b_.CreateCall(copysign, {magnitude, v});
  };
  // ±1 for an infinite component, ±0 for any other.
  auto box = [&](Value* v) { return with_sign_of(b_.CreateSelect(is_inf(v), k(1), k(0)), v); };
  // A NaN read as a zero of its sign where `when` holds.
  auto nan_to_zero = [&](Value* when, Value* v) {
    return b_.CreateSelect(b_.CreateAnd(when, is_nan(v)), with_sign_of(k(0), v), v);
  };
  Value* ac = b_.CreateFMul(a, c);
  Value* bd = b_.CreateFMul(b, d);
  Value* ad = b_.CreateFMul(a, d);
  Value* bc = b_.CreateFMul(b, c);
  Value* re = b_.CreateFSub(ac, bd);
  Value* im = b_.CreateFAdd(ad, bc);

  Value* x_inf = b_.CreateOr(is_inf(a), is_inf(b));
  Value* a1 = b_.CreateSelect(x_inf, box(a), a);
  Value* b1 = b_.CreateSelect(x_inf, box(b), b);
  Value* c1 = nan_to_zero(x_inf, c);
  Value* d1 = nan_to_zero(x_inf, d);
  Value* y_inf = b_.CreateOr(is_inf(c1), is_inf(d1));
  Value* c2 = b_.CreateSelect(y_inf, box(c1), c1);
  Value* d2 = b_.CreateSelect(y_inf, box(d1), d1);
  Value* a2 = nan_to_zero(y_inf, a1);
  Value* b2 = nan_to_zero(y_inf, b1);
  Value* boxed = b_.CreateOr(x_inf, y_inf);
  Value* overflowed = b_.CreateAnd(
      b_.CreateNot(boxed),
      b_.CreateOr(b_.CreateOr(is_inf(ac), is_inf(bd)), b_.CreateOr(is_inf(ad), is_inf(bc))));
  Value* a3 = nan_to_zero(overflowed, a2);
  Value* b3 = nan_to_zero(overflowed, b2);
  Value* c3 = nan_to_zero(overflowed, c2);
  Value* d3 = nan_to_zero(overflowed, d2);
  Value* re2 = b_.CreateFMul(inf, b_.CreateFSub(b_.CreateFMul(a3, c3), b_.CreateFMul(b3, d3)));
  Value* im2 = b_.CreateFMul(inf, b_.CreateFAdd(b_.CreateFMul(a3, d3), b_.CreateFMul(b3, c3)));
  Value* recover = b_.CreateAnd(b_.CreateAnd(is_nan(re), is_nan(im)),
                                b_.CreateOr(boxed, overflowed));
  return MakeComplex(b_.CreateSelect(recover, re2, re), b_.CreateSelect(recover, im2, im));
}

Value* Emitter::ComplexCall(Opcode op, Value* x, Value* y) {
  llvm::Type* part = Re(x)->getType();
  llvm::AllocaInst* out;
  {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    out = entry.CreateAlloca(part, entry.getInt32(2));
  }
  Value* zero = llvm::ConstantFP::get(part, 0.0);
  std::vector<Value*> args = {b_.getInt32(static_cast<int32_t>(op)), Re(x), Im(x),
                              y == nullptr ? zero : Re(y), y == nullptr ? zero : Im(y), out};
  std::vector<llvm::Type*> types;
  for (Value* v : args) types.push_back(v->getType());
  llvm::FunctionCallee callee = module_->getOrInsertFunction(
      part->isFloatTy() ? "hlowb_complex64" : "hlowb_complex128",
      llvm::FunctionType::get(b_.getVoidTy(), types, false));
  llvm::CallInst* call = b_.CreateCall(callee, args);
  call->setDoesNotThrow();
  call->setOnlyAccessesArgMemory();
  call->setOnlyWritesMemory();
  cost_ += 20;  // a libm call or two per element
  return MakeComplex(b_.CreateLoad(part, out),
                     b_.CreateLoad(part, b_.CreateConstInBoundsGEP1_64(part, out, 1)));
}

absl::StatusOr<Value*> Emitter::ComplexUnary(const Instruction& h, PrimitiveType t, Value* x) {
  const Opcode op = h.opcode();
  switch (op) {
    case Opcode::kCopy: return x;
    case Opcode::kNegate: return MakeComplex(b_.CreateFNeg(Re(x)), b_.CreateFNeg(Im(x)));
    case Opcode::kAbs: return CallMath("hypot", ComplexComponentType(t), {Re(x), Im(x)});
    // x / |x| divides by a complex |x| + 0i in the interpreter (a library division, not two
    // real ones), so sign goes to the helper with the rest.
    case Opcode::kSign:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kSinh:
    case Opcode::kCosh:
    case Opcode::kAsin:
    case Opcode::kAcos:
    case Opcode::kAtan:
    case Opcode::kAsinh:
    case Opcode::kAcosh:
    case Opcode::kAtanh: return ComplexCall(op, x, nullptr);
    default: return Refuse(h, StrCat("on ", PrimitiveTypeName(t)));
  }
}

absl::StatusOr<Value*> Emitter::ComplexBinary(const Instruction& h, Opcode op, PrimitiveType t,
                                              Value* a, Value* c) {
  switch (op) {
    case Opcode::kAdd:
      return MakeComplex(b_.CreateFAdd(Re(a), Re(c)), b_.CreateFAdd(Im(a), Im(c)));
    case Opcode::kSubtract:
      return MakeComplex(b_.CreateFSub(Re(a), Re(c)), b_.CreateFSub(Im(a), Im(c)));
    case Opcode::kMultiply: return ComplexMultiply(a, c);
    case Opcode::kDivide:
    case Opcode::kPower: return ComplexCall(op, a, c);
    default: return Refuse(h, StrCat(OpcodeName(op), " on ", PrimitiveTypeName(t)));
  }
}

absl::StatusOr<Value*> Emitter::Unary(const Instruction& h, PrimitiveType t, Value* x) {
  const Opcode op = h.opcode();
  if (IsComplex(t)) return ComplexUnary(h, t, x);
  if (t == PrimitiveType::kPred) {
    switch (op) {
      case Opcode::kNot: return b_.CreateNot(x);
      case Opcode::kCopy:
      case Opcode::kAbs: return x;
      default: return Refuse(h, "not on pred");
    }
  }
  if (IsIntegral(t)) {
    const bool s = IsSignedIntegral(t);
    llvm::Type* ty = x->getType();
    Value* zero = llvm::ConstantInt::get(ty, 0);
    switch (op) {
      case Opcode::kCopy: return x;
      case Opcode::kNegate: return b_.CreateSub(zero, x);
      case Opcode::kAbs:
        if (!s) return x;
        return b_.CreateSelect(b_.CreateICmpSLT(x, zero), b_.CreateSub(zero, x), x);
      case Opcode::kSign:
        if (!s) return b_.CreateZExt(b_.CreateICmpNE(x, zero), ty);
        return b_.CreateSelect(b_.CreateICmpSLT(x, zero), llvm::ConstantInt::get(ty, -1, true),
                               b_.CreateZExt(b_.CreateICmpSGT(x, zero), ty));
      case Opcode::kNot: return b_.CreateNot(x);
      case Opcode::kPopulationCount: return Intrinsic(llvm::Intrinsic::ctpop, LogicalBits(t, x));
      case Opcode::kClz: {
        llvm::Function* f = llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::ctlz, {ty});
        Value* n = b_.CreateCall(f, {LogicalBits(t, x), b_.getFalse()});
        // A sub-byte value's byte has 8 - width zero bits above its logical bits.
        if (IsSubByte(t)) n = b_.CreateSub(n, b_.getInt8(8 - BitWidth(t)));
        return n;
      }
      default: return Refuse(h, StrCat("on ", PrimitiveTypeName(t)));
    }
  }
  // Floats (narrow ones in f64, rounded by the caller).
  llvm::Type* ty = x->getType();
  Value* one = llvm::ConstantFP::get(ty, 1.0);
  const PrimitiveType mt = ty->isFloatTy() ? PrimitiveType::kF32 : PrimitiveType::kF64;
  switch (op) {
    case Opcode::kCopy: return x;
    case Opcode::kNegate: return b_.CreateFNeg(x);
    case Opcode::kAbs: return Intrinsic(llvm::Intrinsic::fabs, x);
    case Opcode::kSign: {
      Value* keep = b_.CreateFCmpUEQ(x, llvm::ConstantFP::get(ty, 0.0));  // NaN or ±0
      llvm::Function* cs =
          llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::copysign, {ty});
      return b_.CreateSelect(keep, x, b_.CreateCall(cs, {one, x}));
    }
    case Opcode::kFloor: return Intrinsic(llvm::Intrinsic::floor, x);
    case Opcode::kCeil: return Intrinsic(llvm::Intrinsic::ceil, x);
    case Opcode::kRoundNearestAfz: return Intrinsic(llvm::Intrinsic::round, x);
    case Opcode::kRoundNearestEven: return Intrinsic(llvm::Intrinsic::roundeven, x);
    case Opcode::kSqrt: return Intrinsic(llvm::Intrinsic::sqrt, x);
    case Opcode::kRsqrt: return b_.CreateFDiv(one, Intrinsic(llvm::Intrinsic::sqrt, x));
    case Opcode::kExp: return Exp(x);
    case Opcode::kExpm1: return CallMath("expm1", mt, {x});
    case Opcode::kLog: return Intrinsic(llvm::Intrinsic::log, x);
    case Opcode::kLog1p: return CallMath("log1p", mt, {x});
    case Opcode::kLogistic:
      return b_.CreateFDiv(one, b_.CreateFAdd(one, Exp(b_.CreateFNeg(x))));
    case Opcode::kCbrt: return CallMath("cbrt", mt, {x});
    case Opcode::kSin: return Intrinsic(llvm::Intrinsic::sin, x);
    case Opcode::kCos: return Intrinsic(llvm::Intrinsic::cos, x);
    case Opcode::kTan: return CallMath("tan", mt, {x});
    case Opcode::kTanh: return ty->isFloatTy() ? TanhF32(x) : CallMath("tanh", mt, {x});
    case Opcode::kSinh: return CallMath("sinh", mt, {x});
    case Opcode::kCosh: return CallMath("cosh", mt, {x});
    case Opcode::kAsin: return CallMath("asin", mt, {x});
    case Opcode::kAcos: return CallMath("acos", mt, {x});
    case Opcode::kAtan: return CallMath("atan", mt, {x});
    case Opcode::kAsinh: return CallMath("asinh", mt, {x});
    case Opcode::kAcosh: return CallMath("acosh", mt, {x});
    case Opcode::kAtanh: return CallMath("atanh", mt, {x});
    case Opcode::kErf: return CallMath("erf", mt, {x});
    case Opcode::kIsFinite:
      return b_.CreateFCmpOLT(Intrinsic(llvm::Intrinsic::fabs, x),
                              llvm::ConstantFP::getInfinity(ty));
    default: return Refuse(h, StrCat("on ", PrimitiveTypeName(t)));
  }
}

absl::StatusOr<Value*> Emitter::Binary(const Instruction& h, Opcode op, PrimitiveType t, Value* a,
                                       Value* c) {
  if (IsComplex(t)) return ComplexBinary(h, op, t, a, c);
  if (t == PrimitiveType::kPred) {
    switch (op) {
      case Opcode::kAnd:
      case Opcode::kMultiply:
      case Opcode::kMinimum: return b_.CreateAnd(a, c);
      case Opcode::kOr:
      case Opcode::kAdd:
      case Opcode::kMaximum: return b_.CreateOr(a, c);
      case Opcode::kXor:
      case Opcode::kSubtract: return b_.CreateXor(a, c);
      default: return Refuse(h, "on pred");
    }
  }
  if (IsIntegral(t)) {
    const bool s = IsSignedIntegral(t);
    // `bits` is the logical width (shifts); `width` the register's (a sub-byte type's byte, where
    // arithmetic happens with 8-bit semantics before the caller wraps the result).
    const int bits = BitWidth(t);
    llvm::Type* ty = a->getType();
    const int width = static_cast<int>(ty->getIntegerBitWidth());
    Value* zero = llvm::ConstantInt::get(ty, 0);
    Value* all_ones = llvm::ConstantInt::get(ty, -1, true);
    auto shift_too_far = [&] { return b_.CreateICmpUGE(c, llvm::ConstantInt::get(ty, bits)); };
    switch (op) {
      case Opcode::kAdd: return b_.CreateAdd(a, c);
      case Opcode::kSubtract: return b_.CreateSub(a, c);
      case Opcode::kMultiply: return b_.CreateMul(a, c);
      case Opcode::kDivide:
      case Opcode::kRemainder: {
        Value* by_zero = b_.CreateICmpEQ(c, zero);
        Value* overflow = b_.getFalse();
        if (s) {
          Value* min = llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(width));
          overflow = b_.CreateAnd(b_.CreateICmpEQ(c, all_ones), b_.CreateICmpEQ(a, min));
        }
        Value* safe = b_.CreateSelect(b_.CreateOr(by_zero, overflow),
                                      llvm::ConstantInt::get(ty, 1), c);
        if (op == Opcode::kDivide) {
          Value* q = s ? b_.CreateSDiv(a, safe) : b_.CreateUDiv(a, safe);
          // x / 0 = -1; INT_MIN / -1 = INT_MIN (a / 1 with the safe divisor).
          return b_.CreateSelect(by_zero, all_ones, q);
        }
        Value* r = s ? b_.CreateSRem(a, safe) : b_.CreateURem(a, safe);
        // x % 0 = x; INT_MIN % -1 = 0 (a % 1).
        return b_.CreateSelect(by_zero, a, r);
      }
      case Opcode::kMaximum: return NanMax(a, c, false, s, true);
      case Opcode::kMinimum: return NanMax(a, c, false, s, false);
      case Opcode::kAnd: return b_.CreateAnd(a, c);
      case Opcode::kOr: return b_.CreateOr(a, c);
      case Opcode::kXor: return b_.CreateXor(a, c);
      case Opcode::kShiftLeft:
        return b_.CreateSelect(shift_too_far(), zero, b_.CreateShl(a, c));
      case Opcode::kShiftRightLogical:
        return b_.CreateSelect(shift_too_far(), zero, b_.CreateLShr(LogicalBits(t, a), c));
      case Opcode::kShiftRightArithmetic: {
        Value* sa = a;
        if (IsSubByte(t) && !s) {
          // The interpreter reads an unsigned sub-byte value with its top logical bit as sign.
          const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
          Value* top = b_.CreateICmpNE(b_.CreateAnd(a, b_.getInt8(uint8_t{1} << (bits - 1))),
                                       b_.getInt8(0));
          sa = b_.CreateSelect(top, b_.CreateOr(a, b_.getInt8(static_cast<uint8_t>(~mask))), a);
        }
        return b_.CreateSelect(shift_too_far(),
                               b_.CreateSelect(b_.CreateICmpSLT(sa, zero), all_ones, zero),
                               b_.CreateAShr(sa, c));
      }
      case Opcode::kMulhi: {
        if (IsSubByte(t)) return Refuse(h, StrCat("mulhi on ", PrimitiveTypeName(t)));
        llvm::Type* wide = b_.getIntNTy(2 * bits);
        Value* wa = s ? b_.CreateSExt(a, wide) : b_.CreateZExt(a, wide);
        Value* wc = s ? b_.CreateSExt(c, wide) : b_.CreateZExt(c, wide);
        Value* p = b_.CreateMul(wa, wc);
        return b_.CreateTrunc(b_.CreateLShr(p, llvm::ConstantInt::get(wide, bits)), ty);
      }
      default: return Refuse(h, StrCat(OpcodeName(op), " on ", PrimitiveTypeName(t)));
    }
  }
  const PrimitiveType mt = a->getType()->isFloatTy() ? PrimitiveType::kF32 : PrimitiveType::kF64;
  switch (op) {
    case Opcode::kAdd: return b_.CreateFAdd(a, c);
    case Opcode::kSubtract: return b_.CreateFSub(a, c);
    case Opcode::kMultiply: return b_.CreateFMul(a, c);
    case Opcode::kDivide: return b_.CreateFDiv(a, c);
    case Opcode::kRemainder: return b_.CreateFRem(a, c);
    case Opcode::kMaximum: return NanMax(a, c, true, true, true);
    case Opcode::kMinimum: return NanMax(a, c, true, true, false);
    case Opcode::kPower: {
      // An f32 value to a small integral constant power (a gelu's x^3): multiplied out in f64,
      // where x^2 is exact and the rest is within a few f64 roundings, then rounded once to
      // f32, which is the correctly rounded power all but astronomically rarely. The vector
      // library's powf takes a scalar slow path for negative bases.
      if (auto* k = llvm::dyn_cast<llvm::ConstantFP>(c);
          k != nullptr && a->getType()->isFloatTy() && elements_per_call_ == 0) {
        const double n = k->getValueAPF().convertToFloat();
        if (n == std::trunc(n) && std::fabs(n) <= 16) {
          Value* base = b_.CreateFPExt(a, b_.getDoubleTy());
          Value* result = llvm::ConstantFP::get(b_.getDoubleTy(), 1.0);
          for (int bits = static_cast<int>(std::fabs(n)); bits > 0; bits >>= 1) {
            if (bits & 1) result = b_.CreateFMul(result, base);
            if (bits > 1) base = b_.CreateFMul(base, base);
          }
          if (n < 0) result = b_.CreateFDiv(llvm::ConstantFP::get(b_.getDoubleTy(), 1.0), result);
          return b_.CreateFPTrunc(result, a->getType());
        }
      }
      llvm::Function* f = llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::pow, {a->getType()});
      return b_.CreateCall(f, {a, c});
    }
    case Opcode::kAtan2: return CallMath("atan2", mt, {a, c});
    default: return Refuse(h, StrCat(OpcodeName(op), " on ", PrimitiveTypeName(t)));
  }
}

absl::StatusOr<Value*> Emitter::Compare(const Instruction& h, PrimitiveType t, Value* a,
                                        Value* c) {
  const InstructionAttrs& at = h.attrs_or_default();
  const ComparisonDirection d = at.comparison_direction;
  if (IsComplex(t)) {
    // Both parts equal (IEEE: a NaN part is unequal); NE is the negation.
    if (d != ComparisonDirection::kEq && d != ComparisonDirection::kNe) {
      return Refuse(h, "complex values compare only with EQ or NE");
    }
    Value* eq = b_.CreateAnd(b_.CreateFCmpOEQ(Re(a), Re(c)), b_.CreateFCmpOEQ(Im(a), Im(c)));
    return d == ComparisonDirection::kEq ? eq : b_.CreateNot(eq);
  }
  if (IsFloatingPoint(t)) {
    if (at.comparison_type == ComparisonType::kTotalOrder) {
      // Sign-magnitude bits to a signed key (see TotalOrderKey), compared as integers. Narrow
      // floats are exact in f64, whose key orders them the same way.
      const int bits = a->getType()->isFloatTy() ? 32 : 64;
      llvm::Type* it = b_.getIntNTy(bits);
      Value* max = llvm::ConstantInt::get(it, llvm::APInt::getSignedMaxValue(bits));
      auto key = [&](Value* v) {
        Value* x = b_.CreateBitCast(v, it);
        return b_.CreateSelect(b_.CreateICmpSLT(x, llvm::ConstantInt::get(it, 0)),
                               b_.CreateXor(x, max), x);
      };
      a = key(a);
      c = key(c);
      t = bits == 32 ? PrimitiveType::kS32 : PrimitiveType::kS64;
    } else {
      switch (d) {
        case ComparisonDirection::kEq: return b_.CreateFCmpOEQ(a, c);
        case ComparisonDirection::kNe: return b_.CreateFCmpUNE(a, c);
        case ComparisonDirection::kGe: return b_.CreateFCmpOGE(a, c);
        case ComparisonDirection::kGt: return b_.CreateFCmpOGT(a, c);
        case ComparisonDirection::kLe: return b_.CreateFCmpOLE(a, c);
        case ComparisonDirection::kLt: return b_.CreateFCmpOLT(a, c);
      }
      return Refuse(h, "unknown comparison direction");
    }
  }
  bool s = IsSignedIntegral(t);
  if (at.comparison_type == ComparisonType::kSigned) s = true;
  if (at.comparison_type == ComparisonType::kUnsigned || t == PrimitiveType::kPred) s = false;
  switch (d) {
    case ComparisonDirection::kEq: return b_.CreateICmpEQ(a, c);
    case ComparisonDirection::kNe: return b_.CreateICmpNE(a, c);
    case ComparisonDirection::kGe: return s ? b_.CreateICmpSGE(a, c) : b_.CreateICmpUGE(a, c);
    case ComparisonDirection::kGt: return s ? b_.CreateICmpSGT(a, c) : b_.CreateICmpUGT(a, c);
    case ComparisonDirection::kLe: return s ? b_.CreateICmpSLE(a, c) : b_.CreateICmpULE(a, c);
    case ComparisonDirection::kLt: return s ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c);
  }
  return Refuse(h, "unknown comparison direction");
}

absl::StatusOr<Value*> Emitter::Convert(const Instruction& h, PrimitiveType from,
                                        PrimitiveType to, Value* x) {
  llvm::Type* tt = ComputeType(to);
  if (from == to) return x;
  if (IsComplex(to)) {
    // Each part converted as its component type; a real value gets a +0 imaginary part.
    const PrimitiveType part = ComplexComponentType(to);
    if (IsComplex(from)) {
      const PrimitiveType from_part = ComplexComponentType(from);
      absl::StatusOr<Value*> re = Convert(h, from_part, part, Re(x));
      if (!re.ok()) return re.status();
      absl::StatusOr<Value*> im = Convert(h, from_part, part, Im(x));
      if (!im.ok()) return im.status();
      return MakeComplex(*re, *im);
    }
    absl::StatusOr<Value*> re = Convert(h, from, part, x);
    if (!re.ok()) return re.status();
    return MakeComplex(*re, llvm::ConstantFP::get(ComputeType(part), 0.0));
  }
  if (IsComplex(from)) {
    // The real part (to pred: either part nonzero, NaN counting as nonzero).
    if (to == PrimitiveType::kPred) {
      Value* zero = llvm::ConstantFP::get(Re(x)->getType(), 0.0);
      return b_.CreateOr(b_.CreateFCmpUNE(Re(x), zero), b_.CreateFCmpUNE(Im(x), zero));
    }
    return Convert(h, ComplexComponentType(from), to, Re(x));
  }
  if (to == PrimitiveType::kPred) {
    if (IsFloatingPoint(from)) return b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
    return b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (from == PrimitiveType::kPred) {
    if (IsIntegral(to)) return WrapSubByte(to, b_.CreateZExt(x, tt));
    return b_.CreateUIToFP(x, tt);
  }
  if (IsIntegral(from) && IsIntegral(to)) {
    return WrapSubByte(to, IsSignedIntegral(from) ? b_.CreateSExtOrTrunc(x, tt)
                                                  : b_.CreateZExtOrTrunc(x, tt));
  }
  if (IsIntegral(from)) {  // to a float
    if (IsF32Narrow(to) && BitWidth(from) > 16) {  // exact in f64, then one rounding
      Value* d = IsSignedIntegral(from) ? b_.CreateSIToFP(x, b_.getDoubleTy())
                                        : b_.CreateUIToFP(x, b_.getDoubleTy());
      return NarrowFromF64(to, d);
    }
    Value* v = IsSignedIntegral(from) ? b_.CreateSIToFP(x, tt) : b_.CreateUIToFP(x, tt);
    return RoundNarrow(to, v);
  }
  if (IsIntegral(to)) {
    // From a float: truncate, saturate, NaN to 0. Sub-byte types saturate to their byte's
    // range and then wrap, as the interpreter's 8-bit conversion does.
    llvm::Intrinsic::ID id =
        IsSignedIntegral(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    llvm::Function* f = llvm::Intrinsic::getDeclaration(module_, id, {tt, x->getType()});
    return WrapSubByte(to, b_.CreateCall(f, {x}));
  }
  // Float to float.
  if (IsF32Narrow(to) && x->getType()->isDoubleTy()) return NarrowFromF64(to, x);
  Value* v = x;
  if (v->getType() != tt) v = tt->isDoubleTy() ? b_.CreateFPExt(v, tt) : b_.CreateFPTrunc(v, tt);
  return RoundNarrow(to, v);
}

absl::StatusOr<std::vector<Value*>> Emitter::CallScalar(const Computation& c,
                                                        const std::vector<Value*>& args) {
  if (static_cast<int>(args.size()) != c.parameter_count()) {
    return absl::UnimplementedError(StrCat("computation ", c.name(), " takes ",
                                           c.parameter_count(), " arguments, not ", args.size()));
  }
  std::map<const Instruction*, Value*> saved = bound_;
  for (const Instruction* p : c.instructions()) {
    if (p->opcode() == Opcode::kParameter) {
      if (p->parameter_number() < 0 || p->parameter_number() >= static_cast<int64_t>(args.size())) {
        return Refuse(*p, "parameter number out of range");
      }
      bound_[p] = args[p->parameter_number()];
    }
  }
  memo_.emplace_back();
  multi_memo_.emplace_back();
  Index scalar = Scalar();
  std::vector<Value*> out;
  absl::Status st;
  const Instruction* root = c.root();
  if (root == nullptr) {
    st = absl::UnimplementedError(StrCat("computation ", c.name(), " has no root"));
  } else if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* e : root->operands()) {
      absl::StatusOr<Value*> v = Elem(*e, scalar);
      if (!v.ok()) {
        st = v.status();
        break;
      }
      out.push_back(*v);
    }
  } else {
    absl::StatusOr<Value*> v = Elem(*root, scalar);
    if (v.ok()) {
      out.push_back(*v);
    } else {
      st = v.status();
    }
  }
  memo_.pop_back();
  multi_memo_.pop_back();
  bound_ = std::move(saved);
  if (!st.ok()) return st;
  return out;
}

// Which input dimensions a reduce folds (`reduced`, by dimension) and their list in order;
// adds the reduced element count to the kernel's per-element cost.
absl::Status Emitter::ReducedDims(const Instruction& h, std::vector<bool>* reduced,
                                  std::vector<int>* red_dims) {
  const Shape& in = h.operand(0)->shape();
  reduced->assign(in.rank(), false);
  for (int64_t d : h.dimensions()) {
    if (d < 0 || d >= in.rank()) return Refuse(h, "reduce dimension out of range");
    (*reduced)[d] = true;
  }
  int64_t red_count = 1;
  for (int d = 0; d < in.rank(); ++d) {
    if ((*reduced)[d]) {
      red_dims->push_back(d);
      red_count *= in.dimension(d);
    }
  }
  cost_ += red_count;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Value*>> Emitter::ReduceElems(const Instruction& h, const Index& idx) {
  if (coop_reduces_.count(&h) > 0) return CooperativeReduce(h, idx);
  const int n = h.operand_count() / 2;
  if (n < 1 || h.operand_count() != 2 * n || h.called_computations().size() != 1) {
    return Refuse(h, "malformed reduce");
  }
  const Shape& in = h.operand(0)->shape();
  std::vector<bool> reduced;
  std::vector<int> red_dims;
  if (absl::Status st = ReducedDims(h, &reduced, &red_dims); !st.ok()) return st;
  // Accumulators live in allocas in the entry block (promoted to registers by mem2reg).
  std::vector<llvm::AllocaInst*> acc(n);
  std::vector<PrimitiveType> types(n);
  {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    for (int k = 0; k < n; ++k) {
      types[k] = h.operand(n + k)->shape().element_type();
      if (!Supported(types[k])) return Refuse(h, StrCat("element type ", PrimitiveTypeName(types[k])));
      acc[k] = entry.CreateAlloca(ComputeType(types[k]));
    }
  }
  Index scalar = Scalar();
  for (int k = 0; k < n; ++k) {
    absl::StatusOr<Value*> init = Elem(*h.operand(n + k), scalar);
    if (!init.ok()) return init.status();
    b_.CreateStore(*init, acc[k]);
  }
  // Nested loops over the reduced dimensions, outermost first (row-major order).
  std::vector<Value*> in_multi(in.rank(), nullptr);
  {
    int kept = 0;
    for (int d = 0; d < in.rank(); ++d) {
      if (!reduced[d]) in_multi[d] = idx.multi[kept++];
    }
  }
  // Folds the element at in_multi into the accumulators `into`.
  std::function<absl::Status(const std::vector<llvm::AllocaInst*>&)> fold;
  // A float max or min: the innermost loop keeps kPartials partial results, each element going to
  // one of them in turn, and combines them after the loop, so the comparisons do not wait for
  // each other (a reduction to the row maxima of a [3648, 30522] array: about twice as fast).
  // Max and min give the same value in any order; only the sign of a zero result and which NaN
  // comes out can differ from the interpreter's order, both within the float tolerance.
  constexpr int kPartials = 8;
  const Instruction* reducer_root = h.called_computations()[0]->root();
  const bool split_max_min =
      elements_per_call_ == 0 && n == 1 &&
      (types[0] == PrimitiveType::kF32 || types[0] == PrimitiveType::kF64) &&
      reducer_root != nullptr &&
      (reducer_root->opcode() == Opcode::kMaximum || reducer_root->opcode() == Opcode::kMinimum) &&
      reducer_root->operand_count() == 2 &&
      reducer_root->operand(0)->opcode() == Opcode::kParameter &&
      reducer_root->operand(1)->opcode() == Opcode::kParameter;
  std::function<absl::Status(size_t)> nest = [&](size_t level) -> absl::Status {
    if (level == red_dims.size()) return fold(acc);
    int d = red_dims[level];
    const int64_t size = in.dimension(d);
    if (split_max_min && level + 1 == red_dims.size() && size >= 2 * kPartials) {
      std::vector<llvm::AllocaInst*> partial(kPartials);
      {
        llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
        for (int k = 0; k < kPartials; ++k) partial[k] = entry.CreateAlloca(ComputeType(types[0]));
      }
      // Every partial starts from the running value (max and min are idempotent).
      Value* running = b_.CreateLoad(ComputeType(types[0]), acc[0]);
      for (int k = 0; k < kPartials; ++k) b_.CreateStore(running, partial[k]);
      const int64_t blocks = size / kPartials;
      absl::Status st = Loop(C64(0), C64(blocks), StrCat("red", level, ".partials"),
                             [&](Value* block) -> absl::Status {
                               for (int k = 0; k < kPartials; ++k) {
                                 in_multi[d] = b_.CreateAdd(b_.CreateMul(block, C64(kPartials)),
                                                            C64(k));
                                 if (absl::Status f = fold({partial[k]}); !f.ok()) return f;
                               }
                               return absl::OkStatus();
                             });
      if (!st.ok()) return st;
      st = Loop(C64(blocks * kPartials), C64(size), StrCat("red", level, ".rest"),
                [&](Value* iv) {
                  in_multi[d] = iv;
                  return fold({partial[0]});
                });
      if (!st.ok()) return st;
      Value* combined = b_.CreateLoad(ComputeType(types[0]), partial[0]);
      for (int k = 1; k < kPartials; ++k) {
        absl::StatusOr<std::vector<Value*>> r = CallScalar(
            *h.called_computations()[0],
            {combined, b_.CreateLoad(ComputeType(types[0]), partial[k])});
        if (!r.ok()) return r.status();
        if (r->size() != 1) return Refuse(h, "reducer returns the wrong arity");
        combined = (*r)[0];
      }
      b_.CreateStore(combined, acc[0]);
      return absl::OkStatus();
    }
    return Loop(C64(0), C64(size), StrCat("red", level), [&](Value* iv) {
      in_multi[d] = iv;
      return nest(level + 1);
    });
  };
  fold = [&](const std::vector<llvm::AllocaInst*>& into) -> absl::Status {
    Index in_idx = MakeFromMulti(in.dimensions(), in_multi);
    std::vector<Value*> args;
    for (int k = 0; k < n; ++k) args.push_back(b_.CreateLoad(ComputeType(types[k]), into[k]));
    for (int k = 0; k < n; ++k) {
      absl::StatusOr<Value*> v = Elem(*h.operand(k), in_idx);
      if (!v.ok()) return v.status();
      args.push_back(*v);
    }
    // A plain f32 or f64 sum or product may be reassociated, so the vectoriser keeps partial
    // results in vector lanes: the order differs from the interpreter's row-major one within
    // the platform's float tolerance, as in XLA's own CPU reductions. Narrow floats are
    // rounded after every step and keep the interpreter's order, as do other reducers.
    const Instruction* root = h.called_computations()[0]->root();
    const bool reassociate =
        n == 1 && (types[0] == PrimitiveType::kF32 || types[0] == PrimitiveType::kF64) &&
        root != nullptr &&
        (root->opcode() == Opcode::kAdd || root->opcode() == Opcode::kMultiply) &&
        root->operand(0)->opcode() == Opcode::kParameter &&
        root->operand(1)->opcode() == Opcode::kParameter;
    llvm::FastMathFlags fmf;
    fmf.setAllowReassoc();
    llvm::IRBuilderBase::FastMathFlagGuard keep_flags(b_);
    if (reassociate) b_.setFastMathFlags(fmf);
    absl::StatusOr<std::vector<Value*>> r = CallScalar(*h.called_computations()[0], args);
    if (!r.ok()) return r.status();
    if (static_cast<int>(r->size()) != n) return Refuse(h, "reducer returns the wrong arity");
    for (int k = 0; k < n; ++k) {
      if ((*r)[k]->getType() != ComputeType(types[k])) {
        return Refuse(h, "reducer result type differs from the accumulator");
      }
      b_.CreateStore((*r)[k], into[k]);
    }
    return absl::OkStatus();
  };
  if (absl::Status st = nest(0); !st.ok()) return st;
  std::vector<Value*> out;
  for (int k = 0; k < n; ++k) out.push_back(b_.CreateLoad(ComputeType(types[k]), acc[k]));
  return out;
}

// --- Cooperative reductions (GPU) -------------------------------------------------------------

int Emitter::CooperativeGroup(const Instruction& instr, const std::vector<int64_t>& dims) {
  std::vector<const Instruction*> all;
  if (instr.opcode() == Opcode::kFusion) {
    for (const Instruction* h : instr.called_computations()[0]->instructions()) all.push_back(h);
  } else {
    all.push_back(&instr);
  }
  std::vector<const Instruction*> reduces;
  for (const Instruction* h : all) {
    if (h->opcode() == Opcode::kReduce) reduces.push_back(h);
  }
  if (reduces.empty()) return 0;
  int64_t outputs = 1;
  for (int64_t d : dims) outputs *= d;
  int64_t min_rows = -1;
  for (const Instruction* r : reduces) {
    const int n = r->operand_count() / 2;
    if (n < 1 || r->operand_count() != 2 * n || n > 8 || r->called_computations().size() != 1) {
      return 0;
    }
    std::vector<const Shape*> results;
    if (r->shape().IsTuple()) {
      for (const Shape& s : r->shape().tuple_shapes()) results.push_back(&s);
    } else {
      results.push_back(&r->shape());
    }
    for (const Shape* s : results) {
      // Each group computes its own output element's reduction, once.
      if (!s->IsArray() || s->dimensions() != dims || IsComplex(s->element_type())) return 0;
    }
    const Shape& in = r->operand(0)->shape();
    std::vector<bool> reduced(in.rank(), false);
    int64_t rows = 1;
    for (int64_t d : r->dimensions()) {
      if (d < 0 || d >= in.rank()) return 0;
      reduced[d] = true;
      rows *= in.dimension(d);
    }
    // A row reduction: the reduced dimensions are the innermost, so a group's lanes read
    // neighbouring elements. Otherwise one thread per output reads as well, unless there are
    // too few outputs to keep a GPU busy.
    bool row = true;
    for (int d = 0, seen = 0; d < in.rank(); ++d) {
      if (reduced[d]) {
        ++seen;
      } else if (seen > 0) {
        row = false;
      }
    }
    if (!row && outputs > 8192) return 0;
    if (rows < 32) return 0;
    min_rows = min_rows < 0 ? rows : std::min(min_rows, rows);
  }
  // No cooperative reduce may be computed inside another's loop over its elements (the lanes
  // there are not together).
  for (const Instruction* r : reduces) {
    std::set<const Instruction*> seen;
    std::vector<const Instruction*> stack(r->operands().begin(), r->operands().end());
    while (!stack.empty()) {
      const Instruction* h = stack.back();
      stack.pop_back();
      if (!seen.insert(h).second) continue;
      if (h->opcode() == Opcode::kReduce) return 0;
      for (const Instruction* o : h->operands()) stack.push_back(o);
    }
  }
  const int group = min_rows >= form_.block_size ? form_.block_size : 32;
  if (group > form_.block_size || form_.block_size % group != 0) return 0;
  coop_reduces_.insert(reduces.begin(), reduces.end());
  return group;
}

Value* Emitter::ShuffleDown(Value* v, int delta) {
  llvm::Function* shfl = llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::nvvm_shfl_sync_down_i32);
  auto shuffle32 = [&](Value* x) {
    return b_.CreateCall(shfl, {b_.getInt32(0xffffffffu), x, b_.getInt32(delta), b_.getInt32(0x1f)});
  };
  llvm::Type* t = v->getType();
  if (t->isFloatTy()) return b_.CreateBitCast(shuffle32(b_.CreateBitCast(v, b_.getInt32Ty())), t);
  Value* bits = t->isDoubleTy() ? b_.CreateBitCast(v, I64()) : v;
  const unsigned width = bits->getType()->getIntegerBitWidth();
  if (width <= 32) {
    Value* got = shuffle32(width == 32 ? bits : b_.CreateZExt(bits, b_.getInt32Ty()));
    return width == 32 ? got : b_.CreateTrunc(got, t);
  }
  Value* lo = shuffle32(b_.CreateTrunc(bits, b_.getInt32Ty()));
  Value* hi = shuffle32(b_.CreateTrunc(b_.CreateLShr(bits, 32), b_.getInt32Ty()));
  Value* joined = b_.CreateOr(b_.CreateZExt(lo, I64()), b_.CreateShl(b_.CreateZExt(hi, I64()), 32));
  return t->isDoubleTy() ? b_.CreateBitCast(joined, t) : joined;
}

void Emitter::Barrier() {
  b_.CreateCall(llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::nvvm_barrier0));
}

Value* Emitter::SharedMemory() {
  if (form_.emulated) {
    llvm::FunctionCallee f = module_->getOrInsertFunction(
        "hlowb_emu_shared_memory", llvm::FunctionType::get(b_.getPtrTy(), {}, false));
    return b_.CreateCall(f);
  }
  // 8 partial results (one per warp of a 256-thread block) for each of up to 8 accumulators, or
  // a 32x32 transpose tile with rows of 33 (a column's elements then sit in different banks).
  llvm::Type* array = llvm::ArrayType::get(I64(), kSharedSlots);
  constexpr unsigned kShared = 3;
  llvm::GlobalVariable* g = module_->getGlobalVariable("hlowb_coop_shared", true);
  if (g == nullptr) {
    g = new llvm::GlobalVariable(*module_, array, false, llvm::GlobalValue::InternalLinkage,
                                 llvm::UndefValue::get(array), "hlowb_coop_shared", nullptr,
                                 llvm::GlobalValue::NotThreadLocal, kShared);
    g->setAlignment(llvm::Align(8));
  }
  return b_.CreateAddrSpaceCast(g, b_.getPtrTy());
}

Value* Emitter::ToBits64(Value* v) {
  llvm::Type* t = v->getType();
  if (t->isFloatTy()) return b_.CreateZExt(b_.CreateBitCast(v, b_.getInt32Ty()), I64());
  if (t->isDoubleTy()) return b_.CreateBitCast(v, I64());
  return t->getIntegerBitWidth() == 64 ? v : b_.CreateZExt(v, I64());
}

Value* Emitter::FromBits64(llvm::Type* t, Value* bits) {
  if (t->isFloatTy()) return b_.CreateBitCast(b_.CreateTrunc(bits, b_.getInt32Ty()), t);
  if (t->isDoubleTy()) return b_.CreateBitCast(bits, t);
  return t->getIntegerBitWidth() == 64 ? bits : b_.CreateTrunc(bits, t);
}

// Lane l of the group folds the reduced elements l, l + G, l + 2G, ... (row-major over the
// reduced dimensions; every lane has at least one, since a group is never larger than the row),
// then the lanes combine: five shuffle steps within each warp, and for a block the warps'
// results through shared memory, combined again by shuffles. Lane 0 ends with the group's
// total, which it combines with the init value once (the interpreter's init, then the
// elements); the order of the elements differs from the interpreter's, as on XLA's GPUs.
absl::StatusOr<std::vector<Value*>> Emitter::CooperativeReduce(const Instruction& h,
                                                               const Index& idx) {
  const int n = h.operand_count() / 2;
  const Shape& in = h.operand(0)->shape();
  std::vector<bool> reduced;
  std::vector<int> red_dims;
  if (absl::Status st = ReducedDims(h, &reduced, &red_dims); !st.ok()) return st;
  std::vector<int64_t> red_sizes;
  int64_t rows = 1;
  for (int d : red_dims) {
    red_sizes.push_back(in.dimension(d));
    rows *= in.dimension(d);
  }
  const Computation& reducer = *h.called_computations()[0];
  std::vector<llvm::Type*> types(n);
  for (int k = 0; k < n; ++k) {
    const PrimitiveType t = h.operand(n + k)->shape().element_type();
    if (!Supported(t)) return Refuse(h, StrCat("element type ", PrimitiveTypeName(t)));
    types[k] = ComputeType(t);
  }
  std::vector<Value*> in_multi(in.rank(), nullptr);
  for (int d = 0, kept = 0; d < in.rank(); ++d) {
    if (!reduced[d]) in_multi[d] = idx.multi[kept++];
  }
  auto elements = [&](Value* j) -> absl::StatusOr<std::vector<Value*>> {
    Index r = MakeFromLinear(red_sizes, j);
    for (size_t q = 0; q < red_dims.size(); ++q) in_multi[red_dims[q]] = r.multi[q];
    Index in_idx = MakeFromMulti(in.dimensions(), in_multi);
    std::vector<Value*> out;
    for (int k = 0; k < n; ++k) {
      absl::StatusOr<Value*> v = Elem(*h.operand(k), in_idx);
      if (!v.ok()) return v.status();
      out.push_back(*v);
    }
    return out;
  };
  auto combine = [&](const std::vector<Value*>& a,
                     const std::vector<Value*>& c) -> absl::StatusOr<std::vector<Value*>> {
    std::vector<Value*> args = a;
    args.insert(args.end(), c.begin(), c.end());
    absl::StatusOr<std::vector<Value*>> r = CallScalar(reducer, args);
    if (!r.ok()) return r.status();
    if (static_cast<int>(r->size()) != n) return Refuse(h, "reducer returns the wrong arity");
    for (int k = 0; k < n; ++k) {
      if ((*r)[k]->getType() != types[k]) {
        return Refuse(h, "reducer result type differs from the accumulator");
      }
    }
    return r;
  };
  std::vector<llvm::AllocaInst*> acc(n);
  {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    for (int k = 0; k < n; ++k) acc[k] = entry.CreateAlloca(types[k]);
  }
  auto load_acc = [&] {
    std::vector<Value*> v;
    for (int k = 0; k < n; ++k) v.push_back(b_.CreateLoad(types[k], acc[k]));
    return v;
  };
  auto store_acc = [&](const std::vector<Value*>& v) {
    for (int k = 0; k < n; ++k) b_.CreateStore(v[k], acc[k]);
  };
  const int64_t group = coop_group_;
  {
    memo_.emplace_back();
    multi_memo_.emplace_back();
    absl::StatusOr<std::vector<Value*>> first = elements(lane_);
    memo_.pop_back();
    multi_memo_.pop_back();
    if (!first.ok()) return first.status();
    store_acc(*first);
  }
  Value* more = b_.CreateUDiv(b_.CreateSub(C64(rows - 1), lane_), C64(group), "coop.more");
  absl::Status st = Loop(C64(1), b_.CreateAdd(more, C64(1)), "coop", [&](Value* t) -> absl::Status {
    absl::StatusOr<std::vector<Value*>> e = elements(b_.CreateAdd(lane_, b_.CreateMul(t, C64(group))));
    if (!e.ok()) return e.status();
    absl::StatusOr<std::vector<Value*>> r = combine(load_acc(), *e);
    if (!r.ok()) return r.status();
    store_acc(*r);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  auto tree = [&](int from) -> absl::Status {
    for (int delta = from; delta >= 1; delta /= 2) {
      std::vector<Value*> mine = load_acc(), theirs;
      for (Value* v : mine) theirs.push_back(ShuffleDown(v, delta));
      absl::StatusOr<std::vector<Value*>> r = combine(mine, theirs);
      if (!r.ok()) return r.status();
      store_acc(*r);
    }
    return absl::OkStatus();
  };
  if (absl::Status t = tree(16); !t.ok()) return t;
  if (group > 32) {
    const int warps = static_cast<int>(group / 32);
    Value* shared = SharedMemory();
    Value* warp = b_.CreateLShr(lane_, 5);
    llvm::BasicBlock* write = llvm::BasicBlock::Create(ctx_, "coop.write", fn_);
    llvm::BasicBlock* written = llvm::BasicBlock::Create(ctx_, "coop.written", fn_);
    b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateAnd(lane_, C64(31)), C64(0)), write, written);
    b_.SetInsertPoint(write);
    std::vector<Value*> mine = load_acc();
    for (int k = 0; k < n; ++k) {
      Value* slot = b_.CreateAdd(C64(int64_t{k} * warps), warp);
      b_.CreateStore(ToBits64(mine[k]), b_.CreateInBoundsGEP(I64(), shared, slot));
    }
    b_.CreateBr(written);
    b_.SetInsertPoint(written);
    Barrier();
    // Every warp reads the warps' results (lane l the result of warp l mod warps) and combines
    // them; lane 0 of the group has the total.
    Value* which = b_.CreateAnd(lane_, C64(warps - 1));
    std::vector<Value*> partial;
    for (int k = 0; k < n; ++k) {
      Value* slot = b_.CreateAdd(C64(int64_t{k} * warps), which);
      partial.push_back(
          FromBits64(types[k], b_.CreateLoad(I64(), b_.CreateInBoundsGEP(I64(), shared, slot))));
    }
    store_acc(partial);
    // The slots are read before any group's next reduction writes them again.
    Barrier();
    if (absl::Status t = tree(warps / 2); !t.ok()) return t;
  }
  std::vector<Value*> init;
  Index scalar = Scalar();
  for (int k = 0; k < n; ++k) {
    absl::StatusOr<Value*> v = Elem(*h.operand(n + k), scalar);
    if (!v.ok()) return v.status();
    init.push_back(*v);
  }
  return combine(init, load_acc());
}

// --- Convolutions ------------------------------------------------------------------------------

// Output element (n, o, spatial): o's feature group g takes input features g * I .. g * I + I - 1
// and its batch group bg the input batch bg * (N / bgc) + n; each kernel position k (reversed
// where the window says so) reads input position p = out * stride + k * window_dilation -
// padding_low, which exists when p is a multiple of base_dilation and p / base_dilation is inside
// the input. Operands are converted to the result type and summed in it (narrow floats in f64,
// rounded once), in the order (window position, input feature); the interpreter sums through a
// GEMM, in another order.
absl::StatusOr<Value*> Emitter::ConvolutionElem(const Instruction& h, const Index& idx) {
  const InstructionAttrs& at = h.attrs_or_default();
  if (!at.convolution_dimension_numbers || h.operand_count() != 2) {
    return Refuse(h, "a convolution without dim_labels");
  }
  const ConvolutionDimensionNumbers& dn = *at.convolution_dimension_numbers;
  const Shape& ls = h.operand(0)->shape();
  const Shape& rs = h.operand(1)->shape();
  const Shape& os = h.shape();
  const PrimitiveType t = os.element_type();
  if (t == PrimitiveType::kPred || IsComplex(t) || IsComplex(ls.element_type()) ||
      IsComplex(rs.element_type())) {
    return Refuse(h, StrCat("a ", PrimitiveTypeName(t), " convolution"));
  }
  const int ns = static_cast<int>(dn.input_spatial_dimensions.size());
  if (dn.kernel_spatial_dimensions.size() != static_cast<size_t>(ns) ||
      dn.output_spatial_dimensions.size() != static_cast<size_t>(ns) || ls.rank() != ns + 2 ||
      rs.rank() != ns + 2 || os.rank() != ns + 2) {
    return Refuse(h, "convolution ranks that do not match dim_labels");
  }
  Window w = at.window.value_or(Window());
  if (w.empty()) {
    w.assign(ns, WindowDimension{});
    for (int i = 0; i < ns; ++i) w[i].size = rs.dimension(dn.kernel_spatial_dimensions[i]);
  }
  if (static_cast<int>(w.size()) != ns) return Refuse(h, "a window of the wrong rank");
  for (int i = 0; i < ns; ++i) {
    if (w[i].stride <= 0 || w[i].base_dilation <= 0 || w[i].window_dilation <= 0 ||
        w[i].size != rs.dimension(dn.kernel_spatial_dimensions[i])) {
      return Refuse(h, "a window that does not fit the kernel");
    }
  }
  const int64_t fgc = at.feature_group_count, bgc = at.batch_group_count;
  const int64_t N = ls.dimension(dn.input_batch_dimension);
  const int64_t C = ls.dimension(dn.input_feature_dimension);
  const int64_t I = rs.dimension(dn.kernel_input_feature_dimension);
  const int64_t O = rs.dimension(dn.kernel_output_feature_dimension);
  if (fgc <= 0 || bgc <= 0 || C != I * fgc || O % fgc != 0 || O % bgc != 0 || N % bgc != 0 ||
      os.dimension(dn.output_batch_dimension) != N / bgc ||
      os.dimension(dn.output_feature_dimension) != O) {
    return Refuse(h, "inconsistent feature or batch groups");
  }
  Value* n = idx.multi[dn.output_batch_dimension];
  Value* o = idx.multi[dn.output_feature_dimension];
  Value* group = b_.CreateUDiv(o, C64(O / fgc));
  Value* batch_group = b_.CreateUDiv(o, C64(O / bgc));
  Value* in_batch = b_.CreateAdd(b_.CreateMul(batch_group, C64(N / bgc)), n);
  int64_t window = I;
  for (const WindowDimension& wd : w) window *= wd.size;
  cost_ += window;
  // Narrow floats are summed in f64 and rounded once, as the interpreter does.
  const PrimitiveType st = IsNarrowFloat(t) ? PrimitiveType::kF64 : t;
  llvm::Type* ct = ComputeType(st);
  llvm::AllocaInst* acc;
  {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    acc = entry.CreateAlloca(ct);
  }
  b_.CreateStore(llvm::Constant::getNullValue(ct), acc);
  std::vector<Value*> kpos(ns, nullptr);
  std::function<absl::Status(int)> nest = [&](int d) -> absl::Status {
    if (d < ns) {
      return Loop(C64(0), C64(w[d].size), StrCat("conv.k", d), [&](Value* k) {
        kpos[d] = k;
        return nest(d + 1);
      });
    }
    // The input position of every spatial dimension, whether all exist, and in-range stand-ins.
    Value* valid = b_.getTrue();
    std::vector<Value*> in_multi(ls.rank(), nullptr), k_multi(rs.rank(), nullptr);
    for (int s = 0; s < ns; ++s) {
      const WindowDimension& wd = w[s];
      Value* k = wd.window_reversal ? b_.CreateSub(C64(wd.size - 1), kpos[s]) : kpos[s];
      Value* p = b_.CreateSub(
          b_.CreateAdd(b_.CreateMul(idx.multi[dn.output_spatial_dimensions[s]], C64(wd.stride)),
                       b_.CreateMul(k, C64(wd.window_dilation))),
          C64(wd.padding_low));
      Value* q = p;
      if (wd.base_dilation > 1) {
        valid = b_.CreateAnd(valid, b_.CreateICmpEQ(b_.CreateSRem(p, C64(wd.base_dilation)),
                                                    C64(0)));
        q = b_.CreateSDiv(p, C64(wd.base_dilation));
      }
      const int64_t size = ls.dimension(dn.input_spatial_dimensions[s]);
      valid = b_.CreateAnd(valid, b_.CreateICmpSGE(p, C64(0)));
      valid = b_.CreateAnd(valid, b_.CreateICmpSLT(q, C64(size)));
      in_multi[dn.input_spatial_dimensions[s]] = Clamp(q, 0, size - 1);
      k_multi[dn.kernel_spatial_dimensions[s]] = kpos[s];
    }
    in_multi[dn.input_batch_dimension] = in_batch;
    k_multi[dn.kernel_output_feature_dimension] = o;
    return Loop(C64(0), C64(I), "conv.i", [&](Value* i) -> absl::Status {
      in_multi[dn.input_feature_dimension] = b_.CreateAdd(b_.CreateMul(group, C64(I)), i);
      k_multi[dn.kernel_input_feature_dimension] = i;
      absl::StatusOr<Value*> x = Elem(*h.operand(0), MakeFromMulti(ls.dimensions(), in_multi));
      if (!x.ok()) return x.status();
      absl::StatusOr<Value*> y = Elem(*h.operand(1), MakeFromMulti(rs.dimensions(), k_multi));
      if (!y.ok()) return y.status();
      absl::StatusOr<Value*> xc = Convert(h, ls.element_type(), st, *x);
      if (!xc.ok()) return xc.status();
      absl::StatusOr<Value*> yc = Convert(h, rs.element_type(), st, *y);
      if (!yc.ok()) return yc.status();
      absl::StatusOr<Value*> prod = Binary(h, Opcode::kMultiply, st, *xc, *yc);
      if (!prod.ok()) return prod.status();
      Value* old = b_.CreateLoad(ct, acc);
      absl::StatusOr<Value*> sum = Binary(h, Opcode::kAdd, st, old, *prod);
      if (!sum.ok()) return sum.status();
      b_.CreateStore(b_.CreateSelect(valid, *sum, old), acc);
      return absl::OkStatus();
    });
  };
  if (absl::Status status = nest(0); !status.ok()) return status;
  Value* total = b_.CreateLoad(ct, acc);
  if (st == t) return total;
  return Convert(h, st, t, total);
}

// --- Gathers -----------------------------------------------------------------------------------

// The output's dimensions outside offset_dims are the batch dimensions, in order the start
// indices' dimensions other than index_vector_dim. Component k of the batch element's index
// vector starts operand dimension start_index_map[k], clamped so that the slice fits; operand
// batching dimensions start at the batch element's own index along the matching start-indices
// dimension; the remaining operand dimensions (neither collapsed nor batching), in order, take
// the offset_dims of the output.
absl::StatusOr<Value*> Emitter::GatherElem(const Instruction& h, const Index& idx) {
  const InstructionAttrs& at = h.attrs_or_default();
  if (!at.gather_dimension_numbers || h.operand_count() != 2) {
    return Refuse(h, "a gather without dimension numbers");
  }
  const GatherDimensionNumbers& dn = *at.gather_dimension_numbers;
  const Shape& os = h.operand(0)->shape();
  const Shape& is = h.operand(1)->shape();
  const int r_out = h.shape().rank(), r_op = os.rank(), r_idx = is.rank();
  const PrimitiveType it = is.element_type();
  if (!IsIntegral(it)) return Refuse(h, "gather indices that are not integers");
  if (static_cast<int>(at.slice_sizes.size()) != r_op ||
      dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size() ||
      dn.index_vector_dim < 0 || dn.index_vector_dim > r_idx) {
    return Refuse(h, "malformed gather dimension numbers");
  }
  std::vector<bool> is_offset(r_out, false);
  for (int64_t d : dn.offset_dims) {
    if (d < 0 || d >= r_out) return Refuse(h, "an offset dimension out of range");
    is_offset[d] = true;
  }
  std::vector<Value*> batch;
  for (int d = 0; d < r_out; ++d) {
    if (!is_offset[d]) batch.push_back(idx.multi[d]);
  }
  const bool implicit = dn.index_vector_dim == r_idx;
  if (static_cast<int>(batch.size()) != r_idx - (implicit ? 0 : 1)) {
    return Refuse(h, "batch dimensions that do not match the start indices");
  }
  // Position among the batch dimensions of start-indices dimension `d`.
  auto batch_position = [&](int64_t d) {
    return d - (!implicit && d > dn.index_vector_dim ? 1 : 0);
  };
  std::vector<Value*> start(r_op, C64(0));
  for (size_t k = 0; k < dn.start_index_map.size(); ++k) {
    const int64_t d = dn.start_index_map[k];
    if (d < 0 || d >= r_op) return Refuse(h, "start_index_map out of range");
    std::vector<Value*> m;
    for (int q = 0, b = 0; q < r_idx; ++q) {
      m.push_back(!implicit && q == dn.index_vector_dim ? C64(static_cast<int64_t>(k))
                                                        : batch[b++]);
    }
    absl::StatusOr<Value*> v = Elem(*h.operand(1), MakeFromMulti(is.dimensions(), m));
    if (!v.ok()) return v.status();
    Value* wide = IsSignedIntegral(it) ? b_.CreateSExtOrTrunc(*v, I64())
                                       : b_.CreateZExtOrTrunc(*v, I64());
    start[d] = Clamp(wide, 0, std::max<int64_t>(0, os.dimension(d) - at.slice_sizes[d]));
  }
  std::vector<bool> not_offset(r_op, false);
  for (int64_t d : dn.collapsed_slice_dims) {
    if (d < 0 || d >= r_op) return Refuse(h, "a collapsed dimension out of range");
    not_offset[d] = true;
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    const int64_t od = dn.operand_batching_dims[i], sd = dn.start_indices_batching_dims[i];
    if (od < 0 || od >= r_op || sd < 0 || sd >= r_idx || (!implicit && sd == dn.index_vector_dim)) {
      return Refuse(h, "a batching dimension out of range");
    }
    not_offset[od] = true;
    start[od] = batch[batch_position(sd)];
  }
  std::vector<Value*> in(r_op, nullptr);
  size_t next_offset = 0;
  for (int d = 0; d < r_op; ++d) {
    if (not_offset[d]) {
      in[d] = start[d];
      continue;
    }
    if (next_offset >= dn.offset_dims.size()) return Refuse(h, "too few offset dimensions");
    in[d] = b_.CreateAdd(start[d], idx.multi[dn.offset_dims[next_offset++]]);
  }
  if (next_offset != dn.offset_dims.size()) return Refuse(h, "too many offset dimensions");
  return Elem(*h.operand(0), MakeFromMulti(os.dimensions(), in));
}

// --- Tiled transposes (GPU) -------------------------------------------------------------------

const Instruction* Emitter::TiledTranspose(const std::vector<const Instruction*>& outputs) {
  if (outputs.size() != 1 || outputs[0]->opcode() != Opcode::kTranspose) return nullptr;
  const Instruction* t = outputs[0];
  if (!t->shape().IsArray() || t->operand_count() != 1 || !t->operand(0)->shape().IsArray()) {
    return nullptr;
  }
  const PrimitiveType type = t->shape().element_type();
  if (!Supported(type) || IsComplex(type)) return nullptr;
  const Shape& in = t->operand(0)->shape();
  const int r = in.rank();
  const std::vector<int64_t>& perm = t->dimensions();
  if (r < 2 || static_cast<int>(perm.size()) != r) return nullptr;
  std::vector<bool> seen(r, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[p]) return nullptr;
    seen[p] = true;
  }
  const int64_t major = perm[r - 1];  // the input dimension that becomes innermost
  if (major == r - 1 || in.dimension(r - 1) < kTile || in.dimension(major) < kTile) return nullptr;
  if (form_.block_size != kTile * 8) return nullptr;
  return t;
}

// Tiles: the input's dimensions other than its innermost and the one that becomes innermost
// (in input order), then the tiles along those two.
std::vector<int64_t> Emitter::TileSpace(const Instruction& t) {
  const Shape& in = t.operand(0)->shape();
  const int r = in.rank();
  const int64_t major = t.dimensions()[r - 1];
  std::vector<int64_t> space;
  for (int d = 0; d < r; ++d) {
    if (d != major && d != r - 1) space.push_back(in.dimension(d));
  }
  space.push_back((in.dimension(major) + kTile - 1) / kTile);
  space.push_back((in.dimension(r - 1) + kTile - 1) / kTile);
  return space;
}

// Thread (x, y) of the block (x = lane mod 32, y = lane / 32, y < 8) reads rows y, y + 8, y + 16,
// y + 24 of the tile at column x (along the input's innermost dimension) into shared memory;
// after a barrier it writes the tile's columns the same way, so the output's innermost
// dimension runs along x. Elements past the array's edge are skipped; every thread reaches both
// barriers (the second keeps the tile until every thread has read it).
absl::Status Emitter::EmitTiledTranspose(const Instruction& t, PrimitiveType out_type, Value* out,
                                         Value* tile) {
  const Shape& in = t.operand(0)->shape();
  const int r = in.rank();
  const std::vector<int64_t>& perm = t.dimensions();
  const int64_t major = perm[r - 1], minor = r - 1;
  const int64_t a_size = in.dimension(static_cast<int>(major));
  const int64_t b_size = in.dimension(r - 1);
  const std::vector<int64_t> space = TileSpace(t);
  Index at = MakeFromLinear(space, tile);
  const size_t others = space.size() - 2;
  Value* a0 = b_.CreateMul(at.multi[others], C64(kTile));
  Value* b0 = b_.CreateMul(at.multi[others + 1], C64(kTile));
  Value* x = b_.CreateAnd(lane_, C64(kTile - 1), "tile.x");
  Value* y = b_.CreateLShr(lane_, 5, "tile.y");
  Value* shared = SharedMemory();
  llvm::Type* type = ComputeType(t.shape().element_type());
  // The input index with its two tiled dimensions at (a, b).
  auto input_multi = [&](Value* a, Value* b) {
    std::vector<Value*> m(r, nullptr);
    for (int d = 0, q = 0; d < r; ++d) {
      if (d == major) {
        m[d] = a;
      } else if (d == minor) {
        m[d] = b;
      } else {
        m[d] = at.multi[q++];
      }
    }
    return m;
  };
  auto guarded = [&](Value* a, Value* b, const std::string& name,
                     const std::function<absl::Status()>& body) -> absl::Status {
    Value* inside = b_.CreateAnd(b_.CreateICmpULT(a, C64(a_size)), b_.CreateICmpULT(b, C64(b_size)));
    llvm::BasicBlock* then = llvm::BasicBlock::Create(ctx_, name, fn_);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx_, name + ".next", fn_);
    b_.CreateCondBr(inside, then, next);
    b_.SetInsertPoint(then);
    memo_.emplace_back();
    multi_memo_.emplace_back();
    absl::Status st = body();
    memo_.pop_back();
    multi_memo_.pop_back();
    if (!st.ok()) return st;
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
    return absl::OkStatus();
  };
  for (int k = 0; k < kTile / 8; ++k) {
    Value* row = b_.CreateAdd(y, C64(8 * k));
    Value* a = b_.CreateAdd(a0, row);
    Value* b = b_.CreateAdd(b0, x);
    absl::Status st = guarded(a, b, "tile.read", [&]() -> absl::Status {
      absl::StatusOr<Value*> v =
          Elem(*t.operand(0), MakeFromMulti(in.dimensions(), input_multi(a, b)));
      if (!v.ok()) return v.status();
      Value* slot = b_.CreateAdd(b_.CreateMul(row, C64(kTile + 1)), x);
      b_.CreateStore(ToBits64(*v), b_.CreateInBoundsGEP(I64(), shared, slot));
      return absl::OkStatus();
    });
    if (!st.ok()) return st;
  }
  Barrier();
  for (int k = 0; k < kTile / 8; ++k) {
    Value* row = b_.CreateAdd(y, C64(8 * k));
    Value* a = b_.CreateAdd(a0, x);
    Value* b = b_.CreateAdd(b0, row);
    absl::Status st = guarded(a, b, "tile.write", [&]() -> absl::Status {
      Value* slot = b_.CreateAdd(b_.CreateMul(x, C64(kTile + 1)), row);
      Value* v = FromBits64(type, b_.CreateLoad(I64(), b_.CreateInBoundsGEP(I64(), shared, slot)));
      std::vector<Value*> m = input_multi(a, b), out_multi(r, nullptr);
      for (int d = 0; d < r; ++d) out_multi[d] = m[perm[d]];
      Store(out_type, v, out, MakeFromMulti(t.shape().dimensions(), out_multi).linear);
      return absl::OkStatus();
    });
    if (!st.ok()) return st;
  }
  Barrier();
  return absl::OkStatus();
}

absl::StatusOr<Value*> Emitter::Elem(const Instruction& h, const Index& idx) {
  auto bound = bound_.find(&h);
  if (bound != bound_.end()) return bound->second;
  // A scalar of the kernel's own computation does not depend on the position it is read at:
  // one key for all. (Scalars of called computations depend on their arguments.)
  const bool scalar = kernel_computation_ != nullptr && h.parent() == kernel_computation_ &&
                      h.shape().IsArray() && h.shape().rank() == 0;
  auto key = std::make_pair(&h, scalar ? -1 : idx.id);
  for (auto it = memo_.rbegin(); it != memo_.rend(); ++it) {
    auto f = it->find(key);
    if (f != it->end()) return f->second;
  }
  absl::StatusOr<Value*> v = ElemUncached(h, idx);
  if (!v.ok()) return v.status();
  memo_.back()[key] = *v;
  ++cost_;
  return v;
}

absl::StatusOr<Value*> Emitter::ElemUncached(const Instruction& h, const Index& idx) {
  auto leaf = leaf_buffer_.find(&h);
  if (leaf != leaf_buffer_.end()) {
    if (!Supported(h.shape().element_type())) {
      return Refuse(h, StrCat("element type ", PrimitiveTypeName(h.shape().element_type())));
    }
    return Load(h, leaf->second, idx);
  }
  const Shape& shape = h.shape();
  if (!shape.IsArray()) {
    return Refuse(h, "the result is not an array");
  }
  const PrimitiveType t = shape.element_type();
  if (!Supported(t)) return Refuse(h, StrCat("element type ", PrimitiveTypeName(t)));
  if (h.opcode() == Opcode::kGetTupleElement && h.operand(0)->opcode() == Opcode::kReduce) {
    const Instruction& red = *h.operand(0);
    auto key = std::make_pair(&red, idx.id);
    const std::vector<Value*>* vals = nullptr;
    for (auto it = multi_memo_.rbegin(); it != multi_memo_.rend() && vals == nullptr; ++it) {
      auto f = it->find(key);
      if (f != it->end()) vals = &f->second;
    }
    if (vals == nullptr) {
      absl::StatusOr<std::vector<Value*>> r = ReduceElems(red, idx);
      if (!r.ok()) return r.status();
      vals = &(multi_memo_.back()[key] = *std::move(r));
    }
    if (h.tuple_index() < 0 || h.tuple_index() >= static_cast<int64_t>(vals->size())) {
      return Refuse(h, "tuple index out of range");
    }
    return (*vals)[h.tuple_index()];
  }
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape.is_dynamic_dimension(d)) return Refuse(h, "dynamic dimensions");
  }
  const Opcode op = h.opcode();
  auto operand = [&](int i, const Index& at) { return Elem(*h.operand(i), at); };
  switch (OpcodeCategoryOf(op)) {
    case OpcodeCategory::kUnary:
    case OpcodeCategory::kUnaryAccuracy: {
      if (op == Opcode::kConvert || op == Opcode::kBitcastConvert ||
          op == Opcode::kReducePrecision || op == Opcode::kReal || op == Opcode::kImag) {
        break;
      }
      PrimitiveType it = h.operand(0)->shape().element_type();
      const bool complex_abs =
          op == Opcode::kAbs && IsComplex(it) && t == ComplexComponentType(it);
      if (it != t && op != Opcode::kIsFinite && !complex_abs) {
        return Refuse(h, "mixed element types");
      }
      absl::StatusOr<Value*> x = operand(0, idx);
      if (!x.ok()) return x.status();
      absl::StatusOr<Value*> r = Unary(h, it, *x);
      if (!r.ok()) return r.status();
      return op == Opcode::kIsFinite ? *r : RoundNarrow(t, *r);
    }
    case OpcodeCategory::kBinary: {
      if (op == Opcode::kCompare || op == Opcode::kComplex) break;
      if (h.operand(0)->shape().element_type() != t || h.operand(1)->shape().element_type() != t) {
        return Refuse(h, "mixed element types");
      }
      if (IsIntegral(t) && op == Opcode::kPower) return Refuse(h, "integer power");
      absl::StatusOr<Value*> a = operand(0, idx);
      if (!a.ok()) return a.status();
      absl::StatusOr<Value*> c = operand(1, idx);
      if (!c.ok()) return c.status();
      absl::StatusOr<Value*> r = Binary(h, op, t, *a, *c);
      if (!r.ok()) return r.status();
      return RoundNarrow(t, *r);
    }
    default: break;
  }
  switch (op) {
    case Opcode::kParameter: return Refuse(h, "parameter with no buffer");
    case Opcode::kConstant: return ConstantElem(h);
    case Opcode::kReal:
    case Opcode::kImag: {
      PrimitiveType it = h.operand(0)->shape().element_type();
      if (!IsComplex(it) || t != ComplexComponentType(it)) {
        return Refuse(h, "real and imag take a complex operand");
      }
      absl::StatusOr<Value*> x = operand(0, idx);
      if (!x.ok()) return x.status();
      return op == Opcode::kReal ? Re(*x) : Im(*x);
    }
    case Opcode::kComplex: {
      const PrimitiveType part = ComplexComponentType(t);
      if (!IsComplex(t) || h.operand(0)->shape().element_type() != part ||
          h.operand(1)->shape().element_type() != part) {
        return Refuse(h, "complex takes two operands of the result's component type");
      }
      absl::StatusOr<Value*> re = operand(0, idx);
      if (!re.ok()) return re.status();
      absl::StatusOr<Value*> im = operand(1, idx);
      if (!im.ok()) return im.status();
      return MakeComplex(*re, *im);
    }
    case Opcode::kCompare: {
      PrimitiveType it = h.operand(0)->shape().element_type();
      if (!Supported(it)) return Refuse(h, StrCat("element type ", PrimitiveTypeName(it)));
      absl::StatusOr<Value*> a = operand(0, idx);
      if (!a.ok()) return a.status();
      absl::StatusOr<Value*> c = operand(1, idx);
      if (!c.ok()) return c.status();
      return Compare(h, it, *a, *c);
    }
    case Opcode::kConvert: {
      PrimitiveType from = h.operand(0)->shape().element_type();
      if (!Supported(from)) return Refuse(h, StrCat("element type ", PrimitiveTypeName(from)));
      absl::StatusOr<Value*> x = operand(0, idx);
      if (!x.ok()) return x.status();
      return Convert(h, from, t, *x);
    }
    case Opcode::kBitcastConvert: {
      PrimitiveType from = h.operand(0)->shape().element_type();
      if (from == PrimitiveType::kPred || t == PrimitiveType::kPred || IsNarrowFloat(from) ||
          IsNarrowFloat(t) || IsComplex(from) || IsComplex(t) || !Supported(from) ||
          BitWidth(from) != BitWidth(t)) {
        return Refuse(h, "bitcast-convert between these types");
      }
      absl::StatusOr<Value*> x = operand(0, idx);
      if (!x.ok()) return x.status();
      // s4 <-> u4 and the like: the same logical bits, in the result type's stored form.
      return WrapSubByte(t, b_.CreateBitCast(*x, ComputeType(t)));
    }
    case Opcode::kSelect: {
      const Instruction& p = *h.operand(0);
      absl::StatusOr<Value*> pv = Elem(p, p.shape().rank() == 0 ? Scalar() : idx);
      if (!pv.ok()) return pv.status();
      absl::StatusOr<Value*> a = operand(1, idx);
      if (!a.ok()) return a.status();
      absl::StatusOr<Value*> c = operand(2, idx);
      if (!c.ok()) return c.status();
      return b_.CreateSelect(*pv, *a, *c);
    }
    case Opcode::kClamp: {
      const Instruction& lo = *h.operand(0);
      const Instruction& hi = *h.operand(2);
      absl::StatusOr<Value*> lv = Elem(lo, lo.shape().rank() == 0 ? Scalar() : idx);
      if (!lv.ok()) return lv.status();
      absl::StatusOr<Value*> x = operand(1, idx);
      if (!x.ok()) return x.status();
      absl::StatusOr<Value*> hv = Elem(hi, hi.shape().rank() == 0 ? Scalar() : idx);
      if (!hv.ok()) return hv.status();
      const bool fl = IsFloatingPoint(t);
      const bool s = !fl && IsSignedIntegral(t);
      if (t == PrimitiveType::kPred) return Refuse(h, "clamp on pred");
      if (IsComplex(t)) return Refuse(h, "clamp on complex values (they have no order)");
      return NanMax(NanMax(*x, *lv, fl, s, true), *hv, fl, s, false);
    }
    case Opcode::kCopy: return operand(0, idx);
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      const Shape& os = h.operand(0)->shape();
      if (op == Opcode::kBitcast &&
          (!RowMajorLayout(shape) || !RowMajorLayout(os) || os.element_type() != t)) {
        return Refuse(h, "a bitcast that changes layout or type");
      }
      if (os.ElementCount() != shape.ElementCount()) return Refuse(h, "element counts differ");
      return operand(0, MakeFromLinear(os.dimensions(), idx.linear));
    }
    case Opcode::kBroadcast: {
      const Shape& os = h.operand(0)->shape();
      if (static_cast<int>(h.dimensions().size()) != os.rank()) return Refuse(h, "bad dimensions");
      std::vector<Value*> m;
      for (int k = 0; k < os.rank(); ++k) {
        int64_t d = h.dimensions()[k];
        if (d < 0 || d >= shape.rank()) return Refuse(h, "bad dimensions");
        m.push_back(os.dimension(k) == 1 ? C64(0) : idx.multi[d]);
      }
      return operand(0, MakeFromMulti(os.dimensions(), m));
    }
    case Opcode::kTranspose: {
      const Shape& os = h.operand(0)->shape();
      std::vector<Value*> m(os.rank(), nullptr);
      if (static_cast<int>(h.dimensions().size()) != os.rank()) return Refuse(h, "bad permutation");
      for (int k = 0; k < shape.rank(); ++k) {
        int64_t p = h.dimensions()[k];
        if (p < 0 || p >= os.rank()) return Refuse(h, "bad permutation");
        m[p] = idx.multi[k];
      }
      return operand(0, MakeFromMulti(os.dimensions(), m));
    }
    case Opcode::kSlice: {
      const Shape& os = h.operand(0)->shape();
      const std::vector<SliceDimension>& sl = h.attrs_or_default().slice;
      if (static_cast<int>(sl.size()) != os.rank()) return Refuse(h, "bad slice");
      std::vector<Value*> m;
      for (int d = 0; d < os.rank(); ++d) {
        m.push_back(b_.CreateAdd(C64(sl[d].start), b_.CreateMul(idx.multi[d], C64(sl[d].stride))));
      }
      return operand(0, MakeFromMulti(os.dimensions(), m));
    }
    case Opcode::kReverse: {
      std::vector<Value*> m = idx.multi;
      for (int64_t d : h.dimensions()) {
        if (d < 0 || d >= shape.rank()) return Refuse(h, "bad dimensions");
        m[d] = b_.CreateSub(C64(shape.dimension(d) - 1), m[d]);
      }
      return operand(0, MakeFromMulti(shape.dimensions(), m));
    }
    case Opcode::kIota: {
      int64_t d = h.iota_dimension();
      if (d < 0 || d >= shape.rank()) return Refuse(h, "bad iota dimension");
      Value* i = idx.multi[d];
      if (t == PrimitiveType::kPred) return b_.CreateICmpNE(i, C64(0));
      if (IsIntegral(t)) return WrapSubByte(t, b_.CreateTrunc(i, ComputeType(t)));
      if (IsComplex(t)) {
        llvm::Type* part = ComputeType(ComplexComponentType(t));
        return MakeComplex(b_.CreateSIToFP(i, part), llvm::ConstantFP::get(part, 0.0));
      }
      return RoundNarrow(t, b_.CreateSIToFP(i, ComputeType(t)));
    }
    case Opcode::kPad: {
      const Shape& os = h.operand(0)->shape();
      if (!h.attrs_or_default().padding || static_cast<int>(h.attrs_or_default().padding->size()) != os.rank()) {
        return Refuse(h, "bad padding");
      }
      const PaddingConfig& pc = *h.attrs_or_default().padding;
      Value* inside = b_.getTrue();
      std::vector<Value*> m;
      for (int d = 0; d < os.rank(); ++d) {
        Value* rel = b_.CreateSub(idx.multi[d], C64(pc[d].low));
        Value* q = rel;
        if (pc[d].interior > 0) {
          Value* relc = b_.CreateSelect(b_.CreateICmpSLT(rel, C64(0)), C64(0), rel);
          q = b_.CreateUDiv(relc, C64(pc[d].interior + 1));
          Value* on_grid = b_.CreateICmpEQ(b_.CreateURem(relc, C64(pc[d].interior + 1)), C64(0));
          inside = b_.CreateAnd(inside, on_grid);
        }
        inside = b_.CreateAnd(inside, b_.CreateICmpSGE(rel, C64(0)));
        inside = b_.CreateAnd(inside, b_.CreateICmpSLT(q, C64(os.dimension(d))));
        m.push_back(Clamp(q, 0, std::max<int64_t>(0, os.dimension(d) - 1)));
      }
      absl::StatusOr<Value*> pv = Elem(*h.operand(1), Scalar());
      if (!pv.ok()) return pv.status();
      if (os.ElementCount() == 0) return *pv;
      absl::StatusOr<Value*> v = operand(0, MakeFromMulti(os.dimensions(), m));
      if (!v.ok()) return v.status();
      return b_.CreateSelect(inside, *v, *pv);
    }
    case Opcode::kConcatenate: {
      if (h.dimensions().size() != 1) return Refuse(h, "bad dimension");
      const int64_t cd = h.dimensions()[0];
      if (cd < 0 || cd >= shape.rank()) return Refuse(h, "bad dimension");
      if (h.operand_count() > 64) return Refuse(h, "more than 64 operands");
      Value* result = nullptr;
      int64_t offset = 0;
      for (int k = 0; k < h.operand_count(); ++k) {
        const Shape& os = h.operand(k)->shape();
        const int64_t size = os.dimension(static_cast<int>(cd));
        if (size == 0) continue;
        std::vector<Value*> m = idx.multi;
        m[cd] = Clamp(b_.CreateSub(idx.multi[cd], C64(offset)), 0, size - 1);
        absl::StatusOr<Value*> v = operand(k, MakeFromMulti(os.dimensions(), m));
        if (!v.ok()) return v.status();
        result = result == nullptr
                     ? *v
                     : b_.CreateSelect(b_.CreateICmpSGE(idx.multi[cd], C64(offset)), *v, result);
        offset += size;
      }
      if (result == nullptr) return Refuse(h, "every operand is empty");
      return result;
    }
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: {
      const bool update = op == Opcode::kDynamicUpdateSlice;
      const Shape& os = h.operand(0)->shape();
      const int first_index = update ? 2 : 1;
      if (h.operand_count() != first_index + os.rank()) {
        return Refuse(h, "needs one scalar start index per dimension");
      }
      const Shape* us = update ? &h.operand(1)->shape() : nullptr;
      absl::StatusOr<std::vector<Value*>> clamped =
          ClampedStarts(h, first_index, update ? us->dimensions() : shape.dimensions());
      if (!clamped.ok()) return clamped.status();
      const std::vector<Value*>& starts = *clamped;
      if (!update) {
        std::vector<Value*> m;
        for (int d = 0; d < os.rank(); ++d) m.push_back(b_.CreateAdd(starts[d], idx.multi[d]));
        return operand(0, MakeFromMulti(os.dimensions(), m));
      }
      Value* inside = b_.getTrue();
      std::vector<Value*> m;
      for (int d = 0; d < os.rank(); ++d) {
        Value* rel = b_.CreateSub(idx.multi[d], starts[d]);
        inside = b_.CreateAnd(inside, b_.CreateICmpSGE(rel, C64(0)));
        inside = b_.CreateAnd(inside, b_.CreateICmpSLT(rel, C64(us->dimension(d))));
        m.push_back(Clamp(rel, 0, std::max<int64_t>(0, us->dimension(d) - 1)));
      }
      absl::StatusOr<Value*> base = operand(0, idx);
      if (!base.ok()) return base.status();
      if (us->ElementCount() == 0) return *base;
      absl::StatusOr<Value*> upd = operand(1, MakeFromMulti(us->dimensions(), m));
      if (!upd.ok()) return upd.status();
      return b_.CreateSelect(inside, *upd, *base);
    }
    case Opcode::kConvolution: return ConvolutionElem(h, idx);
    case Opcode::kGather:
      // The cpu platform copies a gather's rows in a library call instead.
      if (elements_per_call_ == 0) return Refuse(h, "no elemental emitter for this opcode");
      return GatherElem(h, idx);
    case Opcode::kReduce: {
      if (h.operand_count() != 2) return Refuse(h, "a variadic reduce outside a tuple");
      absl::StatusOr<std::vector<Value*>> r = ReduceElems(h, idx);
      if (!r.ok()) return r.status();
      return (*r)[0];
    }
    case Opcode::kMap: {
      if (h.called_computations().size() != 1) return Refuse(h, "map without a computation");
      std::vector<Value*> args;
      for (int k = 0; k < h.operand_count(); ++k) {
        absl::StatusOr<Value*> v = operand(k, idx);
        if (!v.ok()) return v.status();
        args.push_back(*v);
      }
      absl::StatusOr<std::vector<Value*>> r = CallScalar(*h.called_computations()[0], args);
      if (!r.ok()) return r.status();
      if (r->size() != 1) return Refuse(h, "map computation returns a tuple");
      return (*r)[0];
    }
    default: break;
  }
  return Refuse(h, "no elemental emitter for this opcode");
}

absl::StatusOr<std::vector<Value*>> Emitter::ClampedStarts(const Instruction& h, int first_index,
                                                           const std::vector<int64_t>& sizes) {
  const Shape& os = h.operand(0)->shape();
  if (h.operand_count() != first_index + os.rank() ||
      static_cast<int>(sizes.size()) != os.rank()) {
    return Refuse(h, "needs one scalar start index per dimension");
  }
  std::vector<Value*> starts;
  for (int d = 0; d < os.rank(); ++d) {
    const Instruction& si = *h.operand(first_index + d);
    if (si.shape().rank() != 0 || !IsIntegral(si.shape().element_type())) {
      return Refuse(h, "start indices must be integer scalars");
    }
    absl::StatusOr<Value*> s = Elem(si, Scalar());
    if (!s.ok()) return s.status();
    Value* s64 = IsSignedIntegral(si.shape().element_type()) ? b_.CreateSExtOrTrunc(*s, I64())
                                                              : b_.CreateZExtOrTrunc(*s, I64());
    starts.push_back(Clamp(s64, 0, std::max<int64_t>(0, os.dimension(d) - sizes[d])));
  }
  return starts;
}

// for (i = begin; i < end;) { row = i / inner; j0 = i % inner; for j in [j0, min(inner,
// j0 + end - i)) body(index of row, j); i += ... }: the inner loop runs along the last
// dimension, so loads and stores there are contiguous and vectorise.
absl::Status Emitter::OutputRange(Value* begin, Value* end, const std::vector<int64_t>& dims,
                                  const std::function<absl::Status(const Index&)>& body) {
  const int64_t inner = dims.empty() ? 1 : std::max<int64_t>(1, dims.back());
  std::vector<int64_t> outer_dims(dims.begin(), dims.empty() ? dims.end() : dims.end() - 1);
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, "rows.header", fn_);
  llvm::BasicBlock* row_body = llvm::BasicBlock::Create(ctx_, "rows.body", fn_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "rows.exit", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(I64(), 2, "i");
  i->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), row_body, exit);
  b_.SetInsertPoint(row_body);
  Value* row = b_.CreateUDiv(i, C64(inner), "row");
  Value* j0 = b_.CreateURem(i, C64(inner), "j0");
  Value* jend = b_.CreateAdd(j0, b_.CreateSub(end, i));
  jend = b_.CreateSelect(b_.CreateICmpSGT(jend, C64(inner)), C64(inner), jend, "jend");
  Index row_idx = MakeFromLinear(outer_dims, row);
  memo_.emplace_back();
  multi_memo_.emplace_back();
  absl::Status st = Loop(j0, jend, "col", [&](Value* j) -> absl::Status {
    std::vector<Value*> m = row_idx.multi;
    if (!dims.empty()) m.push_back(j);
    Index idx = MakeFromMulti(dims, m);
    idx.linear = b_.CreateAdd(b_.CreateMul(row, C64(inner)), j);
    return body(idx);
  });
  memo_.pop_back();
  multi_memo_.pop_back();
  if (!st.ok()) return st;
  Value* next = b_.CreateAdd(i, b_.CreateSub(jend, j0));
  i->addIncoming(next, b_.GetInsertBlock());
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

// A kernel whose only output is a one-input reduce that keeps the input's last dimension
// (a column reduction): computed with the reduced dimensions outside and the outputs inside,
// accumulating in the output buffer, so the input is read along its rows. Each output still
// accumulates its inputs in row-major order, as the interpreter does.
const Instruction* Emitter::ColumnReduction(const std::vector<const Instruction*>& outputs) {
  if (outputs.size() != 1) return nullptr;
  const Instruction* r = outputs[0];
  if (r->opcode() != Opcode::kReduce || r->operand_count() != 2 || !r->shape().IsArray() ||
      r->called_computations().size() != 1) {
    return nullptr;
  }
  const Shape& in = r->operand(0)->shape();
  if (in.rank() == 0 || r->shape().rank() == 0) return nullptr;
  for (int64_t d : r->dimensions()) {
    if (d == in.rank() - 1) return nullptr;  // a row reduction: the plain order reads rows
  }
  return r;
}

absl::Status Emitter::EmitColumnReduction(const Instruction& r, PrimitiveType out_type,
                                          Value* out, Value* begin, Value* end) {
  const Shape& in = r.operand(0)->shape();
  const std::vector<int64_t>& out_dims = r.shape().dimensions();
  std::vector<bool> reduced;
  std::vector<int> red_dims;
  if (absl::Status st = ReducedDims(r, &reduced, &red_dims); !st.ok()) return st;
  absl::StatusOr<Value*> init = Elem(*r.operand(1), Scalar());
  if (!init.ok()) return init.status();
  if (absl::Status st = OutputRange(begin, end, out_dims, [&](const Index& idx) {
        Store(out_type, *init, out, idx.linear);
        return absl::OkStatus();
      });
      !st.ok()) {
    return st;
  }
  std::vector<Value*> red_iv(in.rank(), nullptr);
  std::function<absl::Status(size_t)> nest = [&](size_t level) -> absl::Status {
    if (level == red_dims.size()) {
      return OutputRange(begin, end, out_dims, [&](const Index& idx) -> absl::Status {
        std::vector<Value*> m(in.rank(), nullptr);
        int kept = 0;
        for (int d = 0; d < in.rank(); ++d) m[d] = reduced[d] ? red_iv[d] : idx.multi[kept++];
        Index in_idx = MakeFromMulti(in.dimensions(), m);
        absl::StatusOr<Value*> v = Elem(*r.operand(0), in_idx);
        if (!v.ok()) return v.status();
        llvm::Type* st = StorageType(out_type);
        Value* ptr = b_.CreateInBoundsGEP(st, out, idx.linear);
        Value* acc = FromStorage(out_type, b_.CreateLoad(st, ptr));
        absl::StatusOr<std::vector<Value*>> next = CallScalar(*r.called_computations()[0], {acc, *v});
        if (!next.ok()) return next.status();
        if (next->size() != 1 || (*next)[0]->getType() != ComputeType(out_type)) {
          return Refuse(r, "reducer result type differs from the accumulator");
        }
        Store(out_type, (*next)[0], out, idx.linear);
        return absl::OkStatus();
      });
    }
    int d = red_dims[level];
    return Loop(C64(0), C64(in.dimension(d)), StrCat("red", level), [&](Value* iv) {
      red_iv[d] = iv;
      return nest(level + 1);
    });
  };
  return nest(0);
}

// Instructions whose output the kernel computes: the root, or the elements of a tuple root.
absl::Status KernelOutputs(const Instruction& instr, const Instruction*& body_root,
                           std::vector<const Instruction*>* outputs) {
  if (instr.opcode() == Opcode::kFusion) {
    if (instr.called_computations().size() != 1 || instr.called_computations()[0]->root() == nullptr) {
      return Refuse(instr, "fusion without a fused computation");
    }
    body_root = instr.called_computations()[0]->root();
  } else {
    body_root = &instr;
  }
  if (body_root->opcode() == Opcode::kTuple) {
    for (const Instruction* e : body_root->operands()) outputs->push_back(e);
  } else if (body_root->shape().IsTuple()) {
    if (body_root->opcode() != Opcode::kReduce) return Refuse(*body_root, "tuple-shaped root");
    outputs->push_back(body_root);  // variadic reduce: every result, in order
  } else {
    outputs->push_back(body_root);
  }
  if (outputs->empty()) return Refuse(instr, "no outputs");
  return absl::OkStatus();
}

absl::StatusOr<KernelInfo> Emitter::EmitKernel(const Instruction& instr, const std::string& name,
                                               bool in_place) {
  KernelInfo info;
  info.instruction = &instr;
  info.function_name = name;
  const Instruction* body_root = nullptr;
  std::vector<const Instruction*> outputs;
  if (absl::Status st = KernelOutputs(instr, body_root, &outputs); !st.ok()) return st;
  if (instr.opcode() == Opcode::kFusion) {
    FusionKind kind = instr.attrs_or_default().fusion_kind;
    if (kind != FusionKind::kLoop && kind != FusionKind::kInput) {
      return Refuse(instr, "only loop and input (reduction) fusions are compiled");
    }
  }
  // The in-place form: the output already holds the updated operand (its storage is that
  // operand's, which nothing else in the kernel reads), and the root dynamic-update-slice
  // writes only its update there.
  const Instruction* update = nullptr;
  if (in_place) {
    info.in_place_operand = InPlaceUpdatedOperand(instr);
    if (info.in_place_operand < 0 || elements_per_call_ != 0 || outputs.size() != 1 ||
        outputs[0]->opcode() != Opcode::kDynamicUpdateSlice || !outputs[0]->shape().IsArray()) {
      return Refuse(instr, "no in-place form");
    }
    update = outputs[0];
  }
  // Output arrays and the shared iteration shape.
  std::vector<PrimitiveType> out_types;
  std::vector<int64_t> dims;
  bool first = true;
  for (const Instruction* o : outputs) {
    std::vector<const Shape*> arrays;
    if (o->shape().IsTuple()) {
      for (const Shape& s : o->shape().tuple_shapes()) arrays.push_back(&s);
    } else {
      arrays.push_back(&o->shape());
    }
    for (const Shape* s : arrays) {
      if (!s->IsArray()) return Refuse(instr, "an output is not an array");
      if (!Supported(s->element_type())) {
        return Refuse(instr, StrCat("element type ", PrimitiveTypeName(s->element_type())));
      }
      if (first) {
        dims = s->dimensions();
        first = false;
      } else if (s->dimensions() != dims) {
        return Refuse(instr, "outputs of different dimensions");
      }
      out_types.push_back(s->element_type());
    }
  }
  // Buffers: operands first.
  std::vector<const Instruction*> leaves;
  if (instr.opcode() == Opcode::kFusion) {
    const Computation& fused = *instr.called_computations()[0];
    for (const Instruction* p : fused.instructions()) {
      if (p->opcode() != Opcode::kParameter) continue;
      if (p->parameter_number() < 0 || p->parameter_number() >= instr.operand_count()) {
        return Refuse(instr, "fused parameter number out of range");
      }
      leaf_buffer_[p] = static_cast<int>(p->parameter_number());
    }
    // Array constants read from buffers, after the operands.
    for (const Instruction* c : fused.instructions()) {
      if (c->opcode() == Opcode::kConstant && c->shape().IsArray() &&
          (c->shape().ElementCount() != 1 || (c->literal() != nullptr && c->literal()->elided()))) {
        leaf_buffer_[c] = instr.operand_count() + static_cast<int>(constants_.size());
        constants_.push_back(c);
      }
    }
  } else {
    for (int k = 0; k < instr.operand_count(); ++k) {
      const Instruction* o = instr.operand(k);
      if (leaf_buffer_.count(o) == 0) leaf_buffer_[o] = k;
    }
  }
  for (const auto& [leaf, buffer] : leaf_buffer_) {
    if (!leaf->shape().IsArray()) return Refuse(instr, "a tuple-shaped operand");
  }
  const int num_inputs = instr.operand_count() + static_cast<int>(constants_.size());
  const int num_buffers = num_inputs + static_cast<int>(out_types.size());

  // define void @name(ptr %buffers, i64 %begin, i64 %end): unpacks the buffers and calls the
  // body, whose pointer parameters are noalias (outputs never alias inputs).
  llvm::Type* ptr = b_.getPtrTy();
  std::vector<llvm::Type*> body_params(num_buffers, ptr);
  body_params.push_back(I64());
  body_params.push_back(I64());
  llvm::Function* body = llvm::Function::Create(
      llvm::FunctionType::get(b_.getVoidTy(), body_params, false),
      llvm::GlobalValue::InternalLinkage, name + ".body", module_);
  for (int k = 0; k < num_buffers; ++k) {
    body->addParamAttr(k, llvm::Attribute::NoAlias);
    body->addParamAttr(k, llvm::Attribute::NoCapture);
  }
  body->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Function* entry = llvm::Function::Create(
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, I64(), I64()}, false),
      llvm::GlobalValue::ExternalLinkage, name, module_);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  auto cleanup = [&] {
    entry->eraseFromParent();
    body->eraseFromParent();
  };
  {
    llvm::BasicBlock* bb = llvm::BasicBlock::Create(ctx_, "entry", entry);
    b_.SetInsertPoint(bb);
    std::vector<Value*> args;
    for (int k = 0; k < num_buffers; ++k) {
      args.push_back(b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), k)));
    }
    args.push_back(entry->getArg(1));
    args.push_back(entry->getArg(2));
    b_.CreateCall(body, args);
    b_.CreateRetVoid();
  }
  fn_ = body;
  llvm::BasicBlock* bb = llvm::BasicBlock::Create(ctx_, "entry", body);
  b_.SetInsertPoint(bb);
  buffer_ptrs_.clear();
  for (int k = 0; k < num_buffers; ++k) buffer_ptrs_.push_back(body->getArg(k));
  Value* begin = body->getArg(num_buffers);
  Value* end = body->getArg(num_buffers + 1);
  memo_.clear();
  memo_.emplace_back();
  multi_memo_.clear();
  multi_memo_.emplace_back();
  const Instruction* tiled = nullptr;
  if (form_.cooperative_reductions && elements_per_call_ == 1 && update == nullptr) {
    coop_group_ = CooperativeGroup(instr, dims);
  }
  if (form_.tiled_transposes && elements_per_call_ > 0 && update == nullptr && coop_group_ == 0) {
    tiled = TiledTranspose(outputs);
    if (tiled != nullptr) coop_group_ = form_.block_size;
  }
  if (coop_group_ > 0) {
    // The thread's lane in its group (the block size is a multiple of the group's).
    llvm::Function* tid =
        llvm::Intrinsic::getDeclaration(module_, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    lane_ = b_.CreateAnd(b_.CreateZExt(b_.CreateCall(tid), I64()), C64(coop_group_ - 1), "lane");
  }

  // Reductions to a scalar are computed once, before any loop: read inside a loop (through a
  // broadcast, or each operand of a concatenate that selects between them) they would
  // otherwise run again for every element.
  kernel_computation_ =
      instr.opcode() == Opcode::kFusion ? instr.called_computations()[0] : nullptr;
  if (kernel_computation_ != nullptr) {
    for (const Instruction* h : kernel_computation_->instructions()) {
      if (h->opcode() != Opcode::kReduce || !h->shape().IsArray() || h->shape().rank() != 0 ||
          h->operand_count() != 2 || h->operand(0)->shape().rank() == 0) {
        continue;
      }
      if (absl::StatusOr<Value*> v = Elem(*h, Scalar()); !v.ok()) {
        cleanup();
        return v.status();
      }
    }
  }

  const std::vector<int64_t> out_dims = dims;
  if (update != nullptr) dims = update->operand(1)->shape().dimensions();
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (tiled != nullptr) {
    count = 1;
    for (int64_t d : TileSpace(*tiled)) count *= d;
  }
  absl::Status st;
  const Instruction* column_reduce =
      elements_per_call_ > 0 || update != nullptr ? nullptr : ColumnReduction(outputs);
  // The values of one output element, in output-buffer order, and their stores.
  auto compute = [&](const Index& idx) -> absl::StatusOr<std::vector<Value*>> {
    std::vector<Value*> values;
    for (const Instruction* o : outputs) {
      if (o->shape().IsTuple()) {  // variadic reduce root
        absl::StatusOr<std::vector<Value*>> r = ReduceElems(*o, idx);
        if (!r.ok()) return r.status();
        values.insert(values.end(), r->begin(), r->end());
        continue;
      }
      absl::StatusOr<Value*> v = Elem(*o, idx);
      if (!v.ok()) return v.status();
      values.push_back(*v);
    }
    return values;
  };
  auto store = [&](const Index& idx, const std::vector<Value*>& values) {
    for (size_t out = 0; out < values.size(); ++out) {
      Store(out_types[out], values[out], buffer_ptrs_[num_inputs + out], idx.linear);
    }
  };
  auto each = [&](const Index& idx) -> absl::Status {
    absl::StatusOr<std::vector<Value*>> values = compute(idx);
    if (!values.ok()) return values.status();
    store(idx, *values);
    return absl::OkStatus();
  };
  if (update != nullptr) {
    // Each update element at its place: the clamped starts plus its index, row-major in the
    // output. The starts are computed once, before the loop.
    absl::StatusOr<std::vector<Value*>> starts = ClampedStarts(*update, 2, dims);
    st = starts.status();
    if (st.ok()) {
      st = OutputRange(begin, end, dims, [&](const Index& idx) -> absl::Status {
        absl::StatusOr<Value*> v = Elem(*update->operand(1), idx);
        if (!v.ok()) return v.status();
        Value* linear = C64(0);
        for (size_t d = 0; d < out_dims.size(); ++d) {
          linear = b_.CreateAdd(b_.CreateMul(linear, C64(out_dims[d])),
                                b_.CreateAdd((*starts)[d], idx.multi[d]));
        }
        Store(out_types[0], *v, buffer_ptrs_[num_inputs], linear);
        return absl::OkStatus();
      });
    }
  } else if (column_reduce != nullptr) {
    st = EmitColumnReduction(*column_reduce, out_types[0], buffer_ptrs_[num_inputs], begin, end);
  } else if (tiled != nullptr) {
    st = EmitTiledTranspose(*tiled, out_types[0], buffer_ptrs_[num_inputs], begin);
  } else if (elements_per_call_ == 1 && coop_group_ > 0) {
    // Every lane of the group computes the element (the reduction together); lane 0 stores it.
    Index idx = MakeFromLinear(dims, begin);
    absl::StatusOr<std::vector<Value*>> values = compute(idx);
    st = values.status();
    if (st.ok()) {
      llvm::BasicBlock* lead = llvm::BasicBlock::Create(ctx_, "coop.store", fn_);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "coop.done", fn_);
      b_.CreateCondBr(b_.CreateICmpEQ(lane_, C64(0)), lead, done);
      b_.SetInsertPoint(lead);
      store(idx, *values);
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    }
  } else if (elements_per_call_ == 1) {
    st = each(MakeFromLinear(dims, begin));
  } else if (elements_per_call_ > 1) {
    // The call's elements are begin + k * element_stride_ below `end` (k < elements_per_call_):
    // neighbouring threads take neighbouring elements for each k, so every load is coalesced.
    // A full call computes all its elements first and stores them after (its loads are in
    // flight together); a short one (the end of the array) takes what it has one by one.
    const int v = elements_per_call_;
    auto element = [&](int k) {
      return b_.CreateAdd(begin, C64(k * element_stride_), "", /*HasNUW=*/true, /*HasNSW=*/true);
    };
    llvm::BasicBlock* full = llvm::BasicBlock::Create(ctx_, "full", fn_);
    llvm::BasicBlock* partial = llvm::BasicBlock::Create(ctx_, "partial", fn_);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "done", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(element(v - 1), end), full, partial);
    b_.SetInsertPoint(full);
    memo_.emplace_back();
    multi_memo_.emplace_back();
    std::vector<Index> indices;
    std::vector<std::vector<Value*>> values;
    for (int k = 0; k < v && st.ok(); ++k) {
      indices.push_back(MakeFromLinear(dims, element(k)));
      absl::StatusOr<std::vector<Value*>> r = compute(indices.back());
      if (!r.ok()) {
        st = r.status();
      } else {
        values.push_back(*std::move(r));
      }
    }
    memo_.pop_back();
    multi_memo_.pop_back();
    if (st.ok()) {
      for (int k = 0; k < v; ++k) store(indices[k], values[k]);
      b_.CreateBr(done);
      b_.SetInsertPoint(partial);
      for (int k = 0; k < v && st.ok(); ++k) {
        llvm::BasicBlock* take = llvm::BasicBlock::Create(ctx_, "take", fn_);
        llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx_, "next", fn_);
        Value* i = element(k);
        b_.CreateCondBr(b_.CreateICmpSLT(i, end), take, next);
        b_.SetInsertPoint(take);
        memo_.emplace_back();
        multi_memo_.emplace_back();
        st = each(MakeFromLinear(dims, i));
        memo_.pop_back();
        multi_memo_.pop_back();
        b_.CreateBr(next);
        b_.SetInsertPoint(next);
      }
      if (st.ok()) {
        b_.CreateBr(done);
        b_.SetInsertPoint(done);
      }
    }
  } else {
    st = OutputRange(begin, end, dims, each);
  }
  if (!st.ok()) {
    cleanup();
    return st;
  }
  b_.CreateRetVoid();

  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyFunction(*body, &os)) {
    cleanup();
    return absl::InternalError(StrCat("the emitter made invalid IR for %", instr.name(), ": ", err));
  }
  info.constants = constants_;
  info.num_outputs = static_cast<int>(out_types.size());
  info.iteration_count = count;
  info.cost_per_element = std::max<int64_t>(1, cost_);
  info.threads_per_element = coop_group_ > 0 ? coop_group_ : 1;
  info.tiled_transpose = tiled != nullptr;
  return info;
}

// Scalar computations (sort comparators, scatter combiners) as `void name(ptr args)`: every
// parameter is loaded from its pointer before any result is stored, so a result may be written
// over a parameter's storage.
absl::Status Emitter::EmitScalarFunction(const Computation& c, const std::string& name) {
  auto refuse = [&](const std::string& why) {
    return absl::UnimplementedError(StrCat("computation ", c.name(), ": ", why));
  };
  const int num_params = c.parameter_count();
  std::vector<PrimitiveType> param_types(num_params, PrimitiveType::kInvalid);
  for (const Instruction* p : c.instructions()) {
    if (p->opcode() != Opcode::kParameter) continue;
    const int64_t k = p->parameter_number();
    if (k < 0 || k >= num_params) return refuse("parameter number out of range");
    if (!p->shape().IsArray() || p->shape().rank() != 0) return refuse("a non-scalar parameter");
    if (!Supported(p->shape().element_type())) {
      return refuse(StrCat("parameter type ", PrimitiveTypeName(p->shape().element_type())));
    }
    param_types[k] = p->shape().element_type();
  }
  for (PrimitiveType t : param_types) {
    if (t == PrimitiveType::kInvalid) return refuse("a missing parameter");
  }
  const Instruction* root = c.root();
  if (root == nullptr) return refuse("no root");
  std::vector<const Shape*> results;
  if (root->shape().IsTuple()) {
    if (root->opcode() != Opcode::kTuple) return refuse("a tuple-shaped root that is not a tuple");
    for (const Shape& s : root->shape().tuple_shapes()) results.push_back(&s);
  } else {
    results.push_back(&root->shape());
  }
  std::vector<PrimitiveType> result_types;
  for (const Shape* s : results) {
    if (!s->IsArray() || s->rank() != 0) return refuse("a non-scalar result");
    if (!Supported(s->element_type())) {
      return refuse(StrCat("result type ", PrimitiveTypeName(s->element_type())));
    }
    result_types.push_back(s->element_type());
  }
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Function* fn = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), {ptr}, false),
                                              llvm::GlobalValue::ExternalLinkage, name, module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn_ = fn;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  memo_.clear();
  memo_.emplace_back();
  multi_memo_.clear();
  multi_memo_.emplace_back();
  auto arg_ptr = [&](int k) {
    return b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, fn->getArg(0), k));
  };
  std::vector<Value*> args;
  for (int k = 0; k < num_params; ++k) {
    llvm::Type* st = StorageType(param_types[k]);
    args.push_back(FromStorage(param_types[k], b_.CreateLoad(st, arg_ptr(k))));
  }
  absl::StatusOr<std::vector<Value*>> values = CallScalar(c, args);
  if (values.ok() && values->size() != result_types.size()) {
    values = refuse("the root's values differ from its shape");
  }
  if (!values.ok()) {
    fn->eraseFromParent();
    return values.status();
  }
  for (size_t r = 0; r < result_types.size(); ++r) {
    Store(result_types[r], (*values)[r], arg_ptr(num_params + static_cast<int>(r)), C64(0));
  }
  b_.CreateRetVoid();
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyFunction(*fn, &os)) {
    fn->eraseFromParent();
    return absl::InternalError(StrCat("the emitter made invalid IR for computation ", c.name(),
                                      ": ", os.str()));
  }
  return absl::OkStatus();
}

}  // namespace

bool RowMajorLayout(const Shape& s) {
  if (!s.has_layout()) return true;
  const std::vector<int64_t>& m2m = s.layout().minor_to_major;
  if (m2m.empty()) return true;
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return s.layout().tiles.empty();
}

absl::Status EmitKernels(void* llvm_module, const std::vector<const Instruction*>& instructions,
                         int first_index, std::vector<EmittedKernel>* emitted,
                         std::vector<RefusedInstruction>* refused, const KernelForm& form) {
  llvm::Module* module = static_cast<llvm::Module*>(llvm_module);
  for (size_t k = 0; k < instructions.size(); ++k) {
    const Instruction& instr = *instructions[k];
    std::string name = StrCat("hlowb_k", first_index + static_cast<int>(k), "_");
    for (char c : instr.name()) {
      name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    }
    Emitter e(module, form);
    absl::StatusOr<KernelInfo> info = e.EmitKernel(instr, name);
    if (!info.ok()) {
      if (info.status().code() != absl::StatusCode::kUnimplemented) return info.status();
      refused->push_back({&instr, std::string(info.status().message())});
      continue;
    }
    emitted->push_back({*std::move(info), first_index + static_cast<int>(k)});
    // CPU kernels of in-place updates get their in-place form too, right after.
    if (form.elements_per_call == 0 && InPlaceUpdatedOperand(instr) >= 0) {
      Emitter in_place(module, KernelForm{});
      absl::StatusOr<KernelInfo> alt = in_place.EmitKernel(instr, name + "_in_place", true);
      if (alt.ok()) {
        emitted->push_back({*std::move(alt), first_index + static_cast<int>(k)});
      } else if (alt.status().code() != absl::StatusCode::kUnimplemented) {
        return alt.status();
      }
    }
  }
  return absl::OkStatus();
}

absl::Status EmitScalarFunctions(void* llvm_module,
                                 const std::vector<const Computation*>& computations,
                                 const std::string& name_prefix, std::vector<std::string>* names,
                                 std::vector<std::string>* refused) {
  llvm::Module* module = static_cast<llvm::Module*>(llvm_module);
  names->assign(computations.size(), std::string());
  refused->assign(computations.size(), std::string());
  for (size_t k = 0; k < computations.size(); ++k) {
    const std::string name = StrCat(name_prefix, k);
    Emitter e(module, KernelForm{});
    absl::Status st = e.EmitScalarFunction(*computations[k], name);
    // A computation the emitter refuses, or one it would emit wrongly (invalid IR), is left to
    // the interpreter: the sort or scatter still runs, just not compiled.
    if (st.ok()) {
      (*names)[k] = name;
    } else {
      (*refused)[k] = std::string(st.message());
    }
  }
  return absl::OkStatus();
}

}  // namespace hlowb::codegen
