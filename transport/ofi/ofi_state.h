// What the files of the libfabric transport share: OfiTransport::State and
// the helpers they all call. The design (tag layout, ordering guarantees
// relied on, provider requirements) is in
// include/collbench/transport/ofi_transport.h. The files:
//   fabric.cpp    provider selection, opening and closing the fabric, the
//                 provider table (--list-providers)
//   memory.cpp    memory registration
//   progress.cpp  the progress engine: posting (queued posts, split
//                 messages), the completion queue
//   endpoint.cpp  OfiTransport itself: construction over a Bootstrap,
//                 isend/irecv/wait/test/barrier
//
// Resource ownership follows fabtests: fabric -> domain -> {completion
// queue, address vector, memory regions} -> endpoint, closed in reverse.
// Requests and operation contexts come from pools that only grow when more
// are outstanding than ever before, so a collective run a second time makes
// no heap allocation; error and timeout messages are the only exception.
#pragma once

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "collbench/transport/ofi_transport.h"

#if FI_MAJOR_VERSION < 1 || (FI_MAJOR_VERSION == 1 && FI_MINOR_VERSION < 9)
#error "the OFI transport needs libfabric 1.9 or newer (FI_CONTEXT2, mr_mode bits)"
#endif

namespace collbench {

// Tag layout: bits 0..14 user tag, bit 15 transport-internal traffic
// (barrier), bit 16 clear-to-send of a split message, bits 17..48 source
// rank.
inline constexpr int kTagBits = 17;
inline constexpr int kRankBits = 32;
inline constexpr int kInternalTag = 1 << 15;
inline constexpr std::uint64_t kClearToSendBit = std::uint64_t{1} << 16;
static_assert(kMaxTag < kInternalTag, "user tags must not reach the internal-tag bit");

inline constexpr RequestId kNoRequest = std::numeric_limits<RequestId>::max();
// Split messages are receiver-driven: the receiver posts the receives of a
// window of chunks, then sends a zero-length clear-to-send, and only then
// does the sender post that window's chunks. No chunk ever arrives
// unexpected, so a message split into thousands of chunks cannot exhaust
// the receiver's provider resources (shm's pool of 1024 receive entries,
// shared by posted receives and unexpected messages, filled up and
// deadlocked a 4-to-1 fan-in without this). The receiver keeps two windows
// posted so the sender is not idle while a clear-to-send is on its way.
// Windows are at most kMaxChunkWindow chunks, and smaller when the bound on
// posted receives per peer (State::receive_limit) is.
inline constexpr std::size_t kMaxChunkWindow = 64;
inline constexpr std::size_t kReceiveWindows = 2;
inline constexpr int kCqBatch = 16;

// fabtests' FT_PRINTERR format: "fi_call(): file:line, ret=N (fi_strerror)".
std::string fi_error_text(const char* call, long ret, const std::source_location& where);

// Throws std::runtime_error with fi_error_text and `context` if ret < 0.
void check_fi(long ret, const char* call, std::string_view context = {},
              const std::source_location& where = std::source_location::current());

struct InfoDeleter {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

// One libfabric operation in flight (a whole message, or one chunk of it).
// The provider owns `provider_context` until the completion is read, so
// contexts live in a deque, whose elements never move.
struct OpContext {
  fi_context2 provider_context;
  RequestId request;
  std::size_t chunk;
  std::size_t length;
  // A clear-to-send: a receive on a send request, a send on a receive one.
  bool clear_to_send;
  bool is_receive;
  bool counted;  // an application receive, in posted_receives
  bool in_use;
  OpContext* next_free;
};
static_assert(std::is_standard_layout_v<OpContext> && offsetof(OpContext, provider_context) == 0,
              "the completion's op_context must point at an OpContext");

struct OfiTransport::State {
  struct Request {
    std::byte* buffer = nullptr;
    std::size_t size = 0;
    void* desc = nullptr;
    std::uint64_t wire_tag = 0;
    // Peer and tag: requests with the same key are posted in order.
    std::uint64_t order_key = 0;
    fi_addr_t address = FI_ADDR_UNSPEC;
    int peer = -1;
    int tag = -1;
    bool is_send = false;
    bool active = false;
    // After an error no further chunk is posted and posted receive chunks
    // are cancelled, so that the request can finish and report.
    bool abandoned = false;
    std::size_t chunks_total = 0;
    std::size_t chunks_posted = 0;
    std::size_t chunks_completed = 0;
    // Split messages only: windows of chunk_window chunks, the
    // clear-to-sends posted and completed (received by a send request, sent
    // by a receive request), and the chunks a sender has been cleared for.
    std::size_t windows = 0;
    std::size_t clear_posted = 0;
    std::size_t clear_completed = 0;
    std::size_t chunks_cleared = 0;
    RequestId next_in_backlog = kNoRequest;
    std::string error;

    bool split() const { return chunks_total > 1; }
    bool finished() const {
      return chunks_completed == chunks_posted && clear_completed == clear_posted &&
             (chunks_posted == chunks_total || abandoned);
    }
  };

  // Requests with chunks not yet posted (provider queue full, or the
  // request's window of chunks in flight full), in post order; intrusive
  // so that queueing never allocates. `dirty` says that a drain may now
  // post something: new work, a completion, or a provider that pushed back.
  struct Backlog {
    RequestId head = kNoRequest;
    RequestId tail = kNoRequest;
    bool dirty = false;
  };

  enum class Posted { kAll, kWindowFull, kProviderFull };

  struct Region {
    std::byte* begin;
    std::byte* end;
    fid_mr* mr;
    void* desc;
    int references;
  };

  int rank = 0;
  int size = 0;
  OfiOptions options;
  InfoPtr info;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;
  std::vector<fi_addr_t> peer_addresses;
  bool directed_recv = false;
  bool registration_required = false;
  std::size_t chunk_size = 0;
  std::size_t inject_limit = 0;
  std::uint64_t next_mr_key = 1;
  std::uint64_t operations_posted = 0;
  std::size_t outstanding_operations = 0;  // contexts held by the provider
  // Receives posted and not yet completed, per peer, and their bound:
  // half the provider's receive queue shared out among the peers. The other
  // half stays free for messages that arrive before their receive is
  // posted, and every peer keeps a share, so a receive for the message at
  // the head of the provider's inbound queue can always be posted. shm
  // (1.17) keeps posted receives and early messages in one pool of
  // rx_attr->size entries and stops reading its inbound queue while that
  // pool is empty: without the bound, 3 ranks that each posted 2400
  // receives deadlocked with the pool full of receives for one peer and the
  // queue blocked by a message from the other.
  std::vector<std::size_t> posted_receives;
  std::size_t receive_limit = 0;
  // Chunks per clear-to-send window: the same on every rank (the smallest
  // any rank can afford; agreed on in the constructor).
  std::size_t chunk_window = 0;

  std::vector<Request> requests;
  std::vector<RequestId> free_requests;
  std::deque<OpContext> contexts;
  OpContext* free_contexts = nullptr;
  Backlog send_backlog;
  Backlog recv_backlog;
  // drain()'s scratch; clear() keeps their capacity, so they stop
  // allocating once as large as they ever need to be.
  std::vector<std::uint64_t> held_keys;
  std::vector<int> held_peers;
  std::vector<Region> regions;  // sorted by begin

  ~State();

  // fabric.cpp
  void close_all();
  void open(const std::string& provider_name);
  std::vector<char> endpoint_name() const;
  void insert_peers(const std::vector<char>& names, std::size_t stride);

  // memory.cpp
  void* lookup_desc(const std::byte* data, std::size_t length) const;
  void register_region(std::span<std::byte> region);
  void deregister_region(std::span<std::byte> region);

  // progress.cpp
  OpContext* acquire_context(RequestId request, std::size_t chunk, std::size_t length,
                             bool clear_to_send);
  void release_context(OpContext* context);
  std::string describe(const Request& request) const;
  RequestId start(std::byte* buffer, std::size_t length, void* desc, int peer, int tag,
                  bool is_send);
  static std::string current_exception_text();
  void push_backlog(Backlog& backlog, RequestId id);
  Posted post_chunks(RequestId id);
  Posted post_chunk(RequestId id);
  Posted post_clear_to_send(RequestId id);
  void drain(Backlog& backlog);
  void record_error(RequestId id, std::string message);
  void complete(const fi_cq_tagged_entry& entry);
  void complete_with_error(const std::source_location& where = std::source_location::current());
  bool progress();

  // endpoint.cpp
  RequestId acquire_request();
  void release_request(RequestId id);
  void check_active(RequestId id) const;
  void progress_until_finished(std::span<const RequestId> ids, std::chrono::milliseconds timeout,
                               std::string_view what);
  [[noreturn]] void throw_timeout(std::span<const RequestId> ids, std::chrono::milliseconds timeout,
                                  std::string_view what);
  void finish(std::span<const RequestId> ids);
  void wait_all(std::span<const RequestId> ids, std::chrono::milliseconds timeout,
                std::string_view what);
  void barrier(std::chrono::milliseconds timeout);
};

}  // namespace collbench
