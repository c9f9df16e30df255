#include <iostream>

#include "experiments/cli/cli.hpp"
#include "experiments/cli/torch_hooks.hpp"

namespace slurmtwin::cli {

int command_version(const Args& args) {
  return guarded([&] {
    po::options_description o("options");
    o.add_options()("torch", po::bool_switch(), "also say what libtorch can run on (starts slurmtwin-torch)");
    const auto vm = parse("slurmtwin version [--torch]", o, args);
    const auto& summary = torch_hooks().torch_summary;
    if (vm["torch"].as<bool>() && !summary) return run_torch_binary();
    std::cout << "slurmtwin " << SLURMTWIN_VERSION << "\n"
              << (summary ? summary()
                          : std::string("libtorch: not linked; the surrogate's commands run ") +
                                kTorchBinary + " (slurmtwin version --torch: what it can run on)")
              << "\n";
    return kExitOk;
  });
}

}  // namespace slurmtwin::cli
