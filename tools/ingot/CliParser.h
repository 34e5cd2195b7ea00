//===- CliParser.h - The options of one `ingot` subcommand ------*- C++ -*-===//
//
// Every subcommand declares its options on a CommandLine, a thin layer over
// CLI11 that keeps the CLI's own conventions: an integer flag goes through
// parseFlagInt (one message for every range), a value is checked by the
// code that declares the flag (a FlagError names the flag and the value),
// a flag repeated without being repeatable keeps its last value, usage
// errors exit 2 with "error: ..." on stderr, and --help prints every flag
// with its default on stdout and exits 0.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace ingot::cli {

/// A flag's value that the flag cannot take; `message` is the whole text
/// after "error: ".
class FlagError : public CLI::ParseError {
public:
  explicit FlagError(std::string message)
      : CLI::ParseError("FlagError", std::move(message), 2) {}
};

class CommandLine {
public:
  /// `command` is the subcommand ("generate"), `summary` one line.
  CommandLine(const std::string &command, const std::string &summary);

  CLI::App &app() { return app_; }
  /// Text after the list of options in --help.
  void footer(const std::string &text) { app_.footer(text); }

  /// The positional NAME (e.g. "ART"), given at most once.
  CLI::Option *positional(const std::string &name, std::string *out,
                          const std::string &help);

  /// NAMES N with N an integer in [min, max]; else flagRangeError. The
  /// help shows `shownDefault`, or *out when it is empty.
  CLI::Option *integer(const std::string &names, int64_t *out, int64_t min,
                       int64_t max, const std::string &help,
                       const std::string &shownDefault = "");
  /// The same, storing through `store`.
  CLI::Option *integer(const std::string &names,
                       std::function<void(int64_t)> store, int64_t min,
                       int64_t max, const std::string &help,
                       const std::string &shownDefault);

  /// NAMES VALUE: `take` checks and stores every value given, in order (it
  /// throws FlagError to refuse one); `missing` is the message when the
  /// value is missing ("" = "NAME needs a value").
  CLI::Option *value(const std::string &names,
                     std::function<void(const std::string &)> take,
                     const std::string &help, const std::string &shownDefault,
                     const std::string &typeName = "TEXT",
                     const std::string &missing = "");
  /// NAMES VALUE stored as given; the help shows *out as the default.
  CLI::Option *value(const std::string &names, std::string *out,
                     const std::string &help,
                     const std::string &typeName = "TEXT");

  /// NAMES without a value: sets *out to `to`.
  CLI::Option *flag(const std::string &names, bool *out,
                    const std::string &help, bool to = true);

  /// Parses argv (argv[0] is the subcommand). Returns -1 to go on, else
  /// the exit code: 0 after --help, 2 after a usage error (printed).
  int parse(int argc, char **argv);

  /// Prints "error: MESSAGE" and where the options are; returns 2.
  int usageError(const std::string &message) const;

private:
  /// The message CLI11's own errors get (unknown flag, missing value).
  std::string failureMessage(const CLI::App &app, const CLI::Error &e) const;

  std::string command_;
  CLI::App app_;
  std::map<std::string, std::string> missingValue_; // flag -> message
};

/// --weights DIR: the model directory an artifact compiled with
/// --weights=external makes its weights from (LoadOptions::weightsDir).
void declareWeightsFlag(CommandLine &cl, std::string *dir);

/// --device (cpu, cuda, cuda:N or auto) and --gpu-memory-fraction, as the
/// commands that run an LLM take them (EngineOptions::device).
void declareDeviceFlags(CommandLine &cl, std::string *device,
                        double *gpuMemoryFraction);

} // namespace ingot::cli
