//===- ProtoWire.h - Minimal protobuf wire-format writer/reader -*- C++ -*-===//
//
// Just enough of the protobuf encoding for the manifest, so the runtime needs
// no libprotobuf: varints, fixed64, length-delimited fields and packed
// repeated scalars. The reader checks every length against the bytes left
// before it reads or allocates anything, so hostile input cannot make it read
// out of bounds or reserve more than the input's size.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::proto {

enum WireType : uint32_t { Varint = 0, Fixed64 = 1, Len = 2, Fixed32 = 5 };

class Writer {
public:
  std::vector<uint8_t> &bytes() { return out_; }

  void varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(uint8_t(v) | 0x80);
      v >>= 7;
    }
    out_.push_back(uint8_t(v));
  }
  void tag(uint32_t field, WireType type) {
    varint(uint64_t(field) << 3 | type);
  }

  void uintField(uint32_t field, uint64_t v) {
    tag(field, Varint);
    varint(v);
  }
  // int32/int64 fields: negative values are sign-extended to 64 bits.
  void intField(uint32_t field, int64_t v) { uintField(field, uint64_t(v)); }
  void doubleField(uint32_t field, double v) {
    tag(field, Fixed64);
    fixed64(v);
  }
  void bytesField(uint32_t field, std::string_view s) {
    tag(field, Len);
    varint(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void messageField(uint32_t field, const Writer &sub) {
    tag(field, Len);
    varint(sub.out_.size());
    out_.insert(out_.end(), sub.out_.begin(), sub.out_.end());
  }
  template <typename Int>
  void packedInts(uint32_t field, const std::vector<Int> &vs) {
    if (vs.empty())
      return;
    Writer sub;
    for (Int v : vs)
      sub.varint(uint64_t(int64_t(v)));
    messageField(field, sub);
  }
  template <typename Uint>
  void packedUints(uint32_t field, const std::vector<Uint> &vs) {
    if (vs.empty())
      return;
    Writer sub;
    for (Uint v : vs)
      sub.varint(uint64_t(v));
    messageField(field, sub);
  }
  void packedDoubles(uint32_t field, const std::vector<double> &vs) {
    if (vs.empty())
      return;
    Writer sub;
    for (double v : vs)
      sub.fixed64(v);
    messageField(field, sub);
  }

  void packedFloats(uint32_t field, const std::vector<float> &vs) {
    if (vs.empty())
      return;
    Writer sub;
    for (float f : vs) {
      uint32_t v;
      std::memcpy(&v, &f, 4);
      for (int i = 0; i < 4; ++i)
        sub.out_.push_back(uint8_t(v >> (8 * i)));
    }
    messageField(field, sub);
  }

private:
  void fixed64(double d) {
    uint64_t v;
    std::memcpy(&v, &d, 8);
    for (int i = 0; i < 8; ++i)
      out_.push_back(uint8_t(v >> (8 * i)));
  }
  std::vector<uint8_t> out_;
};

/// Reads one message. Every method returns false on malformed input and sets
/// error() to say what was wrong.
class Reader {
public:
  Reader(const uint8_t *data, size_t size) : p_(data), end_(data + size) {}

  bool atEnd() const { return p_ == end_; }
  const char *error() const { return error_; }

  bool varint(uint64_t *v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_)
        return fail("truncated varint");
      uint8_t b = *p_++;
      if (shift == 63 && b > 1)
        return fail("varint overflows 64 bits");
      result |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *v = result;
        return true;
      }
    }
    return fail("varint longer than 10 bytes");
  }

  /// Next field's number and wire type.
  bool tag(uint32_t *field, uint32_t *type) {
    uint64_t t;
    if (!varint(&t))
      return false;
    if ((t >> 3) == 0 || (t >> 3) > 0x1fffffff)
      return fail("invalid field number");
    *field = uint32_t(t >> 3);
    *type = uint32_t(t & 7);
    return true;
  }

  bool fixed64(uint64_t *v) {
    if (size_t(end_ - p_) < 8)
      return fail("truncated fixed64");
    uint64_t r = 0;
    for (int i = 0; i < 8; ++i)
      r |= uint64_t(p_[i]) << (8 * i);
    p_ += 8;
    *v = r;
    return true;
  }
  bool doubleValue(double *d) {
    uint64_t v;
    if (!fixed64(&v))
      return false;
    std::memcpy(d, &v, 8);
    return true;
  }

  /// A length-delimited payload, bounds-checked; returns a sub-reader view.
  bool lengthDelimited(const uint8_t **data, size_t *size) {
    uint64_t n;
    if (!varint(&n))
      return false;
    if (n > uint64_t(end_ - p_))
      return fail("length-delimited field runs past the end of its message");
    *data = p_;
    *size = size_t(n);
    p_ += n;
    return true;
  }
  bool string(std::string *s) {
    const uint8_t *d;
    size_t n;
    if (!lengthDelimited(&d, &n))
      return false;
    s->assign(reinterpret_cast<const char *>(d), n);
    return true;
  }

  /// Skips a field of an unknown number (forward compatibility).
  bool skip(uint32_t type) {
    uint64_t v;
    const uint8_t *d;
    size_t n;
    switch (type) {
    case Varint:
      return varint(&v);
    case Fixed64:
      return fixed64(&v);
    case Len:
      return lengthDelimited(&d, &n);
    case Fixed32:
      if (size_t(end_ - p_) < 4)
        return fail("truncated fixed32");
      p_ += 4;
      return true;
    default:
      return fail("unsupported wire type");
    }
  }

  /// A repeated varint field, packed (Len) or not (one Varint element).
  /// Element count is bounded by the payload size, so so is the allocation.
  template <typename T>
  bool repeatedVarint(uint32_t type, std::vector<T> *out) {
    uint64_t v;
    if (type == Varint) {
      if (!varint(&v))
        return false;
      out->push_back(T(v));
      return true;
    }
    if (type != Len)
      return fail("wrong wire type for a repeated integer");
    const uint8_t *d;
    size_t n;
    if (!lengthDelimited(&d, &n))
      return false;
    Reader sub(d, n);
    while (!sub.atEnd()) {
      if (!sub.varint(&v))
        return fail(sub.error());
      out->push_back(T(v));
    }
    return true;
  }
  bool repeatedDouble(uint32_t type, std::vector<double> *out) {
    double d;
    if (type == Fixed64) {
      if (!doubleValue(&d))
        return false;
      out->push_back(d);
      return true;
    }
    if (type != Len)
      return fail("wrong wire type for a repeated double");
    const uint8_t *data;
    size_t n;
    if (!lengthDelimited(&data, &n))
      return false;
    if (n % 8)
      return fail("packed doubles length is not a multiple of 8");
    Reader sub(data, n);
    out->reserve(out->size() + n / 8);
    while (!sub.atEnd()) {
      sub.doubleValue(&d);
      out->push_back(d);
    }
    return true;
  }

  /// A repeated float field, packed (Len) or not (one Fixed32 element).
  bool repeatedFloat(uint32_t type, std::vector<float> *out) {
    if (type != Len && type != Fixed32)
      return fail("wrong wire type for a repeated float");
    const uint8_t *data = p_;
    size_t n = 4;
    if (type == Len && !lengthDelimited(&data, &n))
      return false;
    if (type == Fixed32 && size_t(end_ - p_) < 4)
      return fail("truncated fixed32");
    if (type == Fixed32)
      p_ += 4;
    if (n % 4)
      return fail("packed floats length is not a multiple of 4");
    out->reserve(out->size() + n / 4);
    for (size_t at = 0; at < n; at += 4) {
      uint32_t v = uint32_t(data[at]) | uint32_t(data[at + 1]) << 8 |
                   uint32_t(data[at + 2]) << 16 | uint32_t(data[at + 3]) << 24;
      float f;
      std::memcpy(&f, &v, 4);
      out->push_back(f);
    }
    return true;
  }

  bool fail(const char *why) {
    error_ = why;
    return false;
  }

private:
  const uint8_t *p_;
  const uint8_t *end_;
  const char *error_ = "";
};

//===--- Field readers: check the wire type and the value's range -------===//
inline bool wantType(Reader &r, uint32_t type, uint32_t want) {
  return type == want || r.fail("field has the wrong wire type");
}
inline bool readU64(Reader &r, uint32_t type, uint64_t *v) {
  return wantType(r, type, proto::Varint) && r.varint(v);
}
inline bool readU32(Reader &r, uint32_t type, uint32_t *v) {
  uint64_t x;
  if (!readU64(r, type, &x))
    return false;
  if (x > UINT32_MAX)
    return r.fail("value out of range for uint32");
  *v = uint32_t(x);
  return true;
}
inline bool readI64(Reader &r, uint32_t type, int64_t *v) {
  uint64_t x;
  if (!readU64(r, type, &x))
    return false;
  *v = int64_t(x);
  return true;
}
inline bool readI32(Reader &r, uint32_t type, int32_t *v) {
  int64_t x;
  if (!readI64(r, type, &x))
    return false;
  if (x < INT32_MIN || x > INT32_MAX)
    return r.fail("value out of range for int32");
  *v = int32_t(x);
  return true;
}
inline bool readStr(Reader &r, uint32_t type, std::string *s) {
  return wantType(r, type, proto::Len) && r.string(s);
}
/// Opens a nested message: a sub-reader over its bytes.
inline bool readSub(Reader &r, uint32_t type, Reader *sub) {
  const uint8_t *d;
  size_t n;
  if (!wantType(r, type, proto::Len) || !r.lengthDelimited(&d, &n))
    return false;
  *sub = Reader(d, n);
  return true;
}

/// Calls fn(field, type) for each field of the message; stops at the first
/// failure. The Reader that failed holds the reason.
template <typename Fn> bool forEachField(Reader &r, Fn fn) {
  uint32_t field, type;
  while (!r.atEnd())
    if (!r.tag(&field, &type) || !fn(field, type))
      return false;
  return true;
}

} // namespace ingot::proto
