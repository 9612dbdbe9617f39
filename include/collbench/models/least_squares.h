// The least-squares solvers under collbench-fit's fits (least_squares.cpp).
// Apart from fit.h so that what reads fit.h without fitting (the predictor,
// the export, the harness's train family) does not compile Eigen/Dense.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "collbench/models/fit.h"

namespace collbench {

// min ‖A·x − b‖₂ subject to x ≥ 0, by the active-set method of Lawson and
// Hanson (1974, ch. 23). Throws std::invalid_argument on mismatched sizes or
// non-finite input.
Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);

struct RelativeFit {
  Eigen::VectorXd coefficients;  // ≥ 0, one per column of `terms`
  // Relative standard error of each coefficient from the unconstrained
  // weighted least-squares covariance (s²·(AᵀA)⁻¹); +inf when the columns
  // are linearly dependent or the coefficient is 0.
  Eigen::VectorXd relative_stderr;
  std::vector<double> predicted;  // seconds, one per row
  FitQuality quality;
};

// Fits seconds ≈ fixed + terms·x, x ≥ 0, minimising
// Σ((fixed + terms·x − seconds)_i/seconds_i)²; `fixed` (empty = zero) is a
// known part of the model, e.g. n·γ when γ comes from elsewhere. Columns are
// rescaled to unit norm before solving, because messages (~10) and bytes
// (~10⁹) differ by eight orders of magnitude. Columns that are zero at every
// row get coefficient 0. Requires every seconds_i > 0.
RelativeFit fit_relative(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds,
                         const Eigen::VectorXd& fixed = Eigen::VectorXd());

// The same by absolute error, Σ((terms·x − seconds)_i)²: the longest times
// decide it (the ping-pong's β line, where the bandwidth term is nearly all
// of the largest sizes' time). relative_stderr and quality as above.
RelativeFit fit_absolute(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds);

// Numerical rank of `terms` after relative weighting and column scaling, as
// fit_relative sees it; lower than the column count when the points cannot
// separate the coefficients (e.g. bytes ∝ reduce_bytes for ring).
int weighted_rank(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds);

}  // namespace collbench
