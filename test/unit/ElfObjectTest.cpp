//===- ElfObjectTest.cpp - Cubins, AMDGPU objects and hostile ELF bytes --===//
//
// The cubins in test/fixtures/cubin were written by CUDA 13's nvJitLink from
// the PTX of one kernel, `add`. AMDGPU code objects are built here, since no
// ROCm toolchain is at hand; the builder lays them out as LLVM does
// (.shstrtab, .strtab, .symtab, then contents, then the section table).
//
//===----------------------------------------------------------------------===//
#include "ingot/ElfObject.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <limits>
#include <map>

using namespace ingot;

namespace {

using Bytes = std::vector<uint8_t>;

// The fixtures are found next to this source file (CMake compiles it by its
// absolute path), so the test runs from any working directory.
Bytes readFixture(const std::string &name) {
  const std::filesystem::path path =
      std::filesystem::path(__FILE__).parent_path() / ".." / "fixtures" /
      "cubin" / name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

uint64_t load(const Bytes &b, size_t at, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i)
    v |= uint64_t(b.at(at + i)) << (8 * i);
  return v;
}
void store(Bytes &b, size_t at, uint64_t v, int width) {
  for (int i = 0; i < width; ++i)
    b.at(at + i) = uint8_t(v >> (8 * i));
}
Bytes patched(Bytes b, size_t at, uint64_t v, int width) {
  store(b, at, v, width);
  return b;
}

// Field offsets of Elf64_Ehdr, Elf64_Shdr and Elf64_Sym.
constexpr size_t kEShoff = 40, kEShentsize = 58, kEShnum = 60, kEShstrndx = 62;
constexpr size_t kShName = 0, kShType = 4, kShOffset = 24, kShSize = 32,
                 kShLink = 40, kShEntsize = 56;
constexpr size_t kStName = 0, kStShndx = 6;

size_t sectionHeaderAt(const Bytes &b, size_t index) {
  return size_t(load(b, kEShoff, 8)) + index * 64;
}

Status parse(const Bytes &b, ElfObject *out) {
  return parseElfObject(b.data(), b.size(), out);
}

void expectRefused(const Bytes &b, const std::string &expected) {
  ElfObject obj;
  const Status st = parse(b, &obj);
  ASSERT_FALSE(st.isOk()) << "accepted; expected an error containing '"
                          << expected << "'";
  EXPECT_NE(st.message().find(expected), std::string::npos)
      << "message: " << st.message() << "\nexpected to contain: " << expected;
}

// What a successful parse promises its users: every section's bytes and
// every symbol's section index can be used without further checks.
void expectUsable(const ElfObject &obj, size_t size) {
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

const ElfSymbol *findSymbol(const ElfObject &obj, const std::string &name) {
  for (const ElfSymbol &sym : obj.symbols)
    if (sym.name == name)
      return &sym;
  return nullptr;
}

void expectCubinWithAdd(const Bytes &b, const std::string &arch) {
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

TEST(ElfObjectTest, CubinSm80) {
  expectCubinWithAdd(readFixture("k_sm80.cubin"), "sm_80");
}

TEST(ElfObjectTest, CubinSm90) {
  expectCubinWithAdd(readFixture("k_sm90.cubin"), "sm_90");
}

TEST(ElfObjectTest, CudaArchFromFlags) {
  // Measured on CUDA 13 nvJitLink cubins (ELF ABI version 8).
  EXPECT_EQ(cudaArchFromFlags(8, 0x6005004), "sm_80");
  EXPECT_EQ(cudaArchFromFlags(8, 0x6005a04), "sm_90");
  EXPECT_EQ(cudaArchFromFlags(8, 0x6006402), "sm_100");
  EXPECT_EQ(cudaArchFromFlags(8, 0x6007802), "sm_120");
  // Older cubins keep the SM number in the low byte.
  EXPECT_EQ(cudaArchFromFlags(7, 0x500550), "sm_80");
  EXPECT_EQ(cudaArchFromFlags(7, 0x5a), "sm_90");
  EXPECT_EQ(cudaArchFromFlags(8, 0x6000004), "");
  EXPECT_EQ(cudaArchFromFlags(7, 0), "");
}

TEST(ElfObjectTest, AmdgpuArchFromFlags) {
  EXPECT_EQ(amdgpuArchFromFlags(0x3f), "gfx90a");
  EXPECT_EQ(amdgpuArchFromFlags(0x4c), "gfx942");
  EXPECT_EQ(amdgpuArchFromFlags(0x41), "gfx1100");
  EXPECT_EQ(amdgpuArchFromFlags(0x36), "gfx1030");
  EXPECT_EQ(amdgpuArchFromFlags(0x30), "gfx908");
  // xnack (0x300) and sramecc (0xc00) feature bits do not change the chip.
  EXPECT_EQ(amdgpuArchFromFlags(0xf4c), "gfx942");
  EXPECT_EQ(amdgpuArchFromFlags(0), "");
  EXPECT_EQ(amdgpuArchFromFlags(0xff), "");
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

void appendLe(Bytes *b, uint64_t v, int width) {
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

Bytes buildAmdgpuObject(uint32_t flags, const std::vector<SymbolSpec> &syms) {
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

std::vector<SymbolSpec> kernelSymbols() {
  return {{"helper", kSttFunc, kStbLocal, kSynText, 4},
          {"my_kernel", kSttFunc, kStbGlobal, kSynText, 12},
          {"my_kernel.kd", kSttObject, kStbGlobal, kSynRodata, 64},
          {"external_fn", kSttFunc, kStbGlobal, 0, 0},
          {"scratch", kSttObject, kStbGlobal, kSynBss, 256}};
}

TEST(ElfObjectTest, AmdgpuGfx90aWithKernelDescriptor) {
  const Bytes b = buildAmdgpuObject(0x3f | 0x300, kernelSymbols());
  ElfObject obj;
  const Status st = parse(b, &obj);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(obj.machine, kEmAmdgpu);
  EXPECT_EQ(obj.osabi, 64);
  EXPECT_EQ(obj.abiVersion, 3);
  EXPECT_EQ(obj.type, 3);
  EXPECT_EQ(amdgpuArchFromFlags(obj.flags), "gfx90a");
  ASSERT_EQ(obj.sections.size(), kSynCount);
  EXPECT_EQ(obj.sections[kSynBss].name, ".bss");
  ASSERT_EQ(obj.symbols.size(), 6u); // with the null symbol
  EXPECT_EQ(obj.symbols[0].name, "");
  // Only the defined global function: not the local helper, not the import.
  EXPECT_EQ(functionSymbols(obj), std::vector<std::string>{"my_kernel"});
  const ElfSymbol *kd = findSymbol(obj, "my_kernel.kd");
  ASSERT_NE(kd, nullptr);
  EXPECT_EQ(kd->type, kSttObject);
  EXPECT_EQ(kd->binding, kStbGlobal);
  EXPECT_EQ(kd->size, 64u);
  EXPECT_EQ(obj.sections[kd->sectionIndex].name, ".rodata");
  EXPECT_FALSE(hasSymbol(obj, "my_kernel.k"));
  expectUsable(obj, b.size());
}

TEST(ElfObjectTest, AmdgpuGfx942) {
  ElfObject obj;
  ASSERT_TRUE(parse(buildAmdgpuObject(0x4c, kernelSymbols()), &obj).isOk());
  EXPECT_EQ(amdgpuArchFromFlags(obj.flags), "gfx942");
  EXPECT_TRUE(hasSymbol(obj, "my_kernel.kd"));
}

// --- Hostile inputs ---------------------------------------------------------

// Each prefix is its own allocation of exactly that size, so the ASan build
// reports any read past it. The cubin's program headers follow the section
// table and are not read: prefixes holding all sections parse.
TEST(ElfObjectTest, EveryTruncationOfACubin) {
  const Bytes whole = readFixture("k_sm80.cubin");
  ElfObject full;
  ASSERT_TRUE(parse(whole, &full).isOk());
  uint64_t needed = load(whole, kEShoff, 8) + 64 * load(whole, kEShnum, 2);
  for (const ElfSection &s : full.sections)
    if (s.type != kShtNobits)
      needed = std::max(needed, s.offset + s.size);
  ASSERT_LT(needed, whole.size());
  for (size_t len = 0; len < whole.size(); ++len) {
    const Bytes prefix(whole.begin(), whole.begin() + len);
    ElfObject obj;
    const Status st = parse(prefix, &obj);
    ASSERT_EQ(st.isOk(), len >= needed)
        << "prefix " << len << ": " << st.message();
    if (st.isOk())
      EXPECT_EQ(functionSymbols(obj), functionSymbols(full));
    else
      EXPECT_FALSE(st.message().empty());
  }
}

// Any single byte of the header or section table set to 0xff or 0: the
// parse refuses or yields an object whose ranges can be trusted.
TEST(ElfObjectTest, EverySmashedHeaderByte) {
  const Bytes whole = readFixture("k_sm80.cubin");
  const size_t shoff = sectionHeaderAt(whole, 0);
  const size_t shend = sectionHeaderAt(whole, load(whole, kEShnum, 2));
  for (size_t at = 0; at < shend; at = at == 63 ? shoff : at + 1) {
    for (uint8_t value : {uint8_t(0), uint8_t(0xff)}) {
      const Bytes b = patched(whole, at, value, 1);
      ElfObject obj;
      if (parse(b, &obj).isOk())
        expectUsable(obj, b.size());
    }
  }
}

TEST(ElfObjectTest, RefusesWhatIsNotElf64LittleEndian) {
  const Bytes cubin = readFixture("k_sm80.cubin");
  expectRefused(Bytes{}, "not an ELF file (bad magic)");
  expectRefused(Bytes{0x7f, 'E', 'L'}, "not an ELF file (bad magic)");
  expectRefused(patched(cubin, 0, 'M', 1), "not an ELF file (bad magic)");
  expectRefused(patched(cubin, 4, 1, 1),
                "ELF class 1 (32-bit) is not supported");
  expectRefused(patched(cubin, 4, 7, 1), "ELF class 7");
  expectRefused(patched(cubin, 5, 2, 1), "big-endian");
  expectRefused(patched(cubin, 6, 0, 1), "identification version 0");
  expectRefused(Bytes(cubin.begin(), cubin.begin() + 63),
                "truncated ELF header: 63 bytes");
}

TEST(ElfObjectTest, RefusesABadSectionTable) {
  const Bytes c = readFixture("k_sm80.cubin");
  const uint64_t kMax = std::numeric_limits<uint64_t>::max();
  expectRefused(patched(c, kEShentsize, 56, 2),
                "e_shentsize is 56, expected 64");
  expectRefused(patched(c, kEShnum, 0xffff, 2),
                "65535 entries of 64 bytes) lies outside the file");
  expectRefused(patched(c, kEShoff, kMax - 100, 8),
                "section table (offset 18446744073709551515");
  expectRefused(patched(c, kEShoff, c.size() - 64, 8), "lies outside the file");
  expectRefused(patched(c, kEShnum, 0, 2), "extended section numbering");
  expectRefused(patched(c, kEShstrndx, 200, 2),
                "string table index 200 is out of range (14 sections)");
  expectRefused(patched(c, kEShstrndx, 0xffff, 2), "e_shstrndx 0xffff");
  expectRefused(patched(c, kEShstrndx, 3, 2), // .symtab
                "section 3 is not a string table");
}

TEST(ElfObjectTest, RefusesSectionsOutsideTheFile) {
  const Bytes c = readFixture("k_sm80.cubin");
  expectRefused(patched(c, sectionHeaderAt(c, 13) + kShOffset, c.size() + 1, 8),
                "ELF section 13: its bytes (offset 4137");
  expectRefused(patched(c, sectionHeaderAt(c, 13) + kShSize, c.size(), 8),
                "ELF section 13: its bytes");
  // offset + size wraps to a small number: must still be refused.
  Bytes b = patched(c, sectionHeaderAt(c, 4) + kShOffset, 16, 8);
  store(b, sectionHeaderAt(b, 4) + kShSize,
        std::numeric_limits<uint64_t>::max() - 8, 8);
  expectRefused(b, "ELF section 4: its bytes");
  // The symbol table running past the end of the file.
  expectRefused(patched(c, sectionHeaderAt(c, 3) + kShSize, 24 * 1000, 8),
                "ELF section 3: its bytes");
}

TEST(ElfObjectTest, RefusesBadNames) {
  const Bytes c = readFixture("k_sm80.cubin");
  ElfObject full;
  ASSERT_TRUE(parse(c, &full).isOk());
  const size_t addAt = size_t(full.sections[3].offset) + 8 * 24;
  ASSERT_EQ(full.symbols[8].name, "add");
  expectRefused(patched(c, addAt + kStName, 0x10000, 4),
                "ELF symbol 8: name offset 65536 is beyond its string "
                "table (section 2, 255 bytes)");
  expectRefused(patched(c, sectionHeaderAt(c, 5) + kShName, 0xfffffff0, 4),
                "ELF section 5: name offset 4294967280 is beyond");
  // Every byte from `add`'s name to the end of .strtab made non-NUL.
  Bytes b = c;
  const ElfSection &strtab = full.sections[2];
  const size_t nameAt = strtab.offset + load(c, addAt + kStName, 4);
  std::fill(b.begin() + nameAt, b.begin() + strtab.offset + strtab.size, 'x');
  expectRefused(b, "ELF symbol 8: name at offset");
  expectRefused(b, "is not NUL-terminated inside its string table");
  // .shstrtab cut short, so that the last section name loses its NUL.
  expectRefused(
      patched(c, sectionHeaderAt(c, 1) + kShSize, full.sections[1].size - 1, 8),
      "not NUL-terminated");
}

TEST(ElfObjectTest, RefusesABadSymbolTable) {
  const Bytes c = readFixture("k_sm80.cubin");
  const size_t symtab = sectionHeaderAt(c, 3);
  expectRefused(patched(c, symtab + kShEntsize, 16, 8),
                "symbol table (section 3): entry size 16, expected 24");
  expectRefused(patched(c, symtab + kShSize, 24 * 9 - 1, 8),
                "size 215 is not a multiple of 24");
  expectRefused(patched(c, symtab + kShLink, 99, 4),
                "string table index 99 is out of range");
  expectRefused(patched(c, symtab + kShLink, 4, 4), // .debug_frame
                "section 4 is not a string table");
  expectRefused(patched(c, sectionHeaderAt(c, 4) + kShType, kShtSymtab, 4),
                "more than one symbol table (sections 3 and 4)");

  ElfObject full;
  ASSERT_TRUE(parse(c, &full).isOk());
  const size_t addShndx = full.sections[3].offset + 8 * 24 + kStShndx;
  expectRefused(patched(c, addShndx, 200, 2),
                "ELF symbol 8 ('add'): section index 200 is out of range");
  // Reserved indices (SHN_ABS) name no section and are kept as they are.
  ElfObject obj;
  ASSERT_TRUE(parse(patched(c, addShndx, 0xfff1, 2), &obj).isOk());
  EXPECT_EQ(obj.symbols[8].sectionIndex, 0xfff1);
}

TEST(ElfObjectTest, AcceptsAnObjectWithoutSections) {
  Bytes b = buildAmdgpuObject(0x4c, {});
  store(b, kEShoff, 0, 8);
  store(b, kEShnum, 0, 2);
  store(b, kEShstrndx, 0, 2);
  ElfObject obj;
  ASSERT_TRUE(parse(b, &obj).isOk());
  EXPECT_TRUE(obj.sections.empty());
  EXPECT_TRUE(obj.symbols.empty());
  EXPECT_TRUE(functionSymbols(obj).empty());
}

// One long name shared by thousands of symbols: the copies would be 8 MB
// from a 60 KB file. Refused; a few symbols sharing a name are fine.
TEST(ElfObjectTest, RefusesAmplifiedNames) {
  const std::string longName(4000, 'k');
  std::vector<SymbolSpec> syms(2000,
                               {longName, kSttFunc, kStbGlobal, kSynText, 4});
  expectRefused(buildAmdgpuObject(0x4c, syms), "names total more than 16 "
                                               "times the file's size");
  syms.resize(20);
  ElfObject obj;
  ASSERT_TRUE(parse(buildAmdgpuObject(0x4c, syms), &obj).isOk());
  EXPECT_EQ(functionSymbols(obj).size(), 20u);
}

} // namespace
