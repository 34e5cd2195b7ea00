//===- BenchPlot.cpp - `ingot bench --plot` -------------------------------===//
//
// The figures (latency CDFs, throughput against concurrency) are drawn by
// bench/plot.py with matplotlib from the same JSON `--json` writes, so the
// CLI carries no plotting code. The Python is $INGOT_PYTHON, else the test
// venv beside the source tree (scripts/deps.sh makes it); without either,
// the error gives the command that makes one.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace ingot::cli::bench {
namespace {

const std::string kSourceDir = INGOT_SOURCE_DIR;

std::string venvCommand() {
  return "python3 -m venv " + kSourceDir + "/.venv && " + kSourceDir +
         "/.venv/bin/pip install -r " + kSourceDir +
         "/scripts/requirements-test.txt";
}

/// The Python to run bench/plot.py with, or the error.
Status findPython(std::string *python) {
  const char *env = std::getenv("INGOT_PYTHON");
  if (env && *env) {
    if (access(env, X_OK) != 0)
      return Status::error(
          "INGOT_PYTHON=" + std::string(env) +
          " is not an executable file; point it at a Python with matplotlib, "
          "or unset it and run: " + venvCommand());
    *python = env;
    return Status::ok();
  }
  std::string venv = kSourceDir + "/.venv/bin/python";
  if (access(venv.c_str(), X_OK) != 0)
    return Status::error("drawing the plot needs Python with matplotlib; "
                         "there is no " + venv + " and INGOT_PYTHON is not "
                         "set; run: " + venvCommand());
  *python = venv;
  return Status::ok();
}

/// Writes `text` to a new file under $TMPDIR (or /tmp); its path in *path.
Status writeTempJson(const std::string &text, std::string *path) {
  const char *dir = std::getenv("TMPDIR");
  std::string pattern =
      std::string(dir && *dir ? dir : "/tmp") + "/ingot-bench-XXXXXX.json";
  int fd = mkstemps(pattern.data(), 5);
  if (fd < 0)
    return Status::error("cannot create " + pattern + ": " +
                         std::strerror(errno));
  *path = pattern;
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      return Status::error("cannot write " + *path + ": " +
                           std::strerror(err));
    }
    done += size_t(n);
  }
  if (close(fd) != 0)
    return Status::error("cannot write " + *path + ": " +
                         std::strerror(errno));
  return Status::ok();
}

/// Runs argv[0] with `argv` and waits; its output goes to ours.
Status runAndWait(const std::vector<std::string> &argv) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (int err = posix_spawn(&pid, args[0], nullptr, nullptr, args.data(),
                            environ))
    return Status::error("cannot run " + argv[0] + ": " + std::strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return Status::error("waiting for " + argv[0] + ": " +
                           std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return Status::ok();
  std::string how = WIFEXITED(status)
                        ? "exited with " + std::to_string(WEXITSTATUS(status))
                        : "was killed by signal " +
                              std::to_string(WTERMSIG(status));
  return Status::error(argv[1] + " " + how + " (its error is above)");
}

} // namespace

Status writePlot(const std::string &path, const std::string &benchJson) {
  std::string python, jsonPath;
  if (Status s = findPython(&python); !s)
    return s;
  if (Status s = writeTempJson(benchJson, &jsonPath); !s)
    return s;
  Status s = runAndWait(
      {python, kSourceDir + "/bench/plot.py", jsonPath, "--output", path});
  std::remove(jsonPath.c_str());
  return s;
}

} // namespace ingot::cli::bench
