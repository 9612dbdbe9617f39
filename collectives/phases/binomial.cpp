// The binomial-tree reduce and broadcast (phases.h).
#include "phases.h"

namespace collbench::detail {

BinomialTree::BinomialTree(int ranks, int rank, int root) {
  const int relative = ring_index(rank - root, ranks);
  const auto real = [&](int relative_rank) { return (relative_rank + root) % ranks; };
  for (int distance = 1; distance < ranks; distance <<= 1) {
    if (relative & distance) {
      parent = real(relative - distance);
      break;
    }
    if (relative + distance < ranks) children.push_back(real(relative + distance));
  }
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

void binomial_broadcast(CollectiveBase& algorithm, const BinomialTree& tree, std::byte* data,
                        std::size_t count, int tag) {
  Transport& transport = algorithm.transport_;
  if (!tree.is_root()) transport.wait(algorithm.recv(data, count, tree.parent, tag));
  for (auto child = tree.children.rbegin(); child != tree.children.rend(); ++child) {
    transport.wait(algorithm.send(data, count, *child, tag));
  }
}

}  // namespace collbench::detail
