// Non-negative least squares and the relative-error weighted fit built on it.
//
// Eigen 3.4 has no NNLS (it arrived in unsupported/ after 3.4), so the
// Lawson-Hanson active-set method is written here on top of Eigen's
// column-pivoting QR; the cost models have at most three coefficients, so
// clarity wins over speed.
#include "collbench/models/least_squares.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "collbench/models/fit.h"

namespace collbench {
namespace {

// Least squares on the columns in `passive`, zero elsewhere.
Eigen::VectorXd solve_on(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                         const std::vector<bool>& passive) {
  std::vector<Eigen::Index> columns;
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    if (passive[static_cast<std::size_t>(j)]) columns.push_back(j);
  }
  Eigen::VectorXd x = Eigen::VectorXd::Zero(a.cols());
  if (columns.empty()) return x;
  Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(columns.size()));
  for (std::size_t k = 0; k < columns.size(); ++k) {
    sub.col(static_cast<Eigen::Index>(k)) = a.col(columns[k]);
  }
  const Eigen::VectorXd solution = sub.colPivHouseholderQr().solve(b);
  for (std::size_t k = 0; k < columns.size(); ++k) {
    x(columns[k]) = solution(static_cast<Eigen::Index>(k));
  }
  return x;
}

// Scales columns of the relative-error system to unit norm; returns the
// scale factors (0 for an all-zero column, which is left at zero).
Eigen::VectorXd normalise_columns(Eigen::MatrixXd& a) {
  Eigen::VectorXd scale(a.cols());
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    const double norm = a.col(j).norm();
    scale(j) = norm > 0 ? 1.0 / norm : 0.0;
    a.col(j) *= scale(j);
  }
  return scale;
}

void check_system(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds) {
  if (terms.rows() != seconds.size()) {
    throw std::invalid_argument(
        fmt::format("least squares: {} rows of terms but {} times", terms.rows(), seconds.size()));
  }
  if (!terms.allFinite() || !seconds.allFinite()) {
    throw std::invalid_argument("least squares: terms and times must be finite");
  }
  if ((seconds.array() <= 0).any()) {
    throw std::invalid_argument("least squares: every measured time must be > 0");
  }
}

}  // namespace

Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  if (a.rows() != b.size()) {
    throw std::invalid_argument(
        fmt::format("nnls: A has {} rows but b has {} entries", a.rows(), b.size()));
  }
  if (!a.allFinite() || !b.allFinite()) {
    throw std::invalid_argument("nnls: A and b must be finite");
  }
  const Eigen::Index n = a.cols();
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  if (n == 0 || a.rows() == 0) return x;
  std::vector<bool> passive(static_cast<std::size_t>(n), false);
  const double tolerance = 10 * std::numeric_limits<double>::epsilon() *
                           std::max<double>(1.0, a.norm()) *
                           static_cast<double>(std::max(a.rows(), n)) * std::max(1.0, b.norm());
  // Each outer iteration adds one column; Lawson & Hanson bound the work by
  // 3n in practice, the cap only guards against cycling on degenerate input.
  const int max_iterations = 30 * static_cast<int>(n) + 30;
  for (int iteration = 0; iteration < max_iterations; ++iteration) {
    const Eigen::VectorXd gradient = a.transpose() * (b - a * x);
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!passive[static_cast<std::size_t>(j)] && gradient(j) > tolerance &&
          (best < 0 || gradient(j) > gradient(best))) {
        best = j;
      }
    }
    if (best < 0) return x;  // Kuhn-Tucker conditions hold.
    passive[static_cast<std::size_t>(best)] = true;
    for (;;) {
      Eigen::VectorXd z = solve_on(a, b, passive);
      bool feasible = true;
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && z(j) <= 0) feasible = false;
      }
      if (feasible) {
        x = z;
        break;
      }
      // Step from x towards z as far as feasibility allows; the blocking
      // coefficient reaches zero (exactly, but for rounding) and leaves the
      // passive set with any other that reached zero.
      double step = 1.0;
      Eigen::Index blocking = -1;
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && z(j) <= 0) {
          const double candidate = x(j) / (x(j) - z(j));
          if (blocking < 0 || candidate < step) {
            step = candidate;
            blocking = j;
          }
        }
      }
      x += step * (z - x);
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && (j == blocking || x(j) <= 0)) {
          passive[static_cast<std::size_t>(j)] = false;
          x(j) = 0;
        }
      }
    }
  }
  return x;
}

FitQuality fit_quality(std::span<const double> measured, std::span<const double> predicted) {
  if (measured.size() != predicted.size()) {
    throw std::invalid_argument(fmt::format("fit_quality: {} measured but {} predicted",
                                            measured.size(), predicted.size()));
  }
  FitQuality quality;
  quality.points = static_cast<int>(measured.size());
  if (measured.empty()) return quality;
  std::vector<double> errors;
  double log_mean = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    errors.push_back(std::abs(predicted[i] - measured[i]) / measured[i]);
    log_mean += std::log(measured[i]);
  }
  log_mean /= static_cast<double>(measured.size());
  double residual = 0, total = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    // A prediction <= 0 has no logarithm; it is infinitely wrong on this scale.
    const double log_predicted =
        predicted[i] > 0 ? std::log(predicted[i]) : -std::numeric_limits<double>::infinity();
    residual += std::pow(log_predicted - std::log(measured[i]), 2);
    total += std::pow(std::log(measured[i]) - log_mean, 2);
  }
  quality.r2_log = total > 0 ? 1 - residual / total : std::numeric_limits<double>::quiet_NaN();
  std::sort(errors.begin(), errors.end());
  const std::size_t mid = errors.size() / 2;
  quality.median_rel_err =
      errors.size() % 2 == 1 ? errors[mid] : 0.5 * (errors[mid - 1] + errors[mid]);
  quality.max_rel_err = errors.back();
  return quality;
}

int weighted_rank(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds) {
  check_system(terms, seconds);
  Eigen::MatrixXd a = seconds.cwiseInverse().asDiagonal() * terms;
  normalise_columns(a);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  // Columns are unit-norm, so an absolute threshold is meaningful: a column
  // whose independent part is below 1e-9 of its length is a combination of
  // the others as far as double-precision data can tell.
  qr.setThreshold(1e-9);
  return static_cast<int>(qr.rank());
}

namespace {

// Minimises Σ(w_i·(f + Ax − t)_i)² over x ≥ 0: w_i = 1/t_i for the relative
// fit, 1 for the absolute one.
RelativeFit fit_weighted(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds,
                         const Eigen::VectorXd& fixed, const Eigen::VectorXd& weights) {
  check_system(terms, seconds);
  const Eigen::Index rows = terms.rows(), cols = terms.cols();
  const Eigen::VectorXd known = fixed.size() == 0 ? Eigen::VectorXd::Zero(rows) : fixed;
  if (known.size() != rows || !known.allFinite()) {
    throw std::invalid_argument(
        fmt::format("least squares: the fixed part has {} entries for {} rows, or is not finite",
                    known.size(), rows));
  }
  // Scaling row i by w_i turns Σ(w_i·(f + Ax − t)_i)² into ‖A'x − w·(t − f)‖².
  Eigen::MatrixXd a = weights.asDiagonal() * terms;
  const Eigen::VectorXd target = weights.cwiseProduct(seconds - known);
  const Eigen::VectorXd scale = normalise_columns(a);
  const Eigen::VectorXd scaled = nnls(a, target);

  RelativeFit fit;
  fit.coefficients = scaled.cwiseProduct(scale);
  const Eigen::VectorXd predicted = known + terms * fit.coefficients;
  fit.predicted.assign(predicted.data(), predicted.data() + rows);
  fit.quality = fit_quality(std::span<const double>(seconds.data(), static_cast<std::size_t>(rows)),
                            fit.predicted);

  // Standard errors from the unconstrained weighted problem at this solution:
  // cov = s²·(A'ᵀA')⁻¹ with s² = RSS/(rows − cols).
  fit.relative_stderr = Eigen::VectorXd::Constant(cols, std::numeric_limits<double>::infinity());
  const Eigen::VectorXd residual = a * scaled - target;
  const Eigen::Index dof = rows - cols;
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  qr.setThreshold(1e-9);
  if (dof > 0 && qr.rank() == cols) {
    const double s2 = residual.squaredNorm() / static_cast<double>(dof);
    const Eigen::MatrixXd covariance = s2 * (a.transpose() * a).inverse();
    for (Eigen::Index j = 0; j < cols; ++j) {
      if (scaled(j) > 0) fit.relative_stderr(j) = std::sqrt(covariance(j, j)) / scaled(j);
    }
  }
  return fit;
}

}  // namespace

RelativeFit fit_relative(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds,
                         const Eigen::VectorXd& fixed) {
  return fit_weighted(terms, seconds, fixed, seconds.cwiseInverse());
}

RelativeFit fit_absolute(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds) {
  return fit_weighted(terms, seconds, Eigen::VectorXd(), Eigen::VectorXd::Ones(seconds.size()));
}

}  // namespace collbench
