// Writes the CSVs the collbench-fit/collbench-predict tool tests run on:
//   models_synthetic_csv DIR
// good.csv (known α, β, γ with 3% noise), small.csv (the same at 4 ranks
// only, for the quicker plot tests) and one file per kind of bad input:
// missing_column.csv, empty.csv, header_only.csv, nan.csv, too_few.csv.
#include <cstdio>
#include <exception>
#include <fstream>

#include "models_synthetic.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: models_synthetic_csv DIR\n");
    return 2;
  }
  try {
    using namespace collbench::testing;
    const std::string dir = argv[1];
    const collbench::CsvTable good = synthetic_table(SyntheticTruth{});
    write_table(dir + "/good.csv", good);

    SyntheticTruth small;
    small.ranks = {4};
    write_table(dir + "/small.csv", synthetic_table(small));

    collbench::CsvTable missing = good;
    const auto median = static_cast<std::size_t>(missing.column("median_us"));
    missing.header.erase(missing.header.begin() + static_cast<long>(median));
    for (auto& row : missing.rows) row.erase(row.begin() + static_cast<long>(median));
    write_table(dir + "/missing_column.csv", missing);

    std::ofstream(dir + "/empty.csv", std::ios::trunc).close();

    collbench::CsvTable header_only = good;
    header_only.rows.clear();
    write_table(dir + "/header_only.csv", header_only);

    collbench::CsvTable nan = good;
    nan.rows.at(4).at(median) = "nan";
    write_table(dir + "/nan.csv", nan);

    // Two ping-pong sizes cannot fit α and β and still judge the fit.
    SyntheticTruth few;
    few.sizes = {8, 1 << 20};
    few.algorithms.clear();
    write_table(dir + "/too_few.csv", synthetic_table(few));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "models_synthetic_csv: %s\n", e.what());
    return 2;
  }
  return 0;
}
