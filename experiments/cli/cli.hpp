#pragma once
// The slurmtwin command table and the option-parsing helpers every command shares.
#include <boost/program_options.hpp>

#include <functional>
#include <string>
#include <vector>

namespace slurmtwin::experiments {}

namespace slurmtwin::cli {

namespace po = boost::program_options;
// The commands are argv -> options -> one call into the experiment libraries (replay, sweep, learn,
// fidelity, check, report: namespace experiments) -> print, so they name those libraries' types bare.
using namespace slurmtwin::experiments;

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

/// -j/--jobs N (worker threads), by default the machine's hardware threads; read with jobs_option().
po::typed_value<unsigned>* jobs_value();
/// --jobs as given; 0 is bad usage (po::error).
unsigned jobs_option(const po::variables_map& vm);

/// A command made of subcommands (`slurmtwin trace info ...`), by name, each given the arguments after it.
using Subcommands = std::vector<std::pair<std::string, std::function<int(const Args&)>>>;
/// Runs the subcommand args[0] names, guarded. No arguments: `usage` on stdout, exit 2; --help: the
/// same, exit 0; an unknown name is bad usage naming the known ones.
int run_subcommand(const std::string& command, const std::string& usage, const Args& args,
                   const Subcommands& subcommands);

/// Runs a command body, mapping exceptions to exit codes with a one-line message on stderr.
int guarded(const std::function<int()>& body);

// Command entry points, args after the command name (one file each; compare, optimize and surrogate:
// experiments/learn_cli). Named command_* so as not to hide the libraries' run_* calls.
int command_config(const Args& args);
int command_trace(const Args& args);
int command_replay(const Args& args);
int command_bench(const Args& args);
int command_sweep(const Args& args);
int command_check(const Args& args);
int command_report(const Args& args);
int command_version(const Args& args);
int command_oracle(const Args& args);

}  // namespace slurmtwin::cli
