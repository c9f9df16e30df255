#pragma once
// The slurmtwin command table and the option-parsing helpers every command shares.
#include <boost/program_options.hpp>

#include <functional>
#include <string>
#include <vector>

namespace slurmtwin::cli {

namespace po = boost::program_options;

/// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command ran and found a failure (e.g. a regression)
inline constexpr int kExitUsage = 2;    // bad usage or bad input

using Args = std::vector<std::string>;

struct Command {
  std::string name;                     // e.g. "trace"
  std::string summary;                  // one line for `slurmtwin --help`
  std::function<int(const Args&)> run;  // args after the command name
};

/// Every command, in help order.
const std::vector<Command>& commands();

/// The whole command line: `slurmtwin COMMAND ARGS...` -> the command's exit code.
int run_main(int argc, char** argv);

/// Thrown by parse() when --help was given (help already printed): the command returns kExitOk.
struct HelpShown {};

/// Parses `args` against `options` (+ positionals); prints "usage + options with defaults" for --help.
/// Throws HelpShown after printing help, po::error on bad usage.
po::variables_map parse(const std::string& usage, po::options_description options, const Args& args,
                        const po::positional_options_description& positional = {});

/// Runs a command body, mapping exceptions to exit codes with a one-line message on stderr.
int guarded(const std::function<int()>& body);

// Command entry points (one file each; compare, optimize and surrogate: experiments/learn_cli).
int run_config(const Args& args);
int run_trace(const Args& args);
int run_replay(const Args& args);
int run_bench(const Args& args);
int run_sweep(const Args& args);
int run_check(const Args& args);
int run_report(const Args& args);
int run_version(const Args& args);
int run_oracle(const Args& args);

}  // namespace slurmtwin::cli
