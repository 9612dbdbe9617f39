// The algorithm table is the one list of algorithms: --list-algorithms, the
// fitter, the selection, the plots' styles and the harness read it, and no
// other source names an algorithm. This test reads the sources as text and
// finds every string literal that is an algorithm's name outside the
// algorithms' own folders; the few that name one on purpose (a paper's
// choice, a target that compares two) are listed below with their reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/collectives/collective.h"
#include "temp_dir.h"

namespace collbench {
namespace {

namespace fs = std::filesystem;

// A file that names an algorithm on purpose: its path under the source
// tree, the name, and why the name is not read from the table.
struct Exception {
  std::string_view path;
  std::string_view name;
  std::string_view reason;
};

constexpr Exception kExceptions[] = {
    {"benchmarks/models/keuper2016.cpp", "ps_central", "the paper's three exchanges"},
    {"benchmarks/models/keuper2016.cpp", "tree", "the paper's three exchanges"},
    {"benchmarks/models/keuper2016.cpp", "ring", "the paper's three exchanges"},
    {"scripts/collbench_report/netsim_check.py", "ring",
     "the characterization's checks: ring's busbw, ps_central / ring"},
    {"scripts/collbench_report/netsim_check.py", "ps_central", "the check ps_central / ring"},
    {"scripts/collbench_report/two_level.py", "ring", "the check ring / hierarchical"},
    {"scripts/collbench_report/two_level.py", "hierarchical", "the check ring / hierarchical"},
    {"scripts/collbench_report/perf.py", "ring", "the performance target mpi / ring"},
    {"benchmarks/models/predict.cpp", "linear", "the compute model, not alltoall's algorithm"},
    {"benchmarks/simspeed/sim_speed_benchmark.cpp", "ring",
     "the simulator's speed target: ring allreduce at 1024 ranks"},
    {"scripts/collbench_report/plot.py", "linear", "the compute model, not alltoall's algorithm"},
    {"benchmarks/simspeed/sim_speed_benchmark.cpp", "ring",
     "the sim transport's speed is measured on the ring allreduce"},
};

// The folders searched: everything but the algorithms' own (collectives/<collective>/,
// where each algorithm registers its row) and the tests (which name what they test).
constexpr std::string_view kSearched[] = {"benchmarks", "core", "transport", "include", "scripts"};

// The names a source must not spell: every algorithm of the table but the
// MPI library's, whose name ("mpi") is also the MPI transport's.
std::set<std::string, std::less<>> table_names() {
  std::set<std::string, std::less<>> names;
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      if (algorithm.name != kMpiLibraryAlgorithm) names.emplace(algorithm.name);
    }
  }
  return names;
}

struct Finding {
  std::string path;  // relative to the root
  int line = 0;
  std::string name;
};

// The code of a line without its comment ("//" in C++, "#" in Python and
// shell): a name in a comment is prose, not a list.
std::string code_of(const std::string& line, bool python_or_shell) {
  return line.substr(0, line.find(python_or_shell ? "#" : "//"));
}

// Every quoted literal ("..." or '...') of `code` that is one of `names`.
std::vector<std::string> named_algorithms(const std::string& code,
                                          const std::set<std::string, std::less<>>& names) {
  std::vector<std::string> found;
  for (std::size_t open = 0; open < code.size(); ++open) {
    const char quote = code[open];
    if (quote != '"' && quote != '\'') continue;
    const std::size_t close = code.find(quote, open + 1);
    if (close == std::string::npos) break;
    const std::string_view literal(code.data() + open + 1, close - open - 1);
    if (names.contains(literal)) found.emplace_back(literal);
    open = close;
  }
  return found;
}

std::vector<Finding> scan(const fs::path& root, const std::set<std::string, std::less<>>& names) {
  std::vector<Finding> findings;
  for (const std::string_view folder : kSearched) {
    const fs::path top = root / folder;
    if (!fs::exists(top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(top)) {
      const fs::path& path = entry.path();
      const std::string extension = path.extension().string();
      const bool python_or_shell = extension == ".py" || extension == ".sh";
      if (!python_or_shell && extension != ".cpp" && extension != ".h") continue;
      std::ifstream file(path);
      std::string line;
      for (int number = 1; std::getline(file, line); ++number) {
        for (std::string& name : named_algorithms(code_of(line, python_or_shell), names)) {
          findings.push_back({fs::relative(path, root).generic_string(), number, std::move(name)});
        }
      }
    }
  }
  return findings;
}

bool excepted(const Finding& finding) {
  return std::any_of(std::begin(kExceptions), std::end(kExceptions), [&](const Exception& e) {
    return e.path == finding.path && e.name == finding.name;
  });
}

std::string listed(const std::vector<Finding>& findings) {
  std::ostringstream out;
  for (const Finding& f : findings)
    out << "\n  " << f.path << ":" << f.line << ": \"" << f.name << '"';
  return out.str();
}

TEST(AlgorithmNames, OnlyTheTableNamesAnAlgorithm) {
  const auto names = table_names();
  ASSERT_GT(names.size(), 15u);
  const auto findings = scan(COLLBENCH_SOURCE_DIR, names);
  std::vector<Finding> unexpected;
  std::copy_if(findings.begin(), findings.end(), std::back_inserter(unexpected),
               [](const Finding& f) { return !excepted(f); });
  EXPECT_TRUE(unexpected.empty())
      << "algorithm names outside the table (read them from collectives(), or add an exception "
         "with its reason to kExceptions):"
      << listed(unexpected);
}

// An exception that no longer matches anything is stale: it would let the
// name back in unnoticed.
TEST(AlgorithmNames, EveryExceptionIsStillNeeded) {
  const auto findings = scan(COLLBENCH_SOURCE_DIR, table_names());
  for (const Exception& exception : kExceptions) {
    const bool used = std::any_of(findings.begin(), findings.end(), [&](const Finding& f) {
      return f.path == exception.path && f.name == exception.name;
    });
    EXPECT_TRUE(used) << exception.path << " no longer names \"" << exception.name
                      << "\": remove its exception";
  }
}

// The scan itself, on a tree of its own: a harness file with a list of
// names is found, in either quote; a comment, a longer name and an
// exception are not.
TEST(AlgorithmNames, TheScanFindsAListOfNames) {
  const testing::TempDir temp("algorithm-names");
  const fs::path root = temp.path();
  fs::create_directories(root / "benchmarks/harness");
  fs::create_directories(root / "scripts");
  std::ofstream(root / "benchmarks/harness/defaults.cpp")
      << "// ring and \"tree\" in prose\n"
      << "const char* kDefaults[] = {\"rabenseifner\", \"ring_buffer\", \"ring\"};\n";
  std::ofstream(root / "scripts/styles.py") << "STYLES = {'ps_sharded': 'o'}  # \"tree\"\n";
  const auto findings = scan(root, table_names());
  std::set<std::string> found;
  for (const Finding& f : findings)
    found.insert(f.path + ":" + std::to_string(f.line) + ":" + f.name);
  EXPECT_EQ(found, (std::set<std::string>{"benchmarks/harness/defaults.cpp:2:rabenseifner",
                                          "benchmarks/harness/defaults.cpp:2:ring",
                                          "scripts/styles.py:1:ps_sharded"}))
      << listed(findings);
}

}  // namespace
}  // namespace collbench
