//===- ElfObject.cpp - Bounds-checked reader for GPU code objects ---------===//
//
// The order of checks follows the order of trust: the identification bytes,
// then the header's own fields, then the section table as a whole, then each
// section's bytes, and only then the names and symbols that point into
// those bytes. Nothing is read before the range holding it is checked, and
// every range check is written so that offset + length cannot wrap.
//
//===----------------------------------------------------------------------===//
#include "ingot/ElfObject.h"

#include <cstring>

namespace ingot {
namespace {

constexpr uint64_t kHeaderSize = 64;        // Elf64_Ehdr
constexpr uint64_t kSectionHeaderSize = 64; // Elf64_Shdr
constexpr uint64_t kSymbolSize = 24;        // Elf64_Sym
constexpr uint8_t kMagic[4] = {0x7f, 'E', 'L', 'F'};
constexpr uint8_t kClass64 = 2;
constexpr uint8_t kDataLittleEndian = 1;
constexpr uint8_t kIdentVersionCurrent = 1;
constexpr uint16_t kShnXindex = 0xffff;

// Little-endian loads, independent of the host's byte order. Callers have
// checked that the bytes lie inside the buffer.
uint16_t loadU16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t loadU32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}
uint64_t loadU64(const uint8_t *p) {
  return uint64_t(loadU32(p)) | uint64_t(loadU32(p + 4)) << 32;
}

/// Whether [offset, offset + length) lies inside a buffer of `size` bytes,
/// without computing offset + length (which may wrap).
bool inBuffer(uint64_t offset, uint64_t length, size_t size) {
  return offset <= size && length <= size - offset;
}

std::string str(uint64_t v) { return std::to_string(v); }

/// A section header as the file has it, before its name is resolved.
struct RawSection {
  uint32_t nameOffset = 0;
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint64_t entrySize = 0;
};

/// What the ELF header says about the section table.
struct SectionTableRef {
  uint64_t offset = 0;
  uint16_t count = 0;
  uint16_t entrySize = 0;
  uint16_t nameTableIndex = 0;
};

Status checkIdentification(const uint8_t *data, size_t size) {
  if (size < sizeof(kMagic) || std::memcmp(data, kMagic, sizeof(kMagic)) != 0)
    return Status::error("not an ELF file (bad magic)");
  if (size > 4 && data[4] != kClass64) {
    if (data[4] == 1)
      return Status::error("ELF class 1 (32-bit) is not supported");
    return Status::error("ELF class " + str(data[4]) +
                         " is not supported (expected 2, 64-bit)");
  }
  if (size > 5 && data[5] != kDataLittleEndian) {
    if (data[5] == 2)
      return Status::error("ELF data encoding 2 (big-endian) is not supported");
    return Status::error("ELF data encoding " + str(data[5]) +
                         " is not supported (expected 1, little-endian)");
  }
  if (size < kHeaderSize)
    return Status::error("truncated ELF header: " + str(size) +
                         " bytes, expected at least 64");
  if (data[6] != kIdentVersionCurrent)
    return Status::error("ELF identification version " + str(data[6]) +
                         " is not supported (expected 1)");
  return Status::ok();
}

/// Reads the header fields into `out` and `table`, and checks that the
/// section table lies inside the buffer.
Status parseHeader(const uint8_t *data, size_t size, ElfObject *out,
                   SectionTableRef *table) {
  if (Status st = checkIdentification(data, size); !st)
    return st;
  out->osabi = data[7];
  out->abiVersion = data[8];
  out->type = loadU16(data + 16);
  out->machine = loadU16(data + 18);
  out->flags = loadU32(data + 48);
  table->offset = loadU64(data + 40);
  table->entrySize = loadU16(data + 58);
  table->count = loadU16(data + 60);
  table->nameTableIndex = loadU16(data + 62);

  if (table->count == 0) {
    // With e_shoff set, e_shnum 0 means the count is in section 0's sh_size
    // (extended numbering, for 65280+ sections): no GPU code object has it.
    if (table->offset != 0)
      return Status::error(
          "ELF extended section numbering (e_shnum 0, e_shoff " +
          str(table->offset) + ") is not supported");
    if (table->nameTableIndex != 0)
      return Status::error("ELF section-name string table index " +
                           str(table->nameTableIndex) +
                           " is out of range (the file has no sections)");
    return Status::ok();
  }
  if (table->entrySize != kSectionHeaderSize)
    return Status::error("ELF e_shentsize is " + str(table->entrySize) +
                         ", expected 64");
  if (table->nameTableIndex == kShnXindex)
    return Status::error("ELF extended section-name string table index "
                         "(e_shstrndx 0xffff) is not supported");
  if (table->nameTableIndex >= table->count)
    return Status::error("ELF section-name string table index " +
                         str(table->nameTableIndex) + " is out of range (" +
                         str(table->count) + " sections)");
  // count * 64 is at most 4 MiB: no overflow.
  if (!inBuffer(table->offset, uint64_t(table->count) * kSectionHeaderSize,
                size))
    return Status::error("ELF section table (offset " + str(table->offset) +
                         ", " + str(table->count) +
                         " entries of 64 bytes) lies outside the file (" +
                         str(size) + " bytes)");
  return Status::ok();
}

/// Reads every section header and checks that each section's bytes lie
/// inside the buffer (SHT_NOBITS and SHT_NULL occupy none).
Status readSectionHeaders(const uint8_t *data, size_t size,
                          const SectionTableRef &table,
                          std::vector<RawSection> *raw) {
  raw->resize(table.count);
  for (uint16_t i = 0; i < table.count; ++i) {
    const uint8_t *p = data + table.offset + uint64_t(i) * kSectionHeaderSize;
    RawSection &s = (*raw)[i];
    s.nameOffset = loadU32(p);
    s.type = loadU32(p + 4);
    s.offset = loadU64(p + 24);
    s.size = loadU64(p + 32);
    s.link = loadU32(p + 40);
    s.entrySize = loadU64(p + 56);
    if (s.type == kShtNobits || s.type == kShtNull)
      continue;
    if (!inBuffer(s.offset, s.size, size))
      return Status::error("ELF section " + str(i) + ": its bytes (offset " +
                           str(s.offset) + ", size " + str(s.size) +
                           ") lie outside the file (" + str(size) + " bytes)");
  }
  return Status::ok();
}

/// Copies names out of string-table sections whose bytes are already known
/// to lie inside the buffer. Many symbols may name one long string: the
/// bytes copied in all are capped at a multiple of the file's size, so a
/// small file cannot make the parse allocate gigabytes.
class NameReader {
public:
  NameReader(const uint8_t *data, size_t size,
             const std::vector<RawSection> &raw)
      : data_(data), raw_(raw), budget_(kNameBudgetPerByte * size + 4096) {}

  /// The NUL-terminated string at `index` in section `tableIndex`; `what`
  /// names the owner of the name for the error message.
  Status read(uint32_t tableIndex, uint32_t index, const std::string &what,
              std::string *out) {
    const RawSection &table = raw_[tableIndex];
    if (index >= table.size)
      return Status::error(what + ": name offset " + str(index) +
                           " is beyond its string table (section " +
                           str(tableIndex) + ", " + str(table.size) +
                           " bytes)");
    const uint8_t *begin = data_ + table.offset + index;
    const void *nul = std::memchr(begin, 0, size_t(table.size - index));
    if (nul == nullptr)
      return Status::error(what + ": name at offset " + str(index) +
                           " is not NUL-terminated inside its string table "
                           "(section " +
                           str(tableIndex) + ")");
    const size_t length = size_t(static_cast<const uint8_t *>(nul) - begin);
    if (length > budget_)
      return Status::error(what + ": names total more than " +
                           str(kNameBudgetPerByte) +
                           " times the file's size (one long name repeated?)");
    budget_ -= length;
    out->assign(reinterpret_cast<const char *>(begin), length);
    return Status::ok();
  }

private:
  static constexpr uint64_t kNameBudgetPerByte = 16;
  const uint8_t *data_;
  const std::vector<RawSection> &raw_;
  uint64_t budget_;
};

/// `name` for an error message: hostile names may be long.
std::string quoted(const std::string &name) {
  constexpr size_t kShown = 64;
  if (name.size() <= kShown)
    return "'" + name + "'";
  return "'" + name.substr(0, kShown) + "...'";
}

/// Checks that `index` names a string-table section; `what` is its user.
Status checkStringTable(const std::vector<RawSection> &raw, uint64_t index,
                        const std::string &what) {
  if (index >= raw.size())
    return Status::error(what + ": string table index " + str(index) +
                         " is out of range (" + str(raw.size()) + " sections)");
  if (raw[index].type != kShtStrtab)
    return Status::error(what + ": section " + str(index) +
                         " is not a string table (type " +
                         str(raw[index].type) + ")");
  return Status::ok();
}

Status nameSections(const std::vector<RawSection> &raw, uint16_t nameTableIndex,
                    NameReader *names, std::vector<ElfSection> *sections) {
  // e_shstrndx 0 (SHN_UNDEF): the file has no section names.
  if (nameTableIndex != 0) {
    if (Status st = checkStringTable(raw, nameTableIndex,
                                     "ELF section-name string table");
        !st)
      return st;
  }
  sections->resize(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    ElfSection &s = (*sections)[i];
    s.type = raw[i].type;
    s.offset = raw[i].offset;
    s.size = raw[i].size;
    if (nameTableIndex == 0)
      continue;
    if (Status st = names->read(nameTableIndex, raw[i].nameOffset,
                                "ELF section " + str(i), &s.name);
        !st)
      return st;
  }
  return Status::ok();
}

/// The index of the one SHT_SYMTAB section, or 0 if there is none.
Status findSymbolTable(const std::vector<RawSection> &raw, size_t *index) {
  *index = 0;
  for (size_t i = 1; i < raw.size(); ++i) {
    if (raw[i].type != kShtSymtab)
      continue;
    if (*index != 0)
      return Status::error("ELF has more than one symbol table (sections " +
                           str(*index) + " and " + str(i) + ")");
    *index = i;
  }
  return Status::ok();
}

Status readSymbols(const uint8_t *data, const std::vector<RawSection> &raw,
                   NameReader *names, std::vector<ElfSymbol> *symbols) {
  size_t tableIndex = 0;
  if (Status st = findSymbolTable(raw, &tableIndex); !st)
    return st;
  if (tableIndex == 0)
    return Status::ok();
  const RawSection &table = raw[tableIndex];
  const std::string what = "ELF symbol table (section " + str(tableIndex) + ")";
  if (table.entrySize != kSymbolSize)
    return Status::error(what + ": entry size " + str(table.entrySize) +
                         ", expected 24");
  if (table.size % kSymbolSize != 0)
    return Status::error(what + ": size " + str(table.size) +
                         " is not a multiple of 24");
  if (Status st = checkStringTable(raw, table.link, what); !st)
    return st;
  // table.size was checked against the buffer: count is bounded by it.
  const uint64_t count = table.size / kSymbolSize;
  symbols->resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t *p = data + table.offset + i * kSymbolSize;
    ElfSymbol &sym = (*symbols)[i];
    if (Status st = names->read(table.link, loadU32(p), "ELF symbol " + str(i),
                                &sym.name);
        !st)
      return st;
    sym.type = p[4] & 0xf;
    sym.binding = p[4] >> 4;
    sym.other = p[5];
    sym.sectionIndex = loadU16(p + 6);
    sym.value = loadU64(p + 8);
    sym.size = loadU64(p + 16);
    if (sym.sectionIndex != 0 && sym.sectionIndex < kShnLoReserve &&
        sym.sectionIndex >= raw.size())
      return Status::error("ELF symbol " + str(i) + " (" + quoted(sym.name) +
                           "): section index " + str(sym.sectionIndex) +
                           " is out of range (" + str(raw.size()) +
                           " sections)");
  }
  return Status::ok();
}

} // namespace

Status parseElfObject(const uint8_t *data, size_t size, ElfObject *out) {
  *out = ElfObject();
  if (data == nullptr && size != 0)
    return Status::error("ELF buffer is null");
  SectionTableRef table;
  if (Status st = parseHeader(data, size, out, &table); !st)
    return st;
  std::vector<RawSection> raw;
  if (Status st = readSectionHeaders(data, size, table, &raw); !st)
    return st;
  NameReader names(data, size, raw);
  if (Status st =
          nameSections(raw, table.nameTableIndex, &names, &out->sections);
      !st)
    return st;
  return readSymbols(data, raw, &names, &out->symbols);
}

std::string cudaArchFromFlags(uint8_t abiVersion, uint32_t flags) {
  const uint32_t sm = abiVersion >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
  if (sm == 0)
    return "";
  return "sm_" + std::to_string(sm);
}

std::string amdgpuArchFromFlags(uint32_t flags) {
  // EF_AMDGPU_MACH_AMDGCN_* values of LLVM's AMDGPUUsage, GFX9 onward.
  struct Mach {
    uint8_t value;
    const char *name;
  };
  static constexpr Mach kMachs[] = {
      {0x2c, "gfx900"},  {0x2d, "gfx902"},  {0x2e, "gfx904"},
      {0x2f, "gfx906"},  {0x30, "gfx908"},  {0x31, "gfx909"},
      {0x32, "gfx90c"},  {0x33, "gfx1010"}, {0x34, "gfx1011"},
      {0x35, "gfx1012"}, {0x36, "gfx1030"}, {0x37, "gfx1031"},
      {0x38, "gfx1032"}, {0x39, "gfx1033"}, {0x3d, "gfx1035"},
      {0x3e, "gfx1034"}, {0x3f, "gfx90a"},  {0x40, "gfx940"},
      {0x41, "gfx1100"}, {0x42, "gfx1013"}, {0x43, "gfx1150"},
      {0x44, "gfx1103"}, {0x45, "gfx1036"}, {0x46, "gfx1101"},
      {0x47, "gfx1102"}, {0x48, "gfx1200"}, {0x4a, "gfx1151"},
      {0x4b, "gfx941"},  {0x4c, "gfx942"},  {0x4e, "gfx1201"},
      {0x4f, "gfx950"},
  };
  const uint32_t mach = flags & 0xff;
  for (const Mach &m : kMachs)
    if (m.value == mach)
      return m.name;
  return "";
}

std::vector<std::string> functionSymbols(const ElfObject &object) {
  std::vector<std::string> names;
  for (const ElfSymbol &sym : object.symbols)
    if (sym.type == kSttFunc && sym.binding == kStbGlobal &&
        sym.sectionIndex != 0)
      names.push_back(sym.name);
  return names;
}

bool hasSymbol(const ElfObject &object, std::string_view name) {
  for (const ElfSymbol &sym : object.symbols)
    if (sym.name == name)
      return true;
  return false;
}

} // namespace ingot
