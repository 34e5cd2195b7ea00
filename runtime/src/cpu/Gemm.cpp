//===- Gemm.cpp - Blocking, packing and threading of the f32 GEMM ---------===//
//
// Loop nest (BLIS order): jc over NC-wide column blocks, pc over KC-deep
// slices (B slice packed once, shared by all threads), then parallel tasks
// of (MC row block, range of NR panels); each task packs its A block and
// runs the micro-kernel over its panels with the B micro-panel held in L1
// while MR-row panels of A stream from L2. Small M (decode) skips packing:
// it is bandwidth-bound on B, which is read exactly once.
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"

#include "ingot/ThreadPool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

namespace ingot::cpu {
namespace {

constexpr int64_t kKc = 256;    // B micro-panel KC x NR stays in L1
constexpr int64_t kMcMax = 144; // A block MC x KC (~144 KiB) stays in L2
constexpr int64_t kNc = 2048;   // packed B slice KC x NC (~2 MiB) in L2/L3

/// A per-thread, 64-B aligned scratch buffer that only grows.
class ScratchBuffer {
public:
  float *get(size_t floats) {
    if (floats > cap_) {
      std::free(data_);
      size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
      data_ = static_cast<float *>(std::aligned_alloc(64, bytes));
      cap_ = data_ ? floats : 0;
    }
    return data_;
  }
  ~ScratchBuffer() { std::free(data_); }

private:
  float *data_ = nullptr;
  size_t cap_ = 0;
};

thread_local ScratchBuffer tlsPackA;
thread_local ScratchBuffer tlsPackB;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Packs columns [j0, j0 + nr) x rows [p0, p0 + kc) of op(B) as kc rows of
/// NR floats, zero-padding columns past nr.
void packBPanel(const GemmArgs &g, int64_t p0, int64_t kc, int64_t j0,
                int64_t nr, int NR, float *dst) {
  if (!g.transB) {
    for (int64_t kk = 0; kk < kc; ++kk) {
      const float *src = g.b + (p0 + kk) * g.ldb + j0;
      float *d = dst + kk * NR;
      std::memcpy(d, src, nr * sizeof(float));
      std::fill(d + nr, d + NR, 0.0f);
    }
    return;
  }
  for (int64_t jj = 0; jj < NR; ++jj) {
    if (jj >= nr) {
      for (int64_t kk = 0; kk < kc; ++kk)
        dst[kk * NR + jj] = 0.0f;
      continue;
    }
    const float *src = g.b + (j0 + jj) * g.ldb + p0;
    for (int64_t kk = 0; kk < kc; ++kk)
      dst[kk * NR + jj] = src[kk];
  }
}

void scaleC(const GemmArgs &g) {
  for (int64_t i = 0; i < g.m; ++i) {
    float *row = g.c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j)
      row[j] = g.beta == 0.0f ? 0.0f : g.beta * row[j];
  }
}

void parallel(ThreadPool *pool, int64_t n, int64_t grain,
              const std::function<void(int64_t, int64_t)> &fn) {
  if (pool)
    pool->parallelFor(n, grain, fn);
  else if (n > 0)
    fn(0, n);
}

/// m <= kSmallM: no packing; threads split the columns of C.
void smallMGemm(const GemmArgs &g, ThreadPool *pool, const GemmKernelSet &ks) {
  if (!g.transB) {
    const int64_t aRow = g.transA ? 1 : g.lda, aCol = g.transA ? g.lda : 1;
    // Column chunks: wide enough that each row of B is read in long
    // contiguous runs, narrow enough to give every thread a couple.
    const int64_t threads = pool ? pool->size() : 1;
    const int64_t width = std::clamp<int64_t>(
        ceilDiv(ceilDiv(g.n, threads * 2), 64) * 64, 64, kSmallMWidth);
    const int64_t chunks = ceilDiv(g.n, width);
    const int64_t grain =
        std::max<int64_t>(1, 65536 / std::max<int64_t>(g.k * width, 1));
    parallel(pool, chunks, grain, [&](int64_t cb, int64_t ce) {
      for (int64_t ch = cb; ch < ce; ++ch) {
        const int64_t j0 = ch * width, j1 = std::min(g.n, j0 + width);
        ks.smallM(g.m, g.k, j1 - j0, g.a, aRow, aCol, g.b + j0, g.ldb, g.c + j0,
                  g.ldc, g.alpha, g.beta);
      }
    });
    return;
  }
  // B is n x k: C[r][j] is a dot product of two contiguous rows.
  std::unique_ptr<float[]> aRows;
  const float *a = g.a;
  int64_t lda = g.lda;
  if (g.transA) {
    aRows.reset(new float[g.m * g.k]);
    for (int64_t r = 0; r < g.m; ++r)
      for (int64_t kk = 0; kk < g.k; ++kk)
        aRows[r * g.k + kk] = g.a[kk * g.lda + r];
    a = aRows.get();
    lda = g.k;
  }
  int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(g.k, 1));
  parallel(pool, g.n, grain, [&](int64_t jb, int64_t je) {
    for (int64_t j = jb; j < je; ++j)
      for (int64_t r = 0; r < g.m; ++r) {
        float v = g.alpha * ks.dot(g.k, a + r * lda, g.b + j * g.ldb);
        float &c = g.c[r * g.ldc + j];
        c = g.beta == 0.0f ? v : v + g.beta * c;
      }
  });
}

/// One pc slice of a blocked GEMM: C's row blocks x chunks of NR panels.
struct SliceTasks {
  const GemmArgs &g;
  const GemmKernelSet &ks;
  int64_t mc, nChunks, panels, jc, pc, kc;
  float beta;
  /// B's panel p of this slice: kc rows of NR floats.
  std::function<const float *(int64_t)> panelAt;

  void run(int64_t tb, int64_t te) const {
    const int MR = ks.mr, NR = ks.nr;
    // A row-major and a kernel that reads it in place: no packing at all.
    const bool rowA = !g.transA && ks.microRowA;
    float *packedA = rowA ? nullptr : tlsPackA.get(size_t(mc * kc));
    int64_t packedIc = -1;
    for (int64_t t = tb; t < te; ++t) {
      const int64_t ib = t / nChunks, chunk = t % nChunks;
      const int64_t ic = ib * mc, mcCur = std::min(mc, g.m - ic);
      if (mcCur <= 0)
        continue;
      if (!rowA && packedIc != ic) {
        for (int64_t ir = 0; ir < mcCur; ir += MR)
          packAPanel(g, ic + ir, std::min<int64_t>(MR, mcCur - ir), pc, kc, MR,
                     packedA + ir * kc);
        packedIc = ic;
      }
      const int64_t p0 = panels * chunk / nChunks;
      const int64_t p1 = panels * (chunk + 1) / nChunks;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t j = jc + p * NR;
        const int64_t nr = std::min<int64_t>(NR, g.n - j);
        const float *bp = panelAt(p);
        for (int64_t ir = 0; ir < mcCur; ir += MR) {
          const int64_t mr = std::min<int64_t>(MR, mcCur - ir);
          float *c = g.c + (ic + ir) * g.ldc + j;
          if (rowA)
            ks.microRowA(kc, g.a + (ic + ir) * g.lda + pc, g.lda, bp, c, g.ldc,
                         mr, nr, g.alpha, beta);
          else
            ks.micro(kc, packedA + ir * kc, bp, c, g.ldc, mr, nr, g.alpha,
                     beta);
        }
      }
    }
  }
};

/// BLIS-ordered blocks; B packed here per KC x NC block unless `pre` holds
/// it packed whole.
void blockedGemm(const GemmArgs &g, ThreadPool *pool, const GemmKernelSet &ks,
                 const PackedB *pre) {
  const int NR = ks.nr;
  const int64_t threads = pool ? pool->size() : 1;
  const int64_t ncMax = std::min(kNc, ceilDiv(g.n, NR) * NR);
  // Fewer column panels than threads (a conv over 20 positions: one
  // panel): split the rows further, down to blocks of two tiles, so that
  // every thread gets some. Each value's sum runs in the same order.
  const int64_t panelsMax = ncMax / NR;
  const int64_t mBlocks =
      panelsMax < threads ? std::max(ceilDiv(g.m, kMcMax),
                                     std::min(ceilDiv(threads, panelsMax),
                                              ceilDiv(g.m, int64_t(2) * ks.mr)))
                          : ceilDiv(g.m, kMcMax);
  const int64_t mc = ceilDiv(ceilDiv(g.m, mBlocks), ks.mr) * ks.mr;
  const int64_t kcMax = std::min(kKc, g.k);
  float *packedB = pre ? nullptr : tlsPackB.get(size_t(kcMax * ncMax));
  for (int64_t jc = 0; jc < g.n; jc += kNc) {
    const int64_t nc = std::min(kNc, g.n - jc);
    const int64_t panels = ceilDiv(nc, NR);
    // Split the panels too when there are fewer row blocks than threads.
    const int64_t nChunks =
        threads > 1
            ? std::clamp<int64_t>(ceilDiv(threads * 3, mBlocks), 1, panels)
            : 1;
    for (int64_t pc = 0; pc < g.k; pc += kKc) {
      const int64_t kc = std::min(kKc, g.k - pc);
      if (!pre)
        parallel(pool, panels, 4, [&](int64_t pb, int64_t pe) {
          for (int64_t p = pb; p < pe; ++p)
            packBPanel(g, pc, kc, jc + p * NR,
                       std::min<int64_t>(NR, nc - p * NR), NR,
                       packedB + p * kc * NR);
        });
      auto panelAt = [&](int64_t p) {
        return pre ? pre->panel(jc / NR + p) + pc * NR : packedB + p * kc * NR;
      };
      const SliceTasks slice{
          g,      ks, mc, nChunks, panels, jc, pc, kc, pc == 0 ? g.beta : 1.0f,
          panelAt};
      parallel(pool, mBlocks * nChunks, 1,
               [&](int64_t tb, int64_t te) { slice.run(tb, te); });
    }
  }
}

} // namespace

bool gemmIsaSupported(GemmIsa isa) {
  switch (isa) {
  case GemmIsa::Generic:
    return true;
  case GemmIsa::Avx2:
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  case GemmIsa::Avx512:
    return __builtin_cpu_supports("avx512f");
  }
  return false;
}

GemmIsa bestGemmIsa() {
  static const GemmIsa best = [] {
    // INGOT_GEMM_ISA=generic|avx2 caps the choice, for A/B comparisons.
    const char *cap = std::getenv("INGOT_GEMM_ISA");
    std::string want = cap ? cap : "";
    if (want != "generic" && want != "avx2" &&
        gemmIsaSupported(GemmIsa::Avx512))
      return GemmIsa::Avx512;
    if (want != "generic" && gemmIsaSupported(GemmIsa::Avx2))
      return GemmIsa::Avx2;
    return GemmIsa::Generic;
  }();
  return best;
}

const char *gemmIsaName(GemmIsa isa) {
  switch (isa) {
  case GemmIsa::Generic:
    return "generic";
  case GemmIsa::Avx2:
    return "avx2+fma";
  case GemmIsa::Avx512:
    return "avx512f";
  }
  return "?";
}

void sgemm(const GemmArgs &g, ThreadPool *pool) {
  sgemm(g, pool, bestGemmIsa());
}

const GemmKernelSet &gemmKernels(GemmIsa isa) {
  return isa == GemmIsa::Avx512 ? avx512GemmKernels()
         : isa == GemmIsa::Avx2 ? avx2GemmKernels()
                                : genericGemmKernels();
}

void packAPanel(const GemmArgs &g, int64_t i0, int64_t mr, int64_t p0,
                int64_t kc, int MR, float *dst) {
  if (g.transA) {
    for (int64_t kk = 0; kk < kc; ++kk) {
      const float *src = g.a + (p0 + kk) * g.lda + i0;
      float *d = dst + kk * MR;
      std::memcpy(d, src, mr * sizeof(float));
      std::fill(d + mr, d + MR, 0.0f);
    }
    return;
  }
  for (int64_t r = 0; r < MR; ++r) {
    if (r >= mr) {
      for (int64_t kk = 0; kk < kc; ++kk)
        dst[kk * MR + r] = 0.0f;
      continue;
    }
    const float *src = g.a + (i0 + r) * g.lda + p0;
    for (int64_t kk = 0; kk < kc; ++kk)
      dst[kk * MR + r] = src[kk];
  }
}

namespace {

/// The cases every entry point shares; false when `g` still needs a GEMM.
bool trivialGemm(const GemmArgs &g) {
  if (g.m <= 0 || g.n <= 0)
    return true;
  if (g.k <= 0 || g.alpha == 0.0f) {
    scaleC(g);
    return true;
  }
  return false;
}

} // namespace

void sgemm(const GemmArgs &g, ThreadPool *pool, GemmIsa isa) {
  if (trivialGemm(g))
    return;
  const GemmKernelSet &ks = gemmKernels(isa);
  if (g.m <= kSmallM)
    smallMGemm(g, pool, ks);
  else
    blockedGemm(g, pool, ks, nullptr);
}

void sgemm(const GemmArgs &g, ThreadPool *pool, const PackedB &packedB) {
  if (trivialGemm(g))
    return;
  const GemmKernelSet &ks = gemmKernels(packedB.isa());
  if (g.m <= kSmallM || packedB.k() != g.k || packedB.n() != g.n ||
      packedB.nr() != ks.nr)
    return sgemm(g, pool, packedB.isa());
  blockedGemm(g, pool, ks, &packedB);
}

PackedB::PackedB(int64_t k, int64_t n, GemmIsa isa)
    : isa_(isa), k_(k), n_(n), nr_(gemmKernels(isa).nr) {
  const int64_t panels = ceilDiv(n_, nr_);
  // 16 spare floats to start the panels on a 64-byte boundary.
  size_ = size_t(panels * k_ * nr_ + 16);
  storage_.reset(new float[size_]);
  const uintptr_t at = reinterpret_cast<uintptr_t>(storage_.get());
  data_ = storage_.get() + ((64 - at % 64) % 64) / sizeof(float);
  zeroTail(n_);
}

void PackedB::zeroTail(int64_t n) {
  const int64_t used = n % nr_;
  if (used == 0)
    return;
  float *panel = data_ + (n / nr_) * k_ * nr_;
  for (int64_t r = 0; r < k_; ++r)
    std::fill(panel + r * nr_ + used, panel + (r + 1) * nr_, 0.0f);
}

void PackedB::setColumns(int64_t n) {
  n_ = n;
  zeroTail(n);
}

PackedB::PackedB(const GemmArgs &g, GemmIsa isa) : PackedB(g.k, g.n, isa) {
  const int64_t panels = ceilDiv(n_, nr_);
  for (int64_t p = 0; p < panels; ++p)
    packBPanel(g, 0, k_, p * nr_, std::min<int64_t>(nr_, n_ - p * nr_), nr_,
               data_ + p * k_ * nr_);
}

} // namespace ingot::cpu
