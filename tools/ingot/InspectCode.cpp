//===- InspectCode.cpp - GPU targets in `ingot inspect` -------------------===//
//
// What a user needs to trust a GPU artifact built elsewhere: per target,
// each code object's architecture, format and size, and for cubins what
// the ELF itself says (machine, architecture, kernel symbols), read with
// ingot's own reader so no CUDA tool is needed. --extract-code writes the
// objects out for cuobjdump/nvdisasm.
//
//===----------------------------------------------------------------------===//
#include "Inspect.h"

#include "ingot/AtomicFile.h"
#include "ingot/ElfObject.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string_view>
#include <sys/stat.h>

namespace ingot::cli {
namespace {

const char *formatName(CodeObject::Format f) {
  return f == CodeObject::Format::Ptx ? "ptx" : "cubin";
}

/// "EM_CUDA sm_90, 12 kernels", or why the ELF could not be read.
std::string elfSummary(const uint8_t *data, const CodeObject &c) {
  if (c.format != CodeObject::Format::Cubin)
    return "";
  ElfObject elf;
  if (Status s = parseElfObject(data, c.bytes, &elf); !s)
    return "unreadable ELF: " + s.message();
  if (elf.machine != kEmCuda)
    return "ELF machine " + std::to_string(elf.machine) + ", not EM_CUDA";
  std::string arch = cudaArchFromFlags(elf.abiVersion, elf.flags);
  return "EM_CUDA " + (arch.empty() ? std::string("?") : arch) + ", " +
         std::to_string(functionSymbols(elf).size()) + " kernels";
}

} // namespace

OrderedJson jsonGpuTargets(const Artifact &art) {
  const Manifest &m = art.manifest();
  OrderedJson targets = OrderedJson::array();
  for (const GpuTarget &t : m.gpuTargets) {
    OrderedJson objects = OrderedJson::array();
    for (const CodeObject &c : t.objects) {
      OrderedJson o = {{"arch", c.arch},
                       {"format", formatName(c.format)},
                       {"offset", c.offset},
                       {"bytes", c.bytes}};
      ElfObject elf;
      if (c.format == CodeObject::Format::Cubin &&
          parseElfObject(art.codeObjectData(t, c), c.bytes, &elf)) {
        o["elf_machine"] = elf.machine;
        o["elf_arch"] = cudaArchFromFlags(elf.abiVersion, elf.flags);
        o["elf_kernels"] = functionSymbols(elf);
      }
      objects.push_back(std::move(o));
    }
    OrderedJson kernels = OrderedJson::array();
    for (const GpuKernel &k : t.kernels)
      kernels.push_back({{"step", k.step},
                         {"symbol", k.symbol},
                         {"block_x", k.blockX},
                         {"grid_operand", k.gridOperand},
                         {"shared_bytes", k.sharedBytes},
                         {"args", k.args.size()}});
    targets.push_back({{"name", t.name},
                       {"objects", std::move(objects)},
                       {"kernels", std::move(kernels)}});
  }
  return targets;
}

/// "cuda.sm_90.cubin"; a second object of the same architecture and
/// format (the PTX of generated and of template kernels) gets ".1", etc.
std::string codeObjectFileName(const GpuTarget &t, size_t index) {
  const CodeObject &c = t.objects[index];
  size_t earlier = 0;
  for (size_t i = 0; i < index; ++i)
    earlier += t.objects[i].arch == c.arch && t.objects[i].format == c.format;
  return t.name + "." + c.arch + "." +
         (earlier ? std::to_string(earlier) + "." : "") + formatName(c.format);
}

size_t coveredSteps(const GpuTarget &t) {
  std::set<uint32_t> steps;
  for (const GpuKernel &k : t.kernels)
    steps.insert(k.step);
  return steps.size();
}

void printGpuTargets(const Artifact &art) {
  const Manifest &m = art.manifest();
  for (const GpuTarget &t : m.gpuTargets) {
    std::printf("\ngpu target %s: %zu kernels for %zu of %zu steps\n",
                t.name.c_str(), t.kernels.size(), coveredSteps(t),
                m.steps.size());
    std::vector<std::vector<std::string>> rows = {
        {"arch", "format", "bytes", "contents"}};
    for (const CodeObject &c : t.objects)
      rows.push_back({c.arch, formatName(c.format), std::to_string(c.bytes),
                      elfSummary(art.codeObjectData(t, c), c)});
    printTable(rows);
  }
}

Status extractCode(const Artifact &art, const std::string &dir) {
  const Manifest &m = art.manifest();
  if (m.gpuTargets.empty())
    return Status::error(art.path() + " holds no GPU code objects (targets: " +
                         (m.targets.empty() ? "none" : m.targets[0]) +
                         (m.targets.size() > 1 ? ", ..." : "") + ")");
  if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    return Status::error("cannot create " + dir + ": " + std::strerror(errno));
  for (const GpuTarget &t : m.gpuTargets)
    for (size_t i = 0; i < t.objects.size(); ++i) {
      const CodeObject &c = t.objects[i];
      const uint8_t *data = art.codeObjectData(t, c);
      const std::string path = dir + "/" + codeObjectFileName(t, i);
      if (Status s = writeFileAtomically(
              path,
              std::string_view(reinterpret_cast<const char *>(data), c.bytes));
          !s)
        return s;
      std::printf("%s (%llu bytes)\n", path.c_str(),
                  (unsigned long long)c.bytes);
    }
  return Status::ok();
}

} // namespace ingot::cli
