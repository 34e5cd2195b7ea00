//===- CliChecks.cpp - Checks of hostile CLI input ------------------------===//
#include "CliChecks.h"
#include "CliNumbers.h"

#include "ingot/ArtifactFormat.h" // the artifact's magic
#include "ingot/KvCache.h"
#include "ingot/Utf8.h" // nextChar

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <system_error>

namespace ingot::cli {
namespace fs = std::filesystem;

std::string nonRegularFileError(const std::string &label,
                                const std::string &path) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st))
    return "";
  return label + ": not a regular file" +
         (fs::is_directory(st) ? " (it is a directory)" : "");
}

bool readWholeFile(const std::string &label, const std::string &path,
                   std::string *out, std::string *error) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    *out = ss.str();
    if (std::cin.bad()) {
      *error = label + ": cannot read standard input";
      return false;
    }
    return true;
  }
  if (std::string e = nonRegularFileError(label, path); !e.empty()) {
    *error = e;
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = label + ": cannot open it: " + std::strerror(errno);
    return false;
  }
  out->assign(std::istreambuf_iterator<char>(in),
              std::istreambuf_iterator<char>());
  if (in.bad()) {
    *error = label + ": read error: " + std::strerror(errno);
    return false;
  }
  return true;
}

std::string invalidUtf8Error(const std::string &label, std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t at = pos;
    if (tok::nextChar(text, &pos) & tok::kInvalidByte)
      return label + ": invalid UTF-8 at byte " + std::to_string(at);
  }
  return "";
}

namespace {

/// Whether a and b name one file: equivalent() when both exist, else the
/// normalised absolute paths (a missing file can only clash lexically).
bool sameFile(const std::string &a, const std::string &b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    bool same = fs::equivalent(a, b, ec);
    return !ec && same;
  }
  fs::path pa = fs::weakly_canonical(fs::absolute(a, ec), ec);
  fs::path pb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !ec && pa == pb;
}

std::string describe(const FlagPath &p) {
  return p.flag.empty() ? p.path : p.flag + " " + p.path;
}

bool isArtifact(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof format::kMagic] = {};
  return in.read(magic, sizeof magic) &&
         !std::memcmp(magic, format::kMagic, sizeof magic);
}

} // namespace

std::string outputIsInputError(const std::vector<FlagPath> &outputs,
                               const std::vector<FlagPath> &inputs) {
  for (const FlagPath &out : outputs) {
    if (out.path.empty() || out.path == "-")
      continue;
    for (const FlagPath &in : inputs)
      if (!in.path.empty() && in.path != "-" && sameFile(out.path, in.path))
        return describe(out) + " names the same file as " + describe(in) +
               "; refusing to overwrite an input";
  }
  return "";
}

std::string compileOutputError(const std::string &modelPath,
                               const std::string &output) {
  std::error_code ec;
  const bool isDir = fs::is_directory(modelPath, ec);
  if (!isDir)
    if (std::string e =
            outputIsInputError({{"-o", output}}, {{"the model", modelPath}});
        !e.empty())
      return e;
  // Beside a model file lie the files it reads too (an ONNX model's
  // external data): an existing file there that is not an artifact is kept.
  fs::path out(output);
  if (!fs::is_regular_file(out, ec) || isArtifact(out))
    return "";
  fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::path modelDir(modelPath);
  if (!isDir)
    modelDir = modelDir.has_parent_path() ? modelDir.parent_path() : ".";
  if (!fs::equivalent(parent, modelDir, ec) || ec)
    return "";
  if (isDir)
    return "-o " + output + " would overwrite " + out.filename().string() +
           ", a file of the model directory " + modelPath +
           "; refusing to overwrite an input";
  return "-o " + output + " would overwrite " + out.filename().string() +
         ", a file beside the model " + modelPath +
         " that is not an ingot artifact (it may be the model's external "
         "data); refusing to overwrite it";
}

std::string kvCacheMbError(const LlmConfig &config, int64_t kvCacheMb) {
  const uint64_t perBlock = KvCacheStorage::bytesPerBlock(config);
  if (kvCacheMb <= 0 || perBlock == 0)
    return ""; // the engine names an invalid geometry
  const uint64_t blocks = (uint64_t(kvCacheMb) << 20) / perBlock;
  if (blocks <= uint64_t(kMaxKvBlocks))
    return "";
  const uint64_t maxMb = (uint64_t(kMaxKvBlocks) * perBlock) >> 20;
  return "--kv-cache-mb " + std::to_string(kvCacheMb) + " is " +
         std::to_string(blocks) + " KV blocks of " + std::to_string(perBlock) +
         " bytes, more than the " + std::to_string(kMaxKvBlocks) +
         " blocks a KV cache may have; give at most " + std::to_string(maxMb) +
         " MiB";
}

} // namespace ingot::cli
