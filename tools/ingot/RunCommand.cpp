//===- RunCommand.cpp - `ingot run`: run an artifact on .npy inputs -------===//

#include "CliChecks.h"
#include "CliNumbers.h"
#include "Commands.h"

#include "ingot/Artifact.h"
#include "ingot/Executor.h"
#include "ingot/Npy.h"
#include "ingot/ThreadPool.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ingot::cli {
namespace {

void printRunUsage(FILE *to) {
  std::fprintf(
      to, "usage: ingot run ART.ingot --input NAME=FILE.npy [--input ...]\n"
          "                 --output-dir DIR [--threads N]\n\n"
          "Runs the compiled model on the given inputs and writes each\n"
          "model output to DIR/<output name>.npy.\n\n"
          "options:\n"
          "  --input NAME=FILE.npy  a model input (repeat for each one)\n"
          "  --output-dir DIR       where outputs go (created if missing)\n"
          "  --threads N            worker threads, 0..1024 (default 0: all\n"
          "                         cores)\n");
}

int usageError(const std::string &message) {
  std::fprintf(stderr, "error: %s\n\n", message.c_str());
  printRunUsage(stderr);
  return 2;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

/// A file name for an output: characters outside [A-Za-z0-9._-] (path
/// separators, ':' of scoped names, ...) become '_'; clashes get a suffix.
std::string fileNameFor(const std::string &name, std::set<std::string> &used) {
  std::string base;
  for (char c : name)
    base += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
             c == '_' || c == '-')
                ? c
                : '_';
  if (base.empty() || base.find_first_not_of('.') == std::string::npos)
    base = "output" + base;
  std::string candidate = base;
  for (int i = 2; used.count(candidate); ++i)
    candidate = base + "_" + std::to_string(i);
  used.insert(candidate);
  return candidate + ".npy";
}

struct RunOptions {
  std::string artifact;
  std::vector<std::pair<std::string, std::string>> inputs; // name, file
  std::string outputDir;
  unsigned threads = 0;
};

/// Parses argv; returns -1 on success or the exit code to return.
int parseArgs(int argc, char **argv, RunOptions *o) {
  bool threadsSet = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      printRunUsage(stdout);
      return 0;
    }
    std::string value;
    bool isOption = arg.rfind("--", 0) == 0;
    if (isOption) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) { // --opt=value
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
      } else if (arg == "--input" || arg == "--output-dir" ||
                 arg == "--threads") {
        if (i + 1 >= argc)
          return usageError(arg + " needs a value");
        value = argv[++i];
      }
    }
    if (arg == "--input") {
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == value.size())
        return usageError("--input expects NAME=FILE.npy, got '" + value + "'");
      o->inputs.emplace_back(value.substr(0, eq), value.substr(eq + 1));
    } else if (arg == "--output-dir") {
      o->outputDir = value;
    } else if (arg == "--threads") {
      int64_t n = 0;
      std::string error;
      if (!parseFlagInt(arg, value, 0, kMaxThreads, &n, &error))
        return usageError(error);
      o->threads = unsigned(n); // 0: all cores, as when not given
      threadsSet = n > 0;
    } else if (isOption) {
      return usageError("unknown option '" + arg + "'");
    } else if (o->artifact.empty()) {
      o->artifact = arg;
    } else {
      return usageError("unexpected argument '" + arg + "'");
    }
  }
  if (o->artifact.empty())
    return usageError("missing the artifact to run");
  if (o->outputDir.empty())
    return usageError("missing --output-dir");
  if (!threadsSet)
    o->threads = std::max(1u, std::thread::hardware_concurrency());
  return -1;
}

} // namespace

int runMain(int argc, char **argv) {
  RunOptions opts;
  if (int rc = parseArgs(argc, argv, &opts); rc >= 0)
    return rc;

  for (const auto &[name, file] : opts.inputs)
    if (std::string e = nonRegularFileError("--input " + name + "=" + file,
                                            file);
        !e.empty())
      return fail(e);
  std::unique_ptr<Artifact> artifact;
  if (Status s = Artifact::open(opts.artifact, &artifact); !s)
    return fail(s.message());

  std::vector<NamedTensor> inputs;
  for (const auto &[name, file] : opts.inputs) {
    NamedTensor nt;
    nt.name = name;
    if (Status s = readNpy(file, &nt.tensor); !s)
      return fail("input '" + name + "': " + s.message());
    inputs.push_back(std::move(nt));
  }

  ThreadPool pool(opts.threads);
  Executor executor(*artifact, pool);
  std::vector<NamedTensor> outputs;
  if (Status s = executor.run(inputs, &outputs); !s)
    return fail(s.message());

  std::error_code ec;
  std::filesystem::create_directories(opts.outputDir, ec);
  if (ec)
    return fail("cannot create output directory '" + opts.outputDir +
                "': " + ec.message());
  std::vector<FlagPath> inputFiles = {{"the artifact", opts.artifact}};
  for (const auto &input : opts.inputs)
    inputFiles.push_back({"--input", input.second});
  std::set<std::string> used;
  for (const NamedTensor &out : outputs) {
    std::filesystem::path path =
        std::filesystem::path(opts.outputDir) / fileNameFor(out.name, used);
    if (std::string e = outputIsInputError(
            {{"output '" + out.name + "' at", path.string()}}, inputFiles);
        !e.empty())
      return fail(e);
    if (Status s = writeNpy(path.string(), out.tensor); !s)
      return fail("output '" + out.name + "': " + s.message());
  }
  return 0;
}

} // namespace ingot::cli
