//===- ManifestDecoder.h - FlatBuffers -> Manifest, shared part -*- C++ -*-===//
//
// The decoder class of ManifestDecode.cpp, split so that the GPU tables
// decode in a file of their own (ManifestDecodeGpu.cpp). Private to format/.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ManifestSchema.h"

#include "ingot/Manifest.h"

#include <string>

namespace ingot::detail {

using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Vector;

class Decoder {
public:
  /// `budget`: the input's size, which bounds the bytes of all strings and
  /// vectors of a manifest whose parts are each stored once.
  explicit Decoder(size_t budget) : budget_(budget) {}

  bool manifest(const fb::Manifest &in, Manifest *m);
  const std::string &error() const { return error_; }

private:
  /// Extends the path of messages ("steps[3].attrs[0]") while alive.
  class Scope {
  public:
    Scope(Decoder &d, const std::string &part) : d_(d), len_(d.path_.size()) {
      if (!d.path_.empty() && part[0] != '[')
        d.path_ += '.';
      d.path_ += part;
    }
    ~Scope() { d_.path_.resize(len_); }

  private:
    Decoder &d_;
    size_t len_;
  };

  bool fail(const std::string &why) {
    error_ = "malformed manifest" + (path_.empty() ? "" : " at " + path_) +
             ": " + why;
    return false;
  }

  bool take(size_t bytes) {
    if (bytes <= budget_) {
      budget_ -= bytes;
      return true;
    }
    return fail("its strings and vectors add up to more bytes than the "
                "manifest holds (expected each stored once)");
  }

  /// Leaves *out (the struct's default) when the string is absent.
  bool str(const String *s, std::string *out) {
    if (!s)
      return true;
    if (!take(s->size()))
      return false;
    out->assign(s->data(), s->size());
    return true;
  }

  template <typename T, typename U>
  bool vec(const Vector<T> *v, std::vector<U> *out) {
    if (!v)
      return true;
    if (!take(size_t(v->size()) * sizeof(T)))
      return false;
    // The Verifier (flatbuffers 2.0.8) aligns a vector's length, not its
    // 8-byte elements: a crafted buffer could make every read misaligned.
    // The builder always aligns them, so such a buffer is not ours.
    if (reinterpret_cast<uintptr_t>(v->data()) % alignof(T))
      return fail("a vector of " + std::to_string(sizeof(T)) +
                  "-byte values is misaligned");
    out->assign(v->begin(), v->end());
    return true;
  }

  bool strings(const Vector<Offset<String>> *v, std::vector<std::string> *out) {
    if (!v)
      return true;
    if (!take(size_t(v->size()) * sizeof(Offset<String>)))
      return false;
    out->resize(v->size());
    for (uint32_t i = 0; i < v->size(); ++i)
      if (!str(v->Get(i), &(*out)[i]))
        return false;
    return true;
  }

  /// A vector of tables, each decoded by `one` under "name[i]".
  template <typename T, typename U, typename Fn>
  bool tables(const char *name, const Vector<Offset<T>> *v, std::vector<U> *out,
              Fn one) {
    if (!v)
      return true;
    if (!take(size_t(v->size()) * sizeof(Offset<T>)))
      return false;
    out->resize(v->size());
    Scope scope(*this, name);
    for (uint32_t i = 0; i < v->size(); ++i) {
      // Appended piecewise: GCC 12 warns (-Wrestrict) on "[" + to_string.
      std::string index = "[";
      index += std::to_string(i);
      index += ']';
      Scope item(*this, index);
      if (!(this->*one)(*v->Get(i), &(*out)[i]))
        return false;
    }
    return true;
  }

  bool dtype(fb::DType raw, DType *out) {
    if (!isValidDType(uint32_t(raw)))
      return fail("invalid dtype " + std::to_string(unsigned(raw)) +
                  " (expected 1 to " + std::to_string(kLastDType) +
                  ", ingot/DType.h)");
    *out = DType(raw);
    return true;
  }

  /// The generated accessor reads any nonzero byte as true; the format
  /// allows only 0 and 1.
  template <typename T>
  bool boolean(const T &t, flatbuffers::voffset_t field, const char *name,
               bool *out) {
    const uint8_t raw =
        reinterpret_cast<const flatbuffers::Table &>(t).GetField<uint8_t>(field,
                                                                          0);
    if (raw > 1)
      return fail("invalid bool " + std::to_string(raw) + " in " + name +
                  " (expected 0 or 1)");
    *out = raw;
    return true;
  }

  bool tensor(const fb::TensorEntry &in, TensorEntry *t);
  bool sourceTensor(const fb::SourceTensor &in, SourceTensor *t);
  bool externalWeights(const fb::ExternalWeights &in, ExternalWeights *w);
  bool buffer(const fb::Buffer &in, Buffer *b);
  bool attr(const fb::Attr &in, Attr *a);
  bool step(const fb::Step &in, Step *s);
  bool dim(const fb::Dim &in, Dim *d);
  bool io(const fb::IoSpec &in, IoSpec *io);
  bool symbol(const fb::SymbolBound &in, SymbolBound *s);
  bool llm(const fb::LlmConfig &in, LlmConfig *l);
  bool addedToken(const fb::AddedToken &in, TokenizerData::AddedToken *a);
  bool vocab(const fb::TokenizerData &in, TokenizerData *t);
  bool merges(const fb::TokenizerData &in, TokenizerData *t);
  bool tokenizer(const fb::TokenizerData &in, TokenizerData *t);
  bool generation(const fb::GenerationDefaults &in, GenerationDefaults *g);
  // ManifestDecodeGpu.cpp
  bool gpuTarget(const fb::GpuTarget &in, GpuTarget *t);
  bool codeObject(const fb::CodeObject &in, CodeObject *c);
  bool gpuKernel(const fb::GpuKernel &in, GpuKernel *k);

  size_t budget_;
  std::string path_;
  std::string error_;
};

} // namespace ingot::detail
