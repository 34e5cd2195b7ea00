//===- ElfTestUtil.h - Bytes, fixtures and an AMDGPU builder for ELF tests ===//
//
// Shared by ElfObjectTest.cpp (cubins, hostile bytes) and ElfAmdgpuTest.cpp
// (synthetic AMDGPU code objects): the cubin fixtures of test/fixtures/cubin
// (written by CUDA 13's nvJitLink from the PTX of one kernel, `add`), byte
// patching, and a builder that lays AMDGPU objects out as LLVM does
// (.shstrtab, .strtab, .symtab, then contents, then the section table).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ElfObject.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <limits>
#include <map>

namespace ingot::elftest {

using Bytes = std::vector<uint8_t>;

// The fixtures are found next to this source file (CMake compiles it by its
// absolute path), so the test runs from any working directory.
inline Bytes readFixture(const std::string &name) {
  const std::filesystem::path path =
      std::filesystem::path(__FILE__).parent_path() / ".." / "fixtures" /
      "cubin" / name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

inline uint64_t load(const Bytes &b, size_t at, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i)
    v |= uint64_t(b.at(at + i)) << (8 * i);
  return v;
}
inline void store(Bytes &b, size_t at, uint64_t v, int width) {
  for (int i = 0; i < width; ++i)
    b.at(at + i) = uint8_t(v >> (8 * i));
}
inline Bytes patched(Bytes b, size_t at, uint64_t v, int width) {
  store(b, at, v, width);
  return b;
}

// Field offsets of Elf64_Ehdr, Elf64_Shdr and Elf64_Sym.
inline constexpr size_t kEShoff = 40, kEShentsize = 58, kEShnum = 60,
                        kEShstrndx = 62;
inline constexpr size_t kShName = 0, kShType = 4, kShOffset = 24, kShSize = 32,
                        kShLink = 40, kShEntsize = 56;
inline constexpr size_t kStName = 0, kStShndx = 6;

inline size_t sectionHeaderAt(const Bytes &b, size_t index) {
  return size_t(load(b, kEShoff, 8)) + index * 64;
}

inline Status parse(const Bytes &b, ElfObject *out) {
  return parseElfObject(b.data(), b.size(), out);
}

inline void expectRefused(const Bytes &b, const std::string &expected) {
  ElfObject obj;
  const Status st = parse(b, &obj);
  ASSERT_FALSE(st.isOk()) << "accepted; expected an error containing '"
                          << expected << "'";
  EXPECT_NE(st.message().find(expected), std::string::npos)
      << "message: " << st.message() << "\nexpected to contain: " << expected;
}

// What a successful parse promises its users: every section's bytes and
// every symbol's section index can be used without further checks.
inline void expectUsable(const ElfObject &obj, size_t size) {
  for (const ElfSection &s : obj.sections) {
    if (s.type == kShtNobits || s.type == kShtNull)
      continue;
    EXPECT_LE(s.offset, size);
    EXPECT_LE(s.size, size - std::min<uint64_t>(s.offset, size));
  }
  for (const ElfSymbol &sym : obj.symbols) {
    if (sym.sectionIndex >= kShnLoReserve)
      continue; // SHN_ABS, SHN_COMMON, ...: no section
    EXPECT_LT(sym.sectionIndex, std::max<size_t>(obj.sections.size(), 1));
  }
}

inline const ElfSymbol *findSymbol(const ElfObject &obj,
                                   const std::string &name) {
  for (const ElfSymbol &sym : obj.symbols)
    if (sym.name == name)
      return &sym;
  return nullptr;
}

inline void expectCubinWithAdd(const Bytes &b, const std::string &arch) {
  ElfObject obj;
  const Status st = parse(b, &obj);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(obj.machine, kEmCuda);
  EXPECT_EQ(obj.osabi, 0x41);
  EXPECT_EQ(obj.abiVersion, 8);
  EXPECT_EQ(obj.type, 2); // ET_EXEC
  EXPECT_EQ(cudaArchFromFlags(obj.abiVersion, obj.flags), arch);
  EXPECT_EQ(functionSymbols(obj), std::vector<std::string>{"add"});
  EXPECT_TRUE(hasSymbol(obj, "add"));
  EXPECT_FALSE(hasSymbol(obj, "ad"));
  const ElfSymbol *add = findSymbol(obj, "add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->type, kSttFunc);
  EXPECT_EQ(add->binding, kStbGlobal);
  EXPECT_GT(add->size, 0u);
  ASSERT_LT(add->sectionIndex, obj.sections.size());
  EXPECT_EQ(obj.sections[add->sectionIndex].name, ".text.add");
  EXPECT_EQ(obj.sections[1].name, ".shstrtab");
  expectUsable(obj, b.size());
}

// --- Synthetic AMDGPU code objects ----------------------------------------

struct SymbolSpec {
  std::string name;
  uint8_t type;
  uint8_t binding;
  uint16_t section;
  uint64_t size;
};

// Sections of the synthetic object, in order.
constexpr uint16_t kSynText = 4, kSynRodata = 5, kSynBss = 6, kSynCount = 7;

inline void appendLe(Bytes *b, uint64_t v, int width) {
  for (int i = 0; i < width; ++i)
    b->push_back(uint8_t(v >> (8 * i)));
}

// A string table that stores each distinct string once, as linkers do.
struct StringTable {
  std::string bytes = std::string(1, '\0');
  std::map<std::string, uint32_t> at;
  uint32_t add(const std::string &s) {
    auto [it, added] = at.try_emplace(s, uint32_t(bytes.size()));
    if (added)
      bytes.append(s).push_back('\0');
    return it->second;
  }
};

inline Bytes buildAmdgpuObject(uint32_t flags,
                               const std::vector<SymbolSpec> &syms) {
  StringTable shstrtab, strtab;
  Bytes symtab(24, 0); // the null symbol
  for (const SymbolSpec &s : syms) {
    appendLe(&symtab, strtab.add(s.name), 4);
    appendLe(&symtab, uint8_t(s.binding << 4 | s.type), 1);
    appendLe(&symtab, 0, 1); // st_other
    appendLe(&symtab, s.section, 2);
    appendLe(&symtab, 0, 8); // st_value
    appendLe(&symtab, s.size, 8);
  }
  struct Section {
    const char *name;
    uint32_t type, link;
    uint64_t entsize;
    Bytes contents;
  };
  std::vector<Section> sections = {
      {"", kShtNull, 0, 0, {}},
      {".shstrtab", kShtStrtab, 0, 0, {}},
      {".strtab", kShtStrtab, 0, 0,
       Bytes(strtab.bytes.begin(), strtab.bytes.end())},
      {".symtab", kShtSymtab, 2, 24, symtab},
      {".text", 1 /*PROGBITS*/, 0, 0, Bytes(16, 0xcc)},
      {".rodata", 1, 0, 0, Bytes(64, 0)},
      {".bss", kShtNobits, 0, 0, {}}};
  for (const Section &s : sections)
    shstrtab.add(s.name);
  sections[1].contents.assign(shstrtab.bytes.begin(), shstrtab.bytes.end());

  Bytes b(64, 0);
  std::vector<uint64_t> offsets;
  for (const Section &s : sections) {
    b.resize((b.size() + 7) & ~size_t(7));
    offsets.push_back(b.size());
    b.insert(b.end(), s.contents.begin(), s.contents.end());
  }
  const uint64_t shoff = b.size();
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section &s = sections[i];
    // .bss occupies no file bytes: an offset and size past the end are fine.
    const bool bss = s.type == kShtNobits;
    appendLe(&b, shstrtab.add(s.name), 4);
    appendLe(&b, s.type, 4);
    appendLe(&b, 0, 8); // sh_flags
    appendLe(&b, 0, 8); // sh_addr
    appendLe(&b, bss ? shoff + 4096 : offsets[i], 8);
    appendLe(&b, bss ? 1 << 20 : s.contents.size(), 8);
    appendLe(&b, s.link, 4);
    appendLe(&b, 0, 4); // sh_info
    appendLe(&b, 8, 8); // sh_addralign
    appendLe(&b, s.entsize, 8);
  }
  const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64 /*AMDGPU_HSA*/,
                             3 /*code object v5*/};
  std::memcpy(b.data(), ident, sizeof(ident));
  store(b, 16, 3, 2); // ET_DYN
  store(b, 18, kEmAmdgpu, 2);
  store(b, 20, 1, 4); // e_version
  store(b, kEShoff, shoff, 8);
  store(b, 48, flags, 4);
  store(b, 52, 64, 2); // e_ehsize
  store(b, kEShentsize, 64, 2);
  store(b, kEShnum, sections.size(), 2);
  store(b, kEShstrndx, 1, 2);
  return b;
}

inline std::vector<SymbolSpec> kernelSymbols() {
  return {{"helper", kSttFunc, kStbLocal, kSynText, 4},
          {"my_kernel", kSttFunc, kStbGlobal, kSynText, 12},
          {"my_kernel.kd", kSttObject, kStbGlobal, kSynRodata, 64},
          {"external_fn", kSttFunc, kStbGlobal, 0, 0},
          {"scratch", kSttObject, kStbGlobal, kSynBss, 256}};
}

} // namespace ingot::elftest
