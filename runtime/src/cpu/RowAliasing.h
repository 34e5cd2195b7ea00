//===- RowAliasing.h - Inputs of row-wise kernels with 2 outputs -*- C++
//-*-===//
//
// add_rms_norm and add_layer_norm may have their outputs placed over their
// inputs by the memory planner (sum over a, y over b). Working row by row,
// an output that coincides with an input is safe; any other overlap is not.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/KernelUtil.h"

namespace ingot::cpu {

/// For row-wise kernels whose outputs may coincide with inputs (add_rms_norm,
/// add_layer_norm): an input overlapping an output without coinciding with
/// it (a row could then read what another row wrote) is copied to
/// `scratch`; otherwise the input's own data is returned.
inline const void *detachFromOutputs(KernelContext &ctx, const KernelInput &in,
                                     std::vector<uint8_t> &scratch) {
  for (size_t o = 0; o < ctx.numOutputs(); ++o) {
    const KernelOutput &out = ctx.output(o);
    const size_t outBytes = size_t(out.numElements()) * dtypeSize(out.dtype);
    if (out.data != in.data &&
        rangesOverlap(out.data, outBytes, in.data, in.bytes())) {
      const auto *p = static_cast<const uint8_t *>(in.data);
      scratch.assign(p, p + in.bytes());
      return scratch.data();
    }
  }
  return in.data;
}

} // namespace ingot::cpu
