//===- CliParser.cpp - The options of one `ingot` subcommand --------------===//
#include "CliParser.h"
#include "CliNumbers.h"

#include "ingot/Device.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace ingot::cli {
namespace {

/// The name an option's errors use: its first long name, else its first
/// one (CLI11's Option::get_name does the same).
std::string flagName(const std::string &names) {
  std::string first;
  for (size_t pos = 0; pos <= names.size();) {
    size_t comma = std::min(names.find(',', pos), names.size());
    std::string name = names.substr(pos, comma - pos);
    if (name.rfind("--", 0) == 0)
      return name;
    if (first.empty())
      first = name;
    pos = comma + 1;
  }
  return first;
}

std::string rangeText(int64_t min, int64_t max) {
  return std::to_string(min) + ".." + std::to_string(max);
}

} // namespace

CommandLine::CommandLine(const std::string &command, const std::string &summary)
    : command_(command), app_(summary, "ingot " + command) {
  app_.get_formatter()->column_width(36);
  app_.failure_message([this](const CLI::App *app, const CLI::Error &e) {
    return failureMessage(*app, e);
  });
}

CLI::Option *CommandLine::positional(const std::string &name, std::string *out,
                                     const std::string &help) {
  return app_.add_option(name, *out, help)->type_name("");
}

CLI::Option *CommandLine::integer(const std::string &names, int64_t *out,
                                  int64_t min, int64_t max,
                                  const std::string &help,
                                  const std::string &shownDefault) {
  return integer(
      names, [out](int64_t v) { *out = v; }, min, max, help,
      shownDefault.empty() ? std::to_string(*out) : shownDefault);
}

CLI::Option *CommandLine::integer(const std::string &names,
                                  std::function<void(int64_t)> store,
                                  int64_t min, int64_t max,
                                  const std::string &help,
                                  const std::string &shownDefault) {
  const std::string flag = flagName(names);
  auto take = [flag, min, max, store](const std::string &text) {
    int64_t v = 0;
    std::string error;
    if (!parseFlagInt(flag, text, min, max, &v, &error))
      throw FlagError(error);
    store(v);
  };
  return value(names, take, help + " (" + rangeText(min, max) + ")",
               shownDefault, "INT", flagRangeError(flag, nullptr, min, max));
}

CLI::Option *CommandLine::value(const std::string &names,
                                std::function<void(const std::string &)> take,
                                const std::string &help,
                                const std::string &shownDefault,
                                const std::string &typeName,
                                const std::string &missing) {
  CLI::Option *opt = app_.add_option(names, CLI::callback_t{}, help);
  // Every value goes through `take` in order, so a repeatable flag sees
  // each one and any other flag keeps the last.
  opt->type_name(typeName)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->each([take](const std::string &v) { take(v); });
  if (!shownDefault.empty())
    opt->default_str(shownDefault);
  missingValue_[opt->get_name()] =
      missing.empty() ? opt->get_name() + " needs a value" : missing;
  return opt;
}

CLI::Option *CommandLine::value(const std::string &names, std::string *out,
                                const std::string &help,
                                const std::string &typeName) {
  return value(
      names, [out](const std::string &v) { *out = v; }, help, *out, typeName);
}

CLI::Option *CommandLine::flag(const std::string &names, bool *out,
                               const std::string &help, bool to) {
  return app_.add_flag_callback(names, [out, to] { *out = to; }, help);
}

std::string CommandLine::failureMessage(const CLI::App &app,
                                        const CLI::Error &e) const {
  std::string message = e.what();
  // get_name() is not the class for these two: CLI11 puts the app's name.
  if (dynamic_cast<const CLI::ExtrasError *>(&e)) {
    const std::vector<std::string> extras = app.remaining();
    if (!extras.empty())
      message = extras[0].size() > 1 && extras[0][0] == '-'
                    ? "unknown option '" + extras[0] + "'"
                    : "unexpected argument '" + extras[0] + "'";
  } else if (dynamic_cast<const CLI::ArgumentMismatch *>(&e)) {
    // CLI11 names the option first: "--block-size: 1 required INT missing".
    auto it = missingValue_.find(message.substr(0, message.find(':')));
    if (it != missingValue_.end())
      message = it->second;
  }
  return "error: " + message + "\n(run 'ingot " + command_ +
         " --help' for its options)\n";
}

int CommandLine::parse(int argc, char **argv) {
  // "--flag=" is the flag with an empty value (CLI11 would take the next
  // argument instead).
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {
    std::string arg = argv[i];
    if (arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' &&
        arg.find('=') == arg.size() - 1) {
      args.push_back("");
      arg.pop_back();
    }
    args.push_back(arg);
  }
  try {
    app_.parse(args); // args are in reverse order, as CLI11 takes them
  } catch (const CLI::CallForHelp &e) {
    return app_.exit(e);
  } catch (const CLI::ParseError &e) {
    app_.exit(e);
    return 2;
  }
  return -1;
}

int CommandLine::usageError(const std::string &message) const {
  std::cerr << std::flush;
  std::fprintf(stderr, "error: %s\n(run 'ingot %s --help' for its options)\n",
               message.c_str(), command_.c_str());
  return 2;
}

void declareWeightsFlag(CommandLine &cl, std::string *dir) {
  cl.value("--weights", dir,
           "for an artifact compiled with --weights=external: the model "
           "directory holding the safetensors files it names",
           "DIR");
}

void declareDeviceFlags(CommandLine &cl, std::string *device,
                        double *gpuMemoryFraction) {
  cl.value(
      "--device",
      [device](const std::string &v) {
        DeviceRequest r;
        if (Status s = parseDeviceRequest(v, &r); !s)
          throw FlagError(s.message());
        *device = v;
      },
      "where the steps run: cpu, cuda, cuda:N, or auto (CUDA when the "
      "artifact's CUDA code covers its plan and a GPU is there, else the "
      "CPU; an artifact with GPU code says which on stderr)",
      "auto", "DEVICE");
  cl.value(
      "--gpu-memory-fraction",
      [gpuMemoryFraction](const std::string &v) {
        char *end = nullptr;
        const double f = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(f > 0 && f <= 1))
          throw FlagError("--gpu-memory-fraction " + v +
                          ": expected a number in (0, 1]");
        *gpuMemoryFraction = f;
      },
      "share of the GPU's memory the weights, activations and KV cache may "
      "take; the KV cache gets what the rest leaves",
      "0.9", "F");
}

} // namespace ingot::cli
