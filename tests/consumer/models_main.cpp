// Uses the models library (and through it the catalog and Eigen) as a
// project outside collbench's tree does; every models header compiles with
// collbench::models's usage requirements.
#include <fmt/format.h>

#include "collbench/catalog/catalog.h"
#include "collbench/models/fit.h"
#include "collbench/models/least_squares.h"
#include "collbench/models/predict.h"

int main() {
  // min ‖I·x − (1, −1)‖ with x ≥ 0 is x = (1, 0).
  const Eigen::VectorXd x =
      collbench::nnls(Eigen::MatrixXd::Identity(2, 2), Eigen::Vector2d(1, -1));
  fmt::print("nnls: {} {}\n", x(0), x(1));
  fmt::print("resnet50: {} parameters\n", collbench::find_model("resnet50").parameters());
  return 0;
}
