//===- BatchInvarianceUtil.h - Helpers of the batch-invariance tests -*- C++
//-*-===//
//
// Thread pools of 1, 2 and 3 threads (the invariance checks compare a row
// computed alone on one thread with the same row inside batches run on
// each) and a row picker.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "LlmTestUtil.h"

namespace ingot::test {

inline ThreadPool &invariancePool(int threads) {
  static ThreadPool p1(1), p2(2), p3(3);
  return threads == 1 ? p1 : threads == 2 ? p2 : p3;
}

/// Rows `ids` of `t` (any dtype, rows along dim 0).
inline Tensor pickRows(const Tensor &t, const std::vector<int64_t> &ids) {
  const size_t rowBytes = t.data.size() / size_t(t.shape[0]);
  Tensor r;
  r.dtype = t.dtype;
  r.shape = t.shape;
  r.shape[0] = int64_t(ids.size());
  r.data.resize(ids.size() * rowBytes);
  for (size_t i = 0; i < ids.size(); ++i)
    std::memcpy(r.data.data() + i * rowBytes, t.data.data() + ids[i] * rowBytes,
                rowBytes);
  return r;
}

} // namespace ingot::test
