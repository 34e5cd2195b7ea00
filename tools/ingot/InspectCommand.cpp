//===- InspectCommand.cpp - `ingot inspect ART [--json]` ------------------===//
//
// Describes a compiled artifact: targets, sections, model I/O, tensors, the
// step plan and the memory breakdown. --json prints one JSON object with the
// same facts for scripts and tests.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "JsonWriter.h" // runtime-private helper
#include "ingot/Artifact.h"

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::cli {
namespace {

void printUsage(FILE *f) {
  std::fprintf(f, "usage: ingot inspect ART [--json]\n\n"
                  "Describes a compiled artifact. --json prints one JSON "
                  "object instead of text.\n");
}

const char *kindName(BufferKind k) {
  switch (k) {
  case BufferKind::Input:
    return "input";
  case BufferKind::Param:
    return "param";
  case BufferKind::Arena:
    return "arena";
  }
  return "unknown";
}

/// A dynamic dim's name; "?" when the compiler did not name it.
std::string dimSymbol(const Dim &d) {
  return d.symbol.empty() ? std::string("?") : d.symbol;
}

uint64_t totalBytes(const MemorySummary &m) {
  return m.weightsBytes + m.arenaBytes + m.kvCacheBytes + m.overheadBytes;
}

//===--- JSON -------------------------------------------------------------===//

void jsonShape(json::Writer &w, const std::vector<int64_t> &shape) {
  w.beginArray(/*inlineItems=*/true);
  for (int64_t d : shape)
    w.value(d);
  w.endArray();
}

void jsonIo(json::Writer &w, const std::vector<IoSpec> &specs) {
  w.beginArray();
  for (const IoSpec &io : specs) {
    w.beginObject();
    w.field("name", io.name);
    w.field("dtype", dtypeName(io.dtype));
    w.key("shape");
    w.beginArray(true);
    for (const Dim &d : io.dims)
      d.size >= 0 ? w.value(d.size) : w.value(dimSymbol(d));
    w.endArray();
    w.field("buffer", io.buffer);
    w.endObject();
  }
  w.endArray();
}

void jsonAttr(json::Writer &w, const Attr &a) {
  w.key(a.name);
  switch (a.kind) {
  case Attr::Kind::Int:
    w.value(a.i);
    break;
  case Attr::Kind::Float:
    w.value(a.f);
    break;
  case Attr::Kind::Str:
    w.value(a.s);
    break;
  case Attr::Kind::Ints:
    jsonShape(w, a.ints);
    break;
  case Attr::Kind::Floats:
    w.beginArray(true);
    for (double f : a.floats)
      w.value(f);
    w.endArray();
    break;
  }
}

void jsonIds(json::Writer &w, const std::vector<uint32_t> &ids) {
  w.beginArray(true);
  for (uint32_t id : ids)
    id == kNoBuffer ? w.null() : w.value(id);
  w.endArray();
}

std::string toJson(const Artifact &art) {
  const Manifest &m = art.manifest();
  std::string out;
  json::Writer w(&out);
  w.beginObject();
  w.field("path", art.path());
  w.field("file_size", art.fileSize());
  w.field("format_version", m.formatVersion);
  w.field("compiler_version", m.compilerVersion);
  w.field("model", m.modelName);
  w.key("targets");
  w.beginArray(true);
  for (const std::string &t : m.targets)
    w.value(t);
  w.endArray();
  w.key("sections");
  w.beginArray();
  for (const Artifact::SectionInfo &s : art.sections()) {
    w.beginObject();
    w.field("name", s.name), w.field("offset", s.offset);
    w.field("size", s.size);
    w.endObject();
  }
  w.endArray();
  w.key("inputs");
  jsonIo(w, m.inputs);
  w.key("outputs");
  jsonIo(w, m.outputs);
  w.key("symbols");
  w.beginObject();
  for (const SymbolBound &s : m.symbols)
    w.field(s.name, s.max);
  w.endObject();
  w.key("tensors");
  w.beginArray();
  for (const TensorEntry &t : m.tensors) {
    w.beginObject();
    w.field("name", t.name), w.field("dtype", dtypeName(t.dtype));
    w.key("shape"), jsonShape(w, t.shape);
    w.field("bytes", t.bytes), w.field("offset", t.offset);
    w.field("layout", t.layout);
    w.endObject();
  }
  w.endArray();
  w.key("buffers");
  w.beginArray();
  for (const Buffer &b : m.buffers) {
    w.beginObject();
    w.field("id", b.id), w.field("name", b.name);
    w.field("kind", kindName(b.kind)), w.field("dtype", dtypeName(b.dtype));
    w.key("max_shape"), jsonShape(w, b.maxShape);
    w.field("max_bytes", b.maxBytes);
    w.key("arena_offset");
    b.kind == BufferKind::Arena ? w.value(b.arenaOffset) : w.null();
    if (b.kind == BufferKind::Param)
      w.field("tensor", b.tensorIndex);
    if (b.kind == BufferKind::Input)
      w.field("input", b.ioIndex);
    w.endObject();
  }
  w.endArray();
  w.key("steps");
  w.beginArray();
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const Step &s = m.steps[i];
    w.beginObject();
    w.field("index", i), w.field("kernel", s.kernel);
    w.field("origin", s.origin);
    w.key("inputs"), jsonIds(w, s.inputs);
    w.key("outputs"), jsonIds(w, s.outputs);
    w.key("attrs");
    w.beginObject();
    for (const Attr &a : s.attrs)
      jsonAttr(w, a);
    w.endObject();
    w.endObject();
  }
  w.endArray();
  const MemorySummary &mem = m.memory;
  w.key("memory");
  w.beginObject();
  w.field("weights_bytes", mem.weightsBytes);
  w.field("arena_bytes", mem.arenaBytes);
  w.field("arena_lower_bound_bytes", mem.arenaLowerBoundBytes);
  w.field("arena_naive_bytes", mem.arenaNaiveBytes);
  w.field("kv_cache_bytes", mem.kvCacheBytes);
  w.field("overhead_bytes", mem.overheadBytes);
  w.field("total_bytes", totalBytes(mem));
  w.endObject();
  w.endObject();
  out += '\n';
  return out;
}

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
    json::appendQuoted(s, a.s); // escaped: the value may hold anything
    return s;
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

void printText(const Artifact &art) {
  const Manifest &m = art.manifest();
  std::printf("artifact  %s (%s, format %u, compiler %s)\n",
              printable(art.path()).c_str(), humanBytes(art.fileSize()).c_str(),
              m.formatVersion, printable(m.compilerVersion).c_str());
  std::printf("model     %s\ntargets  ", printable(m.modelName).c_str());
  for (const std::string &t : m.targets)
    std::printf(" %s", printable(t).c_str());
  std::printf("\n\nsections\n");
  std::vector<std::vector<std::string>> rows = {{"name", "offset", "size"}};
  for (const Artifact::SectionInfo &s : art.sections())
    rows.push_back({s.name, std::to_string(s.offset), std::to_string(s.size)});
  printTable(rows);

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
    rows.push_back({std::to_string(i), printable(t.name), dtypeName(t.dtype),
                    shapeText(t.shape), std::to_string(t.bytes),
                    std::to_string(t.offset), printable(t.layout)});
  }
  printTable(rows);

  std::printf("\nbuffers (%zu)\n", m.buffers.size());
  rows = {
      {"id", "kind", "dtype", "max shape", "max bytes", "placement", "name"}};
  for (const Buffer &b : m.buffers) {
    std::string where = b.kind == BufferKind::Arena
                            ? cat({"arena @", std::to_string(b.arenaOffset)})
                        : b.kind == BufferKind::Param
                            ? cat({"tensor ", std::to_string(b.tensorIndex)})
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

} // namespace

int inspectMain(int argc, char **argv) {
  const char *path = nullptr;
  bool asJson = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      printUsage(stdout);
      return 0;
    }
    if (!std::strcmp(argv[i], "--json")) {
      asJson = true;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      std::fprintf(stderr, "error: unknown option '%s'\n", argv[i]);
      printUsage(stderr);
      return 2;
    } else if (path) {
      std::fprintf(stderr, "error: more than one artifact given\n");
      printUsage(stderr);
      return 2;
    } else {
      path = argv[i];
    }
  }
  if (!path) {
    printUsage(stderr);
    return 2;
  }
  std::unique_ptr<Artifact> art;
  if (Status st = Artifact::open(path, &art); !st) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 1;
  }
  if (asJson) {
    std::string text = toJson(*art);
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    printText(*art);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

} // namespace ingot::cli
