#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "algorithm_common.h"
#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/collective.h"
#include "collbench/transport/sim_transport.h"

namespace collbench {
namespace detail {

CollectiveBase::CollectiveBase(Transport& transport, const CollectiveSpec& spec,
                               std::span<const std::byte> in, std::span<std::byte> out,
                               std::string_view collective, Block in_block, Block out_block)
    : transport_(transport),
      spec_(spec),
      in_(in.data()),
      out_(out.data()),
      element_bytes_(dtype_size(spec.dtype)),
      rank_(transport.rank()),
      ranks_(transport.size()),
      first_tag_(transport.take_tag_slot()) {
  const std::size_t in_bytes = in_block.count * element_bytes_;
  const std::size_t out_bytes = out_block.count * element_bytes_;
  if (in.size() != in_bytes || out.size() != out_bytes) {
    throw std::invalid_argument(fmt::format(
        "{} of {} {} elements on rank {} of {} needs a {}-byte input and a {}-byte output, got "
        "in={} out={} bytes",
        collective, spec.count, to_string(spec.dtype), rank_, ranks_, in_bytes, out_bytes,
        in.size(), out.size()));
  }
  const auto* in_begin = in.data();
  const auto* out_begin = reinterpret_cast<const std::byte*>(out.data());
  in_place_ = in_begin < out_begin + out.size() && out_begin < in_begin + in.size();
  if (in_place_ && in_begin - static_cast<std::ptrdiff_t>(in_block.offset * element_bytes_) !=
                       out_begin - static_cast<std::ptrdiff_t>(out_block.offset * element_bytes_)) {
    throw std::invalid_argument(fmt::format(
        "{}: the input and output overlap but are not laid out in place (the smaller buffer at "
        "its block's place in the larger)",
        collective));
  }
  // Registration only reads the address range; MR modes that need it treat
  // the send buffer no differently from the receive buffer.
  std::span<std::byte> in_writable(const_cast<std::byte*>(in.data()), in.size());
  if (in.size() >= out.size()) {
    registrations_.emplace_back(transport_, in_writable);
    if (!in_place_) registrations_.emplace_back(transport_, out);
  } else {
    registrations_.emplace_back(transport_, out);
    if (!in_place_) registrations_.emplace_back(transport_, in_writable);
  }
}

std::byte* CollectiveBase::allocate_workspace(std::size_t elements) {
  const std::size_t size = std::max<std::size_t>(bytes(elements), 1);
  // Zero-filled, so that no page fault lands in a timed call; untouched
  // where nothing will touch it (a large one is then address space only).
  const auto* simulated = dynamic_cast<const SimulatedCompute*>(&transport_.unwrapped());
  workspaces_.push_back(simulated != nullptr && simulated->size_only()
                            ? std::make_unique_for_overwrite<std::byte[]>(size)
                            : std::make_unique<std::byte[]>(size));
  registrations_.emplace_back(transport_, std::span<std::byte>(workspaces_.back().get(), size));
  return workspaces_.back().get();
}

void CollectiveBase::copy_input_to_output() {
  if (!in_place()) copy_bytes(out_, in_, bytes(spec_.count));
}

void CollectiveBase::finish_average(Block block) {
  if (spec_.op == ReduceOp::avg && block.count > 0) {
    transport_.scale_for_average(spec_.dtype, out_at(block.offset), block.count, ranks_);
  }
}

void AllgatherBase::place_own_block() {
  const Block own = block(rank_);
  if (!in_place()) copy_bytes(out_at(own.offset), in_, bytes(own.count));
}

const ExchangeLayout kAlltoallLayout = {
    "alltoall",
    [](const CollectiveSpec& spec, int ranks, int rank, int peer) {
      return alltoall_send_block(spec.count, ranks, rank, peer);
    },
    [](const CollectiveSpec& spec, int ranks, int rank, int peer) {
      return alltoall_receive_block(spec.count, ranks, rank, peer);
    },
};
const ExchangeLayout kAlltoallvLayout = {"alltoallv", alltoallv_send_block,
                                         alltoallv_receive_block};

namespace {

// Every peer's block of `block_of` for this rank, in rank order.
std::vector<Block> blocks_of_peers(const CollectiveSpec& spec, const Transport& transport,
                                   Block (*block_of)(const CollectiveSpec&, int, int, int)) {
  std::vector<Block> blocks;
  for (int peer = 0; peer < transport.size(); ++peer) {
    blocks.push_back(block_of(spec, transport.size(), transport.rank(), peer));
  }
  return blocks;
}

// The buffer the blocks tile, from 0.
Block tiled(const std::vector<Block>& blocks) {
  std::size_t count = 0;
  for (const Block& block : blocks) count += block.count;
  return {0, count};
}

}  // namespace

AlltoallBase::AlltoallBase(Transport& transport, const CollectiveSpec& spec,
                           std::span<const std::byte> in, std::span<std::byte> out,
                           bool stage_in_place, const ExchangeLayout& layout)
    : AlltoallBase(transport, spec, in, out, stage_in_place, layout,
                   blocks_of_peers(spec, transport, layout.send_block),
                   blocks_of_peers(spec, transport, layout.receive_block)) {}

AlltoallBase::AlltoallBase(Transport& transport, const CollectiveSpec& spec,
                           std::span<const std::byte> in, std::span<std::byte> out,
                           bool stage_in_place, const ExchangeLayout& layout,
                           std::vector<Block> send_blocks, std::vector<Block> receive_blocks)
    : CollectiveBase(transport, spec, in, out, layout.collective, tiled(send_blocks),
                     tiled(receive_blocks)),
      send_blocks_(std::move(send_blocks)),
      receive_blocks_(std::move(receive_blocks)),
      input_(in_) {
  if (in_place() && stage_in_place && ranks_ > 1) {
    staged_ = allocate_workspace(tiled(send_blocks_).count);
    input_ = staged_;
  }
}

void AlltoallBase::stage_input() {
  const std::size_t count = tiled(send_blocks_).count;
  if (staged_ != nullptr) copy_bytes(staged_, in_, bytes(count));
}

void AlltoallBase::place_own_block() {
  const Block from = send_block(rank_);
  const Block to = receive_block(rank_);
  if (from.count > 0 && input_at(from.offset) != out_at(to.offset)) {
    copy_bytes(out_at(to.offset), input_at(from.offset), bytes(from.count));
  }
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

Block partition(std::size_t count, int parts, int index) {
  const auto p = static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  const std::size_t base = count / p;
  const std::size_t extra = count % p;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

namespace {

// Elements in the `parts` parts first, first + 1, ... (mod `ranks`) of the
// partition of `count` into `ranks`, a range that may wrap past the last.
std::size_t cyclic_parts_count(std::size_t count, int ranks, int first, int parts) {
  const auto start = [&](int part) { return partition(count, ranks, part).offset; };
  if (first + parts <= ranks) return start(first + parts) - start(first);
  return (count - start(first)) + start(first + parts - ranks);
}

}  // namespace

// Rank i's block for rank j is part (j − i) mod p; before it, the parts of
// j' = 0..j−1, whose distances (j' − i) mod p run from (−i) mod p up.
Block alltoall_send_block(std::size_t count, int ranks, int rank, int peer) {
  const int distance = detail::ring_index(peer - rank, ranks);
  return {cyclic_parts_count(count, ranks, detail::ring_index(-rank, ranks), peer),
          partition(count, ranks, distance).count};
}

// Rank j's block from rank i is part (j − i) mod p; before it, the parts of
// i' = 0..i−1, whose distances (j − i') mod p are the range from
// (j − i + 1) mod p up to j.
Block alltoall_receive_block(std::size_t count, int ranks, int rank, int peer) {
  const int distance = detail::ring_index(rank - peer, ranks);
  return {cyclic_parts_count(count, ranks, detail::ring_index(distance + 1, ranks), peer),
          partition(count, ranks, distance).count};
}

namespace {

// Token-side block j: share j of the vector, in destination order. It ends
// where the cumulative Zipf weight of ranks 0..j does, scaled to count and
// rounded down, and starts where block j − 1 ends (the same sum of the same
// weights): the shares tile the vector and sum to count exactly, and none is
// negative, whatever the rounding of the weights. One pass over the ranks.
Block token_side_block(const CollectiveSpec& spec, int ranks, int destination) {
  double total = 0;
  double before = 0;
  for (int j = 0; j < ranks; ++j) {
    const double weight = std::pow(j + 1.0, -spec.routing.skew);
    if (j < destination) before += weight;
    total += weight;
  }
  const double count = static_cast<double>(spec.count);
  const auto boundary = [&](double cumulative) {
    return std::min(spec.count, static_cast<std::size_t>(std::floor(count * cumulative / total)));
  };
  const std::size_t start = boundary(before);
  const std::size_t end = destination + 1 == ranks
                              ? spec.count
                              : boundary(before + std::pow(destination + 1.0, -spec.routing.skew));
  return {start, end - start};
}

}  // namespace

std::size_t alltoallv_share(const CollectiveSpec& spec, int ranks, int destination) {
  return token_side_block(spec, ranks, destination).count;
}

namespace {

// Expert-side block i of rank j: rank i's share s_j, in source order.
Block expert_side_block(const CollectiveSpec& spec, int ranks, int expert_rank, int source) {
  const std::size_t share = alltoallv_share(spec, ranks, expert_rank);
  return {static_cast<std::size_t>(source) * share, share};
}

}  // namespace

Block alltoallv_send_block(const CollectiveSpec& spec, int ranks, int rank, int peer) {
  return spec.routing.returns ? expert_side_block(spec, ranks, rank, peer)
                              : token_side_block(spec, ranks, peer);
}

Block alltoallv_receive_block(const CollectiveSpec& spec, int ranks, int rank, int peer) {
  return spec.routing.returns ? token_side_block(spec, ranks, peer)
                              : expert_side_block(spec, ranks, rank, peer);
}

namespace {

// Layouts.
Block whole_vector(const CollectiveSpec& spec, int /*ranks*/, int /*rank*/) {
  return {0, spec.count};
}
Block own_block(const CollectiveSpec& spec, int ranks, int rank) {
  return partition(spec.count, ranks, rank);
}
Block whole_at_root(const CollectiveSpec& spec, int /*ranks*/, int rank) {
  return rank == kRootRank ? Block{0, spec.count} : Block{};
}
// Alltoallv: the whole vector on the token side, p shares on the expert side.
Block expert_side_shares(const CollectiveSpec& spec, int ranks, int rank) {
  return {0, static_cast<std::size_t>(ranks) * alltoallv_share(spec, ranks, rank)};
}
Block alltoallv_input(const CollectiveSpec& spec, int ranks, int rank) {
  return spec.routing.returns ? expert_side_shares(spec, ranks, rank)
                              : whole_vector(spec, ranks, rank);
}
Block alltoallv_output(const CollectiveSpec& spec, int ranks, int rank) {
  return spec.routing.returns ? whole_vector(spec, ranks, rank)
                              : expert_side_shares(spec, ranks, rank);
}

// nccl-tests' bus-bandwidth factors.
double all_to_all_share(int p) { return static_cast<double>(p - 1) / p; }
double allreduce_factor(int p) { return 2.0 * (p - 1) / p; }
double rooted_factor(int /*p*/) { return 1.0; }

// Lower bounds (see collective.h).
CostTerms allreduce_lower_bound(int p, double n) {
  const double share = all_to_all_share(p);
  return {static_cast<double>(ceil_log2(p)), 2 * share * n, share * n};
}
CostTerms reduce_scatter_lower_bound(int p, double n) {
  const double share = all_to_all_share(p);
  return {static_cast<double>(ceil_log2(p)), share * n, share * n};
}
CostTerms allgather_lower_bound(int p, double n) {
  return {static_cast<double>(ceil_log2(p)), all_to_all_share(p) * n, 0};
}
// The root's data must cross one link whole (broadcast), every other rank's
// must reach the root (reduce).
CostTerms broadcast_lower_bound(int p, double n) {
  return {static_cast<double>(ceil_log2(p)), p > 1 ? n : 0, 0};
}
CostTerms reduce_lower_bound(int p, double n) {
  return {static_cast<double>(ceil_log2(p)), p > 1 ? n : 0, all_to_all_share(p) * n};
}
// Each term alone (collective.h): no algorithm meets both.
CostTerms alltoall_lower_bound(int p, double n) {
  return {static_cast<double>(ceil_log2(p)), all_to_all_share(p) * n, 0};
}

// Checks: the reduction of every rank's input over the output's elements, or
// the input of the rank each block came from.
CheckResult check_allreduce(const CheckPattern& pattern, const CollectiveSpec& spec, int /*rank*/,
                            std::uint64_t first, std::span<const std::byte> output) {
  return pattern.check_reduced(spec.dtype, spec.op, first, output);
}
CheckResult check_reduce_scatter(const CheckPattern& pattern, const CollectiveSpec& spec, int rank,
                                 std::uint64_t first, std::span<const std::byte> output) {
  return pattern.check_reduced(spec.dtype, spec.op,
                               first + own_block(spec, pattern.ranks(), rank).offset, output);
}
// Each block of `output` against the input of the rank it came from:
// `block_of(source)` is the block's place in output and the global index
// of its first element in the source's input.
template <typename BlockOf>
CheckResult check_blocks_from_ranks(const CheckPattern& pattern, DType dtype,
                                    std::span<const std::byte> output, BlockOf block_of) {
  CheckResult total;
  const std::size_t element_bytes = dtype_size(dtype);
  for (int source = 0; source < pattern.ranks(); ++source) {
    const auto [place, first_index] = block_of(source);
    const CheckResult part = pattern.check_input(
        dtype, source, first_index,
        output.subspan(place.offset * element_bytes, place.count * element_bytes));
    if (part.wrong > 0 && total.wrong == 0) {
      total.first_mismatch = fmt::format("block from rank {}, {}", source, part.first_mismatch);
    }
    total.wrong += part.wrong;
    total.checked += part.checked;
  }
  return total;
}

CheckResult check_allgather(const CheckPattern& pattern, const CollectiveSpec& spec, int /*rank*/,
                            std::uint64_t first, std::span<const std::byte> output) {
  return check_blocks_from_ranks(pattern, spec.dtype, output, [&](int owner) {
    const Block block = partition(spec.count, pattern.ranks(), owner);
    return std::pair(block, first + block.offset);
  });
}

// The root's input, on every rank.
CheckResult check_broadcast(const CheckPattern& pattern, const CollectiveSpec& spec, int /*rank*/,
                            std::uint64_t first, std::span<const std::byte> output) {
  return pattern.check_input(spec.dtype, kRootRank, first, output);
}
// The reduction at the root; elsewhere the output is empty.
CheckResult check_reduce(const CheckPattern& pattern, const CollectiveSpec& spec, int /*rank*/,
                         std::uint64_t first, std::span<const std::byte> output) {
  return pattern.check_reduced(spec.dtype, spec.op, first, output);
}
// Every block of the output is the sender's input block for this rank, at
// the sender's offset: a block from another rank, or from another place of
// the sender's input, is wrong. `send_block` and `receive_block` are the
// collective's layout (alltoall's or alltoallv's).
template <typename SendBlock, typename ReceiveBlock>
CheckResult check_exchanged_blocks(const CheckPattern& pattern, DType dtype, int rank,
                                   std::uint64_t first, std::span<const std::byte> output,
                                   SendBlock send_block, ReceiveBlock receive_block) {
  return check_blocks_from_ranks(pattern, dtype, output, [&](int sender) {
    return std::pair(receive_block(rank, sender), first + send_block(sender, rank).offset);
  });
}
CheckResult check_alltoall(const CheckPattern& pattern, const CollectiveSpec& spec, int rank,
                           std::uint64_t first, std::span<const std::byte> output) {
  const int p = pattern.ranks();
  return check_exchanged_blocks(
      pattern, spec.dtype, rank, first, output,
      [&](int from, int to) { return alltoall_send_block(spec.count, p, from, to); },
      [&](int at, int from) { return alltoall_receive_block(spec.count, p, at, from); });
}
CheckResult check_alltoallv(const CheckPattern& pattern, const CollectiveSpec& spec, int rank,
                            std::uint64_t first, std::span<const std::byte> output) {
  const int p = pattern.ranks();
  return check_exchanged_blocks(
      pattern, spec.dtype, rank, first, output,
      [&](int from, int to) { return alltoallv_send_block(spec, p, from, to); },
      [&](int at, int from) { return alltoallv_receive_block(spec, p, at, from); });
}

}  // namespace

// Every algorithm, defined in its own file (collectives/<collective>/<name>.cpp).
extern const AlgorithmInfo kRingAllreduce, kTreeAllreduce, kRecursiveDoublingAllreduce,
    kRabenseifnerAllreduce, kPsCentralAllreduce, kPsShardedAllreduce, kHierarchicalAllreduce,
    kHierarchicalTreeAllreduce, kDoubleBinaryTreeAllreduce, kSwingLatencyAllreduce,
    kSwingBandwidthAllreduce, kSwingLatencyTorusAllreduce, kSwingBandwidthTorusAllreduce,
    kMpiAllreduce;
extern const AlgorithmInfo kRingReduceScatter, kRecursiveHalvingReduceScatter,
    kPairwiseReduceScatter, kHierarchicalReduceScatter, kMpiReduceScatter;
extern const AlgorithmInfo kRingAllgather, kRecursiveDoublingAllgather, kBruckAllgather,
    kHierarchicalAllgather, kMpiAllgather;
extern const AlgorithmInfo kBinomialBroadcast, kScatterAllgatherBroadcast, kChainBroadcast,
    kMpiBroadcast;
extern const AlgorithmInfo kBinomialReduce, kReduceScatterGatherReduce, kMpiReduce;
extern const AlgorithmInfo kPairwiseAlltoall, kBruckAlltoall, kLinearAlltoall, kMpiAlltoall;
extern const AlgorithmInfo kPairwiseAlltoallv, kMpiAlltoallv;

namespace detail {
std::vector<AlgorithmInfo> ompi_tuned_rows(std::string_view collective);   // ompi_tuned.cpp
std::vector<AlgorithmInfo> mpich_tuned_rows(std::string_view collective);  // mpich_tuned.cpp
}  // namespace detail

namespace {

// A collective's algorithms: the hand-written ones, the library's with one of
// its algorithms forced (ompi_tuned.h, mpich_tuned.h), and the library's own
// choice last.
std::vector<AlgorithmInfo> with_library_rows(std::string_view collective,
                                             std::initializer_list<AlgorithmInfo> hand_written,
                                             const AlgorithmInfo& library) {
  std::vector<AlgorithmInfo> algorithms(hand_written);
  for (const AlgorithmInfo& row : detail::ompi_tuned_rows(collective)) algorithms.push_back(row);
  for (const AlgorithmInfo& row : detail::mpich_tuned_rows(collective)) algorithms.push_back(row);
  algorithms.push_back(library);
  return algorithms;
}

}  // namespace

std::span<const CollectiveInfo> collectives() {
  // Each collective's algorithms in the order they are listed everywhere:
  // copies of the definitions, made on the first call, after every file's
  // static initialization.
  static const std::vector<AlgorithmInfo> allreduce =
      with_library_rows("allreduce",
                        {
                            kRingAllreduce,
                            kTreeAllreduce,
                            kRecursiveDoublingAllreduce,
                            kRabenseifnerAllreduce,
                            kPsCentralAllreduce,
                            kPsShardedAllreduce,
                            kHierarchicalAllreduce,
                            kHierarchicalTreeAllreduce,
                            kDoubleBinaryTreeAllreduce,
                            kSwingLatencyAllreduce,
                            kSwingBandwidthAllreduce,
                            kSwingLatencyTorusAllreduce,
                            kSwingBandwidthTorusAllreduce,
                        },
                        kMpiAllreduce);
  static const std::vector<AlgorithmInfo> reduce_scatter =
      with_library_rows("reduce_scatter",
                        {
                            kRingReduceScatter,
                            kRecursiveHalvingReduceScatter,
                            kPairwiseReduceScatter,
                            kHierarchicalReduceScatter,
                        },
                        kMpiReduceScatter);
  static const std::vector<AlgorithmInfo> allgather =
      with_library_rows("allgather",
                        {
                            kRingAllgather,
                            kRecursiveDoublingAllgather,
                            kBruckAllgather,
                            kHierarchicalAllgather,
                        },
                        kMpiAllgather);
  static const std::vector<AlgorithmInfo> broadcast =
      with_library_rows("broadcast",
                        {
                            kBinomialBroadcast,
                            kScatterAllgatherBroadcast,
                            kChainBroadcast,
                        },
                        kMpiBroadcast);
  static const std::vector<AlgorithmInfo> reduce = with_library_rows("reduce",
                                                                     {
                                                                         kBinomialReduce,
                                                                         kReduceScatterGatherReduce,
                                                                     },
                                                                     kMpiReduce);
  static const std::vector<AlgorithmInfo> alltoall = with_library_rows("alltoall",
                                                                       {
                                                                           kPairwiseAlltoall,
                                                                           kBruckAlltoall,
                                                                           kLinearAlltoall,
                                                                       },
                                                                       kMpiAlltoall);
  static const std::vector<AlgorithmInfo> alltoallv = with_library_rows("alltoallv",
                                                                        {
                                                                            kPairwiseAlltoallv,
                                                                        },
                                                                        kMpiAlltoallv);
  static const auto table = std::to_array<CollectiveInfo>({
      {"allreduce", "every rank gets the reduction of every rank's vector", true, whole_vector,
       whole_vector, allreduce_factor, "2(p-1)/p", allreduce_lower_bound, check_allreduce,
       allreduce},
      {"reduce_scatter",
       "every rank gets its block of the reduction of every rank's vector (FSDP/ZeRO gradients)",
       true, whole_vector, own_block, all_to_all_share, "(p-1)/p", reduce_scatter_lower_bound,
       check_reduce_scatter, reduce_scatter},
      {"allgather", "every rank gets every rank's block (FSDP/ZeRO parameters)", false, own_block,
       whole_vector, all_to_all_share, "(p-1)/p", allgather_lower_bound, check_allgather,
       allgather},
      {"broadcast", "every rank gets the root's vector (parameters from rank 0, data loaders)",
       false, whole_at_root, whole_vector, rooted_factor, "1", broadcast_lower_bound,
       check_broadcast, broadcast},
      {"reduce", "the root gets the reduction of every rank's vector", true, whole_vector,
       whole_at_root, rooted_factor, "1", reduce_lower_bound, check_reduce, reduce},
      {"alltoall", "every rank sends every rank its own block of its vector (MoE expert routing)",
       false, whole_vector, whole_vector, all_to_all_share, "(p-1)/p", alltoall_lower_bound,
       check_alltoall, alltoall},
      {"alltoallv",
       "every rank sends every rank an uneven share of its vector (MoE token dispatch and "
       "combine; uniform unless routed with a skew)",
       false, alltoallv_input, alltoallv_output, all_to_all_share, "(p-1)/p", alltoall_lower_bound,
       check_alltoallv, alltoallv},
  });
  return table;
}

const CollectiveInfo* find_collective(std::string_view name) {
  for (const CollectiveInfo& info : collectives()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string collective_names() {
  std::string names;
  for (const CollectiveInfo& info : collectives()) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

const AlgorithmInfo* CollectiveInfo::find_algorithm(std::string_view algorithm) const {
  for (const AlgorithmInfo& info : algorithms) {
    if (info.name == algorithm) return &info;
  }
  return nullptr;
}

std::string CollectiveInfo::algorithm_names() const {
  std::string names;
  for (const AlgorithmInfo& info : algorithms) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

void fill_input(const CollectiveInfo& collective, const CheckPattern& pattern,
                const CollectiveSpec& spec, int rank, std::uint64_t first,
                std::span<std::byte> input) {
  pattern.fill(spec.dtype, rank, first + collective.input_block(spec, pattern.ranks(), rank).offset,
               input);
}

std::size_t largest_buffer_elements(const CollectiveInfo& collective, const CollectiveSpec& spec,
                                    int ranks) {
  std::size_t largest = spec.count;
  for (int rank = 0; rank < ranks; ++rank) {
    largest = std::max({largest, collective.input_block(spec, ranks, rank).count,
                        collective.output_block(spec, ranks, rank).count});
  }
  return largest;
}

std::size_t input_index_span(const CollectiveInfo& collective, const CollectiveSpec& spec,
                             int ranks) {
  std::size_t span = spec.count;
  for (int rank = 0; rank < ranks; ++rank) {
    const Block input = collective.input_block(spec, ranks, rank);
    span = std::max(span, input.offset + input.count);
  }
  return span;
}

}  // namespace collbench
