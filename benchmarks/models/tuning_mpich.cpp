// MPICH's collective selection file (JSON): the export from the library's
// measured rows, MPICH 4.0.2's own file it starts from, its reader, its
// format and the evaluator of its size conditions; see
// collbench/models/tuning.h.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <stdexcept>
#include <utility>

#include "collbench/collectives/collective.h"
#include "collbench/collectives/mpich_tuned.h"
#include "collbench/models/tuning.h"
#include "tuning_choice.h"

namespace collbench {
namespace {

using tuning_internal::library_choices;

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

// The intra subtree of `collective` in MPICH's default selection, which an
// export replaces.
SelectionNode& default_intra(SelectionNode& root, const MpichCollective& collective) {
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
  return *intra;
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
  static constexpr tuning_internal::ExportWords<MpichCollective> kWords{
      "MPICH",
      "4.0",
      kMpichRowPrefix,
      "a selection file",
      "no measurements of MPICH's forced algorithms (mpich_* rows) in the input: run collbench "
      "--library-algorithms under mpirun.mpich, once per algorithm with "
      "MPIR_CVAR_<COLL>_INTRA_ALGORITHM=<name>",
      [](const MpichCollective& collective) {
        return fmt::format(" with {} set", mpich_algorithm_variable(collective));
      }};
  const auto measured = library_choices(measurements, tables, mpich_tuned_collectives(), kWords);
  MpichJsonExport result;
  SelectionNode root = parse_mpich_selection(kMpichDefaultSelection, "MPICH's default selection");
  for (const auto& [collective, by_ranks] : measured.collectives) {
    SelectionNode& intra = default_intra(root, *collective);
    const SelectionNode defaults = intra;
    SelectionNode entries;
    int previous_ranks = 0;
    for (const auto& [ranks, choices] : by_ranks) {
      // Communicator sizes between the measured ones (and below the first)
      // keep MPICH's defaults.
      if (ranks > previous_ranks + 1) {
        entries.children.emplace_back(fmt::format("comm_size<{}", ranks), defaults);
      }
      entries.children.emplace_back(fmt::format("comm_size<={}", ranks),
                                    size_entries(*collective, ranks, choices, defaults));
      previous_ranks = ranks;
    }
    entries.children.emplace_back("comm_size=any", defaults);
    intra = std::move(entries);
  }
  result.choices = measured.all;
  result.text = fmt::format(
      "/* MPICH collective selection: MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=THIS_FILE\n"
      "   Written by collbench-fit --export mpich-json from {}\n"
      "   {}\n"
      "   {}\n"
      "   Per measured collective: the library's fastest forced algorithm where it beat the\n"
      "   default beyond both interquartile ranges, from each measured size up to the next;\n"
      "   MPICH 4.0.2's own selection elsewhere (below the smallest and above the largest\n"
      "   measured size, on communicator sizes not measured, and for every other collective,\n"
      "   which MPICH needs: it aborts on a collective the file lacks).{} */\n",
      measured.header.sources, measured.header.measured, measured.header.scope,
      load_note.empty() ? std::string() : fmt::format("\n   {}", load_note));
  result.text += format_mpich_selection(root);
  result.tree = std::move(root);
  return result;
}

}  // namespace collbench
