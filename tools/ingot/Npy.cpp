//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// Layout: "\x93NUMPY", major, minor, header length (u16 for 1.0, u32 for
// 2.0/3.0), then an ASCII Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
// spaces and '\n' so the data starts on a 64-byte boundary.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "ingot/AtomicFile.h"
#include "ingot/ShapeRules.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sys/stat.h>

namespace ingot {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct DescrName {
  DType dtype;
  const char *descr; // little-endian (or byte-order-free) form
};
constexpr DescrName kDescrs[] = {
    {DType::F32, "<f4"}, {DType::F64, "<f8"},  {DType::F16, "<f2"},
    {DType::I64, "<i8"}, {DType::I32, "<i4"},  {DType::I8, "|i1"},
    {DType::U8, "|u1"},  {DType::Bool, "|b1"}, {DType::I16, "<i2"},
    {DType::U16, "<u2"}, {DType::U32, "<u4"},  {DType::U64, "<u8"},
};

/// A tiny cursor over the header dict: just enough Python literal syntax
/// for what numpy writes.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &s) : s_(s) {}
  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' ||
                                s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  std::optional<std::string> string() {
    skipSpace();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      return std::nullopt;
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string::npos)
      return std::nullopt;
    std::string r = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return r;
  }
  std::optional<std::string> word() { // True / False
    skipSpace();
    size_t b = pos_;
    while (pos_ < s_.size() &&
           std::isalpha(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
    if (b == pos_)
      return std::nullopt;
    return s_.substr(b, pos_ - b);
  }
  std::optional<int64_t> integer() {
    skipSpace();
    size_t b = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() &&
           std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      if (v > (INT64_MAX - 9) / 10)
        return std::nullopt;
      v = v * 10 + (s_[pos_++] - '0');
    }
    if (pos_ < s_.size() && (s_[pos_] == 'L')) // Python 2 longs
      ++pos_;
    if (b == pos_)
      return std::nullopt;
    return v;
  }

private:
  const std::string &s_;
  size_t pos_ = 0;
};

Status parseHeader(const std::string &header, const std::string &name,
                   DType *dtype, std::vector<int64_t> *shape, bool *raw) {
  auto bad = [&](const std::string &why) {
    return Status::error(name + ": malformed .npy header (" + why +
                         "): " + header);
  };
  HeaderParser p(header);
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<int64_t>> dims;
  if (!p.consume('{'))
    return bad("expected '{'");
  while (!p.consume('}')) {
    std::optional<std::string> key = p.string();
    if (!key || !p.consume(':'))
      return bad("expected a quoted key and ':'");
    if (*key == "descr") {
      descr = p.string();
      if (!descr)
        return bad("descr is not a string");
    } else if (*key == "fortran_order") {
      std::optional<std::string> w = p.word();
      if (!w || (*w != "True" && *w != "False"))
        return bad("fortran_order is not True/False");
      fortran = *w == "True";
    } else if (*key == "shape") {
      if (!p.consume('('))
        return bad("shape is not a tuple");
      dims.emplace();
      while (!p.consume(')')) {
        std::optional<int64_t> d = p.integer();
        if (!d)
          return bad("shape holds a non-integer");
        dims->push_back(*d);
        if (!p.consume(',') && !p.peek(')'))
          return bad("expected ',' or ')' in shape");
      }
    } else {
      return bad("unexpected key '" + *key + "'");
    }
    if (!p.consume(',') && !p.peek('}'))
      return bad("expected ',' or '}'");
  }
  if (!descr || !fortran || !dims)
    return bad("needs descr, fortran_order and shape");
  if (*fortran && dims->size() > 1)
    return Status::error(name +
                         ": Fortran-order arrays are not supported; "
                         "save a C-order array (numpy.ascontiguousarray)");
  std::string d = *descr;
  if (d.size() == 3 && d[0] == '>' && d[2] != '1')
    return Status::error(name + ": big-endian dtype '" + d +
                         "' is not supported; save with a little-endian "
                         "dtype (e.g. arr.astype('<f4'))");
  // 1-byte types carry no byte order; numpy writes '|' but accept any.
  if (d.size() == 3 && d[2] == '1')
    d[0] = '|';
  else if (d.size() == 3 && d[0] == '=')
    d[0] = '<'; // native order on a little-endian host
  for (const DescrName &dn : kDescrs)
    if (d == dn.descr) {
      *dtype = dn.dtype;
      *shape = *dims;
      return Status::ok();
    }
  // Raw bytes: what numpy writes for ml_dtypes' bfloat16, float8, float4
  // and int4/int2 arrays. Their type is the caller's to supply.
  // (float8_e5m2 and float8_e4m3fn may be saved as '<f1').
  if (d.size() == 3 && (d[1] == 'V' || d == "|f1") &&
      (d[2] == '1' || d[2] == '2')) {
    *dtype = d[2] == '1' ? DType::U8 : DType::U16;
    *shape = *dims;
    *raw = true;
    return Status::ok();
  }
  return Status::error(name + ": unsupported .npy dtype '" + *descr +
                       "' (supported: float32, float64, float16, int64, "
                       "int32, int16, int8, uint64, uint32, uint16, uint8, "
                       "bool, and 1- or 2-byte raw values for ml_dtypes' "
                       "types)");
}

} // namespace

Status parseNpy(const uint8_t *data, size_t size, const std::string &name,
                HostTensor *out, bool *rawBytes) {
  if (size < kMagicLen + 4 || std::memcmp(data, kMagic, kMagicLen) != 0)
    return Status::error(name + ": not a .npy file (bad magic)");
  const uint8_t major = data[6];
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = data[8] | size_t(data[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return Status::error(name + ": truncated .npy header");
    headerLen = data[8] | size_t(data[9]) << 8 | size_t(data[10]) << 16 |
                size_t(data[11]) << 24;
    offset = 12;
  } else {
    return Status::error(name + ": unsupported .npy format version " +
                         std::to_string(major) + "." + std::to_string(data[7]));
  }
  if (headerLen > size - offset)
    return Status::error(name + ": truncated .npy header");
  std::string header(reinterpret_cast<const char *>(data + offset), headerLen);
  DType dtype;
  std::vector<int64_t> shape;
  bool raw = false;
  if (Status s = parseHeader(header, name, &dtype, &shape, &raw); !s)
    return s;
  if (raw && !rawBytes)
    return Status::error(name + ": holds raw values (as numpy saves "
                                "ml_dtypes' types), whose type only the "
                                "model can say");
  if (rawBytes)
    *rawBytes = raw;
  const size_t dataOffset = offset + headerLen;
  // Overflow-checked element count.
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > UINT64_MAX / uint64_t(d))
      return Status::error(name + ": shape " + shape::toString(shape) +
                           " is too large");
    count *= uint64_t(d);
  }
  const uint64_t es = dtypeSize(dtype);
  const uint64_t have = size - dataOffset;
  if (count > have / es || count * es != have)
    return Status::error(
        name + (count > have / es ? ": truncated" : ": has trailing bytes") +
        ": shape " + shape::toString(shape) + " of " + dtypeName(dtype) +
        " needs " +
        (count > UINT64_MAX / es ? std::string("too many")
                                 : std::to_string(count * es)) +
        " bytes of data, found " + std::to_string(have));
  out->dtype = dtype;
  out->shape = std::move(shape);
  out->data.assign(data + dataOffset, data + size);
  return Status::ok();
}

Status readNpy(const std::string &path, HostTensor *out, bool *rawBytes) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  // Checked on the open file, not the path: /dev/zero or a FIFO would be
  // read without end.
  struct stat st;
  if (::fstat(::fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(f);
    return Status::error(path + ": not a regular file");
  }
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    bytes.insert(bytes.end(), buf, buf + n);
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed)
    return Status::error(path + ": read error");
  return parseNpy(bytes.data(), bytes.size(), path, out, rawBytes);
}

Status encodeNpy(const HostTensor &t, const std::string &name,
                 std::vector<uint8_t> *out) {
  const char *descr = nullptr;
  for (const DescrName &dn : kDescrs)
    if (dn.dtype == t.dtype)
      descr = dn.descr;
  if (isRawNpyDType(t.dtype)) // as numpy saves ml_dtypes' arrays
    descr = dtypeSize(t.dtype) == 2 ? "<V2" : "|V1";
  if (!descr)
    return Status::error(name + ": dtype " + std::string(dtypeName(t.dtype)) +
                         " has no .npy equivalent");
  const uint64_t bytes =
      uint64_t(shape::numElements(t.shape)) * dtypeSize(t.dtype);
  if (t.data.size() != bytes)
    return Status::error(name + ": tensor of shape " +
                         shape::toString(t.shape) + " holds " +
                         std::to_string(t.data.size()) + " bytes, expected " +
                         std::to_string(bytes));
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    dict += std::to_string(t.shape[i]);
    if (t.shape.size() == 1)
      dict += ','; // a 1-tuple is "(3,)"
    else if (i + 1 < t.shape.size())
      dict += ", ";
  }
  dict += "), }";
  // Pad with spaces and a final newline so data starts 64-byte aligned.
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  const size_t len = dict.size();
  out->assign(prefix + len + t.data.size(), 0);
  uint8_t *p = out->data();
  std::memcpy(p, kMagic, kMagicLen);
  p[6] = v2 ? 2 : 1;
  p[7] = 0;
  for (size_t i = 0; i < prefix - 8; ++i) // little-endian header length
    p[8 + i] = uint8_t(len >> (8 * i));
  std::memcpy(p + prefix, dict.data(), len);
  if (!t.data.empty())
    std::memcpy(p + prefix + len, t.data.data(), t.data.size());
  return Status::ok();
}

Status writeNpy(const std::string &path, const HostTensor &t) {
  std::vector<uint8_t> bytes;
  if (Status s = encodeNpy(t, path, &bytes); !s)
    return s;
  // Whole or not at all: a full disk keeps an earlier output intact.
  return writeFileAtomically(
      path, std::string_view(reinterpret_cast<const char *>(bytes.data()),
                             bytes.size()));
}

} // namespace ingot
