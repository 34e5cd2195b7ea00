//===- KvCacheTest.cpp - KV cache storage, allocator, executor wiring -----===//
//
// The storage and the block allocator (a random property test against a
// model of reference counts), the cache layouts (addressing, and the loader
// refusing an artifact whose layout this runtime does not know), then a
// plan with a rope and a paged_attention step run through Executor with a
// cache set by setKvCache, prefill then decode. paged_attention itself is
// tested in PagedAttentionTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

#include "ingot/ArtifactFormat.h"

#include "ingot/Artifact.h"
#include "ingot/Executor.h"
#include "ingot/KvCache.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <unistd.h>

using namespace ingot;
using namespace ingot::test;

namespace {

TEST(KvCache, StorageLayoutAndErrors) {
  LlmConfig c = cacheConfig(3, 16, 2, 24);
  const uint64_t perArray = 10 * 16 * 2 * 24 * 4; // 30720, a 64-B multiple
  EXPECT_EQ(KvCacheStorage::bytesFor(c, 10), 3 * 2 * perArray);
  KvCacheStorage s;
  ASSERT_TRUE(s.allocate(c, 10).isOk());
  const KvCacheView &v = s.view();
  EXPECT_EQ(s.bytes(), 3 * 2 * perArray);
  EXPECT_EQ(v.numSlots(), 160);
  EXPECT_EQ(v.slotFloats(), 48);
  ASSERT_EQ(v.keys.size(), 3u);
  std::vector<std::pair<float *, float *>> ranges;
  for (int64_t l = 0; l < 3; ++l)
    for (float *p : {v.keys[l], v.values[l]}) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
      for (int64_t i = 0; i < v.numSlots() * v.slotFloats(); ++i)
        ASSERT_EQ(p[i], 0.0f);
      ranges.push_back({p, p + perArray / 4});
    }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    EXPECT_LE(ranges[i - 1].second, ranges[i].first) << "arrays overlap";

  KvCacheStorage bad;
  LlmConfig half = c;
  half.kvDtype = DType::F16;
  EXPECT_FALSE(bad.allocate(half, 10).isOk());
  EXPECT_FALSE(bad.allocate(c, 0).isOk());
  EXPECT_FALSE(bad.allocate(cacheConfig(1, 0, 2, 24), 4).isOk());
  EXPECT_EQ(KvCacheStorage::bytesFor(c, -1), 0u);
}

TEST(KvCache, LayoutsAddressEveryFloatOnce) {
  EXPECT_EQ(knownKvLayouts(), "'block,token,head,dim', 'block,head,token,dim'");
  for (KvLayout layout :
       {KvLayout::BlockTokenHeadDim, KvLayout::BlockHeadTokenDim}) {
    SCOPED_TRACE(kvLayoutName(layout));
    KvLayout parsed = KvLayout::BlockTokenHeadDim;
    ASSERT_TRUE(parseKvLayout(kvLayoutName(layout), &parsed));
    EXPECT_EQ(parsed, layout);
    LlmConfig c = cacheConfig(2, 4, 3, 5);
    c.kvLayout = kvLayoutName(layout);
    KvCacheStorage s;
    ASSERT_TRUE(s.allocate(c, 6).isOk());
    const KvCacheView &v = s.view();
    EXPECT_EQ(v.layout, layout);
    EXPECT_EQ(KvCacheStorage::bytesFor(c, 6), s.bytes());
    // (slot, head, dim) -> float is a bijection onto the array, with the
    // layout's formula.
    std::vector<int> hits(size_t(v.numSlots() * v.slotFloats()), 0);
    for (int64_t slot = 0; slot < v.numSlots(); ++slot)
      for (int64_t h = 0; h < 3; ++h) {
        const int64_t b = slot / 4, o = slot % 4;
        const int64_t want = layout == KvLayout::BlockTokenHeadDim
                                 ? (b * 4 + o) * 15 + h * 5
                                 : ((b * 3 + h) * 4 + o) * 5;
        ASSERT_EQ(v.rowOffset(slot, h), want) << slot << " " << h;
        ASSERT_EQ(v.rowOffset(slot, h),
                  v.headBase(b, h) + o * v.rowStride());
        for (int64_t i = 0; i < 5; ++i)
          ++hits[size_t(want + i)];
      }
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), int64_t(hits.size()));
  }
  for (const char *bad : {"", "block,token,dim,head", "BLOCK,HEAD,TOKEN,DIM"})
    EXPECT_FALSE(parseKvLayout(bad, nullptr)) << bad;
  LlmConfig c = cacheConfig(1, 4, 1, 8);
  c.kvLayout = "token,block,head,dim";
  KvCacheStorage s;
  Status st = s.allocate(c, 2);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(),
            "KV cache layout 'token,block,head,dim' is not known to this "
            "runtime (known: 'block,token,head,dim', 'block,head,token,dim')");
}

/// A tokenizer-only LLM artifact's manifest with KV layout `layout`.
Manifest llmManifest(const std::string &layout) {
  Manifest m;
  m.compilerVersion = "test";
  m.targets = {"cpu"};
  m.hasLlm = true;
  LlmConfig &l = m.llm;
  l.numLayers = 2, l.hiddenSize = 8, l.numHeads = 4, l.numKvHeads = 2;
  l.headDim = 2, l.vocabSize = 3, l.maxPositions = 64;
  l.maxTokensPerStep = 8, l.maxSeqs = 2, l.maxBlocksPerSeq = 4;
  l.kvLayout = layout;
  m.tokenizer.vocab = {"a", "b", "ab"};
  m.tokenizer.merges = {{0, 1}};
  return m;
}

TEST(KvCache, ArtifactRecordsItsLayoutAndUnknownOnesAreRefused) {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("ingot-kvlayout-" + std::to_string(::getpid()) + ".ingot"))
          .string();
  for (KvLayout layout :
       {KvLayout::BlockTokenHeadDim, KvLayout::BlockHeadTokenDim}) {
    Status st = ArtifactWriter(llmManifest(kvLayoutName(layout))).write(path);
    ASSERT_TRUE(st.isOk()) << st.message();
    std::unique_ptr<Artifact> art;
    st = Artifact::open(path, &art);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(art->manifest().llm.kvLayout, kvLayoutName(layout));
    KvCacheStorage s;
    ASSERT_TRUE(s.allocate(art->manifest().llm, 3).isOk());
    EXPECT_EQ(s.view().layout, layout);
  }
  // The writer refuses a layout it does not know; one written without its
  // checks (a newer compiler, say) is refused at load, naming the file, the
  // layout and the known ones.
  const std::string why =
      "LLM config: KV-cache layout 'block,dim,token,head' is not known to "
      "this runtime (known: 'block,token,head,dim', 'block,head,token,dim'); "
      "recompile the model with this version of ingot";
  Status st = ArtifactWriter(llmManifest("block,dim,token,head")).write(path);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find(why), std::string::npos) << st.message();
  st = format::writeArtifactFile(path, llmManifest("block,dim,token,head"), {},
                                 {}, /*validate=*/false);
  ASSERT_TRUE(st.isOk()) << st.message();
  std::unique_ptr<Artifact> art;
  st = Artifact::open(path, &art);
  std::filesystem::remove(path);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(art, nullptr);
  EXPECT_EQ(st.message(), path + ": invalid manifest: " + why);
}

TEST(KvCache, AllocatorRandomOperationsKeepCountsConsistent) {
  const int64_t n = 37;
  KvBlockAllocator alloc(n);
  std::map<int64_t, int32_t> live; // model: block -> references
  std::mt19937_64 gen(601);
  int64_t lastFreed = -1;
  for (int iter = 0; iter < 20000; ++iter) {
    const uint64_t op = gen() % 3;
    if (op == 0) {
      const int64_t b = alloc.allocate();
      if (live.size() == size_t(n)) {
        ASSERT_EQ(b, -1) << "allocated with nothing free";
        continue;
      }
      ASSERT_GE(b, 0);
      ASSERT_LT(b, n);
      ASSERT_EQ(live.count(b), 0u) << "block " << b << " handed out twice";
      if (lastFreed >= 0) { // the stack hands back the latest freed block
        ASSERT_EQ(b, lastFreed);
      }
      lastFreed = -1;
      live[b] = 1;
    } else if (!live.empty()) {
      auto it = std::next(live.begin(), int64_t(gen() % live.size()));
      if (op == 1) {
        alloc.retain(it->first);
        ++it->second;
      } else {
        alloc.release(it->first);
        if (--it->second == 0) {
          lastFreed = it->first;
          live.erase(it);
        }
      }
    }
    ASSERT_EQ(alloc.numFree() + int64_t(live.size()), n);
    ASSERT_EQ(alloc.numUsed(), int64_t(live.size()));
    for (int64_t b = 0; b < n; ++b)
      ASSERT_EQ(alloc.refCount(b), live.count(b) ? live[b] : 0) << b;
  }
}

TEST(KvCache, AllocatorIgnoresRetainOrReleaseOfFreeBlocks) {
  KvBlockAllocator alloc(4);
  EXPECT_EQ(alloc.allocate(), 0);
  EXPECT_EQ(alloc.allocate(), 1);
#ifdef NDEBUG
  // Release builds: a no-op that leaves the state intact.
  alloc.release(2);
  alloc.retain(3);
  alloc.release(-1);
  alloc.retain(99);
  EXPECT_EQ(alloc.numFree(), 2);
  EXPECT_EQ(alloc.refCount(2), 0);
  EXPECT_EQ(alloc.refCount(3), 0);
  EXPECT_EQ(alloc.allocate(), 2);
  EXPECT_EQ(alloc.allocate(), 3);
  EXPECT_EQ(alloc.allocate(), -1);
#else
  // Debug builds stop at the assert, which is how tests catch the bug.
  EXPECT_DEATH(alloc.release(2), "free or invalid block");
  EXPECT_DEATH(alloc.retain(3), "free or invalid block");
#endif
  KvBlockAllocator none(0);
  EXPECT_EQ(none.allocate(), -1);
}

// --- Executor wiring ------------------------------------------------------

constexpr int64_t kH = 4, kKv = 2, kD = 8, kMaxT = 16;

/// attn = paged_attention(rope(q), k, v, ...) with every operand a model
/// input; symbols tokens/seqs/blocks.
Manifest attentionPlan() {
  Manifest m;
  m.modelName = "attn";
  m.compilerVersion = "test";
  m.targets = {"cpu"};
  m.symbols = {{"tokens", kMaxT}, {"seqs", 2}, {"blocks", 8}};
  auto input = [&](const std::string &name, DType dt, std::vector<Dim> dims,
                   std::vector<int64_t> maxShape) {
    Buffer b;
    b.id = uint32_t(m.buffers.size());
    b.kind = BufferKind::Input;
    b.dtype = dt;
    b.name = name;
    b.rank = uint32_t(maxShape.size());
    b.maxShape = maxShape;
    b.ioIndex = int32_t(m.inputs.size());
    m.inputs.push_back({name, dt, dims, b.id});
    m.buffers.push_back(b);
  };
  const Dim tok{-1, "tokens"}, seqs{-1, "seqs"}, blocks{-1, "blocks"};
  input("q", DType::F32, {tok, {kH * kD, ""}}, {kMaxT, kH * kD});
  input("k", DType::F32, {tok, {kKv * kD, ""}}, {kMaxT, kKv * kD});
  input("v", DType::F32, {tok, {kKv * kD, ""}}, {kMaxT, kKv * kD});
  input("positions", DType::I64, {tok}, {kMaxT});
  input("slot_mapping", DType::I64, {tok}, {kMaxT});
  input("block_tables", DType::I32, {seqs, blocks}, {2, 8});
  input("query_ends", DType::I64, {seqs}, {2});
  const uint64_t bytes = kMaxT * kH * kD * 4;
  for (const char *name : {"q_rot", "attn"}) {
    Buffer b;
    b.id = uint32_t(m.buffers.size());
    b.kind = BufferKind::Arena;
    b.name = name;
    b.rank = 2;
    b.maxShape = {kMaxT, kH * kD};
    b.maxBytes = bytes;
    b.arenaOffset = b.id == 7 ? 0 : bytes;
    m.buffers.push_back(b);
  }
  m.memory.arenaBytes = 2 * bytes;
  Step rope;
  rope.kernel = "rope";
  rope.origin = "layer0/rope";
  rope.inputs = {0, 3};
  rope.outputs = {7};
  rope.attrs = {intAttr("num_heads", kH), intAttr("head_dim", kD),
                intAttr("rotary_dim", kD), floatAttr("theta", 10000.0)};
  Step attn;
  attn.kernel = "paged_attention";
  attn.origin = "layer0/attn";
  attn.inputs = {7, 1, 2, 3, 4, 5, 6};
  attn.outputs = {8};
  attn.attrs = attnAttrs({kH, kKv, kD, 0, false}, 0);
  m.steps = {rope, attn};
  m.outputs = {{"attn", DType::F32, {tok, {kH * kD, ""}}, 8}};
  return m;
}

TEST(KvCacheExecutor, RunsPrefillThenDecodeThroughTheCache) {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("ingot-kvcache-" + std::to_string(::getpid()) + ".ingot"))
          .string();
  ASSERT_TRUE(ArtifactWriter(attentionPlan()).write(path).isOk());
  std::unique_ptr<Artifact> art;
  Status st = Artifact::open(path, &art);
  std::filesystem::remove(path);
  ASSERT_TRUE(st.isOk()) << st.message();
  ThreadPool pool(2);
  Executor exec(*art, pool);
  Rng rng(720);
  const AttnShape a{kH, kKv, kD, 0, false};
  // Sequence 0 in blocks {9, 2}, sequence 1 in block {5}; block size 4.
  const std::vector<std::vector<int32_t>> blocks = {{9, 2}, {5, 0}};
  std::vector<std::vector<float>> hk(2), hv(2);
  auto stepInputs = [&](const std::vector<std::pair<int, int64_t>> &toks,
                        Tensor *q, Tensor *k, Tensor *v) {
    const int64_t t = int64_t(toks.size());
    *q = rng.uniform({t, kH * kD});
    *k = rng.uniform({t, kKv * kD});
    *v = rng.uniform({t, kKv * kD});
    std::vector<int64_t> pos, slots, ends = {0, 0};
    for (int64_t i = 0; i < t; ++i) {
      auto [s, p] = toks[i];
      pos.push_back(p);
      slots.push_back(blocks[s][p / 4] * 4 + p % 4);
      ends[s] = i + 1;
      hk[s].insert(hk[s].end(), ptr<float>(*k) + i * kKv * kD,
                   ptr<float>(*k) + (i + 1) * kKv * kD);
      hv[s].insert(hv[s].end(), ptr<float>(*v) + i * kKv * kD,
                   ptr<float>(*v) + (i + 1) * kKv * kD);
    }
    std::vector<NamedTensor> in = {{"q", *q},
                                   {"k", *k},
                                   {"v", *v},
                                   {"positions", i64({t}, pos)},
                                   {"slot_mapping", i64({t}, slots)},
                                   {"block_tables", i32({2, 2}, {9, 2, 5, 0})},
                                   {"query_ends", i64({2}, ends)}};
    return in;
  };
  auto reference = [&](const std::vector<std::pair<int, int64_t>> &toks,
                       const Tensor &q, std::vector<double> *mag) {
    std::vector<double> ref(toks.size() * kH * kD);
    mag->assign(ref.size(), 0);
    for (size_t i = 0; i < toks.size(); ++i) {
      auto [s, p] = toks[i];
      for (int64_t h = 0; h < kH; ++h) {
        std::vector<float> qr(kD); // rope in double, rounded like the kernel
        const float *x = ptr<float>(q) + (i * kH + h) * kD;
        for (int64_t j = 0; j < kD / 2; ++j) {
          const double ang = double(p) * std::pow(10000.0, -2.0 * j / kD);
          qr[j] = float(x[j] * std::cos(ang) - x[j + kD / 2] * std::sin(ang));
          qr[j + kD / 2] =
              float(x[j + kD / 2] * std::cos(ang) + x[j] * std::sin(ang));
        }
        denseAttention(qr.data(), hk[s], hv[s], 0, p, h / (kH / kKv), a,
                       &ref[(i * kH + h) * kD], &(*mag)[(i * kH + h) * kD]);
      }
    }
    return ref;
  };
  const std::vector<std::pair<int, int64_t>> prefill = {
      {0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {1, 0}, {1, 1}, {1, 2}};
  Tensor q, k, v;
  std::vector<NamedTensor> ins = stepInputs(prefill, &q, &k, &v);
  std::vector<NamedTensor> outs;
  st = exec.run(ins, &outs);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("needs a KV cache"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("layer0/attn"), std::string::npos);

  KvCacheStorage storage;
  ASSERT_TRUE(storage.allocate(cacheConfig(1, 4, kKv, kD), 16).isOk());
  exec.setKvCache(&storage.view());
  st = exec.run(ins, &outs);
  ASSERT_TRUE(st.isOk()) << st.message();
  std::vector<double> mag;
  std::vector<double> ref = reference(prefill, q, &mag);
  expectClose(outs[0].tensor, {9, kH * kD}, ref, 2e-5, 1e-30, &mag);

  const std::vector<std::pair<int, int64_t>> decode = {{0, 6}, {1, 3}};
  ins = stepInputs(decode, &q, &k, &v);
  st = exec.run(ins, &outs);
  ASSERT_TRUE(st.isOk()) << st.message();
  ref = reference(decode, q, &mag);
  expectClose(outs[0].tensor, {2, kH * kD}, ref, 2e-5, 1e-30, &mag);
}

} // namespace
