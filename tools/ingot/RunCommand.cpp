//===- RunCommand.cpp - `ingot run`: run an artifact on .npy inputs -------===//

#include "CliChecks.h"
#include "CliNumbers.h"
#include "CliParser.h"
#include "Commands.h"
#include "Npy.h"
#include "ProfileOutput.h"

#include "ingot/Artifact.h"
#include "ingot/Executor.h"
#include "ingot/GpuExecutor.h"
#include "ingot/ThreadPool.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ingot::cli {
namespace {

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
  DeviceRequest device;
  int64_t repeat = 0;
  std::string profile; // Chrome trace path; "" = no profiling
  std::string weightsDir; // --weights DIR (external weights)
};

/// Parses argv; returns -1 on success or the exit code to return.
int parseArgs(int argc, char **argv, RunOptions *o) {
  CommandLine cl("run", "Runs a compiled artifact on .npy inputs and writes "
                        "each model output to DIR/<output name>.npy.");
  cl.positional("ART", &o->artifact, "the compiled artifact");
  cl.value(
      "--input",
      [o](const std::string &v) {
        size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
          throw FlagError("--input expects NAME=FILE.npy, got '" + v + "'");
        o->inputs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
      },
      "a model input (repeat for each one)", "", "NAME=FILE.npy");
  cl.value("--output-dir", &o->outputDir,
           "where outputs go (created if missing)", "DIR");
  declareWeightsFlag(cl, &o->weightsDir);
  int64_t threads = 0;
  cl.integer("--threads", &threads, 0, kMaxThreads,
             "worker threads; 0: all cores");
  cl.value(
      "--device",
      [o](const std::string &v) {
        if (Status s = parseDeviceRequest(v, &o->device); !s)
          throw FlagError(s.message());
      },
      "where to run: cpu, cuda, cuda:N, or auto (CUDA when the artifact's "
      "CUDA code covers its plan and a GPU is there, else the CPU; an "
      "artifact with GPU code says which on stderr)",
      "auto", "DEVICE");
  cl.integer("--repeat", &o->repeat, 0, 1000000,
             "run the plan this many more times and print the median and "
             "minimum wall time per run (with a GPU: input and output "
             "copies included) on stderr");
  cl.value(
      "--profile",
      [o](const std::string &v) {
        if (v.empty())
          throw FlagError("--profile needs a value");
        o->profile = v;
      },
      "time every kernel of the runs after the first (CPU): write a Chrome "
      "trace and print the top kernels on stderr",
      "", "TRACE.json");
  if (int rc = cl.parse(argc, argv); rc >= 0)
    return rc;
  if (o->artifact.empty())
    return cl.usageError("missing the artifact to run");
  if (o->outputDir.empty())
    return cl.usageError("missing --output-dir");
  o->threads = threads > 0 ? unsigned(threads)
                           : std::max(1u, std::thread::hardware_concurrency());
  return -1;
}

/// Runs `once` `times` more times; prints the median and minimum.
Status timeRuns(int64_t times, const std::string &where,
                const std::function<Status()> &once) {
  std::vector<double> ms;
  for (int64_t i = 0; i < times; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (Status s = once(); !s)
      return s;
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  }
  if (ms.empty())
    return Status::ok();
  std::sort(ms.begin(), ms.end());
  std::fprintf(stderr, "ingot: %lld runs on %s: median %.4f ms, min %.4f ms\n",
               (long long)times, where.c_str(), ms[ms.size() / 2], ms[0]);
  return Status::ok();
}

} // namespace

/// A .npy of raw values (ml_dtypes' bfloat16, float8, int4, ...) takes
/// the type the model declares for input `name`, when that is such a type
/// of the same width; otherwise the error to print.
static std::string typeRawInput(const Manifest &m, const std::string &name,
                                const std::string &file, HostTensor *t) {
  for (const IoSpec &io : m.inputs)
    if (io.name == name) {
      if (isRawNpyDType(io.dtype) &&
          dtypeSize(io.dtype) == dtypeSize(t->dtype)) {
        t->dtype = io.dtype;
        return "";
      }
      return "input '" + name + "': " + file + " holds raw " +
             std::to_string(dtypeSize(t->dtype)) +
             "-byte values (a numpy void dtype, as ml_dtypes' types save), "
             "but the model's input is " +
             dtypeName(io.dtype);
    }
  return ""; // an unknown name: the executor names it
}

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
  if (Status s = Artifact::open(opts.artifact, &artifact, {opts.weightsDir});
      !s)
    return fail(s.message());

  std::vector<NamedTensor> inputs;
  for (const auto &[name, file] : opts.inputs) {
    NamedTensor nt;
    nt.name = name;
    bool raw = false;
    if (Status s = readNpy(file, &nt.tensor, &raw); !s)
      return fail("input '" + name + "': " + s.message());
    if (raw)
      if (std::string e =
              typeRawInput(artifact->manifest(), name, file, &nt.tensor);
          !e.empty())
        return fail(e);
    inputs.push_back(std::move(nt));
  }

  std::unique_ptr<GpuExecutor> gpu;
  std::string note;
  if (Status s = openGpuExecutor(*artifact, opts.device, &gpu, &note); !s)
    return fail(s.message());
  if (!note.empty())
    std::fprintf(stderr, "ingot: %s\n", note.c_str());
  std::vector<NamedTensor> outputs;
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Executor> cpu;
  if (!gpu) {
    pool = std::make_unique<ThreadPool>(opts.threads);
    cpu = std::make_unique<Executor>(*artifact, *pool);
  }
  auto once = [&] {
    return gpu ? gpu->run(inputs, &outputs) : cpu->run(inputs, &outputs);
  };
  if (Status s = once(); !s)
    return fail(s.message());
  // The first run pays page faults and cold caches; profile the others.
  StepProfiler profiler;
  if (!opts.profile.empty()) {
    if (gpu)
      return fail("--profile times CPU kernels; run with --device cpu");
    cpu->setProfiler(&profiler);
  }
  if (Status s = timeRuns(opts.repeat,
                          gpu ? gpu->device().description() : "the CPU", once);
      !s)
    return fail(s.message());
  if (cpu && opts.repeat > 0 && cpu->constantResultBytes())
    std::fprintf(stderr,
                 "ingot: %.3f MiB beside the arena hold results of steps "
                 "that read only weights (each computed by the first run that "
                 "reaches it)\n",
                 double(cpu->constantResultBytes()) / (1 << 20));

  if (!opts.profile.empty()) {
    std::vector<FlagPath> read = {{"the artifact", opts.artifact}};
    for (const auto &input : opts.inputs)
      read.push_back({"--input", input.second});
    if (std::string e = outputIsInputError({{"--profile", opts.profile}}, read);
        !e.empty())
      return fail(e);
    if (opts.repeat == 0 && !once())
      return fail("the profiled run failed");
    if (Status s = writeChromeTrace(profiler, opts.profile, "--profile"); !s)
      return fail(s.message());
    std::fprintf(stderr, "%s", profiler.topKernelsTable(15, 0, 0).c_str());
  }
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
