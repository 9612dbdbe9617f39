// Step 5 of collbench-fit (fit.h): the selection of an algorithm per size,
// and the selection string.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "collbench/core/dtype.h"
#include "fit_steps.h"

namespace collbench {

namespace {

// The selection chooses among collbench's own algorithms; the library's
// (`mpi`, its forced ompi_* and mpich_* rows, mpi_bare) are what the choice
// is compared with, not candidates: at 2 ranks the library makes the same
// exchanges as collbench's algorithms without cost terms to show it, so as a
// candidate it was within noise of the choice at 80-84% of the sizes of the
// main job (results/selection/README.md).
bool is_candidate(const CollectiveInfo& collective, std::string_view algorithm) {
  const AlgorithmInfo* info = collective.find_algorithm(algorithm);
  return info != nullptr && !is_library_algorithm(*info);
}

// The rows of one selection: per measured size, the algorithm chosen on
// evidence (choose_significant), the lowest median, the fastest predicted
// bottom-up and fitted top-down, and the MPI library's time.
template <typename Predict, typename Fitted>
std::vector<SelectionRow> selection_rows(std::span<const std::string> candidates,
                                         std::span<const std::size_t> exchange, double tolerance,
                                         const TimesBySize& measured, const Predict& predict,
                                         const Fitted& fitted) {
  const std::vector<Choice> choices = choose_significant(candidates, measured, exchange, tolerance);
  std::vector<SelectionRow> rows;
  std::size_t index = 0;
  for (const auto& [bytes, times] : measured) {
    SelectionRow row;
    row.bytes = bytes;
    std::tie(row.measured, row.measured_seconds) =
        fastest(candidates, bytes, [&](const std::string& name, double) {
          const auto it = times.find(name);
          return it == times.end() ? std::nullopt : std::optional<double>(it->second.median);
        });
    std::tie(row.predicted, row.predicted_seconds) = fastest(candidates, bytes, predict);
    std::tie(row.fitted, row.fitted_seconds) = fastest(candidates, bytes, fitted);
    row.choice = choices[index++];
    if (const auto it = times.find(row.choice.chosen); it != times.end()) {
      row.chosen_time = it->second;
    }
    if (const auto it = times.find(std::string(kMpiLibraryAlgorithm)); it != times.end()) {
      row.mpi_seconds = it->second.median;
      if (!row.choice.chosen.empty()) {
        row.mpi_verdict = beats(it->second, row.chosen_time, tolerance)   ? "faster"
                          : beats(row.chosen_time, it->second, tolerance) ? "slower"
                                                                          : "tie";
      }
    }
    rows.push_back(row);
  }
  return rows;
}

// Step 5 for one (collective, ..., ranks) group with at least 2 ranks;
// nullopt when none of collbench's own algorithms was measured in it.
std::optional<Selection> select_algorithms(const SelectionKey& key,
                                           const std::vector<const Measurement*>& points,
                                           const CollectiveModels& models, double tolerance) {
  const auto& [collective, transport, provider, placement, dtype, op, ranks] = key;
  const CollectiveInfo& collective_info = *find_collective(collective);
  Selection selection{collective, transport, provider, placement, dtype, op,
                      ranks,      {},        {},       "",        "",    ""};
  std::set<std::string> names;
  TimesBySize measured;
  for (const Measurement* m : points) {
    if (is_candidate(collective_info, m->algorithm)) names.insert(m->algorithm);
    measured[m->bytes][m->algorithm] = {m->seconds, m->q1_seconds, m->q3_seconds, m->samples};
  }
  if (names.empty()) return std::nullopt;
  selection.candidates = ordered_candidates(collective, names);
  const auto parsed = parse_dtype(dtype);
  const double element_bytes = parsed ? static_cast<double>(dtype_size(*parsed)) : 1.0;
  const auto predict = [&](const std::string& name, double bytes) {
    const NetworkModel* model = nullptr;
    if (const auto by_ranks = models.bottom_up.find(name); by_ranks != models.bottom_up.end()) {
      if (const auto it = by_ranks->second.find(ranks); it != by_ranks->second.end()) {
        model = &it->second;
      }
    }
    return model_seconds(model, collective_info, name, transport, ranks, bytes, element_bytes);
  };
  const auto fitted = [&](const std::string& name, double bytes) {
    const auto it = models.top_down.find(name);
    return model_seconds(it == models.top_down.end() ? nullptr : &it->second, collective_info, name,
                         transport, ranks, bytes, element_bytes);
  };
  std::vector<double> sizes;
  for (const auto& [bytes, times] : measured) sizes.push_back(bytes);
  const std::vector<std::size_t> exchange =
      same_exchanges(collective, placement, ranks, selection.candidates, sizes);
  selection.rows =
      selection_rows(selection.candidates, exchange, tolerance, measured, predict, fitted);
  std::vector<std::pair<double, std::string>> measured_winners;
  for (const SelectionRow& row : selection.rows) {
    measured_winners.emplace_back(row.bytes, row.choice.chosen);
  }
  selection.measured_string = selection_string(measured_winners);
  const double max_bytes = measured.rbegin()->first;
  selection.predicted_string =
      crossover_selection_string(selection.candidates, max_bytes, element_bytes, predict);
  selection.fitted_string =
      crossover_selection_string(selection.candidates, max_bytes, element_bytes, fitted);
  return selection;
}

}  // namespace

std::string selection_string(std::span<const std::pair<double, std::string>> winners) {
  std::vector<std::pair<double, std::string>> merged;
  for (const auto& [bytes, name] : winners) {
    if (!merged.empty() && merged.back().second == name) {
      merged.back().first = bytes;
    } else {
      merged.emplace_back(bytes, name);
    }
  }
  std::string out;
  double start = 0;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    if (i > 0) out += ';';
    const bool last = i + 1 == merged.size();
    out += fmt::format("{}:{:.0f}-{}", merged[i].second, start,
                       last ? std::string("max") : fmt::format("{:.0f}", merged[i].first));
    start = merged[i].first + 1;
  }
  return out;
}

namespace {

// The cost terms that make two algorithms the same exchange; nullopt for the
// library's algorithms, which have none of their own.
std::optional<CostTerms> exchange_terms(std::string_view collective, std::string_view placement,
                                        std::string_view algorithm, int ranks, double bytes) {
  if (const std::optional<Layout> layout = placement_layout(placement)) {
    const CollectiveInfo* info = find_collective(collective);
    const AlgorithmInfo* algorithm_info =
        info == nullptr ? nullptr : info->find_algorithm(algorithm);
    if (algorithm_info == nullptr || algorithm_info->placed_cost == nullptr ||
        is_library_algorithm(*algorithm_info)) {
      return std::nullopt;
    }
    return algorithm_info->placed_cost(*layout, bytes);
  }
  bool own = false;
  const CostTerms terms = model_terms(collective, algorithm, ranks, bytes, &own);
  return own ? std::optional<CostTerms>(terms) : std::nullopt;
}

bool same_terms(const CostTerms& a, const CostTerms& b) {
  // Equal up to rounding: the same formula may be summed in another order.
  const auto close = [](double x, double y) {
    return std::abs(x - y) <= 1e-9 * std::max({1.0, std::abs(x), std::abs(y)});
  };
  return close(a.messages, b.messages) && close(a.bytes, b.bytes) &&
         close(a.reduce_bytes, b.reduce_bytes) && close(a.intra_messages, b.intra_messages) &&
         close(a.intra_bytes, b.intra_bytes);
}

}  // namespace

std::vector<std::size_t> same_exchanges(std::string_view collective, std::string_view placement,
                                        int ranks, std::span<const std::string> candidates,
                                        std::span<const double> sizes) {
  std::vector<std::vector<std::optional<CostTerms>>> terms;
  for (const std::string& name : candidates) {
    std::vector<std::optional<CostTerms>>& own = terms.emplace_back();
    if (find_collective(collective) == nullptr) continue;  // unknown: no terms
    for (const double bytes : sizes) {
      own.push_back(exchange_terms(collective, placement, name, ranks, bytes));
    }
  }
  const auto equivalent = [&](std::size_t a, std::size_t b) {
    if (terms[a].empty() || terms[b].empty()) return false;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (!terms[a][i] || !terms[b][i] || !same_terms(*terms[a][i], *terms[b][i])) return false;
    }
    return true;
  };
  std::vector<std::size_t> exchange(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    exchange[i] = i;
    for (std::size_t j = 0; j < i; ++j) {
      if (equivalent(i, j)) {
        exchange[i] = j;
        break;
      }
    }
  }
  return exchange;
}

bool beats(const TimeSpread& y, const TimeSpread& x, double tolerance) {
  return y.q3 * (1 + tolerance) < x.q1;
}

std::vector<Choice> choose_significant(std::span<const std::string> candidates,
                                       const TimesBySize& times,
                                       std::span<const std::size_t> exchange, double tolerance) {
  const auto exchange_of = [&](std::size_t i) { return exchange.empty() ? i : exchange[i]; };
  std::vector<Choice> choices;
  std::string previous;
  for (const auto& [bytes, measured] : times) {
    std::vector<const TimeSpread*> time(candidates.size(), nullptr);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (const auto it = measured.find(candidates[i]); it != measured.end()) {
        time[i] = &it->second;
      }
    }
    std::vector<bool> contender(candidates.size(), false);
    std::optional<std::size_t> fastest;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (time[i] == nullptr) continue;
      contender[i] = std::none_of(time.begin(), time.end(), [&](const TimeSpread* other) {
        return other != nullptr && beats(*other, *time[i], tolerance);
      });
      if (!fastest || time[i]->median < time[*fastest]->median) fastest = i;
    }
    // The preferred exchange: the first in candidate order with a median
    // within the tolerance of the lowest (the lowest's own, at worst).
    std::optional<std::size_t> preferred;
    for (std::size_t i = 0; fastest && !preferred && i < candidates.size(); ++i) {
      if (contender[i] && time[i]->median <= time[*fastest]->median * (1 + tolerance)) {
        preferred = exchange_of(i);
      }
    }
    Choice choice;
    choice.bytes = bytes;
    std::optional<std::size_t> chosen;
    std::set<std::size_t> tie_exchanges;
    for (std::size_t i = 0; preferred && i < candidates.size(); ++i) {
      if (!contender[i]) continue;
      if (exchange_of(i) != *preferred) {
        choice.ties.push_back(candidates[i]);
        tie_exchanges.insert(exchange_of(i));
      } else if (!chosen) {
        chosen = i;
      } else {
        choice.same.push_back(candidates[i]);
      }
    }
    for (const std::size_t i : tie_exchanges) choice.tie_exchanges.push_back(candidates[i]);
    if (chosen) {
      choice.chosen = candidates[*chosen];
      choice.exchange = candidates[*preferred];
      if (!previous.empty() && previous != choice.chosen) {
        choice.previous = previous;
        if (const auto it = measured.find(previous); it != measured.end()) {
          choice.margin = it->second.median / time[*chosen]->median;
          choice.gap = it->second.q1 / time[*chosen]->q3;
        }
      }
      previous = choice.chosen;
    }
    choices.push_back(choice);
  }
  return choices;
}

void select_per_rank_count(FitResults& results, std::span<const Measurement> measurements,
                           const FittedModels& models, double tolerance) {
  // A group without a model of its kind (every point at 1 rank) predicts nothing.
  static const CollectiveModels kNoModels;
  for (const auto& [key, points] : group_collectives(measurements, selection_key)) {
    const auto& [collective, transport, provider, placement, dtype, op, ranks] = key;
    if (ranks < 2) continue;
    const auto it = models.find({collective, transport, provider, placement, dtype, op});
    std::optional<Selection> selection =
        select_algorithms(key, points, it == models.end() ? kNoModels : it->second, tolerance);
    if (selection) {
      results.selections.push_back(std::move(*selection));
    } else {
      results.notes.push_back(fmt::format(
          "no selection for {} at {} ranks ({}{}{}): only the MPI library's rows were measured, "
          "and the library is the baseline a choice is compared with, not a candidate",
          collective, ranks, transport, provider.empty() ? "" : " ", provider));
    }
  }
}

}  // namespace collbench
