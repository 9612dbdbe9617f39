// Runs scripts/plot.py for collbench-fit and collbench-predict.
//
// Plots are matplotlib's job (DESIGN.md: do not hand-write what the field's
// tools do), so the C++ tools write their CSV and hand it to the script,
// with Debian's /usr/bin/python3 because that is the one with matplotlib.
#pragma once

#include <string>
#include <vector>

namespace collbench {

// Where the build found the script and the interpreter (overridable on the
// command line of both tools).
std::string default_plot_script();
std::string default_python();

// Runs `python script args...`, letting it print the PNG paths to stdout.
// Throws std::runtime_error with the command and its exit status on failure.
void run_plot_script(const std::string& python, const std::string& script,
                     const std::vector<std::string>& args);

}  // namespace collbench
