//===- FuzzSupport.h - Shared helpers of the fuzz targets -------*- C++ -*-===//
//
// Every fuzz target in this folder defines LLVMFuzzerTestOneInput. The same
// sources build two ways: with clang's libFuzzer and ASan/UBSan in
// build-fuzz/ (`make fuzz`), and with FuzzReplayMain.cpp in the normal build,
// where ctest replays each checked-in corpus file through its target. A
// target returns normally on any input: refusing bad bytes is success, and
// only a crash, a sanitizer report, a hang or a leak is a finding.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ingot/Status.h"

namespace ingot {
class Artifact;
class Tokenizer;
} // namespace ingot

namespace ingot::fuzz {

/// A directory private to this process (under $TMPDIR, else /dev/shm or
/// /tmp), created on first use and removed at exit.
const std::string &scratchDir();

/// Writes `size` bytes to scratchDir()/name, replacing what was there, and
/// returns the path.
std::string writeScratch(const std::string &name, const uint8_t *data,
                         size_t size);

/// test/fuzz/data (the fixed parts of multi-file inputs), or
/// $INGOT_FUZZ_DATA when set.
std::string dataDir();

/// Where the artifacts compiled from test/fuzz/data by the build live
/// (micro.ingot, mlp.ingot), or $INGOT_FUZZ_ARTIFACTS when set.
std::string artifactDir();

/// artifactDir()/micro.ingot, loaded once, and its tokenizer; a setup that
/// cannot load them aborts (a broken build, not a finding).
const Artifact &microArtifact();
const Tokenizer &microTokenizer();

/// Copies dataDir()/from to scratchDir()/to once per process.
void stageDataFile(const std::string &from, const std::string &to);

/// With INGOT_FUZZ_VERBOSE=1 in the environment, prints what `stage` gave
/// (so a replay shows how deep each corpus file gets); returns `st`.
bool report(const char *stage, const Status &st);

/// Loads the artifact at `path`; if it validates, runs what a user would:
/// one generate step for an LLM artifact, else one run of the plan on
/// inputs made from `seed` at the smallest compiled shape. Errors are fine.
void exerciseArtifact(const std::string &path, const uint8_t *seed,
                      size_t seedSize);

} // namespace ingot::fuzz
