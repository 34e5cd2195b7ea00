//===- AtomicFile.cpp - Replacing files whole or not at all ---------------===//
#include "ingot/AtomicFile.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace ingot {
namespace {

std::string errnoText() { return std::strerror(errno); }

// Temp paths live here while they exist, so that a signal handler (which
// may only call async-signal-safe functions: no locks, no allocation) can
// unlink them. A slot is claimed with a compare-exchange on `used`.
constexpr int kSlots = 32;
constexpr size_t kPathMax = 4096;
struct Slot {
  std::atomic<int> used{0};
  char path[kPathMax];
};
Slot gSlots[kSlots];

void registerTemp(const std::string &temp) {
  if (temp.size() >= kPathMax)
    return; // not removable on a signal; still removed on errors
  for (Slot &s : gSlots) {
    int expected = 0;
    if (s.used.compare_exchange_strong(expected, 2)) { // 2: being written
      std::memcpy(s.path, temp.c_str(), temp.size() + 1);
      s.used.store(1);
      return;
    }
  }
}

void unregisterTemp(const std::string &temp) {
  for (Slot &s : gSlots)
    if (s.used.load() == 1 && temp == s.path)
      s.used.store(0);
}

void removeTempsOnSignal(int sig) {
  for (Slot &s : gSlots)
    if (s.used.load() == 1)
      ::unlink(s.path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

/// "<base>.tmp-<pid>-<n>" -> pid, else 0.
pid_t tempOwner(const std::string &entry, const std::string &base) {
  const std::string prefix = base + ".tmp-";
  if (entry.compare(0, prefix.size(), prefix) != 0)
    return 0;
  const char *p = entry.c_str() + prefix.size();
  char *end = nullptr;
  const long pid = std::strtol(p, &end, 10);
  if (end == p || *end != '-' || pid <= 0)
    return 0;
  const char *n = end + 1;
  if (!*n || std::strspn(n, "0123456789") != std::strlen(n))
    return 0;
  return pid_t(pid);
}

/// Removes temp files beside `path` whose process is gone (a SIGKILL or a
/// power cut left them). Another live process's temp file is kept.
void removeStaleTemps(const std::string &path) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string base =
      slash == std::string::npos ? path : path.substr(slash + 1);
  DIR *d = ::opendir(dir.empty() ? "/" : dir.c_str());
  if (!d)
    return;
  while (dirent *e = ::readdir(d)) {
    const pid_t owner = tempOwner(e->d_name, base);
    if (owner > 0 && owner != ::getpid() && ::kill(owner, 0) != 0 &&
        errno == ESRCH)
      ::unlink((dir + "/" + e->d_name).c_str());
  }
  ::closedir(d);
}

void syncParentDir(const std::string &path) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) { // best effort: some filesystems refuse to sync a directory
    ::fsync(fd);
    ::close(fd);
  }
}

} // namespace

Status createTempFile(const std::string &path, int *fd, std::string *temp) {
  removeStaleTemps(path);
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    *temp = path + ".tmp-" + std::to_string(::getpid()) + "-" +
            std::to_string(counter++);
    // Registered before it exists: a signal right after open() must still
    // find it. Unlinking a name that is not there yet is harmless, and one
    // that exists carries our own pid.
    registerTemp(*temp);
    *fd = ::open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (*fd >= 0)
      return Status::ok();
    const int openErrno = errno;
    unregisterTemp(*temp);
    errno = openErrno;
    if (errno != EEXIST)
      break;
  }
  return Status::error(
      path + ": cannot create a temporary file beside it: " + errnoText());
}

Status commitTempFile(int fd, const std::string &temp,
                      const std::string &path) {
  std::string error;
  if (::fsync(fd) != 0)
    error = "fsync failed: " + errnoText();
  if (::close(fd) != 0 && error.empty())
    error = "close failed: " + errnoText();
  if (error.empty() && ::rename(temp.c_str(), path.c_str()) != 0)
    error = "cannot rename the temporary file " + temp +
            " into place: " + errnoText();
  if (!error.empty()) {
    discardTempFile(-1, temp);
    return Status::error(path + ": " + error);
  }
  unregisterTemp(temp);
  syncParentDir(path);
  return Status::ok();
}

void discardTempFile(int fd, const std::string &temp) {
  if (fd >= 0)
    ::close(fd);
  ::unlink(temp.c_str());
  unregisterTemp(temp);
}

Status writeFileAtomically(const std::string &path, std::string_view bytes) {
  int fd = -1;
  std::string temp;
  if (Status st = createTempFile(path, &fd, &temp); !st)
    return st;
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const std::string why = n < 0 ? errnoText() : "wrote nothing";
      discardTempFile(fd, temp);
      return Status::error(path + ": write failed: " + why);
    }
    p += n;
    left -= size_t(n);
  }
  return commitTempFile(fd, temp, path);
}

void installTempFileCleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction action = {};
    action.sa_handler = removeTempsOnSignal;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
  std::signal(SIGXFSZ, SIG_IGN);
}

} // namespace ingot
