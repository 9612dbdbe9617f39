// Tests of the libfabric transport itself, launched with mpirun:
//
//   mpirun -np 2 ofi_transport_test --provider tcp [--gtest_filter=...]
//
// Every rank runs the same tests in the same order; a rank whose assertion
// fails stops talking, and its peers' waits, bounded by a timeout, fail too
// instead of hanging. The exit status is the same on every rank: 0 when all
// ranks passed, 1 when any failed, 77 (CTest's SKIP_RETURN_CODE here) when
// the provider is not available on this node.
#include "collbench/transport/ofi_transport.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collbench/transport/instrumented_transport.h"
#include "collbench/transport/mpi_bootstrap.h"

namespace collbench {
namespace {

constexpr int kSkipExitCode = 77;
constexpr std::chrono::milliseconds kTestTimeout{30'000};

std::string g_provider;                     // as given on the command line
std::unique_ptr<OfiTransport> g_transport;  // shared by the tests: opening costs ~100 ms
std::unique_ptr<InstrumentedTransport> g_instrumented;  // g_transport, counted and bounded

std::byte pattern_byte(std::uint64_t seed, std::size_t index) {
  // Differs between neighbouring bytes, messages and 256-byte blocks, so a
  // shifted, swapped or stale chunk shows up.
  return static_cast<std::byte>((seed * 131 + index * 7 + (index >> 8) * 13 + (seed >> 8)) & 0xff);
}

void fill(std::span<std::byte> data, std::uint64_t seed) {
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = pattern_byte(seed, i);
}

// Index of the first byte that differs from the pattern, or npos.
std::size_t first_mismatch(std::span<const std::byte> data, std::uint64_t seed) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (data[i] != pattern_byte(seed, i)) return i;
  }
  return std::string::npos;
}

// A buffer registered with a transport for its lifetime, as algorithms do.
class Buffer {
 public:
  Buffer(Transport& transport, std::size_t size, std::byte initial = std::byte{0xEE})
      : data_(size, initial), registration_(transport, data_) {}
  std::span<std::byte> span() { return data_; }
  std::span<std::byte> first(std::size_t n) { return std::span<std::byte>(data_).first(n); }

 private:
  std::vector<std::byte> data_;
  MemoryRegistration registration_;
};

std::uint64_t seed_for(std::size_t size, int from, int to, int round = 0) {
  return size * 1'000'003u + static_cast<std::uint64_t>(from) * 101 +
         static_cast<std::uint64_t>(to) * 7 + static_cast<std::uint64_t>(round) * 65537;
}

// Rank 0 sends `size` bytes to `partner`, which checks them and answers
// with a different pattern that rank 0 checks.
void ping_pong(Transport& transport, int partner, std::size_t size, int tag) {
  const int rank = transport.rank();
  Buffer send(transport, size);
  Buffer recv(transport, size);
  if (rank == 0) {
    fill(send.span(), seed_for(size, 0, partner));
    const RequestId requests[2] = {transport.irecv(recv.span(), partner, tag),
                                   transport.isend(send.span(), partner, tag)};
    transport.wait_all(requests);
    EXPECT_EQ(first_mismatch(recv.span(), seed_for(size, partner, 0)), std::string::npos)
        << "reply of " << size << " bytes from rank " << partner;
  } else if (rank == partner) {
    transport.wait(transport.irecv(recv.span(), 0, tag));
    EXPECT_EQ(first_mismatch(recv.span(), seed_for(size, 0, partner)), std::string::npos)
        << "message of " << size << " bytes from rank 0";
    fill(send.span(), seed_for(size, partner, 0));
    transport.wait(transport.isend(send.span(), 0, tag));
  }
}

const std::vector<std::size_t> kSizes = {0,     1,     2,    7,    8,      63,      64,
                                         65,    255,   256,  4095, 4096,   4097,    65535,
                                         65536, 65537, 1000, 9000, 262144, 1 << 20, (4 << 20) + 3};

TEST(OfiTransport, ReportsWhatWasNegotiated) {
  OfiTransport& ofi = *g_transport;
  Transport& transport = *g_instrumented;
  EXPECT_EQ(transport.kind(), "ofi");
  EXPECT_NE(transport.provider().find(g_provider), std::string::npos)
      << "asked for " << g_provider << ", got " << transport.provider();
  EXPECT_GT(ofi.max_message_size(), 0u);
  EXPECT_EQ(ofi.inject_size(), 0u) << "fi_tinject must be off unless asked for";
  EXPECT_FALSE(ofi_library_version().empty());
  const std::string table = ofi_list_providers();
  EXPECT_NE(table.find(transport.provider()), std::string::npos) << table;
  EXPECT_NE(table.find("usable"), std::string::npos) << table;
}

TEST(OfiTransport, PingPongOfManySizesIncludingZero) {
  Transport& transport = *g_instrumented;
  for (int partner = 1; partner < transport.size(); ++partner) {
    for (const std::size_t size : kSizes) ping_pong(transport, partner, size, partner);
  }
  transport.barrier();
}

TEST(OfiTransport, ReceiveIntoLargerBufferKeepsTheRest) {
  Transport& transport = *g_instrumented;
  const int rank = transport.rank();
  if (rank <= 1) {
    Buffer buffer(transport, 1000);
    if (rank == 0) {
      fill(buffer.first(100), 5);
      transport.wait(transport.isend(buffer.first(100), 1, 3));
    } else {
      transport.wait(transport.irecv(buffer.span(), 0, 3));
      EXPECT_EQ(first_mismatch(buffer.first(100), 5), std::string::npos);
      EXPECT_EQ(buffer.span()[100], std::byte{0xEE});
      EXPECT_EQ(buffer.span()[999], std::byte{0xEE});
    }
  }
  transport.barrier();
}

// Every rank sends to the next one in a ring, alternating two tags, sizes
// varying from 0 to beyond the rendezvous threshold of rxm and shm. The
// receiver posts all of the second tag first, half of them only after the
// senders are done (so those messages arrive unexpected): a message matched
// out of order would land in a buffer of the wrong size or pattern.
TEST(OfiTransport, SameTagMessagesMatchInPostOrder) {
  Transport& transport = *g_instrumented;
  const int rank = transport.rank();
  const int size = transport.size();
  const int next = (rank + 1) % size;
  const int previous = (rank - 1 + size) % size;
  constexpr int kMessages = 60;
  constexpr int kTags[2] = {11, 12};
  auto message_size = [](int i) -> std::size_t {
    return i % 10 == 9 ? 300'000 + static_cast<std::size_t>(i) : static_cast<std::size_t>(i) * 37;
  };
  std::vector<std::unique_ptr<Buffer>> sends, recvs;
  std::vector<RequestId> send_requests, recv_requests;
  for (int i = 0; i < kMessages; ++i) {
    sends.push_back(std::make_unique<Buffer>(transport, message_size(i)));
    recvs.push_back(std::make_unique<Buffer>(transport, message_size(i)));
  }
  // Tag 12 (odd i) first, then tag 11; half of each before the barrier.
  auto post_receives = [&](int begin, int end) {
    for (int parity : {1, 0}) {
      for (int i = begin; i < end; ++i) {
        if (i % 2 == parity) {
          recv_requests.push_back(transport.irecv(recvs[i]->span(), previous, kTags[i % 2]));
        }
      }
    }
  };
  post_receives(0, kMessages / 2);
  for (int i = 0; i < kMessages; ++i) {
    fill(sends[i]->span(), seed_for(message_size(i), rank, next, i));
    send_requests.push_back(transport.isend(sends[i]->span(), next, kTags[i % 2]));
  }
  // Large sends complete only once matched (rendezvous), so they are still
  // outstanding here; the barrier drives progress for them meanwhile.
  transport.barrier();
  post_receives(kMessages / 2, kMessages);
  transport.wait_all(recv_requests);
  transport.wait_all(send_requests);
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_EQ(first_mismatch(recvs[i]->span(), seed_for(message_size(i), previous, rank, i)),
              std::string::npos)
        << "message " << i << " from rank " << previous;
  }
  transport.barrier();
}

// Each rank posts `operations` sends to and receives from every other rank
// before waiting for any: sends first in round 0 (so the provider's queues
// overflow and messages arrive unexpected), receives first in round 1, and
// waits in reverse order. Every payload is checked: a lost or duplicated
// completion either hangs (and times out) or leaves a buffer unfilled.
TEST(OfiTransport, ManyOutstandingOperationsInBothDirections) {
  OfiTransport& ofi = *g_transport;
  Transport& transport = *g_instrumented;
  const int rank = transport.rank();
  const int size = transport.size();
  // 1200 per peer; on shm, whose pool of receive entries bounds what may be
  // in flight towards one rank (see ofi_transport.h), half that pool shared
  // out among the peers, which at 2 ranks is still 512 + 512 operations.
  int operations = 1200;
  if (transport.provider() == "shm") {
    operations =
        std::min<int>(operations, static_cast<int>(ofi.receive_queue_size() / 2) / (size - 1));
  }
  const int kOperations = operations;
  auto message_size = [](int i) -> std::size_t {
    return i % 97 == 0 ? 200'000 : static_cast<std::size_t>(i % 7) * 13;
  };
  for (int round = 0; round < 2; ++round) {
    std::vector<std::unique_ptr<Buffer>> sends, recvs;
    std::vector<RequestId> requests;
    std::vector<int> recv_peer;
    auto post_sends = [&] {
      for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        for (int i = 0; i < kOperations; ++i) {
          auto& buffer = sends.emplace_back(std::make_unique<Buffer>(transport, message_size(i)));
          fill(buffer->span(), seed_for(message_size(i), rank, peer, i));
          requests.push_back(transport.isend(buffer->span(), peer, i % 10));
        }
      }
    };
    auto post_receives = [&] {
      for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        for (int i = 0; i < kOperations; ++i) {
          auto& buffer = recvs.emplace_back(std::make_unique<Buffer>(transport, message_size(i)));
          requests.push_back(transport.irecv(buffer->span(), peer, i % 10));
          recv_peer.push_back(peer);
        }
      }
    };
    if (round == 0) {
      post_sends();
      post_receives();
    } else {
      post_receives();
      post_sends();
    }
    for (auto it = requests.rbegin(); it != requests.rend(); ++it) transport.wait(*it);
    for (std::size_t r = 0; r < recvs.size(); ++r) {
      const int i = static_cast<int>(r % kOperations);
      ASSERT_EQ(first_mismatch(recvs[r]->span(), seed_for(message_size(i), recv_peer[r], rank, i)),
                std::string::npos)
          << "round " << round << ", message " << i << " from rank " << recv_peer[r];
    }
    transport.barrier();
  }
}

// A message longer than its receive buffer. What a provider does next
// differs (tcp;ofi_rxm drops the connection, shm and sockets carry on), so
// this runs on a transport of its own and checks the report only.
TEST(OfiTransport, TruncationIsReportedWithPeerAndTag) {
  OfiOptions options;
  options.setup_timeout = std::chrono::milliseconds(2000);
  OfiTransport ofi(*make_mpi_bootstrap(MPI_COMM_WORLD), g_provider, options);
  InstrumentedTransport transport(ofi);
  transport.set_timeout(kTestTimeout);
  const int rank = transport.rank();
  if (rank <= 1) {
    Buffer buffer(transport, 1000);
    if (rank == 0) {
      transport.wait(transport.isend(buffer.span(), 1, 77));
    } else {
      const RequestId request = transport.irecv(buffer.first(100), 0, 77);
      try {
        transport.wait(request);
        ADD_FAILURE() << "receiving 1000 bytes into 100 did not fail";
      } catch (const std::runtime_error& error) {
        const std::string text = error.what();
        EXPECT_NE(text.find("fi_trecv(): progress.cpp:"), std::string::npos) << text;
        EXPECT_NE(text.find("ret=-265 (Truncation error)"), std::string::npos) << text;
        EXPECT_NE(text.find("recv from rank 0 tag 77"), std::string::npos) << text;
      }
    }
  }
}

TEST(OfiTransport, TimeoutNamesPeerAndTagAndRequestStaysUsable) {
  InstrumentedTransport& transport = *g_instrumented;
  const int rank = transport.rank();
  Buffer buffer(transport, 64);
  if (rank == 1) {
    const RequestId request = transport.irecv(buffer.span(), 0, 4242);
    transport.set_timeout(std::chrono::milliseconds(200));
    try {
      transport.wait(request);
      ADD_FAILURE() << "a receive nobody sends to completed";
    } catch (const TimeoutError& error) {
      const std::string text = error.what();
      EXPECT_NE(text.find("recv from rank 0 tag 4242"), std::string::npos) << text;
      EXPECT_NE(text.find("200 ms"), std::string::npos) << text;
    }
    transport.set_timeout(kTestTimeout);
    transport.barrier();
    transport.wait(request);
    EXPECT_EQ(first_mismatch(buffer.span(), 42), std::string::npos);
  } else {
    transport.barrier();
    if (rank == 0) {
      fill(buffer.span(), 42);
      transport.wait(transport.isend(buffer.span(), 1, 4242));
    }
  }
  transport.barrier();
}

// test() on a receive whose message is not sent yet says false; once the
// peer has sent, polling test() completes it, the data is there, and the
// request is back in the pool (testing it again is an error, as waiting
// for it would be). Sends are completed by test() too.
TEST(OfiTransport, TestCompletesWithoutBlocking) {
  Transport& transport = *g_instrumented;
  const int rank = transport.rank();
  Buffer buffer(transport, 4000);
  if (rank == 1) {
    const RequestId request = transport.irecv(buffer.span(), 0, 31);
    // Rank 0 sends only after this barrier, which it cannot leave before
    // rank 1 enters it.
    for (int i = 0; i < 100; ++i) EXPECT_FALSE(transport.test(request));
    transport.barrier();
    while (!transport.test(request)) {
    }
    EXPECT_EQ(first_mismatch(buffer.span(), 31), std::string::npos);
    EXPECT_THROW(transport.test(request), std::invalid_argument);
  } else {
    transport.barrier();
    if (rank == 0) {
      fill(buffer.span(), 31);
      const RequestId request = transport.isend(buffer.span(), 1, 31);
      while (!transport.test(request)) {
      }
      EXPECT_THROW(transport.wait(request), std::invalid_argument);
    }
  }
  transport.barrier();
}

TEST(OfiTransport, BarrierWaitsForTheSlowestRank) {
  Transport& transport = *g_instrumented;
  transport.barrier();
  const auto start = std::chrono::steady_clock::now();
  if (transport.rank() == transport.size() - 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  transport.barrier();
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(250));
}

// A transport that splits messages at 1000 bytes (not a power of two, so
// chunk boundaries fall mid-word).
TEST(OfiTransport, SplitsMessagesAboveForcedLimit) {
  OfiOptions options;
  options.max_message_size = 1000;
  OfiTransport ofi(*make_mpi_bootstrap(MPI_COMM_WORLD), g_provider, options);
  InstrumentedTransport transport(ofi);
  transport.set_timeout(kTestTimeout);
  ASSERT_EQ(ofi.max_message_size(), 1000u);
  const int rank = transport.rank();

  const std::vector<std::size_t> sizes = {0, 1, 999, 1000, 1001, 2000, 12345, (1 << 20) + 7};
  std::size_t expected_operations = 0;
  std::size_t expected_bytes = 0;
  transport.reset_counters();
  const std::uint64_t posted_before = ofi.operations_posted();
  for (const std::size_t size : sizes) {
    ping_pong(transport, 1, size, 5);
    // ping_pong posts one send and one receive per message on both ranks.
    const std::size_t chunks = size == 0 ? 1 : (size + 999) / 1000;
    if (rank <= 1) {
      expected_operations += 2 * chunks;
      expected_bytes += size;
    }
  }
  EXPECT_EQ(ofi.operations_posted() - posted_before, expected_operations);
  EXPECT_EQ(transport.bytes_sent(), expected_bytes);
  EXPECT_EQ(transport.messages_sent(), rank <= 1 ? sizes.size() : 0u);

  // Many split messages with one tag, in flight at once in both directions:
  // their chunks must line up message by message.
  if (rank <= 1) {
    const int partner = 1 - rank;
    constexpr int kMessages = 200;
    std::vector<std::unique_ptr<Buffer>> sends, recvs;
    std::vector<RequestId> requests;
    auto message_size = [](int i) { return static_cast<std::size_t>(3000 + 500 * (i % 5)); };
    for (int i = 0; i < kMessages; ++i) {
      recvs.push_back(std::make_unique<Buffer>(transport, message_size(i)));
      requests.push_back(transport.irecv(recvs.back()->span(), partner, 9));
    }
    for (int i = 0; i < kMessages; ++i) {
      sends.push_back(std::make_unique<Buffer>(transport, message_size(i)));
      fill(sends.back()->span(), seed_for(message_size(i), rank, partner, i));
      requests.push_back(transport.isend(sends.back()->span(), partner, 9));
    }
    transport.wait_all(requests);
    for (int i = 0; i < kMessages; ++i) {
      ASSERT_EQ(first_mismatch(recvs[i]->span(), seed_for(message_size(i), partner, rank, i)),
                std::string::npos)
          << "split message " << i;
    }
  }

  // Every other rank sends rank 0 a message of over a thousand chunks at
  // once, twice in a row: more chunks than shm has receive entries, which
  // deadlocked before split messages became receiver-driven.
  for (int round = 0; round < 2; ++round) {
    constexpr std::size_t kFanInBytes = (1 << 20) + 7;
    if (rank == 0) {
      std::vector<std::unique_ptr<Buffer>> recvs;
      std::vector<RequestId> requests;
      for (int peer = 1; peer < transport.size(); ++peer) {
        recvs.push_back(std::make_unique<Buffer>(transport, kFanInBytes));
        requests.push_back(transport.irecv(recvs.back()->span(), peer, 8));
      }
      transport.wait_all(requests);
      for (int peer = 1; peer < transport.size(); ++peer) {
        EXPECT_EQ(first_mismatch(recvs[static_cast<std::size_t>(peer - 1)]->span(),
                                 seed_for(kFanInBytes, peer, 0, round)),
                  std::string::npos)
            << "fan-in round " << round << " from rank " << peer;
      }
    } else {
      Buffer send(transport, kFanInBytes);
      fill(send.span(), seed_for(kFanInBytes, rank, 0, round));
      transport.wait(transport.isend(send.span(), 0, 8));
    }
  }

  // A message shorter than a split receive would leave receive chunks
  // posted that swallow the next message: it must be an error, the chunks
  // left must be cancelled by the time wait() throws, and the next message
  // sent after that must arrive where it belongs.
  if (rank <= 1) {
    Buffer buffer(transport, 2500);
    if (rank == 0) {
      transport.wait(transport.isend(buffer.first(1500), 1, 6));
    } else {
      try {
        transport.wait(transport.irecv(buffer.span(), 0, 6));
        ADD_FAILURE() << "1500 bytes received into a 2500-byte split receive";
      } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find("shorter than the receive buffer"),
                  std::string::npos)
            << error.what();
      }
    }
  }
  transport.barrier();
  ping_pong(transport, 1, 2500, 6);
  transport.barrier();
}

// Registration as FI_MR_LOCAL providers (verbs) need it, forced on a
// provider that does not, so that the path runs here.
TEST(OfiTransport, MemoryRegistrationIsRequiredWhenForced) {
  OfiOptions options;
  options.force_memory_registration = true;
  OfiTransport ofi(*make_mpi_bootstrap(MPI_COMM_WORLD), g_provider, options);
  InstrumentedTransport transport(ofi);
  transport.set_timeout(kTestTimeout);
  ASSERT_TRUE(ofi.requires_memory_registration());

  std::vector<std::byte> unregistered(256);
  try {
    transport.isend(unregistered, 0, 1);
    ADD_FAILURE() << "a send from an unregistered buffer was accepted";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("register_memory"), std::string::npos) << error.what();
  }
  EXPECT_EQ(transport.messages_sent(), 0u);

  for (const std::size_t size : {std::size_t{0}, std::size_t{100}, std::size_t{1} << 20}) {
    ping_pong(transport, 1, size, 2);
  }

  // A sub-span of a registered region uses the region's descriptor; a
  // region registered twice stays registered until deregistered twice.
  std::vector<std::byte> region(8192);
  transport.register_memory(region);
  transport.register_memory(region);
  std::span<std::byte> middle = std::span<std::byte>(region).subspan(1000, 4000);
  if (transport.rank() <= 1) {
    const int partner = 1 - transport.rank();
    fill(middle, 99);
    std::vector<std::byte> reply_region(4000);
    MemoryRegistration reply_registration(transport, reply_region);
    const RequestId requests[2] = {transport.irecv(reply_region, partner, 3),
                                   transport.isend(middle, partner, 3)};
    transport.wait_all(requests);
    EXPECT_EQ(first_mismatch(reply_region, 99), std::string::npos);
  }
  transport.deregister_memory(region);
  EXPECT_NO_THROW(transport.barrier());
  transport.deregister_memory(region);
  EXPECT_THROW(transport.isend(middle, 0, 1), std::runtime_error);
  EXPECT_THROW(transport.deregister_memory(region), std::invalid_argument);
  transport.barrier();
}

TEST(OfiTransport, UnknownProviderNamesTheAvailableOnes) {
  try {
    OfiTransport transport(*make_mpi_bootstrap(MPI_COMM_WORLD), "no_such_provider");
    ADD_FAILURE() << "provider no_such_provider opened";
  } catch (const OfiProviderUnavailable& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("'no_such_provider'"), std::string::npos) << text;
    EXPECT_NE(text.find("available: "), std::string::npos) << text;
    EXPECT_NE(text.find(g_transport->provider()), std::string::npos) << text;
  }
}

// Ping-pong between ranks 0 and 1: prints the half round-trip latency of an
// 8-byte message and the bandwidth of 4 MiB ones, for the report.
TEST(OfiTransport, PingPongPerformance) {
  Transport& transport = *g_instrumented;
  const int rank = transport.rank();
  struct Case {
    std::size_t bytes;
    int iterations;
  };
  for (const Case c : {Case{8, 2000}, Case{65536, 300}, Case{4 << 20, 20}}) {
    Buffer send(transport, c.bytes);
    Buffer recv(transport, c.bytes);
    fill(send.span(), seed_for(c.bytes, rank, 1 - rank));
    transport.barrier();
    std::chrono::steady_clock::time_point start;
    for (int i = -10; i < c.iterations; ++i) {
      if (i == 0) start = std::chrono::steady_clock::now();
      if (rank == 0) {
        transport.wait(transport.isend(send.span(), 1, 1));
        transport.wait(transport.irecv(recv.span(), 1, 1));
      } else if (rank == 1) {
        transport.wait(transport.irecv(recv.span(), 0, 1));
        transport.wait(transport.isend(send.span(), 0, 1));
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rank <= 1) {
      EXPECT_EQ(first_mismatch(recv.span(), seed_for(c.bytes, 1 - rank, rank)), std::string::npos);
    }
    if (rank == 0) {
      const double half_round_trip = seconds / c.iterations / 2;
      std::printf("[ perf     ] %s np=%d %8zu B: %9.2f us half round trip, %8.3f GB/s\n",
                  transport.provider().c_str(), transport.size(), c.bytes, half_round_trip * 1e6,
                  static_cast<double>(c.bytes) / half_round_trip / 1e9);
    }
  }
  transport.barrier();
}

// The bootstrap the constructor uses under mpirun: contributions of
// different lengths (rank 0's empty, bytes including zeros) come back
// whole and in rank order, twice in a row.
TEST(MpiBootstrap, AllgatherGivesEveryRankEveryContribution) {
  const std::unique_ptr<Bootstrap> bootstrap = make_mpi_bootstrap(MPI_COMM_WORLD);
  EXPECT_EQ(bootstrap->kind(), "mpi");
  auto contribution = [](int rank, int round) {
    std::string bytes(static_cast<std::size_t>(rank * (3 + round)), '\0');
    for (std::size_t i = 0; i < bytes.size(); i += 2) bytes[i] = static_cast<char>('a' + rank);
    return bytes;
  };
  for (int round = 0; round < 2; ++round) {
    const std::vector<std::string> all =
        bootstrap->allgather(contribution(bootstrap->rank(), round));
    ASSERT_EQ(all.size(), static_cast<std::size_t>(bootstrap->size()));
    for (int r = 0; r < bootstrap->size(); ++r) {
      EXPECT_EQ(all[static_cast<std::size_t>(r)], contribution(r, round)) << "rank " << r;
    }
  }
}

// Other ranks print failures only, prefixed with their rank, so the output
// stays readable and no failure goes unseen.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                 result.file_name() != nullptr ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  using namespace collbench;
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--provider") == 0 && i + 1 < argc) g_provider = argv[++i];
  }
  if (size < 2) {
    if (rank == 0) std::fprintf(stderr, "ofi_transport_test needs at least 2 ranks\n");
    MPI_Finalize();
    return 1;
  }

  try {
    g_transport = std::make_unique<OfiTransport>(*make_mpi_bootstrap(MPI_COMM_WORLD), g_provider);
  } catch (const OfiProviderUnavailable& error) {
    if (rank == 0) std::printf("SKIPPED: %s\n", error.what());
    MPI_Finalize();
    return kSkipExitCode;
  }
  g_instrumented = std::make_unique<InstrumentedTransport>(*g_transport);
  g_instrumented->set_timeout(kTestTimeout);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  g_instrumented.reset();
  g_transport.reset();
  MPI_Finalize();
  return any_failed;
}
