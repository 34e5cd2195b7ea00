//===- CliChecks.h - Checks of hostile CLI input ----------------*- C++ -*-===//
//
// What every subcommand checks before it trusts a path or a text from the
// command line: an input is a regular file (a FIFO, /dev/zero or a
// directory would be read without end or fail deep inside a reader), an
// output does not name one of the inputs, text is valid UTF-8, and a KV
// budget in MiB does not turn into more blocks than any cache may have.
// Each returns "" when all is well, else the whole message (without
// "error: ").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"

#include <string>
#include <string_view>
#include <vector>

namespace ingot::cli {

/// "LABEL: not a regular file" when `path` exists and is a directory, a
/// device, a FIFO or a socket (links are followed); "" when it is a regular
/// file or does not exist (the reader's own open error names that case).
std::string nonRegularFileError(const std::string &label,
                                const std::string &path);

/// Reads the whole regular file `path` ("-": standard input); errors start
/// with `label` and say why (not a regular file, cannot open, read error).
bool readWholeFile(const std::string &label, const std::string &path,
                   std::string *out, std::string *error);

/// "LABEL: invalid UTF-8 at byte N" for the first byte that is not part of
/// a well-formed UTF-8 sequence.
std::string invalidUtf8Error(const std::string &label, std::string_view text);

/// A path given on the command line, with the flag that gave it (e.g.
/// {"--output", "out.jsonl"}; {"the model", "m.onnx"} for a positional one).
struct FlagPath {
  std::string flag, path;
};

/// "OUT-FLAG OUT names the same file as IN-FLAG IN" for the first output
/// that is one of the inputs (std::filesystem::equivalent when both exist,
/// so ./a and a match; the normalised absolute paths otherwise). Empty
/// paths and "-" (standard output) are skipped.
std::string outputIsInputError(const std::vector<FlagPath> &outputs,
                               const std::vector<FlagPath> &inputs);

/// `ingot compile`: "" unless `output` is the model file itself, or an
/// existing file that is not an ingot artifact directly inside the model
/// directory (or beside the model file, where an ONNX model's external data
/// lies). So a recompile may replace its own artifact but never
/// config.json, the weights or external data.
std::string compileOutputError(const std::string &modelPath,
                               const std::string &output);

/// "" unless --kv-cache-mb `kvCacheMb` buys more than kMaxKvBlocks blocks of
/// this model's cache (the engine would allocate bookkeeping per block).
std::string kvCacheMbError(const LlmConfig &config, int64_t kvCacheMb);

} // namespace ingot::cli
