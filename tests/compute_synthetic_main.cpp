// Writes the gemm CSVs the collbench-predict --compute-from and
// collbench-fit compute tool tests run on:
//   compute_synthetic_csv DIR
// gemm.csv: alexnet, alexnet_caffe, googlenet and resnet50 at batches 1 ..
// 256 (compute_synthetic.h's known rate), gemm_from8.csv: alexnet at 8 .. 64
// only (a per-node batch below 8 is refused), gemm_no_batch.csv: gemm.csv's
// alexnet rows without the batch column.
#include <cstdio>
#include <exception>

#include "compute_synthetic.h"
#include "models_synthetic.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: compute_synthetic_csv DIR\n");
    return 2;
  }
  try {
    using namespace collbench::testing;
    const std::string dir = argv[1];
    GemmTruth all;
    all.models = {"alexnet", "alexnet_caffe", "googlenet", "resnet50"};
    write_table(dir + "/gemm.csv", synthetic_gemm_table(all));

    GemmTruth from8;
    from8.batches = {8, 16, 32, 64};
    write_table(dir + "/gemm_from8.csv", synthetic_gemm_table(from8));

    collbench::CsvTable no_batch = synthetic_gemm_table(GemmTruth{});
    const auto batch = static_cast<long>(no_batch.column("batch"));
    no_batch.header.erase(no_batch.header.begin() + batch);
    for (auto& row : no_batch.rows) row.erase(row.begin() + batch);
    write_table(dir + "/gemm_no_batch.csv", no_batch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compute_synthetic_csv: %s\n", e.what());
    return 2;
  }
  return 0;
}
