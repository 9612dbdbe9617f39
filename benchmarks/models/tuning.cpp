// Open MPI rules files from measurements of the library's algorithms; see
// collbench/models/tuning.h.
#include "collbench/models/tuning.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <ranges>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "collbench/collectives/collective.h"
#include "collbench/collectives/mpich_tuned.h"
#include "collbench/collectives/ompi_tuned.h"

namespace collbench {
namespace {

// Open MPI 4.1's COLLCOUNT (coll_base_functions.h): ids are 0 to 21.
constexpr int kOmpiCollectiveCount = 22;

// The library's rows measured for one collective on one rank count, by size.
using RowsBySize = std::map<double, std::map<std::string, const Measurement*>>;

std::string describe(std::string_view collective, int ranks, double bytes) {
  return fmt::format("{} on {} ranks at {} bytes", collective, ranks, bytes);
}

// Whether a row of `family` and `algorithm` is one of the library's: its
// default (`mpi`) or one of its forced algorithms, Open MPI's or MPICH's.
bool is_library_row(std::string_view family, std::string_view algorithm) {
  const OmpiTunedCollective* ompi = find_ompi_tuned(family);
  const MpichCollective* mpich = find_mpich_tuned(family);
  if (ompi == nullptr && mpich == nullptr) return false;
  return algorithm == kMpiLibraryAlgorithm ||
         (ompi != nullptr && find_ompi_tuned_algorithm(*ompi, algorithm) != nullptr) ||
         (mpich != nullptr && find_mpich_tuned_algorithm(*mpich, algorithm) != nullptr);
}

// The column `name` of every row of `tables` whose family and algorithm are
// a library row's, distinct and sorted.
std::set<std::string> library_column(std::span<const NamedTable> tables, std::string_view name) {
  std::set<std::string> values;
  for (const NamedTable& named : tables) {
    const int column = named.table.column(name);
    const int family = named.table.column("family");
    const int algorithm = named.table.column("algorithm");
    if (column < 0 || family < 0 || algorithm < 0) continue;
    for (const auto& row : named.table.rows) {
      if (!is_library_row(row[static_cast<std::size_t>(family)],
                          row[static_cast<std::size_t>(algorithm)])) {
        continue;
      }
      const std::string& value = row[static_cast<std::size_t>(column)];
      if (!value.empty()) values.insert(value);
    }
  }
  return values;
}

std::string joined(const std::set<std::string>& values) {
  return values.empty() ? std::string("(not recorded)")
                        : fmt::format("{}", fmt::join(values, ", "));
}

// One choice: the fastest forced row, kept only where it beats `mpi`
// beyond both spreads.
// `Table`: OmpiTunedCollective or MpichCollective.
template <typename Table>
LibraryChoice choose(const Table& collective, int ranks, double bytes,
                     const std::map<std::string, const Measurement*>& rows) {
  LibraryChoice choice;
  choice.collective = std::string(collective.collective);
  choice.ranks = ranks;
  choice.bytes = bytes;
  choice.default_seconds = std::numeric_limits<double>::quiet_NaN();
  const Measurement* fastest = nullptr;
  // In the table's order, so that ties go to the earlier row.
  for (const OmpiTunedAlgorithm& algorithm : collective.algorithms) {
    const auto it = rows.find(std::string(algorithm.row));
    if (it != rows.end() && (fastest == nullptr || it->second->seconds < fastest->seconds)) {
      fastest = it->second;
    }
  }
  if (fastest == nullptr) {
    throw std::runtime_error(
        fmt::format("no forced algorithm of the library measured for {} (only mpi): run collbench "
                    "--families {} --library-algorithms at that size",
                    describe(collective.collective, ranks, bytes), collective.collective));
  }
  choice.fastest = fastest->algorithm;
  choice.fastest_seconds = fastest->seconds;
  const auto library = rows.find(std::string(kMpiLibraryAlgorithm));
  const bool beats_default = library == rows.end() ||
                             fastest->q3_seconds < library->second->q1_seconds ||
                             (fastest->q3_seconds == fastest->q1_seconds &&
                              library->second->q3_seconds == library->second->q1_seconds &&
                              fastest->seconds < library->second->seconds);
  if (library != rows.end()) choice.default_seconds = library->second->seconds;
  if (beats_default) {
    choice.chosen = fastest->algorithm;
    for (const OmpiTunedAlgorithm& algorithm : collective.algorithms) {
      if (algorithm.row == fastest->algorithm) choice.algorithm = algorithm.id;
    }
  } else {
    choice.chosen = std::string(kMpiLibraryAlgorithm);
  }
  return choice;
}

// The message entries of one communicator size: 0 below the smallest
// measured size, each change of choice at its size, 0 from one byte above
// the largest.
std::vector<RulesMessage> message_entries(std::span<const LibraryChoice> choices) {
  std::vector<RulesMessage> entries;
  const auto add = [&](std::uint64_t bytes, int algorithm) {
    if (!entries.empty() && entries.back().algorithm == algorithm) return;
    if (!entries.empty() && entries.back().bytes == bytes) {
      entries.back().algorithm = algorithm;
    } else {
      entries.push_back({bytes, algorithm, 0, 0});
    }
    if (algorithm != 0) {
      entries.back().fan = kOmpiForcedFanout;
      entries.back().segment = kOmpiForcedSegmentBytes;
    } else {
      entries.back().fan = entries.back().segment = 0;
    }
  };
  entries.push_back({0, 0, 0, 0});
  for (const LibraryChoice& choice : choices) {
    add(static_cast<std::uint64_t>(choice.bytes), choice.algorithm);
  }
  add(static_cast<std::uint64_t>(choices.back().bytes) + 1, 0);
  return entries;
}

std::string format_rules(const RulesFile& rules, std::span<const LibraryChoice> choices) {
  std::string text = fmt::format("{:<24}# collectives\n", rules.collectives.size());
  for (const RulesCollective& collective : rules.collectives) {
    const auto* entry = [&]() -> const OmpiTunedCollective* {
      for (const OmpiTunedCollective& c : ompi_tuned_collectives()) {
        if (c.rules_id == collective.id) return &c;
      }
      return nullptr;
    }();
    text += fmt::format("{:<24}# {} (collbench: {})\n", collective.id, entry->library,
                        entry->collective);
    text += fmt::format("{:<24}# communicator sizes\n", collective.communicators.size());
    for (const RulesCommunicator& communicator : collective.communicators) {
      text += fmt::format("{:<24}# ranks\n", communicator.ranks);
      text += fmt::format("{:<24}# message sizes: bytes, algorithm, fan-in/out, segment\n",
                          communicator.messages.size());
      for (const RulesMessage& message : communicator.messages) {
        std::string why;
        if (message.algorithm == 0) {
          why = "the library's fixed decision";
        } else {
          for (const LibraryChoice& choice : choices) {
            if (choice.collective == entry->collective && choice.ranks == communicator.ranks &&
                static_cast<std::uint64_t>(choice.bytes) == message.bytes) {
              why = choice.chosen;
              if (!std::isnan(choice.default_seconds)) {
                why += fmt::format(": {:.4g} us, the default {:.4g} us",
                                   choice.fastest_seconds * 1e6, choice.default_seconds * 1e6);
              }
            }
          }
        }
        text += fmt::format("{:<24}# {}\n",
                            fmt::format("{} {} {} {}", message.bytes, message.algorithm,
                                        message.fan, message.segment),
                            why);
      }
    }
  }
  return text;
}

// Tokens of a rules file: integers with their line, comments dropped.
struct Token {
  std::string_view text;
  int line = 0;
};

std::vector<Token> tokenize(std::string_view text, std::string_view source) {
  std::vector<Token> tokens;
  int line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else {
      const std::size_t start = i;
      while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])) &&
             text[i] != '#') {
        ++i;
      }
      const std::string_view word = text.substr(start, i - start);
      if (!std::all_of(word.begin(), word.end(),
                       [](char d) { return std::isdigit(static_cast<unsigned char>(d)); })) {
        throw std::runtime_error(fmt::format(
            "{}: line {}: '{}' is not a non-negative whole number (a rules file holds only "
            "those and # comments)",
            source, line, word));
      }
      tokens.push_back({word, line});
    }
  }
  return tokens;
}

class TokenReader {
 public:
  TokenReader(std::vector<Token> tokens, std::string_view source)
      : tokens_(std::move(tokens)), source_(source) {}

  std::uint64_t next(std::string_view what) {
    if (position_ == tokens_.size()) {
      throw std::runtime_error(fmt::format("{}: the file ends where {} was expected (line {})",
                                           source_, what, last_line()));
    }
    const Token& token = tokens_[position_++];
    std::uint64_t value = 0;
    const auto [end, error] =
        std::from_chars(token.text.data(), token.text.data() + token.text.size(), value);
    if (error != std::errc() || end != token.text.data() + token.text.size() ||
        value > static_cast<std::uint64_t>(std::numeric_limits<long>::max())) {
      throw std::runtime_error(
          fmt::format("{}: line {}: {} {} is out of range", source_, token.line, what, token.text));
    }
    line_ = token.line;
    return value;
  }
  int next_int(std::string_view what) {
    const std::uint64_t value = next(what);
    if (value > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      fail(fmt::format("{} {} is out of range", what, value));
    }
    return static_cast<int>(value);
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw std::runtime_error(fmt::format("{}: line {}: {}", source_, line_, message));
  }
  bool done() const { return position_ == tokens_.size(); }
  const Token& peek() const { return tokens_[position_]; }

 private:
  int last_line() const { return tokens_.empty() ? 1 : tokens_.back().line; }

  std::vector<Token> tokens_;
  std::string_view source_;
  std::size_t position_ = 0;
  int line_ = 1;
};

}  // namespace

RulesFile parse_ompi_rules(std::string_view text, std::string_view source) {
  TokenReader reader(tokenize(text, source), source);
  RulesFile rules;
  const int collectives = reader.next_int("the number of collectives");
  if (collectives < 1 || collectives > kOmpiCollectiveCount) {
    reader.fail(
        fmt::format("{} collectives; Open MPI knows 1 to {}", collectives, kOmpiCollectiveCount));
  }
  std::set<int> seen;
  for (int c = 0; c < collectives; ++c) {
    RulesCollective& collective = rules.collectives.emplace_back();
    collective.id = reader.next_int("a collective id");
    if (collective.id >= kOmpiCollectiveCount) {
      reader.fail(fmt::format("collective id {}; Open MPI's are 0 to {}", collective.id,
                              kOmpiCollectiveCount - 1));
    }
    if (!seen.insert(collective.id).second) {
      reader.fail(fmt::format("collective {} appears twice", collective.id));
    }
    const int communicators = reader.next_int("the number of communicator sizes");
    if (communicators < 1)
      reader.fail(fmt::format("collective {} has no communicator size", collective.id));
    for (int k = 0; k < communicators; ++k) {
      RulesCommunicator& communicator = collective.communicators.emplace_back();
      communicator.ranks = reader.next_int("a communicator size");
      if (k > 0 && communicator.ranks <= collective.communicators[k - 1].ranks) {
        reader.fail(fmt::format("communicator size {} after {}: they must ascend",
                                communicator.ranks, collective.communicators[k - 1].ranks));
      }
      const int messages = reader.next_int("the number of message sizes");
      if (messages < 1) {
        reader.fail(fmt::format("communicator size {} has no message size", communicator.ranks));
      }
      for (int m = 0; m < messages; ++m) {
        RulesMessage message;
        message.bytes = reader.next("a message size");
        if (m == 0 && message.bytes != 0) {
          reader.fail(fmt::format("the first message size is {}, not 0", message.bytes));
        }
        if (m > 0 && message.bytes <= communicator.messages.back().bytes) {
          reader.fail(fmt::format("message size {} after {}: they must ascend", message.bytes,
                                  communicator.messages.back().bytes));
        }
        message.algorithm = reader.next_int("an algorithm");
        message.fan = reader.next_int("a fan-in/out");
        message.segment = reader.next_int("a segment size");
        communicator.messages.push_back(message);
      }
    }
  }
  if (!reader.done()) {
    const Token& extra = reader.peek();
    throw std::runtime_error(fmt::format("{}: line {}: '{}' after the last of {} collectives",
                                         source, extra.line, extra.text, collectives));
  }
  return rules;
}

RulesMessage ompi_rules_entry(const RulesFile& rules, int id, int ranks, std::uint64_t bytes) {
  for (const RulesCollective& collective : rules.collectives) {
    if (collective.id != id) continue;
    const RulesCommunicator* communicator = &collective.communicators.front();
    for (const RulesCommunicator& candidate : collective.communicators) {
      if (candidate.ranks > ranks) break;
      communicator = &candidate;
    }
    RulesMessage entry;
    for (const RulesMessage& message : communicator->messages) {
      if (message.bytes > bytes) break;
      entry = message;
    }
    return entry;
  }
  return {};
}

int ompi_rules_algorithm(const RulesFile& rules, int id, int ranks, std::uint64_t bytes) {
  return ompi_rules_entry(rules, id, ranks, bytes).algorithm;
}

OmpiRulesExport export_ompi_rules(std::span<const Measurement> measurements,
                                  std::span<const NamedTable> tables, std::string_view load_note) {
  // Per collective (the table's order) and rank count, the library's rows.
  std::map<std::size_t, std::map<int, RowsBySize>> library;
  std::set<std::pair<std::string, std::string>> kinds;  // dtype, placement
  std::set<std::string> ops;
  std::set<std::string> sources;
  const std::span<const OmpiTunedCollective> table = ompi_tuned_collectives();
  for (const Measurement& m : measurements) {
    if (m.transport != "mpi") continue;
    const auto entry = std::find_if(table.begin(), table.end(), [&](const OmpiTunedCollective& c) {
      return c.collective == m.family;
    });
    if (entry == table.end()) continue;
    if (m.algorithm != kMpiLibraryAlgorithm &&
        find_ompi_tuned_algorithm(*entry, m.algorithm) == nullptr) {
      continue;
    }
    library[static_cast<std::size_t>(entry - table.begin())][m.ranks][m.bytes][m.algorithm] = &m;
    // The collectives that reduce nothing have no op.
    kinds.emplace(m.dtype, m.placement);
    if (!m.op.empty()) ops.insert(m.op);
    sources.insert(m.sources.begin(), m.sources.end());
  }
  const auto forced_measured = [&](const std::map<int, RowsBySize>& by_ranks) {
    for (const auto& [ranks, by_size] : by_ranks) {
      for (const auto& [bytes, rows] : by_size) {
        for (const auto& [algorithm, point] : rows) {
          if (algorithm != kMpiLibraryAlgorithm) return true;
        }
      }
    }
    return false;
  };
  bool any_forced = false;
  for (const auto& [index, by_ranks] : library)
    any_forced = any_forced || forced_measured(by_ranks);
  if (!any_forced) {
    throw std::runtime_error(
        "no measurements of the MPI library's forced algorithms (ompi_* rows) in the input: run "
        "collbench --library-algorithms with OMPI_MCA_coll_tuned_use_dynamic_rules=1");
  }
  if (kinds.size() > 1 || ops.size() > 1) {
    std::vector<std::string> listed;
    for (const auto& [dtype, placement] : kinds) {
      listed.push_back(fmt::format("{} {}", dtype, placement.empty() ? "-" : placement));
    }
    throw std::runtime_error(fmt::format(
        "the library's rows mix {} (dtype, placement) and ops {}: a rules file is for one of "
        "each; pass the CSVs of one",
        fmt::join(listed, "; "), fmt::join(ops, ", ")));
  }

  OmpiRulesExport result;
  for (const auto& [index, by_ranks] : library) {
    const OmpiTunedCollective& collective = table[index];
    if (!forced_measured(by_ranks)) {
      throw std::runtime_error(fmt::format(
          "{} has measurements of the library (mpi) but none of its forced algorithms: run "
          "collbench --families {} --library-algorithms, or leave its rows out",
          collective.collective, collective.collective));
    }
    RulesCollective rules{collective.rules_id, {}};
    int previous_ranks = 0;
    for (const auto& [ranks, by_size] : by_ranks) {
      // Communicator sizes between the measured ones (and below the first)
      // hand back to the fixed decision.
      if (ranks > previous_ranks + 1)
        rules.communicators.push_back({previous_ranks + 1, {{0, 0, 0, 0}}});
      std::vector<LibraryChoice> choices;
      for (const auto& [bytes, rows] : by_size) {
        choices.push_back(choose(collective, ranks, bytes, rows));
      }
      rules.communicators.push_back({ranks, message_entries(choices)});
      result.choices.insert(result.choices.end(), choices.begin(), choices.end());
      previous_ranks = ranks;
    }
    rules.communicators.push_back({previous_ranks + 1, {{0, 0, 0, 0}}});
    result.rules.collectives.push_back(std::move(rules));
  }

  const auto& [dtype, placement] = *kinds.begin();
  const std::string op = ops.empty() ? std::string("(no reduction)") : *ops.begin();
  const std::set<std::string> nodes = library_column(tables, "nodes");
  const bool one_node = placement == "intra" || (nodes.size() == 1 && *nodes.begin() == "1");
  result.text = fmt::format(
      "# Open MPI 4.1 coll_tuned dynamic rules: mpirun --mca coll_tuned_use_dynamic_rules 1 "
      "--mca coll_tuned_dynamic_rules_filename THIS_FILE\n"
      "# Written by collbench-fit --export ompi-rules from {}\n"
      "# Measured on hosts {} ({} node{}: {}), {} {}, with {}; runs {}.\n"
      "# {}\n"
      "# Each entry: the library's fastest forced algorithm where it beat the default beyond\n"
      "# both interquartile ranges at that measured size; 0 (the library's fixed decision)\n"
      "# elsewhere, below the smallest and above the largest measured size, and on\n"
      "# communicator sizes not measured. Fan-in/out {} and segment size {} are what the\n"
      "# forced algorithms ran with.\n{}",
      fmt::join(sources, ", "), joined(library_column(tables, "hosts")), joined(nodes),
      nodes.size() == 1 && *nodes.begin() == "1" ? "" : "s",
      one_node ? "shared memory" : "a network", dtype, op,
      joined(library_column(tables, "mpi_library")), joined(library_column(tables, "run_id")),
      one_node ? "Shared memory on one node: these choices are not evidence for a network."
               : "Measured across nodes: valid for this network and these node counts.",
      kOmpiForcedFanout, kOmpiForcedSegmentBytes,
      load_note.empty() ? std::string() : fmt::format("# {}\n", load_note));
  result.text += format_rules(result.rules, result.choices);
  return result;
}

// ---- Rows measured under load -----------------------------------------------

LoadedRows leave_out_loaded(std::span<const NamedTable> tables, bool allow_loaded) {
  LoadedRows result;
  std::size_t library_rows = 0;
  for (const NamedTable& named : tables) {
    NamedTable& quiet = result.tables.emplace_back(named);
    const int loaded = named.table.column("loaded");
    const int family = named.table.column("family");
    const int algorithm = named.table.column("algorithm");
    if (family < 0 || algorithm < 0) continue;
    std::erase_if(quiet.table.rows, [&](const std::vector<std::string>& row) {
      if (!is_library_row(row[static_cast<std::size_t>(family)],
                          row[static_cast<std::size_t>(algorithm)])) {
        return false;
      }
      ++library_rows;
      const bool marked = loaded >= 0 && row[static_cast<std::size_t>(loaded)] == "yes";
      result.loaded += marked ? 1 : 0;
      return marked;
    });
  }
  if (result.loaded == 0) {
    result.tables.assign(tables.begin(), tables.end());
    return result;
  }
  // A file of loaded rows only is left out whole (an empty table is bad input).
  std::erase_if(result.tables, [](const NamedTable& named) { return named.table.rows.empty(); });
  // A library point that no quiet row measured: the choice at its size
  // would rest on loaded rows alone. Per collective: sizes and rows.
  const auto key = [](const Measurement& m) {
    return std::tuple(m.family, m.transport, m.provider, m.placement, m.dtype, m.op, m.algorithm,
                      m.ranks, m.bytes);
  };
  std::set<decltype(key(Measurement{}))> measured_quietly;
  for (const Measurement& m : aggregate_measurements(result.tables))
    measured_quietly.insert(key(m));
  std::map<std::string, std::pair<std::set<std::pair<int, double>>, int>> resting;
  for (const Measurement& m : aggregate_measurements(tables)) {
    if (!is_library_row(m.family, m.algorithm) || measured_quietly.contains(key(m))) continue;
    auto& [sizes, rows] = resting[m.family];
    sizes.emplace(m.ranks, m.bytes);
    rows += m.samples;
  }
  if (!resting.empty() && !allow_loaded) {
    std::vector<std::string> parts;
    for (const auto& [collective, found] : resting) {
      const auto& [sizes, rows] = found;
      parts.push_back(fmt::format("{} at {} size{} ({} row{})", collective, sizes.size(),
                                  sizes.size() == 1 ? "" : "s", rows, rows == 1 ? "" : "s"));
    }
    throw std::runtime_error(fmt::format(
        "the choice of {} rests on rows measured under load only (column loaded = yes: other "
        "work kept the machine busy; {} of the library's {} rows are marked): measure them "
        "again on a quiet machine, or pass --allow-loaded to export from them",
        fmt::join(parts, ", "), result.loaded, library_rows));
  }
  if (allow_loaded) {
    result.tables.assign(tables.begin(), tables.end());
    result.header = fmt::format(
        "--allow-loaded: {} of the library's {} rows were measured under load (loaded = yes) "
        "and are included{}",
        result.loaded, library_rows,
        resting.empty() ? std::string()
                        : fmt::format("; {} collective{} choices rest on them", resting.size(),
                                      resting.size() == 1 ? "'s" : "s'"));
  } else {
    result.header = fmt::format(
        "{} of the library's {} rows were measured under load (loaded = yes) and are left out; "
        "every choice rests on quiet rows",
        result.loaded, library_rows);
  }
  return result;
}

// ---- MPICH's selection file -------------------------------------------------

namespace {

// MPICH 4.0.2's own selection file (the one built into libmpich, from its
// source's coll_selection.json), the defaults an export keeps where it has no
// measurement; generated into a string by CMake from
// benchmarks/models/mpich_default_selection.json.
constexpr std::string_view kMpichDefaultSelection =
#include "mpich_default_selection.inc"
    ;

class JsonReader {
 public:
  JsonReader(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  SelectionNode document() {
    SelectionNode root = object();
    skip_space();
    if (position_ != text_.size()) fail("text after the top-level object");
    return root;
  }

 private:
  // Whitespace and /* */ comments, which MPICH's reader (json-c) skips too.
  void skip_space() {
    while (position_ < text_.size()) {
      const char c = text_[position_];
      if (c == '\n') {
        ++line_;
        ++position_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++position_;
      } else if (text_.substr(position_, 2) == "/*") {
        const std::size_t end = text_.find("*/", position_ + 2);
        if (end == std::string_view::npos) fail("a /* comment is not closed");
        line_ +=
            static_cast<int>(std::count(text_.begin() + static_cast<std::ptrdiff_t>(position_),
                                        text_.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
        position_ = end + 2;
      } else {
        return;
      }
    }
  }
  void expect(char c) {
    skip_space();
    if (position_ >= text_.size() || text_[position_] != c) {
      fail(fmt::format("'{}' expected", c));
    }
    ++position_;
  }
  std::string key() {
    expect('"');
    const std::size_t end = text_.find('"', position_);
    if (end == std::string_view::npos) fail("a string is not closed");
    std::string value(text_.substr(position_, end - position_));
    if (value.find_first_of("\\\n") != std::string::npos) {
      fail(fmt::format("key '{}': escapes and line breaks are not MPICH's keys", value));
    }
    position_ = end + 1;
    return value;
  }
  // MPICH's selection is objects all the way down: a leaf is {}.
  SelectionNode object() {
    expect('{');
    SelectionNode node;
    skip_space();
    if (position_ < text_.size() && text_[position_] == '}') {
      ++position_;
      return node;
    }
    while (true) {
      std::string name = key();
      expect(':');
      node.children.emplace_back(std::move(name), object());
      skip_space();
      if (position_ < text_.size() && text_[position_] == ',') {
        ++position_;
        continue;
      }
      expect('}');
      return node;
    }
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw std::runtime_error(fmt::format("{}: line {}: {}", source_, line_, message));
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t position_ = 0;
  int line_ = 1;
};

void format_node(const SelectionNode& node, int depth, std::string& text) {
  if (node.children.empty()) {
    text += "{}";
    return;
  }
  text += "{\n";
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    text += std::string(static_cast<std::size_t>(depth + 1) * 2, ' ');
    text += fmt::format("\"{}\": ", node.children[i].first);
    format_node(node.children[i].second, depth + 1, text);
    text += i + 1 < node.children.size() ? ",\n" : "\n";
  }
  text += std::string(static_cast<std::size_t>(depth) * 2, ' ') + "}";
}

const SelectionNode* child(const SelectionNode& node, std::string_view name) {
  for (const auto& [key, value] : node.children) {
    if (key == name) return &value;
  }
  return nullptr;
}

// Whether `key` (name<N, name<=N, name=any) holds for `value`; nullopt when
// `key` is not about `name`.
std::optional<bool> size_condition(std::string_view key, std::string_view name,
                                   std::uint64_t value) {
  if (key.substr(0, name.size()) != name) return std::nullopt;
  const std::string_view rest = key.substr(name.size());
  if (rest == "=any") return true;
  const bool or_equal = rest.substr(0, 2) == "<=";
  if (!or_equal && rest.substr(0, 1) != "<") return std::nullopt;
  const std::string_view number = rest.substr(or_equal ? 2 : 1);
  std::uint64_t limit = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), limit);
  if (error != std::errc() || end != number.data() + number.size()) return std::nullopt;
  return or_equal ? value <= limit : value < limit;
}

std::string mpich_function(const MpichCollective& collective, std::string_view row) {
  const std::string_view name = row.substr(kMpichRowPrefix.size());
  // The nonblocking choice is MPICH's "allcomm" function, the others intra.
  return fmt::format("MPIR_{}_{}_{}", collective.json_name, name == "nb" ? "allcomm" : "intra",
                     name);
}

// The measured sizes' entries of one communicator size, each choice from its
// size up to the next measured one, the defaults below the first and above
// the last (as the Open MPI export).
SelectionNode size_entries(const MpichCollective& collective, int ranks,
                           std::span<const LibraryChoice> choices, const SelectionNode& defaults) {
  const std::string key = collective.total_msg_size ? "total_msg_size" : "avg_msg_size";
  const auto size_of = [&](double bytes) {
    const auto whole = static_cast<std::uint64_t>(bytes);
    return collective.size_per_rank ? whole / static_cast<std::uint64_t>(ranks) : whole;
  };
  const auto decision = [&](const LibraryChoice& choice) {
    if (choice.algorithm == 0) return defaults;
    SelectionNode leaf;
    leaf.children.emplace_back(
        fmt::format("algorithm={}", mpich_function(collective, choice.chosen)), SelectionNode{});
    return leaf;
  };
  SelectionNode node;
  node.children.emplace_back(fmt::format("{}<{}", key, size_of(choices.front().bytes)), defaults);
  for (std::size_t i = 0; i + 1 < choices.size(); ++i) {
    node.children.emplace_back(fmt::format("{}<{}", key, size_of(choices[i + 1].bytes)),
                               decision(choices[i]));
  }
  node.children.emplace_back(fmt::format("{}<={}", key, size_of(choices.back().bytes)),
                             decision(choices.back()));
  node.children.emplace_back(fmt::format("{}=any", key), defaults);
  return node;
}

}  // namespace

std::string_view mpich_default_selection() { return kMpichDefaultSelection; }

SelectionNode parse_mpich_selection(std::string_view text, std::string_view source) {
  return JsonReader(text, source).document();
}

std::string format_mpich_selection(const SelectionNode& root) {
  std::string text;
  format_node(root, 0, text);
  return text + "\n";
}

std::string mpich_selection_algorithm(const SelectionNode& root, const MpichCollective& collective,
                                      int ranks, double bytes) {
  const SelectionNode* node = child(root, fmt::format("collective={}", collective.library));
  if (node != nullptr) node = child(*node, "comm_type=intra");
  const auto whole = static_cast<std::uint64_t>(bytes);
  const std::uint64_t size =
      collective.size_per_rank ? whole / static_cast<std::uint64_t>(ranks) : whole;
  const std::string size_key = collective.total_msg_size ? "total_msg_size" : "avg_msg_size";
  while (node != nullptr) {
    const SelectionNode* next = nullptr;
    for (const auto& [key, value] : node->children) {
      if (key.starts_with("algorithm=")) return key.substr(std::string_view("algorithm=").size());
      std::optional<bool> holds =
          size_condition(key, "comm_size", static_cast<std::uint64_t>(ranks));
      if (!holds) holds = size_condition(key, size_key, size);
      if (!holds) return {};  // a condition of MPICH's defaults: not this evaluator's
      if (*holds) {
        next = &value;
        break;
      }
    }
    node = next;
  }
  return {};
}

MpichJsonExport export_mpich_json(std::span<const Measurement> measurements,
                                  std::span<const NamedTable> tables, std::string_view load_note) {
  std::map<std::size_t, std::map<int, RowsBySize>> library;
  std::set<std::pair<std::string, std::string>> kinds;  // dtype, placement
  std::set<std::string> ops;
  std::set<std::string> sources;
  const std::span<const MpichCollective> table = mpich_tuned_collectives();
  for (const Measurement& m : measurements) {
    if (m.transport != "mpi") continue;
    const auto entry = std::find_if(table.begin(), table.end(), [&](const MpichCollective& c) {
      return c.collective == m.family;
    });
    if (entry == table.end()) continue;
    if (m.algorithm != kMpiLibraryAlgorithm &&
        find_mpich_tuned_algorithm(*entry, m.algorithm) == nullptr) {
      if (m.algorithm.starts_with(kMpichRowPrefix)) {
        throw std::runtime_error(fmt::format(
            "{}: unknown MPICH algorithm '{}' for {} (MPICH 4.0's are {})",
            fmt::join(m.sources, ", "), m.algorithm, m.family,
            fmt::join(entry->algorithms |
                          std::views::transform([](const OmpiTunedAlgorithm& a) { return a.row; }),
                      ", ")));
      }
      continue;
    }
    library[static_cast<std::size_t>(entry - table.begin())][m.ranks][m.bytes][m.algorithm] = &m;
    kinds.emplace(m.dtype, m.placement);
    if (!m.op.empty()) ops.insert(m.op);
    sources.insert(m.sources.begin(), m.sources.end());
  }
  const auto forced_measured = [&](const std::map<int, RowsBySize>& by_ranks) {
    for (const auto& [ranks, by_size] : by_ranks) {
      for (const auto& [bytes, rows] : by_size) {
        if (rows.size() > rows.count(std::string(kMpiLibraryAlgorithm))) return true;
      }
    }
    return false;
  };
  bool any_forced = false;
  for (const auto& [index, by_ranks] : library) {
    any_forced = any_forced || forced_measured(by_ranks);
  }
  if (!any_forced) {
    throw std::runtime_error(
        "no measurements of MPICH's forced algorithms (mpich_* rows) in the input: run collbench "
        "--library-algorithms under mpirun.mpich, once per algorithm with "
        "MPIR_CVAR_<COLL>_INTRA_ALGORITHM=<name>");
  }
  if (kinds.size() > 1 || ops.size() > 1) {
    throw std::runtime_error(fmt::format(
        "the library's rows mix dtypes, placements or ops ({}): a selection file is for one of "
        "each; pass the CSVs of one",
        fmt::join(ops, ", ")));
  }

  MpichJsonExport result;
  SelectionNode root = parse_mpich_selection(kMpichDefaultSelection, "MPICH's default selection");
  for (const auto& [index, by_ranks] : library) {
    const MpichCollective& collective = table[index];
    if (!forced_measured(by_ranks)) {
      throw std::runtime_error(fmt::format(
          "{} has measurements of the library (mpi) but none of its forced algorithms: run "
          "collbench --families {} --library-algorithms with {} set, or leave its rows out",
          collective.collective, collective.collective, mpich_algorithm_variable(collective)));
    }
    SelectionNode* entry = nullptr;
    for (auto& [key, value] : root.children) {
      if (key == fmt::format("collective={}", collective.library)) entry = &value;
    }
    SelectionNode* intra = nullptr;
    if (entry != nullptr) {
      for (auto& [key, value] : entry->children) {
        if (key == "comm_type=intra") intra = &value;
      }
    }
    if (intra == nullptr) {
      throw std::logic_error(
          fmt::format("MPICH's default selection has no intra {}", collective.library));
    }
    const SelectionNode defaults = *intra;
    SelectionNode measured;
    int previous_ranks = 0;
    for (const auto& [ranks, by_size] : by_ranks) {
      std::vector<LibraryChoice> choices;
      for (const auto& [bytes, rows] : by_size) {
        choices.push_back(choose(collective, ranks, bytes, rows));
      }
      // Communicator sizes between the measured ones (and below the first)
      // keep MPICH's defaults.
      if (ranks > previous_ranks + 1) {
        measured.children.emplace_back(fmt::format("comm_size<{}", ranks), defaults);
      }
      measured.children.emplace_back(fmt::format("comm_size<={}", ranks),
                                     size_entries(collective, ranks, choices, defaults));
      result.choices.insert(result.choices.end(), choices.begin(), choices.end());
      previous_ranks = ranks;
    }
    measured.children.emplace_back("comm_size=any", defaults);
    *intra = std::move(measured);
  }

  const auto& [dtype, placement] = *kinds.begin();
  const std::string op = ops.empty() ? std::string("(no reduction)") : *ops.begin();
  const std::set<std::string> nodes = library_column(tables, "nodes");
  const bool one_node = placement == "intra" || (nodes.size() == 1 && *nodes.begin() == "1");
  result.text = fmt::format(
      "/* MPICH collective selection: MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=THIS_FILE\n"
      "   Written by collbench-fit --export mpich-json from {}\n"
      "   Measured on hosts {} ({} node{}: {}), {} {}, with {}; runs {}.\n"
      "   {}\n"
      "   Per measured collective: the library's fastest forced algorithm where it beat the\n"
      "   default beyond both interquartile ranges, from each measured size up to the next;\n"
      "   MPICH 4.0.2's own selection elsewhere (below the smallest and above the largest\n"
      "   measured size, on communicator sizes not measured, and for every other collective,\n"
      "   which MPICH needs: it aborts on a collective the file lacks).{} */\n",
      fmt::join(sources, ", "), joined(library_column(tables, "hosts")), joined(nodes),
      nodes.size() == 1 && *nodes.begin() == "1" ? "" : "s",
      one_node ? "shared memory" : "a network", dtype, op,
      joined(library_column(tables, "mpi_library")), joined(library_column(tables, "run_id")),
      one_node ? "Shared memory on one node: these choices are not evidence for a network."
               : "Measured across nodes: valid for this network and these node counts.",
      load_note.empty() ? std::string() : fmt::format("\n   {}", load_note));
  result.text += format_mpich_selection(root);
  result.tree = std::move(root);
  return result;
}

}  // namespace collbench
