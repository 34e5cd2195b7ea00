//===- ManifestRandom.h - Manifests with no field at its default -*- C++
//-*-===//
//
// For the codec's round trip (ManifestCodecTest.cpp): fresh random values,
// each different from its field's default, so a field the schema or the
// codec forgets fails the comparison.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "SampleArtifact.h"

#include <cstring>
#include <random>

namespace ingot::testing {

/// Fresh random values, each different from the field's default.
class Random {
public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  template <typename T> T num(T def) {
    for (;;)
      if (T v = T(rng_()); v != def)
        return v;
  }
  int64_t in(int64_t lo, int64_t hi) {
    return lo + int64_t(rng_() % uint64_t(hi - lo + 1));
  }
  double real(double def) { // any bit pattern: NaNs, infinities, -0.0
    for (;;) {
      uint64_t bits = rng_();
      double v;
      std::memcpy(&v, &bits, sizeof v);
      if (!sameBits(v, def))
        return v;
    }
  }
  std::string str(const std::string &def = "") {
    for (;;) {
      std::string s(size_t(in(1, 12)), '\0');
      for (char &c : s)
        c = char(rng_()); // NULs and invalid UTF-8 included
      if (s != def)
        return s;
    }
  }
  DType dtype() { return DType(in(2, 13)); } // F32 is the default
  template <typename T, typename Fn> std::vector<T> list(Fn make) {
    std::vector<T> v(size_t(in(1, 4)));
    for (T &x : v)
      x = make();
    return v;
  }

private:
  std::mt19937_64 rng_;
};

inline void randomLlm(Random &r, Manifest &m) {
  m.hasLlm = true;
  const LlmConfig dl;
  LlmConfig &l = m.llm;
  l.architecture = r.str(), l.numLayers = r.num<int64_t>(0);
  l.hiddenSize = r.num<int64_t>(0), l.numHeads = r.num<int64_t>(0);
  l.numKvHeads = r.num<int64_t>(0), l.headDim = r.num<int64_t>(0);
  l.vocabSize = r.num<int64_t>(0), l.maxPositions = r.num<int64_t>(0);
  l.blockSize = r.num<int64_t>(dl.blockSize);
  l.maxTokensPerStep = r.num<int64_t>(0), l.maxSeqs = r.num<int64_t>(0);
  l.maxBlocksPerSeq = r.num<int64_t>(0), l.kvDtype = r.dtype();
  l.kvLayout = r.str(dl.kvLayout);
  const TokenizerData dt;
  TokenizerData &t = m.tokenizer;
  t.model = r.str(dt.model);
  t.vocab = r.list<std::string>([&] { return r.str(); });
  t.merges = r.list<std::pair<int32_t, int32_t>>(
      [&] { return std::pair(r.num<int32_t>(0), r.num<int32_t>(0)); });
  t.scores = r.list<float>([&] { return float(r.real(0)); });
  t.byteFallback = true, t.unkId = r.num<int32_t>(dt.unkId);
  t.fuseUnk = true;
  t.addedTokens = r.list<TokenizerData::AddedToken>([&] {
    return TokenizerData::AddedToken{r.num<int32_t>(0), r.str(), true};
  });
  t.pretokenizer = r.str(dt.pretokenizer), t.decoder = r.str();
  t.bosId = r.num<int32_t>(dt.bosId), t.eosId = r.num<int32_t>(dt.eosId);
  t.addBos = true, t.chatTemplate = r.str();
  const GenerationDefaults dg;
  GenerationDefaults &g = m.generation;
  g.temperature = r.real(dg.temperature), g.topK = r.num<int64_t>(0);
  g.topP = r.real(dg.topP);
  g.eosIds = r.list<int32_t>([&] { return r.num<int32_t>(0); });
  g.maxNewTokens = r.num<int64_t>(dg.maxNewTokens);
}

inline void randomGpuTargets(Random &r, Manifest &m) {
  const GpuKernel dk;
  m.gpuTargets = r.list<GpuTarget>([&] {
    GpuTarget t;
    t.name = r.str();
    t.objects = r.list<CodeObject>([&] {
      return CodeObject{r.str(), CodeObject::Format(2), r.num<uint64_t>(0),
                        r.num<uint64_t>(0)};
    });
    t.kernels = r.list<GpuKernel>([&] {
      GpuKernel k{r.num<uint32_t>(0),         r.str(),
                  r.num<uint32_t>(dk.blockX), r.num<uint32_t>(0),
                  r.num<uint32_t>(0),         {}};
      k.args = r.list<GpuArg>([&] {
        return GpuArg{GpuArg::Kind(r.in(2, 6)), r.num<uint32_t>(0),
                      r.num<uint32_t>(0)};
      });
      if (r.in(0, 1))
        for (int d = r.in(1, 3); d > 0; --d)
          k.grid.push_back({r.num<uint32_t>(GpuGridDim::kGridConstant),
                            r.num<uint64_t>(1), r.num<uint32_t>(1)});
      return k;
    });
    return t;
  });
}

inline Manifest randomManifest(uint64_t seed) {
  Random r(seed);
  Manifest m;
  m.formatVersion = r.num<uint32_t>(m.formatVersion);
  m.compilerVersion = r.str(), m.modelName = r.str();
  m.targets = r.list<std::string>([&] { return r.str(); });
  auto ints = [&] {
    return r.list<int64_t>([&] { return r.num<int64_t>(0); });
  };
  auto ids = [&] {
    return r.list<uint32_t>([&] { return r.num<uint32_t>(0); });
  };
  m.tensors = r.list<TensorEntry>([&] {
    return TensorEntry{
        r.str(),
        r.dtype(),
        ints(),
        r.str("row-major"),
        r.num<uint64_t>(0),
        r.num<uint64_t>(0),
        r.in(1, int64_t(1) << 40),
        true,
        WeightTransform{r.list<std::string>([&] { return r.str(); }),
                        r.num<int64_t>(0), r.dtype()}};
  });
  m.externalWeights.files = r.list<std::string>([&] { return r.str(); });
  m.externalWeights.tensors = r.list<SourceTensor>([&] {
    return SourceTensor{r.str(), r.num<uint32_t>(0), r.str(), ints()};
  });
  m.externalWeights.spaceBytes = r.num<uint64_t>(0);
  m.buffers = r.list<Buffer>([&] {
    return Buffer{r.num<uint32_t>(0),
                  BufferKind(r.in(1, 2)),
                  r.dtype(),
                  r.num<uint32_t>(0),
                  ints(),
                  r.num<uint64_t>(0),
                  r.num<uint64_t>(0),
                  r.num<int32_t>(-1),
                  r.num<int32_t>(-1),
                  r.str()};
  });
  m.steps = r.list<Step>([&] {
    auto attrs = r.list<Attr>([&] {
      return Attr{r.str(),
                  Attr::Kind(r.in(2, 5)),
                  r.num<int64_t>(0),
                  r.real(0),
                  ints(),
                  r.list<double>([&] { return r.real(0); }),
                  r.str()};
    });
    return Step{r.str(), ids(), ids(), attrs, r.str()};
  });
  auto io = [&] {
    return IoSpec{r.str(), r.dtype(),
                  r.list<Dim>([&] { return Dim{r.num<int64_t>(-1), r.str()}; }),
                  r.num<uint32_t>(0)};
  };
  m.inputs = r.list<IoSpec>(io), m.outputs = r.list<IoSpec>(io);
  m.symbols = r.list<SymbolBound>(
      [&] { return SymbolBound{r.str(), r.num<int64_t>(0)}; });
  m.memory = {r.num<uint64_t>(0), r.num<uint64_t>(0), r.num<uint64_t>(0),
              r.num<uint64_t>(0), r.num<uint64_t>(0), r.num<uint64_t>(0)};
  randomLlm(r, m);
  randomGpuTargets(r, m);
  return m;
}

} // namespace ingot::testing
