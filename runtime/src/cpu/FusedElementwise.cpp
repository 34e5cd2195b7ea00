//===- FusedElementwise.cpp - Interpreter of fused elementwise programs ---===//
//
// `fused_elementwise` runs a small program (ingot/FusedProgram.h) over
// tiles of the output: each input's tile is gathered once with its
// broadcast strides (or read in place when it is dense, or kept as one
// value when it has one element), the instructions run tile-wise with
// plain loops the compiler vectorises, and the last one writes the output
// tile. Intermediates live in a few L1-sized slots reused by liveness, so
// a chain costs one read of its inputs and one write of its result.
//
// Every opcode is the exact per-element function of its unfused kernel
// (FusedOpcodes.cpp), so fused and unfused results agree bitwise; a
// trailing row reduction sums in reduce_mean's / reduce's order.
//
//===----------------------------------------------------------------------===//
#include "cpu/FusedGather.h"
#include "cpu/FusedOpcodes.h"
#include "cpu/KernelUtil.h"
#include "cpu/ReduceMinMax.h"
#include "cpu/StepCache.h"

#include "ingot/FusedProgram.h"

#include <cmath>
#include <limits>

namespace ingot::cpu {
namespace {

using fused::Opcode;

/// Output elements per tile: a few live slots of this size stay in L1.
constexpr int64_t kTile = 512;

/// Slot of each instruction's result (-1: a scalar, or the output for the
/// last one), reusing a slot once its value's last reader has run.
struct Schedule {
  std::vector<int> slot;
  std::vector<bool> scalar;
  int numSlots = 0;
};

Schedule schedule(const fused::Program &p, const std::vector<bool> &inScalar) {
  const int64_t n = p.numInputs, m = static_cast<int64_t>(p.code.size());
  Schedule s;
  s.slot.assign(m, -1);
  s.scalar.assign(m, false);
  std::vector<int64_t> lastUse(m, -1);
  auto reads = [&](const fused::Instruction &ins, int which) {
    fused::OperandKind k = fused::operandKind(ins.op);
    if (k == fused::OperandKind::Const)
      return int64_t(-1);
    if (which == 1 && k != fused::OperandKind::Binary)
      return int64_t(-1);
    return which == 0 ? ins.a : ins.b;
  };
  auto isScalar = [&](int64_t ref) {
    return ref < n ? bool(inScalar[ref]) : bool(s.scalar[ref - n]);
  };
  for (int64_t i = 0; i < m; ++i)
    for (int w = 0; w < 2; ++w)
      if (int64_t r = reads(p.code[i], w); r >= n)
        lastUse[r - n] = i;
  std::vector<int> free;
  for (int64_t i = 0; i < m; ++i) {
    const fused::Instruction &ins = p.code[i];
    int64_t ra = reads(ins, 0), rb = reads(ins, 1);
    s.scalar[i] = (ra < 0 || isScalar(ra)) && (rb < 0 || isScalar(rb));
    for (int64_t r : {ra, rb})
      if (r >= n && lastUse[r - n] == i && s.slot[r - n] >= 0 &&
          std::find(free.begin(), free.end(), s.slot[r - n]) == free.end())
        free.push_back(s.slot[r - n]);
    if (s.scalar[i] || i == m - 1)
      continue;
    if (free.empty()) {
      s.slot[i] = s.numSlots++;
    } else {
      s.slot[i] = free.back();
      free.pop_back();
    }
  }
  return s;
}

/// The program bound to one step's inputs: evaluates any range of the
/// broadcast result, a tile at a time.
struct Evaluator {
  const fused::Program &program;
  std::vector<InputWalk> walks;
  std::vector<int64_t> dims; // merged dims of the broadcast result
  std::vector<int> gatherSlot;
  int numGathered = 0;
  Schedule sched;

  /// Floats of scratch one thread needs.
  size_t scratchFloats() const {
    return size_t(numGathered + sched.numSlots) * kTile;
  }

  /// Writes result elements [begin, begin + len), len <= kTile, to dst.
  void tile(int64_t begin, int64_t len, float *dst, float *buf,
            std::vector<Val> &vals) const {
    const int64_t n = program.numInputs;
    const int64_t m = static_cast<int64_t>(program.code.size());
    for (int64_t i = 0; i < n; ++i) {
      const InputWalk &w = walks[i];
      if (w.kind == InputWalk::Scalar) {
        vals[i] = {nullptr, *w.data, true};
      } else if (w.kind == InputWalk::Dense) {
        vals[i] = {w.data + begin, 0, false};
      } else {
        float *g = buf + size_t(gatherSlot[i]) * kTile;
        gather(w, dims, begin, len, g);
        vals[i] = {g, 0, false};
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      const fused::Instruction &ins = program.code[i];
      Val &r = vals[n + i];
      if (ins.op == Opcode::Const) {
        r = {nullptr, program.constants[ins.a], true};
        continue;
      }
      Val a = vals[ins.a];
      Val b = fused::operandKind(ins.op) == fused::OperandKind::Binary
                  ? vals[ins.b]
                  : Val{};
      if (sched.scalar[i]) {
        // Every operand is one value: compute it once, on one lane.
        float one = 0;
        a.p = &a.s;
        b.p = &b.s;
        applyOpcode(ins, a, b, program.constants, &one, 1);
        r = {nullptr, one, true};
        continue;
      }
      float *out =
          i == m - 1 ? dst : buf + size_t(numGathered + sched.slot[i]) * kTile;
      applyOpcode(ins, a, b, program.constants, out, len);
      r = {out, 0, false};
    }
    if (vals[n + m - 1].scalar)
      std::fill(dst, dst + len, vals[n + m - 1].s);
  }
};

enum class RowReduction { Mean, Sum, Max };

/// One row reduced as reduce_mean (trailing axes) and reduce (sum, max)
/// reduce it, in the same order, so the bits agree. The kind is resolved
/// once per step: comparing its name per element cost more than the sum.
float reduceRow(RowReduction kind, const float *row, int64_t d) {
  if (kind == RowReduction::Mean)
    return d ? float(sumF32(row, d) / double(d))
             : std::numeric_limits<float>::quiet_NaN();
  if (kind == RowReduction::Sum) {
    double acc = 0.0;
    for (int64_t i = 0; i < d; ++i)
      acc += row[i];
    return float(acc);
  }
  // As the reduce kernel gives it (vectorised; a scalar loop with a
  // NaN check per element was most of Magika's conv head).
  return rowMinMaxF32(row, d, /*isMax=*/true);
}

/// What a step's attributes say: its program and trailing reduction.
struct FusedStep {
  Status status = Status::ok(); // a malformed program's error
  fused::Program program;
  std::string reduce; // "", "mean", "sum" or "max"
  int64_t keepDims = 1;
};

/// The key fused_elementwise keeps its FusedStep under in the step cache
/// (nothing else of the step is cached).
constexpr uint64_t kFusedStepKey = 0x66757365645f6577ull;

FusedStep readFusedStep(const KernelContext &ctx) {
  FusedStep f;
  std::string ops;
  std::vector<int64_t> args;
  std::vector<double> constants;
  if (Status s = ctx.attrStr("ops", &ops); !s)
    return f.status = s, f;
  if (Status s = ctx.attrInts("args", &args); !s)
    return f.status = s, f;
  if (Status s = ctx.attrFloats("constants", &constants, std::vector<double>{});
      !s)
    return f.status = s, f;
  if (Status s = ctx.attrStr("reduce", &f.reduce, std::string()); !s)
    return f.status = s, f;
  if (Status s = ctx.attrInt("keepdims", &f.keepDims, 1); !s)
    return f.status = s, f;
  if (!f.reduce.empty() && f.reduce != "mean" && f.reduce != "sum" &&
      f.reduce != "max") {
    f.status = ctx.error("unknown reduction \"" + f.reduce + "\"");
    return f;
  }
  std::string err;
  if (!fused::parseProgram(ops, args, constants,
                           static_cast<int64_t>(ctx.numInputs()), &f.program,
                           &err))
    f.status = ctx.error("malformed program: " + err);
  return f;
}

Status fusedElementwiseKernel(KernelContext &ctx) {
  if (ctx.numInputs() < 1)
    return ctx.error("expects at least 1 input, got 0");
  if (Status s = ctx.expectArity(ctx.numInputs(), ctx.numInputs(), 1); !s)
    return s;
  std::vector<bool> isI32(ctx.numInputs());
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (Status s = ctx.expectInputDType(i, {DType::F32, DType::I32}); !s)
      return s;
    // int32 lanes travel as raw 4-byte words until from_i32 converts them.
    isI32[i] = ctx.input(i).dtype == DType::I32;
  }
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  // The program and reduction are the step's attributes: parsed once and
  // kept in the step's cache (per run they cost more than a small region's
  // arithmetic: hey-jarvis runs six regions of a few hundred values).
  std::shared_ptr<const FusedStep> spec;
  if (ctx.stepCache())
    spec = ctx.stepCache()->get<FusedStep>(kFusedStepKey,
                                           [&] { return readFusedStep(ctx); });
  else
    spec = std::make_shared<const FusedStep>(readFusedStep(ctx));
  if (!spec->status)
    return spec->status;
  const fused::Program &program = spec->program;
  if (std::string why; !fused::checkInputKinds(program, isI32, &why))
    return ctx.error("malformed program: " + why);
  const std::string &reduce = spec->reduce;
  const int64_t keepDims = spec->keepDims;
  const int64_t numInputs = static_cast<int64_t>(ctx.numInputs());

  std::string err;
  std::vector<shape::Shape> inShapes;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    inShapes.push_back(ctx.input(i).shape);
  shape::Shape full; // the program's result, before any reduction
  if (!shape::broadcast(inShapes, &full, &err))
    return ctx.error(err);
  if (full.size() > size_t(kMaxRank))
    return ctx.error("rank " + std::to_string(full.size()) +
                     " is above the supported " + std::to_string(kMaxRank));
  if (!reduce.empty() && full.empty())
    return ctx.error("a reduction needs a result of rank >= 1");
  shape::Shape outShape = full;
  if (!reduce.empty()) {
    if (keepDims)
      outShape.back() = 1;
    else
      outShape.pop_back();
  }
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  KernelOutput &o = ctx.output(0);
  float *out = o.as<float>();
  const int64_t total = shape::numElements(full), outN = o.numElements();

  Evaluator ev{program, std::vector<InputWalk>(ctx.numInputs()),
               {},      std::vector<int>(ctx.numInputs(), -1),
               0,       {}};
  // Inputs: one value, read in place, or gathered per tile.
  std::vector<std::vector<uint8_t>> scratch(ctx.numInputs());
  std::vector<const shape::Shape *> shapes;
  std::vector<bool> inScalar(ctx.numInputs());
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const KernelInput &in = ctx.input(i);
    InputWalk &w = ev.walks[i];
    w.data = static_cast<const float *>(detachIfAliased(
        in, out, size_t(outN) * sizeof(float), outShape, o.dtype, scratch[i]));
    int64_t count = in.numElements();
    w.kind = count == 1       ? InputWalk::Scalar
             : count == total ? InputWalk::Dense
                              : InputWalk::Gather;
    inScalar[i] = w.kind == InputWalk::Scalar;
    if (w.kind == InputWalk::Gather)
      ev.gatherSlot[i] = ev.numGathered++;
    shapes.push_back(&in.shape);
  }
  planWalks(full, ev.walks, shapes, ev.dims);
  ev.sched = schedule(program, inScalar);
  const int64_t m = static_cast<int64_t>(program.code.size());
  // ~16K instruction-elements per chunk amortise the thread hand-off.
  const int64_t work = 16384 / std::max<int64_t>(1, m);

  if (reduce.empty()) {
    const int64_t tiles = (total + kTile - 1) / kTile;
    ctx.parallelFor(tiles, std::max<int64_t>(1, work / kTile),
                    [&](int64_t tb, int64_t te) {
                      std::vector<float> buf(ev.scratchFloats());
                      std::vector<Val> vals(numInputs + m);
                      for (int64_t t = tb; t < te; ++t) {
                        int64_t begin = t * kTile;
                        ev.tile(begin, std::min(kTile, total - begin),
                                out + begin, buf.data(), vals);
                      }
                    });
    return Status::ok();
  }
  // Rows of the last axis: evaluated into one L1/L2-resident row, reduced.
  const int64_t d = full.back();
  const RowReduction kind = reduce == "mean"  ? RowReduction::Mean
                            : reduce == "sum" ? RowReduction::Sum
                                              : RowReduction::Max;
  ctx.parallelFor(outN, std::max<int64_t>(1, work / std::max<int64_t>(1, d)),
                  [&](int64_t rb, int64_t re) {
                    std::vector<float> buf(ev.scratchFloats()), row(d);
                    std::vector<Val> vals(numInputs + m);
                    for (int64_t r = rb; r < re; ++r) {
                      for (int64_t c = 0; c < d; c += kTile)
                        ev.tile(r * d + c, std::min(kTile, d - c),
                                row.data() + c, buf.data(), vals);
                      out[r] = reduceRow(kind, row.data(), d);
                    }
                  });
  return Status::ok();
}

} // namespace

void addFusedElementwiseKernels(std::vector<KernelImpl> &table) {
  table.push_back({"fused_elementwise", fusedElementwiseKernel});
}

} // namespace ingot::cpu
