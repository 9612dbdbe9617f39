// Open MPI's coll_tuned dynamic rules file: the export from the library's
// measured rows, its format, its parser (held to what Open MPI's reader
// assumes) and its lookup; see collbench/models/tuning.h.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include "collbench/collectives/collective.h"
#include "collbench/collectives/ompi_tuned.h"
#include "collbench/models/tuning.h"
#include "tuning_choice.h"

namespace collbench {
namespace {

using tuning_internal::library_choices;

// Open MPI 4.1's COLLCOUNT (coll_base_functions.h): ids are 0 to 21.
constexpr int kOmpiCollectiveCount = 22;

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
  static constexpr tuning_internal::ExportWords<OmpiTunedCollective> kWords{
      "Open MPI",
      "4.1",
      kOmpiRowPrefix,
      "a rules file",
      "no measurements of the MPI library's forced algorithms (ompi_* rows) in the input: run "
      "collbench --library-algorithms with OMPI_MCA_coll_tuned_use_dynamic_rules=1",
      [](const OmpiTunedCollective&) { return std::string(); }};
  const auto measured = library_choices(measurements, tables, ompi_tuned_collectives(), kWords);
  OmpiRulesExport result;
  for (const auto& [collective, by_ranks] : measured.collectives) {
    RulesCollective rules{collective->rules_id, {}};
    int previous_ranks = 0;
    for (const auto& [ranks, choices] : by_ranks) {
      // Communicator sizes between the measured ones (and below the first)
      // hand back to the fixed decision.
      if (ranks > previous_ranks + 1)
        rules.communicators.push_back({previous_ranks + 1, {{0, 0, 0, 0}}});
      rules.communicators.push_back({ranks, message_entries(choices)});
      previous_ranks = ranks;
    }
    rules.communicators.push_back({previous_ranks + 1, {{0, 0, 0, 0}}});
    result.rules.collectives.push_back(std::move(rules));
  }
  result.choices = measured.all;
  result.text = fmt::format(
      "# Open MPI 4.1 coll_tuned dynamic rules: mpirun --mca coll_tuned_use_dynamic_rules 1 "
      "--mca coll_tuned_dynamic_rules_filename THIS_FILE\n"
      "# Written by collbench-fit --export ompi-rules from {}\n"
      "# {}\n"
      "# {}\n"
      "# Each entry: the library's fastest forced algorithm where it beat the default beyond\n"
      "# both interquartile ranges at that measured size; 0 (the library's fixed decision)\n"
      "# elsewhere, below the smallest and above the largest measured size, and on\n"
      "# communicator sizes not measured. Fan-in/out {} and segment size {} are what the\n"
      "# forced algorithms ran with.\n{}",
      measured.header.sources, measured.header.measured, measured.header.scope, kOmpiForcedFanout,
      kOmpiForcedSegmentBytes,
      load_note.empty() ? std::string() : fmt::format("# {}\n", load_note));
  result.text += format_rules(result.rules, result.choices);
  return result;
}

}  // namespace collbench
