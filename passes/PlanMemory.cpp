//===- PlanMemory.cpp - Liveness-based arena placement --------------------===//
#include "passes/Passes.h"

#include "ingot/KernelTable.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

namespace ingot {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot;

namespace {

/// Kernels whose output may share memory with an input (the kernel table).
bool isInPlaceKernel(StringRef kernel) {
  const KernelSpec *spec =
      findKernelSpec(std::string_view(kernel.data(), kernel.size()));
  return spec && spec->inPlace;
}

unsigned elementBytes(Value v) {
  unsigned bits = cast<MemRefType>(v.getType()).getElementTypeBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

/// Buffers that share one arena slice (an in-place chain) and its live range
/// in step indices, inclusive.
struct Group {
  SmallVector<plan::AllocOp> allocs;
  SmallVector<uint64_t> within; // each alloc's byte offset in the slice
  uint64_t bytes = 0;
  int64_t start = 0, end = 0;
  uint64_t offset = 0;
  bool concat = false; // a concat's output with inputs inside: no reuse
};

/// A static memref's bytes, or 0 when a dim is dynamic.
uint64_t staticBytes(Value v) {
  auto type = cast<MemRefType>(v.getType());
  return type.hasStaticShape()
             ? uint64_t(type.getNumElements()) * elementBytes(v)
             : 0;
}

/// The byte offsets at which each input of a concat step lies in its
/// output, when every input is one contiguous run of it: static shapes and
/// only 1s before the axis. Empty otherwise.
SmallVector<uint64_t> concatSlabs(plan::KernelOp step) {
  Value out = step.getOuts().front();
  auto type = cast<MemRefType>(out.getType());
  auto axisAttr = step.getArgs().getAs<IntegerAttr>("axis");
  if (!axisAttr || !type.hasStaticShape())
    return {};
  int64_t axis = axisAttr.getInt(), rank = type.getRank();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank ||
      llvm::any_of(
          type.getShape().take_front(axis), [](int64_t d) { return d != 1; }))
    return {};
  SmallVector<uint64_t> slabs;
  uint64_t at = 0;
  for (Value in : step.getIns()) {
    if (!cast<MemRefType>(in.getType()).hasStaticShape())
      return {};
    slabs.push_back(at);
    at += staticBytes(in);
  }
  return at == staticBytes(out) ? slabs : SmallVector<uint64_t>{};
}

struct PlanMemoryPass : public ingot::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  uint64_t align(uint64_t n) const {
    uint64_t a = static_cast<uint64_t>(alignment);
    return (n + a - 1) / a * a;
  }

  /// Moves into the concat output's group every input that can be written
  /// straight into its slab: an arena buffer of its own (no in-place
  /// chain, not in another concat), read once by this step, not returned,
  /// read no later than the output (which then covers it), at an aligned
  /// offset. Its producer then writes there and the concat kernel skips it
  /// (YOLOv8n copied 3 MB a run into its C2f concats).
  template <typename LastUse>
  void placeConcatInputs(plan::KernelOp step, std::vector<Group> &groups,
                         llvm::DenseMap<Value, size_t> &groupOf,
                         int64_t endOfPlan, LastUse lastUse) {
    if (step.getOuts().size() != 1 || !groupOf.contains(step.getOuts()[0]))
      return;
    Group &og = groups[groupOf[step.getOuts()[0]]];
    const SmallVector<uint64_t> slabs = concatSlabs(step);
    if (og.concat || og.allocs.size() != 1 || slabs.empty())
      return;
    for (auto [in, within] : llvm::zip(step.getIns(), slabs)) {
      auto it = groupOf.find(in);
      if (it == groupOf.end() || within % align(1) ||
          llvm::count(step.getIns(), in) != 1 || lastUse(in) == endOfPlan ||
          lastUse(in) > lastUse(step.getOuts()[0]))
        continue;
      Group &ig = groups[it->second];
      if (ig.concat || ig.allocs.size() != 1)
        continue;
      og.allocs.push_back(ig.allocs.front());
      og.within.push_back(within);
      groupOf[in] = groupOf[step.getOuts()[0]];
      ig.allocs.clear();
      ig.within.clear();
      og.concat = true;
    }
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // The artifact format and the kernels rely on 64-byte alignment.
    if (alignment < 64 || (alignment & (alignment - 1))) {
      func.emitError("alignment must be a power of two >= 64, got ")
          << alignment;
      return signalPassFailure();
    }
    SmallVector<plan::KernelOp> steps(func.getOps<plan::KernelOp>());
    int64_t endOfPlan = static_cast<int64_t>(steps.size());

    // Every alloc starts as its own group, live from its producer to its
    // last reader (to the end of the plan if the function returns it).
    std::vector<Group> groups;
    llvm::DenseMap<Value, size_t> groupOf;
    for (plan::AllocOp alloc : func.getOps<plan::AllocOp>()) {
      if (alloc.isSizedAtRunTime())
        continue; // the runtime allocates it, outside the arena
      Group g;
      g.allocs.push_back(alloc);
      g.within.push_back(0);
      g.bytes = align(alloc.getMaxBytes());
      g.start = endOfPlan;
      g.end = -1;
      groupOf[alloc.getResult()] = groups.size();
      groups.push_back(g);
    }
    // Each value's last reader in one pass: the step index of the last
    // kernel reading it, the end of the plan if the function returns it,
    // -1 if nothing reads it.
    llvm::DenseMap<Value, int64_t> lastRead;
    for (auto [index, step] : llvm::enumerate(steps))
      for (Value in : step.getIns())
        lastRead[in] = static_cast<int64_t>(index);
    for (func::ReturnOp ret : func.getOps<func::ReturnOp>())
      for (Value v : ret.getOperands())
        lastRead[v] = endOfPlan;
    auto lastUse = [&](Value v) { return lastRead.lookup_or(v, -1); };
    if (concatInPlace)
      for (plan::KernelOp step : steps)
        if (step.getKernel() == "concat")
          placeConcatInputs(step, groups, groupOf, endOfPlan, lastUse);

    for (auto [index, step] : llvm::enumerate(steps)) {
      int64_t i = static_cast<int64_t>(index);
      // Groups holding this step's outputs: two outputs never share one.
      llvm::SmallDenseSet<size_t, 4> taken;
      for (Value out : step.getOuts())
        if (groupOf.contains(out))
          taken.insert(groupOf[out]);
      for (Value out : step.getOuts()) {
        if (!groupOf.contains(out))
          continue;
        Group &og = groups[groupOf[out]];
        og.start = std::min(og.start, i);
        og.end = std::max({og.end, i, lastUse(out)});
        if (!inPlace || og.concat || !isInPlaceKernel(step.getKernel()) ||
            llvm::is_contained(keepApart, step.getKernel().str()))
          continue;
        // Reuse an input's slice when that input dies here and is big enough.
        for (Value in : step.getIns()) {
          auto it = groupOf.find(in);
          if (it == groupOf.end() || it->second == groupOf[out] ||
              taken.contains(it->second))
            continue;
          Group &ig = groups[it->second];
          if (ig.concat || ig.end != i || ig.bytes < og.bytes ||
              elementBytes(in) != elementBytes(out))
            continue;
          size_t from = groupOf[out];
          ig.end = std::max(ig.end, og.end);
          for (auto [a, within] : llvm::zip(og.allocs, og.within)) {
            ig.allocs.push_back(a);
            ig.within.push_back(within);
            groupOf[a.getResult()] = it->second;
          }
          groups[from].allocs.clear();
          groups[from].within.clear();
          taken.insert(it->second);
          break;
        }
      }
    }
    llvm::erase_if(groups, [](const Group &g) { return g.allocs.empty(); });
    for (Group &g : groups)
      if (g.end < g.start)
        g.end = g.start; // written, never read

    uint64_t naive = 0, lowerBound = 0;
    for (plan::AllocOp a : func.getOps<plan::AllocOp>())
      naive += align(a.getMaxBytes());
    for (int64_t t = 0; t <= endOfPlan; ++t) {
      uint64_t live = 0;
      for (const Group &g : groups)
        if (g.start <= t && t <= g.end)
          live += g.bytes;
      lowerBound = std::max(lowerBound, live);
    }

    // Largest first; each takes the tightest gap among the slices of groups
    // whose live ranges overlap its own, or goes on top.
    std::vector<Group *> order;
    for (Group &g : groups)
      order.push_back(&g);
    std::stable_sort(order.begin(), order.end(), [](Group *a, Group *b) {
      return a->bytes != b->bytes ? a->bytes > b->bytes : a->start < b->start;
    });
    std::vector<Group *> placed;
    uint64_t arena = 0;
    for (Group *g : order) {
      std::vector<std::pair<uint64_t, uint64_t>> busy;
      for (Group *p : placed)
        if (p->start <= g->end && g->start <= p->end)
          busy.emplace_back(p->offset, p->offset + p->bytes);
      std::sort(busy.begin(), busy.end());
      uint64_t best = UINT64_MAX, bestGap = UINT64_MAX, cursor = 0;
      for (auto [lo, hi] : busy) {
        if (lo > cursor && lo - cursor >= g->bytes && lo - cursor < bestGap) {
          best = cursor;
          bestGap = lo - cursor;
        }
        cursor = std::max(cursor, hi);
      }
      g->offset = best != UINT64_MAX ? best : cursor;
      arena = std::max(arena, g->offset + g->bytes);
      placed.push_back(g);
    }

    Builder b(&getContext());
    for (const Group &g : groups)
      for (auto [alloc, within] : llvm::zip(g.allocs, g.within)) {
        plan::AllocOp a = alloc;
        a.setOffsetAttr(
            b.getI64IntegerAttr(static_cast<int64_t>(g.offset + within)));
      }
    func->setAttr("plan.arena_bytes", b.getI64IntegerAttr(arena));
    func->setAttr("plan.arena_lower_bound_bytes",
                  b.getI64IntegerAttr(lowerBound));
    func->setAttr("plan.arena_naive_bytes", b.getI64IntegerAttr(naive));
  }
};

} // namespace
