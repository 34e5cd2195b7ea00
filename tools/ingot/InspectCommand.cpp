//===- InspectCommand.cpp - `ingot inspect ART [--json]` ------------------===//
//
// Describes a compiled artifact: targets, sections, model I/O, tensors, the
// step plan and the memory breakdown. --json prints one JSON object with the
// same facts for scripts and tests.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "CliChecks.h"
#include "CliParser.h"
#include "CliNumbers.h"
#include "Inspect.h"
#include "ingot/Quant.h"

#include "JsonText.h"
#include "ingot/Artifact.h"
#include "ingot/MemoryFootprint.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::cli {

/// Prints rows with each column padded to its widest cell.
void printTable(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width;
  for (const auto &row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  }
  for (const auto &row : rows) {
    std::string line = "  ";
    for (size_t c = 0; c < row.size(); ++c) {
      line.append("  ").append(row[c]);
      line.append(width[c] - row[c].size(), ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    std::printf("%s\n", line.c_str());
  }
}

namespace {

//===--- Text -------------------------------------------------------------===//

/// Names come from the file: keep control characters off the terminal.
std::string printable(const std::string &s) {
  std::string out = s;
  for (char &c : out)
    if ((unsigned char)c < 0x20 || c == 0x7f)
      c = '?';
  return out;
}

/// Concatenation without `"literal" + std::string` (GCC 12 misreports it
/// under -Wrestrict).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts)
    s += p;
  return s;
}

std::string humanBytes(uint64_t n) {
  if (n < 1024)
    return std::to_string(n) + " B";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = double(n) / 1024;
  int u = 0;
  for (; v >= 1024 && u < 3; ++u)
    v /= 1024;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dimsText(const std::vector<Dim> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s.append(i ? ", " : "")
        .append(dims[i].size >= 0 ? std::to_string(dims[i].size)
                                  : printable(dimSymbol(dims[i])));
  return s + "]";
}

std::string bufferRef(const Manifest &m, uint32_t id) {
  if (id == kNoBuffer)
    return "-";
  std::string s = "%";
  s += std::to_string(id);
  if (!m.buffers[id].name.empty())
    s.append(" ").append(printable(m.buffers[id].name));
  return s;
}

std::string attrText(const Attr &a) {
  std::string s = printable(a.name) + "=";
  char buf[32];
  switch (a.kind) {
  case Attr::Kind::Int:
    return s + std::to_string(a.i);
  case Attr::Kind::Float:
    std::snprintf(buf, sizeof buf, "%g", a.f);
    return s + buf;
  case Attr::Kind::Str:
    // Quoted and escaped as JSON: the value may hold anything.
    return s + jsonText(OrderedJson(a.s));
  case Attr::Kind::Ints:
    return s + shapeText(a.ints);
  case Attr::Kind::Floats:
    s += "[";
    for (size_t i = 0; i < a.floats.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%g", i ? ", " : "", a.floats[i]);
      s += buf;
    }
    return s + "]";
  }
  return s;
}

/// Where an artifact compiled with --weights=external makes its weights
/// from at load.
void printExternalWeights(const Manifest &m) {
  const ExternalWeights &w = m.externalWeights;
  if (w.empty())
    return;
  uint64_t made = 0, bytes = 0;
  for (const TensorEntry &t : m.tensors)
    if (t.external)
      ++made, bytes += t.bytes;
  std::printf("\nexternal weights (made at load from --weights DIR)\n");
  std::vector<std::vector<std::string>> rows = {
      {"files", std::to_string(w.files.size())}};
  for (const std::string &f : w.files)
    rows.push_back({"", printable(f)});
  rows.push_back({"source tensors", std::to_string(w.tensors.size())});
  rows.push_back({"made at load",
                  std::to_string(made) + " tensors, " + humanBytes(bytes)});
  printTable(rows);
}

void printText(const Artifact &art) {
  const Manifest &m = art.manifest();
  std::printf("artifact  %s (%s, format %u, compiler %s)\n",
              printable(art.path()).c_str(), humanBytes(art.fileSize()).c_str(),
              m.formatVersion, printable(m.compilerVersion).c_str());
  std::printf("model     %s\ntargets  ", printable(m.modelName).c_str());
  for (const std::string &t : m.targets)
    std::printf(" %s", printable(t).c_str());
  if (m.hasLlm) {
    const LlmConfig &l = m.llm;
    std::printf("\nllm       %s: %lld layers, %lld heads (%lld KV) of dim %lld\n"
                "kv cache  %s, %lld tokens per block, layout %s",
                printable(l.architecture).c_str(), (long long)l.numLayers,
                (long long)l.numHeads, (long long)l.numKvHeads,
                (long long)l.headDim, dtypeName(l.kvDtype),
                (long long)l.blockSize, printable(l.kvLayout).c_str());
  }
  std::printf("\n\nsections\n");
  std::vector<std::vector<std::string>> rows = {{"name", "offset", "size"}};
  for (const Artifact::SectionInfo &s : art.sections())
    rows.push_back({s.name, std::to_string(s.offset), std::to_string(s.size)});
  printTable(rows);
  printGpuTargets(art);

  for (int out = 0; out < 2; ++out) {
    std::printf("\n%s\n", out ? "outputs" : "inputs");
    rows.clear();
    for (const IoSpec &io : out ? m.outputs : m.inputs)
      rows.push_back({printable(io.name), dtypeName(io.dtype),
                      dimsText(io.dims),
                      cat({"buffer %", std::to_string(io.buffer)})});
    printTable(rows);
  }
  if (!m.symbols.empty()) {
    std::printf("\nsymbols\n");
    rows.clear();
    for (const SymbolBound &s : m.symbols)
      rows.push_back({printable(s.name), cat({"<= ", std::to_string(s.max)})});
    printTable(rows);
  }

  std::printf("\ntensors (%zu, %s)\n", m.tensors.size(),
              humanBytes(m.memory.weightsBytes).c_str());
  rows = {{"#", "name", "dtype", "shape", "bytes", "offset", "layout"}};
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorEntry &t = m.tensors[i];
    rows.push_back(
        {std::to_string(i), printable(t.name), dtypeName(t.dtype),
         shapeText(t.shape), std::to_string(t.bytes),
         std::to_string(t.offset) + (t.external ? " (external)" : ""),
         printable(t.layout)});
  }
  printTable(rows);
  printExternalWeights(m);

  std::printf("\nweights by format\n");
  rows = {{"format", "group", "tensors", "bytes", "bits/weight"}};
  for (const WeightFormatTotal &f : weightFormats(m)) {
    char bits[32];
    std::snprintf(bits, sizeof bits, "%.2f", f.bitsPerWeight());
    rows.push_back({f.format,
                    f.groupSize == 0  ? "-"
                    : f.perChannel    ? "channel"
                    : f.groupSize > 0 ? std::to_string(f.groupSize)
                                      : "mixed",
                    std::to_string(f.tensors), humanBytes(f.bytes), bits});
  }
  printTable(rows);
  // "q8, group 32 (quantised" for the lm_head and embedding lines.
  auto format = [](const TensorEntry &t) {
    return cat({dtypeName(t.dtype),
                t.groupSize ? ", group " + std::to_string(t.groupSize) : "",
                isQuantDType(t.dtype) ? " (quantised" : " (not quantised"});
  };
  const TensorEntry *head = lmHeadWeight(m);
  if (head)
    std::printf("lm_head   %s)\n", format(*head).c_str());
  if (const TensorEntry *table = embeddingTable(m))
    std::printf("embedding %s%s)\n", format(*table).c_str(),
                table == head ? ", shared with the lm_head" : "");

  std::printf("\nbuffers (%zu)\n", m.buffers.size());
  rows = {
      {"id", "kind", "dtype", "max shape", "max bytes", "placement", "name"}};
  for (const Buffer &b : m.buffers) {
    std::string where = b.kind == BufferKind::Arena
                            ? cat({"arena @", std::to_string(b.arenaOffset)})
                        : b.kind == BufferKind::Param
                            ? cat({"tensor ", std::to_string(b.tensorIndex)})
                        : b.kind == BufferKind::Dynamic
                            ? std::string("sized at run time")
                            : cat({"input ", std::to_string(b.ioIndex)});
    rows.push_back({cat({"%", std::to_string(b.id)}), kindName(b.kind),
                    dtypeName(b.dtype), shapeText(b.maxShape),
                    std::to_string(b.maxBytes), where, printable(b.name)});
  }
  printTable(rows);

  std::printf("\nplan (%zu steps)\n", m.steps.size());
  rows.clear();
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const Step &s = m.steps[i];
    std::string io;
    for (size_t k = 0; k < s.inputs.size(); ++k)
      io.append(k ? ", " : "").append(bufferRef(m, s.inputs[k]));
    io += " -> ";
    for (size_t k = 0; k < s.outputs.size(); ++k)
      io.append(k ? ", " : "").append(bufferRef(m, s.outputs[k]));
    std::string attrs;
    for (const Attr &a : s.attrs)
      attrs.append(attrs.empty() ? "" : " ").append(attrText(a));
    rows.push_back({std::to_string(i), printable(s.kernel),
                    cat({"(", printable(s.origin), ")"}), io, attrs});
  }
  printTable(rows);

  const MemorySummary &mem = m.memory;
  std::printf("\nmemory\n");
  rows = {
      {"weights", humanBytes(mem.weightsBytes)},
      {"arena", cat({humanBytes(mem.arenaBytes), " (lower bound ",
                     humanBytes(mem.arenaLowerBoundBytes), ", without reuse ",
                     humanBytes(mem.arenaNaiveBytes), ")"})},
      {"kv cache", humanBytes(mem.kvCacheBytes)},
      {"overhead", humanBytes(mem.overheadBytes)},
      {"total", humanBytes(totalBytes(mem))}};
  printTable(rows);
}

/// `inspect --memory`: the footprint only, each line with exact bytes so
/// scripts can check that the parts add up.
void printFootprint(const Artifact &art, const MemoryFootprint &f) {
  auto line = [](const char *name, uint64_t bytes, const std::string &note) {
    std::printf("  %-18s %14llu B  %10s%s%s\n", name, (unsigned long long)bytes,
                humanBytes(bytes).c_str(), note.empty() ? "" : "  ",
                note.c_str());
  };
  std::printf("memory to serve %s\n", printable(art.path()).c_str());
  const Manifest &m = art.manifest();
  line("weights", f.weightsBytes, "");
  line("weight-derived", f.weightDerivedBytes,
       "made by the first run: weight-only steps' results, packed GEMM "
       "weights");
  line("kv cache", f.kvBytes,
       m.hasLlm ? cat({std::to_string(f.kvBlocks), " blocks x ",
                       std::to_string(m.llm.blockSize),
                       " tokens = ", std::to_string(f.kvTokens), " tokens"})
                : std::string("none (not an LLM)"));
  line("activation arena", f.arenaBytes,
       cat({"liveness lower bound ", humanBytes(f.arenaLowerBoundBytes)}));
  line("runtime overhead", f.overheadBytes,
       cat({"manifest ", humanBytes(f.manifestBytes), " + step I/O ",
            humanBytes(f.stepIoBytes), " + scratch ",
            humanBytes(f.threadScratchBytes), " (", std::to_string(f.threads),
            " threads)"}));
  line("total", f.totalBytes, "");
}

} // namespace

int inspectMain(int argc, char **argv) {
  std::string path, extractDir;
  bool asJson = false, memoryOnly = false;
  int64_t kvBlocks = 0, kvCacheMb = 0, threads = 0;
  CommandLine cl("inspect", "Describes a compiled artifact.");
  cl.positional("ART", &path, "the compiled artifact");
  cl.flag("--json", &asJson, "print one JSON object instead of text");
  cl.flag("--memory", &memoryOnly,
          "print only what serving it takes: weights, the KV cache at the "
          "budget the engine would use (or the one given), the activation "
          "arena and the runtime's overhead for --threads threads");
  cl.value("--extract-code", &extractDir,
           "write each GPU code object (cubin, PTX) into DIR as "
           "<target>.<arch>.<format>, for cuobjdump or nvdisasm",
           "DIR");
  cl.integer("--kv-blocks", &kvBlocks, 1, kMaxKvBlocks,
             "KV-cache blocks (auto: the engine's budget)", "auto");
  cl.integer("--kv-cache-mb", &kvCacheMb, 1, kMaxKvCacheMb,
             "KV-cache budget in MiB (auto: the engine's)", "auto");
  cl.integer("--threads", &threads, 0, kMaxThreads,
             "threads the overhead is counted for; 0: all cores");
  if (int rc = cl.parse(argc, argv); rc >= 0)
    return rc;
  if (path.empty())
    return cl.usageError("give an artifact");
  if (kvBlocks && kvCacheMb)
    return cl.usageError("give at most one of --kv-blocks and --kv-cache-mb");
  std::unique_ptr<Artifact> art;
  if (Status st = Artifact::open(path, &art, {.skipExternalWeights = true});
      !st) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 1;
  }
  if (!extractDir.empty()) {
    if (Status st = extractCode(*art, extractDir); !st) {
      std::fprintf(stderr, "error: %s\n", st.message().c_str());
      return 1;
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  if (std::string e = kvCacheMbError(art->manifest().llm, kvCacheMb);
      art->manifest().hasLlm && !e.empty()) {
    std::fprintf(stderr, "error: %s: %s\n", path.c_str(), e.c_str());
    return 1;
  }
  int64_t blocks = 0;
  if (Status st = engineKvBlocks(art->manifest(), kvBlocks, kvCacheMb, &blocks);
      !st) {
    std::fprintf(stderr, "error: %s: %s\n", path.c_str(), st.message().c_str());
    return 1;
  }
  MemoryFootprint fp =
      computeFootprint(art->manifest(), blocks, unsigned(threads));
  if (asJson) {
    std::string text = inspectJson(*art, fp);
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else if (memoryOnly) {
    printFootprint(*art, fp);
  } else {
    printText(*art);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

} // namespace ingot::cli
