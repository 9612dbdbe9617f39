// The binomial-tree reduce, broadcast, scatter and gather (phases.h).
#include <algorithm>
#include <array>
#include <span>

#include "phases.h"

namespace collbench::detail {

BinomialTree::BinomialTree(int rank_count, int rank, int root_rank)
    : ranks(rank_count), root(root_rank), relative(ring_index(rank - root_rank, rank_count)) {
  const auto real = [&](int relative_rank) { return (relative_rank + root) % ranks; };
  for (int distance = 1; distance < ranks; distance <<= 1) {
    if (relative & distance) {
      parent = real(relative - distance);
      break;
    }
    if (relative + distance < ranks) children.push_back(real(relative + distance));
  }
}

Block BinomialTree::subtree_elements(std::size_t count, int v) const {
  const int lowest_bit = v == 0 ? ranks : v & -v;
  const int end = std::min(v + lowest_bit, ranks);
  const Block first = partition(count, ranks, v);
  const Block last = partition(count, ranks, end - 1);
  return {first.offset, last.offset + last.count - first.offset};
}

const std::byte* binomial_reduce(CollectiveBase& algorithm, const BinomialTree& tree,
                                 const std::byte* input, std::byte* accumulator, std::byte* staging,
                                 std::size_t count, int tag) {
  Transport& transport = algorithm.transport_;
  // No copy of the input into the accumulator: the first reduction writes
  // accumulator = input op the child's, and a leaf sends straight from its
  // input.
  const std::byte* mine = input;
  for (int child : tree.children) {
    std::byte* received = mine == accumulator ? staging : accumulator;
    transport.wait(algorithm.recv(received, count, child, tag));
    algorithm.reduce_ordered(accumulator, mine, received, count);
    mine = accumulator;
  }
  // Sent before anything else writes the accumulator (a broadcast into it):
  // it may be the input (in place).
  if (!tree.is_root()) transport.wait(algorithm.send(mine, count, tree.parent, tag));
  return mine;
}

void binomial_broadcast(CollectiveBase& algorithm, const BinomialTree& tree,
                        const std::byte* root_data, std::byte* data, std::size_t count, int tag) {
  Transport& transport = algorithm.transport_;
  const std::byte* forwarded = root_data;
  if (!tree.is_root()) {
    transport.wait(algorithm.recv(data, count, tree.parent, tag));
    forwarded = data;
  }
  for (auto child = tree.children.rbegin(); child != tree.children.rend(); ++child) {
    transport.wait(algorithm.send(forwarded, count, *child, tag));
  }
}

void binomial_scatter(CollectiveBase& algorithm, const BinomialTree& tree,
                      const std::byte* root_data, std::byte* data, std::size_t count, int tag) {
  Transport& transport = algorithm.transport_;
  const std::byte* forwarded = root_data;
  if (!tree.is_root()) {
    const Block mine = tree.subtree_elements(count, tree.relative);
    transport.wait(
        algorithm.recv(data + algorithm.bytes(mine.offset), mine.count, tree.parent, tag));
    forwarded = data;
  }
  for (auto child = tree.children.rbegin(); child != tree.children.rend(); ++child) {
    const Block theirs = tree.subtree_elements(count, tree.relative_of(*child));
    transport.wait(
        algorithm.send(forwarded + algorithm.bytes(theirs.offset), theirs.count, *child, tag));
  }
}

void binomial_gather(CollectiveBase& algorithm, const BinomialTree& tree, std::byte* data,
                     std::size_t count, int tag) {
  Transport& transport = algorithm.transport_;
  // At most one child per bit of an int rank: no allocation in a call.
  std::array<RequestId, 32> receives;
  std::size_t posted = 0;
  for (const int child : tree.children) {
    const Block theirs = tree.subtree_elements(count, tree.relative_of(child));
    receives[posted++] =
        algorithm.recv(data + algorithm.bytes(theirs.offset), theirs.count, child, tag);
  }
  if (posted > 0) transport.wait_all(std::span(receives.data(), posted));
  if (!tree.is_root()) {
    const Block mine = tree.subtree_elements(count, tree.relative);
    transport.wait(
        algorithm.send(data + algorithm.bytes(mine.offset), mine.count, tree.parent, tag));
  }
}

}  // namespace collbench::detail
