//===- Commands.h - Subcommands of the `ingot` CLI --------------*- C++ -*-===//
//
// Each subcommand parses its own arguments (argv[0] is the subcommand name)
// and returns the process exit code: 0 success, 1 error (message on stderr),
// 2 usage error.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace ingot::cli {

int compileMain(int argc, char **argv); // CompileCommand.cpp (compiler builds)
int runMain(int argc, char **argv);     // RunCommand.cpp
int inspectMain(int argc, char **argv); // InspectCommand.cpp
int generateMain(int argc, char **argv); // GenerateCommand.cpp
int tokenizeMain(int argc, char **argv); // TokenizeCommand.cpp
int benchMain(int argc, char **argv);    // BenchCommand.cpp
int profileMain(int argc, char **argv);  // ProfileCommand.cpp
int perplexityMain(int argc, char **argv); // PerplexityCommand.cpp
int serveMain(int argc, char **argv);    // ServeCommand.cpp (server builds)

} // namespace ingot::cli
