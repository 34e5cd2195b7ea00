//===- Recurrent.h - What the lstm and gru kernels share --------*- C++ -*-===//
#pragma once

#include "cpu/KernelRegistry.h"
#include "cpu/StepCache.h"

#include <cstdint>
#include <string>

namespace ingot::cpu {

/// Sizes of an lstm or gru step: x is [seq, batch, input].
struct RecurrentStep {
  int64_t seq, batch, input, hidden, dirs, select;
  bool reverse; // direction "reverse" (a bidirectional step's second too)
};

/// Reads and checks an lstm (4 gates) or gru (3 gates) step: f32
/// operands, hidden_size, direction and select; w [dirs, gates·H, input],
/// r [dirs, gates·H, H], b [dirs, 2·gates·H], the states [dirs, batch, H];
/// then sets output 0 to Y [seq, dirs, batch, H] (select 0) or a state.
inline Status readRecurrentStep(KernelContext &ctx, int64_t gates,
                                RecurrentStep *r) {
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i))
      if (Status s = ctx.expectInputDType(i, {DType::F32}); !s)
        return s;
  std::string direction;
  if (Status s = ctx.attrInt("hidden_size", &r->hidden); !s)
    return s;
  if (Status s = ctx.attrStr("direction", &direction); !s)
    return s;
  if (Status s = ctx.attrInt("select", &r->select, 0); !s)
    return s;
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return ctx.error("direction must be forward, reverse or bidirectional");
  const KernelInput &x = ctx.input(0);
  if (x.shape.size() != 3 || r->hidden < 1)
    return ctx.error("expects x [seq, batch, input] and hidden_size >= 1");
  r->seq = x.shape[0], r->batch = x.shape[1], r->input = x.shape[2];
  r->dirs = direction == "bidirectional" ? 2 : 1;
  r->reverse = direction == "reverse";
  const int64_t H = r->hidden, G = gates * H;
  auto expect = [&](size_t i, shape::Shape want) {
    return !ctx.hasInput(i) || ctx.input(i).shape == want;
  };
  bool ok = expect(1, {r->dirs, G, r->input}) && expect(2, {r->dirs, G, H}) &&
            expect(3, {r->dirs, 2 * G});
  for (size_t i = 4; i < ctx.numInputs(); ++i)
    ok &= expect(i, {r->dirs, r->batch, H});
  if (!ok)
    return ctx.error("w, r, b or an initial state has the wrong shape");
  // `select` = the number of outputs (gates 4: Y, Y_h, Y_c; 3: Y, Y_h):
  // all of them stacked along dim 0, Y's rows then each state's.
  const int64_t all = gates == 4 ? 3 : 2;
  if (r->select < 0 || r->select > all)
    return ctx.error("select must be 0 to " + std::to_string(all));
  if (r->select == all)
    return ctx.setOutputShape(
        0, shape::Shape{r->seq + all - 1, r->dirs, r->batch, H});
  return ctx.setOutputShape(0, r->select == 0
                                   ? shape::Shape{r->seq, r->dirs, r->batch, H}
                                   : shape::Shape{r->dirs, r->batch, H});
}

/// The step-cache key of a step's W and R packed for `isa` (R only when
/// `packR`: more rows than sgemm reads in place).
inline uint64_t recurrentPackKey(const KernelContext &ctx,
                                 const RecurrentStep &r, bool packR,
                                 uint64_t isa) {
  return stepCacheKey(ctx.input(1).data,
                      {uint64_t(reinterpret_cast<uintptr_t>(ctx.input(2).data)),
                       uint64_t(r.input), uint64_t(r.hidden), uint64_t(r.dirs),
                       uint64_t(packR), isa});
}

} // namespace ingot::cpu
