#include <fmt/format.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include "algorithms/allreduce_common.h"
#include "collbench/algorithm.h"

namespace collbench {
namespace detail {

Block partition(std::size_t count, int parts, int index) {
  const auto p = static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  const std::size_t base = count / p;
  const std::size_t extra = count % p;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

AllreduceBase::AllreduceBase(Transport& transport, const AllreduceSpec& spec,
                             std::span<const std::byte> in, std::span<std::byte> out)
    : transport_(transport),
      spec_(spec),
      in_(in.data()),
      out_(out.data()),
      element_bytes_(dtype_size(spec.dtype)),
      rank_(transport.rank()),
      ranks_(transport.size()) {
  const std::size_t expected = spec.count * element_bytes_;
  if (in.size() != expected || out.size() != expected) {
    throw std::invalid_argument(
        fmt::format("allreduce of {} {} elements needs {}-byte buffers, got in={} out={} bytes",
                    spec.count, to_string(spec.dtype), expected, in.size(), out.size()));
  }
  // Registration only reads the address range; MR modes that need it treat
  // the send buffer no differently from the receive buffer.
  std::span<std::byte> in_writable(const_cast<std::byte*>(in.data()), in.size());
  registrations_.emplace_back(transport_, in_writable);
  if (out.data() != in.data()) registrations_.emplace_back(transport_, out);
}

std::byte* AllreduceBase::allocate_workspace(std::size_t elements) {
  workspaces_.emplace_back(std::max<std::size_t>(bytes(elements), 1));
  std::vector<std::byte>& workspace = workspaces_.back();
  registrations_.emplace_back(transport_, std::span<std::byte>(workspace));
  return workspace.data();
}

void AllreduceBase::copy_input_to_output() {
  if (!in_place() && spec_.count > 0) std::memcpy(out_, in_, bytes(spec_.count));
}

void AllreduceBase::finish_average(Block block) {
  if (spec_.op == ReduceOp::avg && block.count > 0) {
    scale_for_average(spec_.dtype, out_at(block.offset), block.count, ranks_);
  }
}

Fold::Fold(int ranks, int rank) : pof2(1 << floor_log2(ranks)), rem(ranks - pof2) {
  if (rank < 2 * rem) {
    new_rank = rank % 2 == 0 ? -1 : rank / 2;
  } else {
    new_rank = rank - rem;
  }
}

bool fold_in(AllreduceBase& algorithm, const Fold& fold, std::byte* staging, int fold_tag,
             int unfold_tag) {
  const int rank = algorithm.rank_;
  if (rank >= 2 * fold.rem) return false;
  const std::size_t count = algorithm.spec_.count;
  Transport& transport = algorithm.transport_;
  if (fold.sits_out()) {
    transport.wait(algorithm.send(algorithm.in_, count, rank + 1, fold_tag));
    // The result arrives finished, avg division included.
    transport.wait(algorithm.recv(algorithm.out_, count, rank + 1, unfold_tag));
    return true;
  }
  transport.wait(algorithm.recv(staging, count, rank - 1, fold_tag));
  algorithm.reduce_pairwise_from(rank - 1, algorithm.out_, algorithm.in_, staging, count);
  return false;
}

void unfold_out(AllreduceBase& algorithm, const Fold& fold, int unfold_tag) {
  const int rank = algorithm.rank_;
  if (rank >= 2 * fold.rem) return;
  algorithm.transport_.wait(
      algorithm.send(algorithm.out_, algorithm.spec_.count, rank - 1, unfold_tag));
}

std::string common_unsupported_reason(std::string_view transport_kind, int ranks,
                                      std::size_t count) {
  (void)transport_kind;
  (void)count;
  if (ranks < 1) return fmt::format("needs at least 1 rank, got {}", ranks);
  return {};
}

}  // namespace detail

int ceil_log2(int p) {
  int log = 0;
  while ((1 << log) < p) ++log;
  return log;
}

int floor_log2(int p) {
  int log = 0;
  while ((2 << log) <= p) ++log;
  return log;
}

std::span<const AlgorithmInfo> algorithms() {
  static const std::array<AlgorithmInfo, 7> registry = {
      kRingAllreduce,         kTreeAllreduce,      kRecursiveDoublingAllreduce,
      kRabenseifnerAllreduce, kPsCentralAllreduce, kPsShardedAllreduce,
      kMpiAllreduce};
  return registry;
}

const AlgorithmInfo* find_algorithm(std::string_view name) {
  for (const AlgorithmInfo& info : algorithms()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string algorithm_names() {
  std::string names;
  for (const AlgorithmInfo& info : algorithms()) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

}  // namespace collbench
