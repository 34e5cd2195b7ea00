//===- AtomicFile.h - Replacing files whole or not at all -------*- C++ -*-===//
//
// Every file ingot writes for a user (artifacts, bench JSON, traces, batch
// outputs) goes to a temp file beside the destination and is renamed over
// it only once complete, so a crash, a kill or a full disk leaves the
// previous file intact. Temp files are named `<name>.tmp-<pid>-<n>`; those
// of processes that no longer exist (a SIGKILLed compile) are removed the
// next time a file is written beside them, and those of this process are
// removed on SIGINT/SIGTERM/SIGHUP once installTempFileCleanup() ran.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <string>
#include <string_view>

namespace ingot {

/// Creates `<path>.tmp-<pid>-<n>` (O_EXCL) and registers it for removal on
/// a signal; first removes stale temp files of dead processes beside
/// `path`. Returns the descriptor, or an error naming the path and errno.
Status createTempFile(const std::string &path, int *fd, std::string *temp);

/// fsyncs and closes `fd`, renames `temp` over `path`, and syncs the
/// directory. On any failure the temp file is removed and `path` is
/// untouched.
Status commitTempFile(int fd, const std::string &temp, const std::string &path);

/// Closes `fd` (if >= 0) and removes the temp file, unregistering it.
void discardTempFile(int fd, const std::string &temp);

/// The whole of `bytes` into `path`, atomically (the three calls above).
Status writeFileAtomically(const std::string &path, std::string_view bytes);

/// Installs handlers that remove this process's registered temp files on
/// SIGINT, SIGTERM and SIGHUP before dying of the signal, and ignores
/// SIGXFSZ so that writing past RLIMIT_FSIZE fails with EFBIG (a clear
/// error) instead of killing the process. For executables, once, early.
void installTempFileCleanup();

} // namespace ingot
