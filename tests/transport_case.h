// Checks of a transport's interface shared by the in-process, MPI and
// libfabric suites: the same expectations over every transport.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "collbench/transport/transport.h"

namespace collbench::testing {

// test() completes a request without blocking and returns its handle to the
// pool: a receive nothing was sent to yet is not complete; after a barrier,
// polling completes a ring exchange with the data; the next requests reuse
// both handles and complete (a handle test did not release would be waited
// on twice, or leak). Collective over the transport's ranks.
inline void expect_test_completes_and_releases(Transport& transport) {
  const int ranks = transport.size();
  const int right = (transport.rank() + 1) % ranks, left = (transport.rank() + ranks - 1) % ranks;
  std::vector<int> received(3, -1);
  const RequestId receive = transport.irecv(std::as_writable_bytes(std::span(received)), left, 5);
  // Nothing is sent before the barrier: the receive cannot have completed.
  EXPECT_FALSE(transport.test(receive));
  transport.barrier();
  const std::vector<int> sent = {transport.rank(), 7, 11};
  const RequestId send = transport.isend(std::as_bytes(std::span(sent)), right, 5);
  bool send_done = false, receive_done = false;
  while (!(send_done && receive_done)) {
    if (!send_done) send_done = transport.test(send);
    if (!receive_done) receive_done = transport.test(receive);
  }
  EXPECT_EQ(received, (std::vector<int>{left, 7, 11}));
  // Both handles went back to the pool: the next requests reuse them, and
  // waiting on them completes (a handle test did not release would be
  // waited on twice, or leak).
  std::vector<int> again(1);
  const std::vector<int> one = {1};
  std::vector<RequestId> requests = {
      transport.irecv(std::as_writable_bytes(std::span(again)), left, 6),
      transport.isend(std::as_bytes(std::span(one)), right, 6)};
  EXPECT_TRUE(requests[0] == receive || requests[0] == send);
  EXPECT_TRUE(requests[1] == receive || requests[1] == send);
  transport.wait_all(requests);
}

}  // namespace collbench::testing
