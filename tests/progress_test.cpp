// The progress line's text: where the run is and, from the second
// benchmark on, the time left estimated from the time per benchmark so far.
#include "progress.h"

#include <gtest/gtest.h>

namespace collbench::harness {
namespace {

TEST(Progress, TheLineSaysWhereAndHowLongIsLeft) {
  // The first benchmark: nothing to estimate from yet.
  EXPECT_EQ(Progress::line(1, 40, "allreduce/ring/8", 3),
            "[1/40] allreduce/ring/8  (39 left, 0:03 elapsed)");
  // 11 started in 105 s: 10.5 done, 10 s each; 29.5 to go, the running one half done.
  EXPECT_EQ(Progress::line(11, 40, "allreduce/tree/8", 105),
            "[11/40] allreduce/tree/8  (29 left, 1:45 elapsed, about 4:55 left)");
  // The last one: only its own half is left.
  EXPECT_EQ(Progress::line(40, 40, "p2p/pingpong/8/peer:1", 395),
            "[40/40] p2p/pingpong/8/peer:1  (0 left, 6:35 elapsed, about 0:05 left)");
}

}  // namespace
}  // namespace collbench::harness
