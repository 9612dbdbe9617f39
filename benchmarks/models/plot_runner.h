// Runs scripts/plot.py for collbench-fit and collbench-predict.
//
// Plots are matplotlib's job (DESIGN.md: do not hand-write what the field's
// tools do), so the C++ tools write their CSV and hand it to the script,
// with Debian's /usr/bin/python3 because that is the one with matplotlib.
#pragma once

#include <string>
#include <vector>

#include "replace_on_commit.h"

namespace collbench {

// Where the build found the script and the interpreter (overridable on the
// command line of both tools).
std::string default_plot_script();
std::string default_python();

// Runs `python script args...`, letting it print the PNG paths to stdout.
// Throws std::runtime_error with the command and its exit status on failure.
void run_plot_script(const std::string& python, const std::string& script,
                     const std::vector<std::string>& args);

// Throws std::invalid_argument (before any work) unless `python script
// check` succeeds: the interpreter imports matplotlib and the script is a
// collbench plot.py.
void require_plotting(const std::string& python, const std::string& script);

// Runs `python script args... --out STAGING`, STAGING a hidden folder in
// `folder` (one file system), and hands every file drawn to `outputs` as
// the output `folder`/NAME: the plots are replaced together with the
// tool's other outputs at commit, or not at all. Throws std::runtime_error
// when the script fails, leaving nothing behind. Returns the destinations
// (the script's own list of paths names the staging folder: not shown).
std::vector<std::string> plot_together(ReplaceTogether& outputs, const std::string& folder,
                                       const std::string& python, const std::string& script,
                                       std::vector<std::string> args);

}  // namespace collbench
