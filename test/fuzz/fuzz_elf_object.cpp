//===- fuzz_elf_object.cpp - GPU code object bytes -> parseElfObject ------===//
//
// Cubins and AMDGPU code objects come from artifacts and files the loader
// did not write. A parse that succeeds promises that every section's bytes
// lie inside the buffer and every symbol's section index names a section;
// the target reads those bytes (so ASan checks the promise) and aborts if an
// index is out of range. The seed is a real sm_80 cubin.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "ingot/ElfObject.h"

#include <cstdlib>

using namespace ingot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ElfObject object;
  if (!fuzz::report("elf", parseElfObject(data, size, &object)))
    return 0;
  volatile uint8_t sink = 0;
  for (const ElfSection &s : object.sections) {
    if (s.type == kShtNobits || s.type == kShtNull)
      continue;
    for (uint64_t i = 0; i < s.size; ++i)
      sink = sink ^ data[s.offset + i];
  }
  for (const ElfSymbol &sym : object.symbols)
    if (sym.sectionIndex < kShnLoReserve && sym.sectionIndex != 0 &&
        sym.sectionIndex >= object.sections.size())
      std::abort();
  (void)cudaArchFromFlags(object.abiVersion, object.flags);
  (void)amdgpuArchFromFlags(object.flags);
  for (const std::string &name : functionSymbols(object))
    if (!hasSymbol(object, name))
      std::abort();
  return 0;
}
