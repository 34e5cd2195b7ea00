//===- PackTokenizer.cpp - `ingot-pack-tokenizer DIR OUT.ingot` -----------===//
//
// Writes an LLM artifact that holds only DIR's tokenizer: placeholder KV
// geometry (all ones), no tensors, no steps. Good for `ingot tokenize` and
// nothing else; it exists so tests can check the tokenizer against Hugging
// Face `tokenizers` without compiling a model.
//
//===----------------------------------------------------------------------===//
#include "compiler/hf/TokenizerImport.h"
#include "ingot/ArtifactWriter.h"

#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  if (argc != 3 || !std::strcmp(argv[1], "--help")) {
    std::fprintf(argc == 2 ? stdout : stderr,
                 "usage: ingot-pack-tokenizer DIR OUT.ingot\n\n"
                 "Packs DIR/tokenizer.json (+ tokenizer_config.json, "
                 "config.json) into an artifact\nwith no model, for "
                 "`ingot tokenize`.\n");
    return argc == 2 ? 0 : 2;
  }
  ingot::Manifest m;
  m.compilerVersion = "ingot-pack-tokenizer";
  m.modelName = "tokenizer-only";
  m.targets = {"cpu"};
  m.hasLlm = true;
  if (ingot::Status s = ingot::compiler::importTokenizer(argv[1], &m.tokenizer);
      !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  ingot::LlmConfig &l = m.llm;
  l.architecture = "none";
  l.numLayers = l.hiddenSize = l.numHeads = l.numKvHeads = l.headDim = 1;
  l.maxPositions = l.maxTokensPerStep = l.maxSeqs = l.maxBlocksPerSeq = 1;
  l.vocabSize = int64_t(m.tokenizer.vocab.size());
  if (m.tokenizer.eosId >= 0)
    m.generation.eosIds = {m.tokenizer.eosId};
  if (ingot::Status s = ingot::ArtifactWriter(m).write(argv[2]); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
