//===- ManifestDecode.cpp - FlatBuffers (manifest.fbs) -> Manifest --------===//
//
// The generated Verifier runs first, so every offset, vector and string the
// generated accessors then follow lies inside the input. What it does not
// check is checked here: enum values (dtype, buffer and attribute kinds),
// bools other than 0 or 1, the range of group sizes, and that tables and
// strings are not referenced over and over (a DAG the encoder never makes)
// to make decoding allocate far more than the input's size.
//
//===----------------------------------------------------------------------===//
#include "ManifestDecoder.h"

#include "ingot/ArtifactWriter.h"

#include <cstring>

namespace ingot {
namespace detail {

bool Decoder::tensor(const fb::TensorEntry &in, TensorEntry *t) {
  if (!str(in.name(), &t->name) || !dtype(in.dtype(), &t->dtype) ||
      !vec(in.shape(), &t->shape) || !str(in.layout(), &t->layout))
    return false;
  t->offset = in.offset();
  t->bytes = in.bytes();
  t->groupSize = in.group_size();
  if (t->groupSize < 0 || t->groupSize > (int64_t(1) << 40))
    return fail("group size " + std::to_string(t->groupSize) +
                " out of range (expected 0 to 2^40)");
  if (const fb::WeightTransform *w = in.external()) {
    Scope scope(*this, "external");
    t->external = true;
    t->transform.concatAxis = w->concat_axis();
    return strings(w->parts(), &t->transform.parts) &&
           dtype(w->source_dtype(), &t->transform.sourceType);
  }
  return true;
}

bool Decoder::sourceTensor(const fb::SourceTensor &in, SourceTensor *t) {
  t->file = in.file();
  return str(in.name(), &t->name) && str(in.dtype(), &t->dtype) &&
         vec(in.shape(), &t->shape);
}

bool Decoder::externalWeights(const fb::ExternalWeights &in,
                              ExternalWeights *w) {
  w->spaceBytes = in.space_bytes();
  return strings(in.files(), &w->files) &&
         tables("tensors", in.tensors(), &w->tensors, &Decoder::sourceTensor);
}

bool Decoder::buffer(const fb::Buffer &in, Buffer *b) {
  b->id = in.id();
  const unsigned kind = unsigned(in.kind());
  if (kind < 1 || kind > 4)
    return fail("invalid buffer kind " + std::to_string(kind) +
                " (expected 1 input, 2 param, 3 arena or 4 dynamic)");
  b->kind = BufferKind(kind);
  if (!dtype(in.dtype(), &b->dtype))
    return false;
  b->rank = in.rank();
  if (!vec(in.max_shape(), &b->maxShape))
    return false;
  b->maxBytes = in.max_bytes();
  b->arenaOffset = in.arena_offset();
  b->tensorIndex = in.tensor_index();
  b->ioIndex = in.io_index();
  return str(in.name(), &b->name);
}

bool Decoder::attr(const fb::Attr &in, Attr *a) {
  if (!str(in.name(), &a->name))
    return false;
  const unsigned kind = unsigned(in.kind());
  if (kind < 1 || kind > 5)
    return fail("invalid attribute kind " + std::to_string(kind) +
                " (expected 1 to 5: int, float, ints, floats, str)");
  a->kind = Attr::Kind(kind);
  a->i = in.i();
  a->f = in.f();
  return vec(in.ints(), &a->ints) && vec(in.floats(), &a->floats) &&
         str(in.s(), &a->s);
}

bool Decoder::step(const fb::Step &in, Step *s) {
  return str(in.kernel(), &s->kernel) && vec(in.inputs(), &s->inputs) &&
         vec(in.outputs(), &s->outputs) &&
         tables("attrs", in.attrs(), &s->attrs, &Decoder::attr) &&
         str(in.origin(), &s->origin);
}

bool Decoder::dim(const fb::Dim &in, Dim *d) {
  d->size = in.size();
  return str(in.symbol(), &d->symbol);
}

bool Decoder::io(const fb::IoSpec &in, IoSpec *io) {
  io->buffer = in.buffer();
  return str(in.name(), &io->name) && dtype(in.dtype(), &io->dtype) &&
         tables("dims", in.dims(), &io->dims, &Decoder::dim);
}

bool Decoder::symbol(const fb::SymbolBound &in, SymbolBound *s) {
  s->max = in.max();
  return str(in.name(), &s->name);
}

bool Decoder::llm(const fb::LlmConfig &in, LlmConfig *l) {
  l->numLayers = in.num_layers();
  l->hiddenSize = in.hidden_size();
  l->numHeads = in.num_heads();
  l->numKvHeads = in.num_kv_heads();
  l->headDim = in.head_dim();
  l->vocabSize = in.vocab_size();
  l->maxPositions = in.max_positions();
  l->blockSize = in.block_size();
  l->maxTokensPerStep = in.max_tokens_per_step();
  l->maxSeqs = in.max_seqs();
  l->maxBlocksPerSeq = in.max_blocks_per_seq();
  return str(in.architecture(), &l->architecture) &&
         dtype(in.kv_dtype(), &l->kvDtype) && str(in.kv_layout(), &l->kvLayout);
}

bool Decoder::addedToken(const fb::AddedToken &in,
                         TokenizerData::AddedToken *a) {
  a->id = in.id();
  return str(in.content(), &a->content) &&
         boolean(in, fb::AddedToken::VT_SPECIAL, "special", &a->special);
}

bool Decoder::vocab(const fb::TokenizerData &in, TokenizerData *t) {
  const Vector<uint8_t> *text = in.vocab_text();
  const Vector<uint32_t> *ends = in.vocab_ends();
  const uint32_t textSize = text ? text->size() : 0;
  if (!ends)
    return textSize == 0 || fail("vocab_text without vocab_ends");
  if (!take(size_t(ends->size()) * sizeof(uint32_t) + textSize))
    return false;
  if (reinterpret_cast<uintptr_t>(ends->data()) % alignof(uint32_t))
    return fail("vocab_ends is misaligned");
  // A vocabulary of empty tokens may omit vocab_text altogether.
  const char *chars = text ? reinterpret_cast<const char *>(text->data()) : "";
  t->vocab.resize(ends->size());
  uint32_t begin = 0;
  for (uint32_t i = 0; i < ends->size(); ++i) {
    const uint32_t end = ends->Get(i);
    if (end < begin || end > textSize)
      return fail("vocab_ends[" + std::to_string(i) + "] = " +
                  std::to_string(end) + " (expected " + std::to_string(begin) +
                  " to " + std::to_string(textSize) + ")");
    t->vocab[i].assign(chars + begin, end - begin);
    begin = end;
  }
  if (begin != textSize)
    return fail("vocab_text holds " + std::to_string(textSize - begin) +
                " bytes past the last token");
  return true;
}

bool Decoder::merges(const fb::TokenizerData &in, TokenizerData *t) {
  const Vector<const fb::Merge *> *wide = in.merges();
  const Vector<uint16_t> *narrow = in.merges_u16();
  if (wide && narrow)
    return fail("both merges and merges_u16 are present");
  if (wide) {
    if (!take(size_t(wide->size()) * sizeof(fb::Merge)))
      return false;
    t->merges.reserve(wide->size());
    for (const fb::Merge *p : *wide)
      t->merges.emplace_back(p->left(), p->right());
  }
  if (narrow) {
    if (narrow->size() % 2)
      return fail("merges_u16 holds an odd number of ids (" +
                  std::to_string(narrow->size()) + ")");
    if (!take(size_t(narrow->size()) * sizeof(uint16_t)))
      return false;
    if (reinterpret_cast<uintptr_t>(narrow->data()) % alignof(uint16_t))
      return fail("merges_u16 is misaligned");
    t->merges.reserve(narrow->size() / 2);
    for (uint32_t i = 0; i < narrow->size(); i += 2)
      t->merges.emplace_back(narrow->Get(i), narrow->Get(i + 1));
  }
  return true;
}

bool Decoder::tokenizer(const fb::TokenizerData &in, TokenizerData *t) {
  using T = fb::TokenizerData;
  if (!str(in.model(), &t->model) || !vocab(in, t))
    return false;
  if (!merges(in, t))
    return false;
  t->unkId = in.unk_id();
  t->bosId = in.bos_id();
  t->eosId = in.eos_id();
  return vec(in.scores(), &t->scores) &&
         boolean(in, T::VT_BYTE_FALLBACK, "byte_fallback", &t->byteFallback) &&
         boolean(in, T::VT_FUSE_UNK, "fuse_unk", &t->fuseUnk) &&
         tables("added_tokens", in.added_tokens(), &t->addedTokens,
                &Decoder::addedToken) &&
         str(in.pretokenizer(), &t->pretokenizer) &&
         str(in.decoder(), &t->decoder) &&
         boolean(in, T::VT_ADD_BOS, "add_bos", &t->addBos) &&
         str(in.chat_template(), &t->chatTemplate);
}

bool Decoder::generation(const fb::GenerationDefaults &in,
                         GenerationDefaults *g) {
  g->temperature = in.temperature();
  g->topK = in.top_k();
  g->topP = in.top_p();
  g->maxNewTokens = in.max_new_tokens();
  return vec(in.eos_ids(), &g->eosIds);
}

bool Decoder::manifest(const fb::Manifest &in, Manifest *m) {
  m->formatVersion = in.format_version();
  if (!str(in.compiler_version(), &m->compilerVersion) ||
      !str(in.model_name(), &m->modelName) ||
      !strings(in.targets(), &m->targets) ||
      !tables("tensors", in.tensors(), &m->tensors, &Decoder::tensor) ||
      !tables("buffers", in.buffers(), &m->buffers, &Decoder::buffer) ||
      !tables("steps", in.steps(), &m->steps, &Decoder::step) ||
      !tables("inputs", in.inputs(), &m->inputs, &Decoder::io) ||
      !tables("outputs", in.outputs(), &m->outputs, &Decoder::io) ||
      !tables("symbols", in.symbols(), &m->symbols, &Decoder::symbol) ||
      !boolean(in, fb::Manifest::VT_HAS_LLM, "has_llm", &m->hasLlm))
    return false;
  if (const fb::MemorySummary *x = in.memory()) {
    MemorySummary &y = m->memory;
    y.weightsBytes = x->weights_bytes();
    y.arenaBytes = x->arena_bytes();
    y.arenaLowerBoundBytes = x->arena_lower_bound_bytes();
    y.arenaNaiveBytes = x->arena_naive_bytes();
    y.kvCacheBytes = x->kv_cache_bytes();
    y.overheadBytes = x->overhead_bytes();
  }
  if (const fb::LlmConfig *l = in.llm()) {
    Scope scope(*this, "llm");
    if (!llm(*l, &m->llm))
      return false;
  }
  if (const fb::TokenizerData *t = in.tokenizer()) {
    Scope scope(*this, "tokenizer");
    if (!tokenizer(*t, &m->tokenizer))
      return false;
  }
  if (const fb::GenerationDefaults *g = in.generation()) {
    Scope scope(*this, "generation");
    if (!generation(*g, &m->generation))
      return false;
  }
  if (const fb::ExternalWeights *w = in.external_weights()) {
    Scope scope(*this, "external_weights");
    if (!externalWeights(*w, &m->externalWeights))
      return false;
  }
  return tables("gpu_targets", in.gpu_targets(), &m->gpuTargets,
                &Decoder::gpuTarget);
}

} // namespace detail

Status decodeManifest(const uint8_t *data, size_t size, Manifest *out) {
  const Status invalid = Status::error(
      "manifest: not a valid ingot manifest (FlatBuffers verification "
      "failed)");
  if (size > fb::kMaxManifestBytes)
    return Status::error(
        "manifest: " + std::to_string(size) + " bytes is more than the " +
        std::to_string(fb::kMaxManifestBytes) + " this runtime reads");
  if (!data || size < 8) // root offset and file identifier
    return invalid;
  // The accessors read 8-byte scalars in place: copy misaligned input.
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t)) {
    aligned.resize((size + 7) / 8);
    std::memcpy(aligned.data(), data, size);
    data = reinterpret_cast<const uint8_t *>(aligned.data());
  }
  flatbuffers::Verifier::Options opts;
  opts.max_depth = fb::kMaxManifestDepth;
  opts.max_tables =
      flatbuffers::uoffset_t(size / fb::kManifestBytesPerTable + 1);
  opts.check_alignment = true;
  flatbuffers::Verifier verifier(data, size, opts);
  if (!fb::VerifyManifestBuffer(verifier))
    return invalid;
  Manifest m;
  detail::Decoder decoder(size);
  if (!decoder.manifest(*fb::GetManifest(data), &m))
    return Status::error(decoder.error());
  *out = std::move(m);
  return Status::ok();
}

} // namespace ingot
