// Step 5 of collbench-fit (fit.h): the selection of an algorithm per size,
// and the selection string.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "collbench/core/dtype.h"
#include "fit_steps.h"

namespace collbench {

namespace {

// The rows of one selection: per measured size, the algorithm chosen on
// evidence (choose_significant), the lowest median, the fastest predicted
// bottom-up and fitted top-down, and the MPI library's time.
template <typename Predict, typename Fitted>
std::vector<SelectionRow> selection_rows(std::span<const std::string> candidates,
                                         const TimesBySize& measured, const Predict& predict,
                                         const Fitted& fitted) {
  const std::vector<Choice> choices = choose_significant(candidates, measured);
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
    }
    rows.push_back(row);
  }
  return rows;
}

// Step 5 for one (collective, ..., ranks) group with at least 2 ranks.
Selection select_algorithms(const SelectionKey& key, const std::vector<const Measurement*>& points,
                            const CollectiveModels& models) {
  const auto& [collective, transport, provider, placement, dtype, op, ranks] = key;
  const CollectiveInfo& collective_info = *find_collective(collective);
  Selection selection{collective, transport, provider, placement, dtype, op,
                      ranks,      {},        {},       "",        "",    ""};
  std::set<std::string> names;
  TimesBySize measured;
  for (const Measurement* m : points) {
    names.insert(m->algorithm);
    measured[m->bytes][m->algorithm] = {m->seconds, m->q1_seconds, m->q3_seconds, m->samples};
  }
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
  selection.rows = selection_rows(selection.candidates, measured, predict, fitted);
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

std::vector<Choice> choose_significant(std::span<const std::string> candidates,
                                       const TimesBySize& times) {
  std::vector<Choice> choices;
  std::string current;
  for (const auto& [bytes, measured] : times) {
    const auto time_of = [&](const std::string& name) -> const TimeSpread* {
      const auto it = measured.find(name);
      return it == measured.end() ? nullptr : &it->second;
    };
    const TimeSpread* current_time = current.empty() ? nullptr : time_of(current);
    // Lowest median among the candidates that qualify: the current choice
    // and those faster beyond both spreads (whose median, below their q3 and
    // so below the current q1, is lower than the current one's), or every
    // measured candidate when the current choice was not measured here.
    std::string best;
    const TimeSpread* best_time = nullptr;
    for (const std::string& name : candidates) {
      const TimeSpread* time = time_of(name);
      if (time == nullptr) continue;
      const bool qualifies =
          current_time == nullptr || name == current || time->q3 < current_time->q1;
      if (qualifies && (best_time == nullptr || time->median < best_time->median)) {
        best = name;
        best_time = time;
      }
    }
    Choice choice;
    choice.bytes = bytes;
    choice.chosen = best;
    if (!current.empty() && best != current) {
      choice.previous = current;
      if (current_time != nullptr) {
        choice.margin = current_time->median / best_time->median;
        choice.gap = current_time->q1 / best_time->q3;
      }
    }
    if (best_time != nullptr) {
      for (const std::string& name : candidates) {
        const TimeSpread* time = time_of(name);
        if (name != best && time != nullptr && time->q1 <= best_time->q3 &&
            best_time->q1 <= time->q3) {
          choice.ties.push_back(name);
        }
      }
    }
    if (!best.empty()) current = best;
    choices.push_back(choice);
  }
  return choices;
}

void select_per_rank_count(FitResults& results, std::span<const Measurement> measurements,
                           const FittedModels& models) {
  // A group without a model of its kind (every point at 1 rank) predicts nothing.
  static const CollectiveModels kNoModels;
  for (const auto& [key, points] : group_collectives(measurements, selection_key)) {
    const auto& [collective, transport, provider, placement, dtype, op, ranks] = key;
    if (ranks < 2) continue;
    const auto it = models.find({collective, transport, provider, placement, dtype, op});
    results.selections.push_back(
        select_algorithms(key, points, it == models.end() ? kNoModels : it->second));
  }
}

}  // namespace collbench
