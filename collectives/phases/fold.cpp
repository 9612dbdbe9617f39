// The fold of a non-power-of-two rank count into its power-of-two core
// (phases.h).
#include "phases.h"

namespace collbench::detail {

Fold::Fold(int ranks, int rank) : pof2(1 << floor_log2(ranks)), rem(ranks - pof2) {
  if (rank < 2 * rem) {
    new_rank = rank % 2 == 0 ? -1 : rank / 2;
  } else {
    new_rank = rank - rem;
  }
}

Block Fold::elements_of(std::size_t count, int ranks, int first, int participants) const {
  const Block first_blocks = blocks_of(first);
  const Block last_blocks = blocks_of(first + participants - 1);
  const Block begin = partition(count, ranks, static_cast<int>(first_blocks.offset));
  const Block end =
      partition(count, ranks, static_cast<int>(last_blocks.offset + last_blocks.count - 1));
  return {begin.offset, end.offset + end.count - begin.offset};
}

bool fold_in(CollectiveBase& algorithm, const Fold& fold, std::byte* staging, int fold_tag,
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

void unfold_out(CollectiveBase& algorithm, const Fold& fold, int unfold_tag) {
  const int rank = algorithm.rank_;
  if (rank >= 2 * fold.rem) return;
  algorithm.transport_.wait(
      algorithm.send(algorithm.out_, algorithm.spec_.count, rank - 1, unfold_tag));
}

}  // namespace collbench::detail
