// libfabric transport: see include/collbench/transport/ofi_transport.h for the design
// (tag layout, ordering guarantees relied on, provider requirements).
//
// Resource ownership follows fabtests: fabric -> domain -> {completion
// queue, address vector, memory regions} -> endpoint, closed in reverse.
// Requests and operation contexts come from pools that only grow when more
// are outstanding than ever before, so a collective run a second time makes
// no heap allocation; error and timeout messages are the only exception.
#include "collbench/transport/ofi_transport.h"

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sched.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <set>
#include <source_location>
#include <type_traits>
#include <vector>

#include "collbench/transport/mpi_transport.h"  // check_mpi

#if FI_MAJOR_VERSION < 1 || (FI_MAJOR_VERSION == 1 && FI_MINOR_VERSION < 9)
#error "the OFI transport needs libfabric 1.9 or newer (FI_CONTEXT2, mr_mode bits)"
#endif

namespace collbench {
namespace {

// The API version asked of fi_getinfo: the oldest whose semantics this file
// is written for (domain_attr->mr_mode bits, FI_CONTEXT2).
constexpr std::uint32_t kApiVersion = FI_VERSION(1, 9);

// Tag layout: bits 0..14 user tag, bit 15 transport-internal traffic
// (barrier), bit 16 clear-to-send of a split message, bits 17..48 source
// rank.
constexpr int kTagBits = 17;
constexpr int kRankBits = 32;
constexpr int kInternalTag = 1 << 15;
constexpr std::uint64_t kClearToSendBit = std::uint64_t{1} << 16;
static_assert(kMaxTag < kInternalTag, "user tags must not reach the internal-tag bit");

constexpr RequestId kNoRequest = std::numeric_limits<RequestId>::max();
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
constexpr std::size_t kMaxChunkWindow = 64;
constexpr std::size_t kReceiveWindows = 2;
constexpr int kCqBatch = 16;

std::string_view file_name(const std::source_location& where) {
  const std::string_view path = where.file_name();
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// fabtests' FT_PRINTERR format: "fi_call(): file:line, ret=N (fi_strerror)".
std::string fi_error_text(const char* call, long ret, const std::source_location& where) {
  return fmt::format("{}(): {}:{}, ret={} ({})", call, file_name(where), where.line(), ret,
                     fi_strerror(static_cast<int>(-ret)));
}

void check_fi(long ret, const char* call, std::string_view context = {},
              const std::source_location& where = std::source_location::current()) {
  if (ret >= 0) return;
  throw std::runtime_error(
      fmt::format("{}{}{}", fi_error_text(call, ret, where), context.empty() ? "" : ": ", context));
}

struct InfoDeleter {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

InfoPtr allocate_hints() {
  InfoPtr hints(fi_allocinfo());
  if (!hints) throw std::bad_alloc();
  // The application side of the contract, as fabtests state it: we pass a
  // fi_context2 with every operation, and we can register memory with
  // local, virtual-address, allocated-only, provider-keyed and
  // endpoint-bound semantics. What the provider returns is what it needs.
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  return hints;
}

// Hints for the transport itself. `directed_recv` and `manual_progress` are
// preferences, tried first and dropped when no provider grants them:
// without FI_DIRECTED_RECV matching relies on the rank bits of the tag
// alone; manual data progress is what waits drive anyway, and it spares the
// progress thread of providers that would otherwise start one (sockets',
// which sleeps for FI_SOCKETS_PE_WAITTIME = 10 ms when idle and costs a
// ping-pong about that much on a loaded machine).
InfoPtr transport_hints(const std::string& provider_name, bool directed_recv,
                        bool manual_progress) {
  InfoPtr hints = allocate_hints();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_TAGGED | FI_SEND | FI_RECV | (directed_recv ? FI_DIRECTED_RECV : 0);
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  // One thread drives each transport, which lets providers skip locking.
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  if (manual_progress) hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  if (!provider_name.empty()) hints->fabric_attr->prov_name = strdup(provider_name.c_str());
  return hints;
}

bool usable(const fi_info& info) {
  return info.ep_attr->type == FI_EP_RDM && (info.caps & FI_TAGGED) != 0 &&
         (info.tx_attr->msg_order & FI_ORDER_SAS) != 0 &&
         (info.rx_attr->msg_order & FI_ORDER_SAS) != 0;
}

// Names of the providers that could serve this transport here, for the
// message of a provider that is not there.
std::vector<std::string> usable_provider_names() {
  fi_info* list = nullptr;
  InfoPtr hints = transport_hints({}, false, false);
  std::vector<std::string> names;
  if (fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &list) != 0) return names;
  InfoPtr owner(list);
  for (const fi_info* info = list; info != nullptr; info = info->next) {
    const std::string name = info->fabric_attr->prov_name;
    if (usable(*info) && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return names;
}

std::string mr_mode_text(int mr_mode) {
  static constexpr std::pair<int, const char*> kBits[] = {
      {FI_MR_LOCAL, "local"},         {FI_MR_RAW, "raw"},
      {FI_MR_VIRT_ADDR, "virt_addr"}, {FI_MR_ALLOCATED, "allocated"},
      {FI_MR_PROV_KEY, "prov_key"},   {FI_MR_MMU_NOTIFY, "mmu_notify"},
      {FI_MR_RMA_EVENT, "rma_event"}, {FI_MR_ENDPOINT, "endpoint"},
      {FI_MR_HMEM, "hmem"},
  };
  std::string text;
  for (const auto& [bit, name] : kBits) {
    if ((mr_mode & bit) == 0) continue;
    if (!text.empty()) text += '|';
    text += name;
  }
  return text.empty() ? "none" : text;
}

std::string size_text(std::size_t bytes) {
  // Providers without a real limit report SIZE_MAX or close to it.
  if (bytes >= (std::size_t{1} << 62)) return "unlimited";
  return std::to_string(bytes);
}

const char* endpoint_type_text(fi_ep_type type) {
  switch (type) {
    case FI_EP_RDM:
      return "rdm";
    case FI_EP_MSG:
      return "msg";
    case FI_EP_DGRAM:
      return "dgram";
    default:
      return "other";
  }
}

const char* progress_text(fi_progress progress) {
  switch (progress) {
    case FI_PROGRESS_AUTO:
      return "auto";
    case FI_PROGRESS_MANUAL:
      return "manual";
    default:
      return "unspec";
  }
}

// Reads a size from the environment; unset or empty means `fallback`.
std::size_t env_size(const char* name, std::size_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(value, &end, 10);
  if (*end != '\0' || parsed == 0) {
    throw std::invalid_argument(
        fmt::format("{}='{}': expected a positive number of bytes", name, value));
  }
  return static_cast<std::size_t>(parsed);
}

bool env_flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int comm_size(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

}  // namespace

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

  ~State() { close_all(); }

  void close_all() {
    // The endpoint first: closing it discards whatever is still posted, and
    // only then may the buffers' registrations and the queues go.
    if (ep != nullptr) fi_close(&ep->fid);
    ep = nullptr;
    for (Region& region : regions) fi_close(&region.mr->fid);
    regions.clear();
    if (av != nullptr) fi_close(&av->fid);
    av = nullptr;
    if (cq != nullptr) fi_close(&cq->fid);
    cq = nullptr;
    if (domain != nullptr) fi_close(&domain->fid);
    domain = nullptr;
    if (fabric != nullptr) fi_close(&fabric->fid);
    fabric = nullptr;
  }

  // --- opening -------------------------------------------------------------

  void open(const std::string& provider_name) {
    if (fi_version() < kApiVersion) {
      throw std::runtime_error(
          fmt::format("libfabric {}.{} is too old: the OFI transport needs API {}.{} or newer",
                      FI_MAJOR(fi_version()), FI_MINOR(fi_version()), FI_MAJOR(kApiVersion),
                      FI_MINOR(kApiVersion)));
    }
    if (options.max_message_size == 0) {
      options.max_message_size = env_size("COLLBENCH_OFI_MAX_MSG", 0);
    }
    options.force_memory_registration =
        options.force_memory_registration || env_flag("COLLBENCH_OFI_FORCE_MR");
    options.use_inject = options.use_inject || env_flag("COLLBENCH_OFI_INJECT");

    fi_info* list = nullptr;
    int ret = -FI_ENODATA;
    for (const bool directed : {true, false}) {
      for (const bool manual : {true, false}) {
        InfoPtr hints = transport_hints(provider_name, directed, manual);
        ret = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &list);
        if (ret == 0) break;
      }
      if (ret == 0) break;
    }
    if (ret != 0) {
      const char* env_provider = std::getenv("FI_PROVIDER");
      const std::vector<std::string> available = usable_provider_names();
      std::string names;
      for (const std::string& name : available) names += (names.empty() ? "" : ", ") + name;
      throw OfiProviderUnavailable(fmt::format(
          "libfabric provider '{}' offers no FI_EP_RDM endpoint with FI_TAGGED and FI_ORDER_SAS "
          "on this node ({}){}; available: {}",
          provider_name.empty() ? "(default)" : provider_name,
          fi_error_text("fi_getinfo", ret, std::source_location::current()),
          env_provider != nullptr ? fmt::format(" with FI_PROVIDER={}", env_provider) : "",
          names.empty() ? "none" : names));
    }
    // libfabric lists the preferred entry first (for tcp: FI_TCP_IFACE
    // chooses the interface, otherwise the first one found).
    info.reset(fi_dupinfo(list));
    fi_freeinfo(list);
    if (!info) throw std::bad_alloc();

    const std::uint64_t tag_format = info->ep_attr->mem_tag_format;
    if (tag_format != 0 && std::bit_width(tag_format) < kTagBits + kRankBits) {
      throw std::runtime_error(fmt::format(
          "provider {} offers a {}-bit tag (mem_tag_format {:#x}); the OFI transport needs {}",
          info->fabric_attr->prov_name, std::bit_width(tag_format), tag_format,
          kTagBits + kRankBits));
    }
    directed_recv = (info->caps & FI_DIRECTED_RECV) != 0;
    registration_required =
        (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0 || options.force_memory_registration;
    chunk_size = info->ep_attr->max_msg_size;
    if (options.max_message_size != 0) chunk_size = std::min(chunk_size, options.max_message_size);
    if (chunk_size == 0) {
      throw std::runtime_error(
          fmt::format("provider {} reports max_msg_size 0", info->fabric_attr->prov_name));
    }
    inject_limit = options.use_inject ? std::min(info->tx_attr->inject_size, chunk_size) : 0;
    posted_receives.assign(static_cast<std::size_t>(size), 0);
    receive_limit = std::max<std::size_t>(
        1, info->rx_attr->size / 2 / static_cast<std::size_t>(std::max(1, size - 1)));
    chunk_window = std::clamp<std::size_t>(receive_limit / kReceiveWindows, 1, kMaxChunkWindow);

    check_fi(fi_fabric(info->fabric_attr, &fabric, nullptr), "fi_fabric");
    check_fi(fi_domain(fabric, info.get(), &domain, nullptr), "fi_domain");

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.wait_obj = FI_WAIT_NONE;  // waits poll: that is what drives manual progress
    cq_attr.size = info->tx_attr->size + info->rx_attr->size;
    check_fi(fi_cq_open(domain, &cq_attr, &cq, nullptr), "fi_cq_open");

    fi_av_attr av_attr{};
    av_attr.type =
        info->domain_attr->av_type == FI_AV_UNSPEC ? FI_AV_TABLE : info->domain_attr->av_type;
    av_attr.count = static_cast<std::size_t>(size);
    check_fi(fi_av_open(domain, &av_attr, &av, nullptr), "fi_av_open");

    check_fi(fi_endpoint(domain, info.get(), &ep, nullptr), "fi_endpoint");
    check_fi(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind", "address vector");
    check_fi(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind", "completion queue");
    check_fi(fi_enable(ep), "fi_enable");
  }

  std::vector<char> endpoint_name() const {
    std::size_t length = 0;
    int ret = fi_getname(&ep->fid, nullptr, &length);
    if (ret != -FI_ETOOSMALL) check_fi(ret, "fi_getname", "querying the name's length");
    std::vector<char> name(length);
    check_fi(fi_getname(&ep->fid, name.data(), &length), "fi_getname");
    name.resize(length);
    return name;
  }

  void insert_peers(const std::vector<char>& names, std::size_t stride) {
    peer_addresses.assign(static_cast<std::size_t>(size), FI_ADDR_UNSPEC);
    const int inserted = fi_av_insert(av, names.data(), static_cast<std::size_t>(size),
                                      peer_addresses.data(), 0, nullptr);
    check_fi(inserted, "fi_av_insert");
    if (inserted != size) {
      throw std::runtime_error(
          fmt::format("fi_av_insert(): inserted {} of {} endpoint names ({} bytes each)", inserted,
                      size, stride));
    }
  }

  // --- requests and contexts ------------------------------------------------

  RequestId acquire_request() {
    if (free_requests.empty()) {
      requests.emplace_back();
      free_requests.reserve(requests.capacity());
      return static_cast<RequestId>(requests.size() - 1);
    }
    const RequestId id = free_requests.back();
    free_requests.pop_back();
    return id;
  }

  void release_request(RequestId id) {
    Request& request = requests[id];
    if (!request.active) return;  // listed twice in one wait_all
    request.active = false;
    request.error.clear();
    free_requests.push_back(id);
  }

  OpContext* acquire_context(RequestId request, std::size_t chunk, std::size_t length,
                             bool clear_to_send) {
    OpContext* context = free_contexts;
    if (context != nullptr) {
      free_contexts = context->next_free;
    } else {
      context = &contexts.emplace_back();
    }
    context->provider_context = {};
    context->request = request;
    context->chunk = chunk;
    context->length = length;
    context->clear_to_send = clear_to_send;
    context->is_receive = clear_to_send == requests[request].is_send;
    context->in_use = true;
    ++outstanding_operations;
    context->counted =
        !clear_to_send && context->is_receive && requests[request].tag < kInternalTag;
    if (context->counted) ++posted_receives[static_cast<std::size_t>(requests[request].peer)];
    context->next_free = nullptr;
    return context;
  }

  void release_context(OpContext* context) {
    context->in_use = false;
    --outstanding_operations;
    if (context->counted) {
      --posted_receives[static_cast<std::size_t>(requests[context->request].peer)];
    }
    context->next_free = free_contexts;
    free_contexts = context;
  }

  void* lookup_desc(const std::byte* data, std::size_t length) const {
    if (!registration_required || length == 0) return nullptr;
    // The region that starts last at or before `data` is usually the one;
    // walk back over earlier ones only if regions overlap.
    auto it = std::upper_bound(regions.begin(), regions.end(), data,
                               [](const std::byte* p, const Region& r) { return p < r.begin; });
    while (it != regions.begin()) {
      --it;
      if (data >= it->begin && data + length <= it->end) return it->desc;
    }
    throw std::runtime_error(fmt::format(
        "OFI transport (provider {}): buffer {} of {} bytes is not registered; the provider needs "
        "memory registration ({}): call register_memory() on it when the algorithm is built",
        info->fabric_attr->prov_name, static_cast<const void*>(data), length,
        options.force_memory_registration ? "forced" : "FI_MR_LOCAL"));
  }

  std::string describe(const Request& request) const {
    const char* direction = request.is_send ? "send to" : "recv from";
    if (request.tag >= kInternalTag) {
      return fmt::format("{} rank {} (barrier round {}), {} bytes", direction, request.peer,
                         request.tag - kInternalTag, request.size);
    }
    return fmt::format("{} rank {} tag {}, {} bytes", direction, request.peer, request.tag,
                       request.size);
  }

  // --- posting ----------------------------------------------------------------

  RequestId start(std::byte* buffer, std::size_t length, void* desc, int peer, int tag,
                  bool is_send) {
    const RequestId id = acquire_request();
    Request& request = requests[id];
    request.buffer = buffer;
    request.size = length;
    request.desc = desc;
    const int source = is_send ? rank : peer;
    request.wire_tag =
        (static_cast<std::uint64_t>(source) << kTagBits) | static_cast<std::uint64_t>(tag);
    request.order_key =
        (static_cast<std::uint64_t>(peer) << kTagBits) | static_cast<std::uint64_t>(tag);
    request.address =
        is_send || directed_recv ? peer_addresses[static_cast<std::size_t>(peer)] : FI_ADDR_UNSPEC;
    request.peer = peer;
    request.tag = tag;
    request.is_send = is_send;
    request.active = true;
    request.abandoned = false;
    // Not (length + chunk_size - 1) / chunk_size: chunk_size is often SIZE_MAX.
    request.chunks_total = length == 0 ? 1 : 1 + (length - 1) / chunk_size;
    request.chunks_posted = 0;
    request.chunks_completed = 0;
    request.windows = request.split() ? 1 + (request.chunks_total - 1) / chunk_window : 0;
    request.clear_posted = 0;
    request.clear_completed = 0;
    request.chunks_cleared = request.split() ? 0 : request.chunks_total;
    request.next_in_backlog = kNoRequest;

    Backlog& backlog = is_send ? send_backlog : recv_backlog;
    // Behind a non-empty backlog a new request waits for the next drain,
    // which keeps it behind older ones with the same peer and tag.
    if (backlog.head == kNoRequest) {
      try {
        if (post_chunks(id) == Posted::kAll) return id;
      } catch (...) {
        if (requests[id].chunks_posted == 0) {
          release_request(id);
          throw;
        }
        record_error(id, current_exception_text());
        return id;
      }
    }
    push_backlog(backlog, id);
    return id;
  }

  static std::string current_exception_text() {
    try {
      throw;
    } catch (const std::exception& error) {
      return error.what();
    } catch (...) {
      return "unknown error";
    }
  }

  void push_backlog(Backlog& backlog, RequestId id) {
    requests[id].next_in_backlog = kNoRequest;
    if (backlog.tail == kNoRequest) {
      backlog.head = id;
    } else {
      requests[backlog.tail].next_in_backlog = id;
    }
    backlog.tail = id;
    backlog.dirty = true;
  }

  // Posts what the request may post now, in order: for a split send, the
  // clear-to-send receive of the next window and the chunks cleared so far;
  // for a split receive, up to kReceiveWindows windows of chunk receives,
  // each followed by its clear-to-send; otherwise the single operation.
  Posted post_chunks(RequestId id) {
    Request& request = requests[id];
    if (request.abandoned) return Posted::kAll;
    if (request.is_send) {
      // One clear-to-send receive outstanding at a time: its completion
      // clears the next window (see complete()).
      if (request.clear_posted < request.windows &&
          request.clear_posted == request.clear_completed) {
        const Posted posted = post_clear_to_send(id);
        if (posted != Posted::kAll) return posted;
      }
      while (request.chunks_posted < request.chunks_cleared) {
        const Posted posted = post_chunk(id);
        if (posted != Posted::kAll) return posted;
      }
      return request.chunks_posted == request.chunks_total ? Posted::kAll : Posted::kWindowFull;
    }
    const std::size_t in_flight_limit =
        request.split() ? kReceiveWindows * chunk_window : request.chunks_total;
    while (true) {
      // A window fully posted (or the last, shorter one) is cleared.
      const std::size_t windows_posted = (request.chunks_posted / chunk_window) +
                                         (request.chunks_posted == request.chunks_total &&
                                                  request.chunks_posted % chunk_window != 0
                                              ? 1
                                              : 0);
      if (request.split() && request.clear_posted < windows_posted) {
        const Posted posted = post_clear_to_send(id);
        if (posted != Posted::kAll) return posted;
        continue;
      }
      if (request.chunks_posted == request.chunks_total) return Posted::kAll;
      if (request.chunks_posted - request.chunks_completed >= in_flight_limit) {
        return Posted::kWindowFull;
      }
      const Posted posted = post_chunk(id);
      if (posted != Posted::kAll) return posted;
    }
  }

  // Posts the request's next chunk.
  Posted post_chunk(RequestId id) {
    Request& request = requests[id];
    const std::size_t chunk = request.chunks_posted;
    const std::size_t offset = chunk * chunk_size;
    const std::size_t length = std::min(chunk_size, request.size - offset);
    std::byte* data = request.buffer == nullptr ? nullptr : request.buffer + offset;
    // Never the transport's own messages: an injected barrier message could
    // still be queued when the sender leaves the barrier (see the header).
    if (request.is_send && inject_limit > 0 && length <= inject_limit &&
        request.tag < kInternalTag) {
      const ssize_t ret = fi_tinject(ep, data, length, request.address, request.wire_tag);
      if (ret == -FI_EAGAIN) return Posted::kProviderFull;
      if (ret != 0) check_fi(ret, "fi_tinject", describe(request));
      ++request.chunks_posted;
      ++request.chunks_completed;  // injected sends have no completion
      ++operations_posted;
      return Posted::kAll;
    }
    // Only the application's receives count against the bound: the
    // transport's own (barrier, clear-to-send) are few, and must not wait
    // behind receives that may only be satisfied after them.
    if (!request.is_send && request.tag < kInternalTag &&
        posted_receives[static_cast<std::size_t>(request.peer)] >= receive_limit) {
      return Posted::kProviderFull;
    }
    OpContext* context = acquire_context(id, chunk, length, false);
    const ssize_t ret = request.is_send ? fi_tsend(ep, data, length, request.desc, request.address,
                                                   request.wire_tag, &context->provider_context)
                                        : fi_trecv(ep, data, length, request.desc, request.address,
                                                   request.wire_tag, 0, &context->provider_context);
    if (ret != 0) {
      release_context(context);
      // shm (1.17) answers -FI_ENOMEM instead of -FI_EAGAIN when its pool
      // of receive entries, shared by posted receives and unexpected
      // messages, is empty: receives that match unexpected messages free
      // entries, so it is back-pressure too.
      if (ret == -FI_EAGAIN || ret == -FI_ENOMEM) return Posted::kProviderFull;
      check_fi(
          ret, request.is_send ? "fi_tsend" : "fi_trecv",
          fmt::format("{} (chunk {} of {})", describe(request), chunk + 1, request.chunks_total));
    }
    ++request.chunks_posted;
    ++operations_posted;
    return Posted::kAll;
  }

  // The receiver of a split message sends a zero-length clear-to-send per
  // window; the sender receives them. Tagged with the receiver's rank.
  Posted post_clear_to_send(RequestId id) {
    Request& request = requests[id];
    const int receiver = request.is_send ? request.peer : rank;
    const std::uint64_t tag = (static_cast<std::uint64_t>(receiver) << kTagBits) | kClearToSendBit |
                              static_cast<std::uint64_t>(request.tag);
    OpContext* context = acquire_context(id, request.clear_posted, 0, true);
    const ssize_t ret =
        request.is_send
            ? fi_trecv(ep, nullptr, 0, nullptr, directed_recv ? request.address : FI_ADDR_UNSPEC,
                       tag, 0, &context->provider_context)
            : fi_tsend(ep, nullptr, 0, nullptr,
                       peer_addresses[static_cast<std::size_t>(request.peer)], tag,
                       &context->provider_context);
    if (ret != 0) {
      release_context(context);
      if (ret == -FI_EAGAIN || ret == -FI_ENOMEM) return Posted::kProviderFull;
      check_fi(ret, request.is_send ? "fi_trecv" : "fi_tsend",
               fmt::format("{} (clear-to-send {} of {})", describe(request),
                           request.clear_posted + 1, request.windows));
    }
    ++request.clear_posted;
    return Posted::kAll;
  }

  // Posts backlogged chunks, oldest request first. A request that cannot
  // post everything holds back the younger ones with its peer and tag, which
  // must match after it, and nothing else: one peer that is slow to receive,
  // or a provider queue full of one peer's messages, must not stop traffic
  // to and from the others, which may be what frees it. (With shm, 4 ranks
  // sending split messages to one rank deadlocked when the first refusal
  // stopped the whole drain.) A send refused by the provider also holds back
  // the later sends to that peer, whose queue is full; a refused receive
  // holds back only its peer and tag, since a receive matching an already
  // arrived message may still be accepted.
  void drain(Backlog& backlog) {
    backlog.dirty = false;
    held_keys.clear();
    held_peers.clear();
    RequestId previous = kNoRequest;
    RequestId id = backlog.head;
    while (id != kNoRequest) {
      Request& request = requests[id];
      const RequestId next = request.next_in_backlog;
      const bool held =
          std::find(held_keys.begin(), held_keys.end(), request.order_key) != held_keys.end() ||
          (request.is_send &&
           std::find(held_peers.begin(), held_peers.end(), request.peer) != held_peers.end());
      Posted posted = Posted::kWindowFull;
      if (!held) {
        try {
          posted = post_chunks(id);
        } catch (...) {
          record_error(id, current_exception_text());
          posted = Posted::kAll;
        }
      }
      if (posted == Posted::kAll) {
        // Unlink: the request has nothing left to post.
        if (previous == kNoRequest) {
          backlog.head = next;
        } else {
          requests[previous].next_in_backlog = next;
        }
        if (backlog.tail == id) backlog.tail = previous;
        request.next_in_backlog = kNoRequest;
      } else {
        if (posted == Posted::kProviderFull) {
          backlog.dirty = true;  // try again on the next progress()
          if (request.is_send) held_peers.push_back(request.peer);
        }
        if (!held) held_keys.push_back(request.order_key);
        previous = id;
      }
      id = next;
    }
  }

  // --- completion -----------------------------------------------------------

  void record_error(RequestId id, std::string message) {
    Request& request = requests[id];
    if (request.error.empty()) request.error = std::move(message);
    if (request.abandoned) return;
    request.abandoned = true;
    // Receives still posted would swallow later messages with this tag (and
    // keep the request from finishing): cancel them; they complete with
    // FI_ECANCELED. Sends cannot be taken back from the peer.
    for (OpContext& context : contexts) {
      if (context.in_use && context.request == id && context.is_receive) {
        fi_cancel(&ep->fid, &context.provider_context);
      }
    }
  }

  void complete(const fi_cq_tagged_entry& entry) {
    auto* context = static_cast<OpContext*>(entry.op_context);
    const RequestId id = context->request;
    Request& request = requests[id];
    if (context->clear_to_send) {
      release_context(context);
      ++request.clear_completed;
      if (request.is_send) {
        request.chunks_cleared =
            std::min(request.chunks_total, request.chunks_cleared + chunk_window);
      }
      return;
    }
    if (!request.is_send && entry.len < context->length &&
        context->chunk + 1 < request.chunks_total) {
      release_context(context);
      ++request.chunks_completed;
      record_error(
          id, fmt::format("{}: chunk {} of {} carried {} of {} bytes: the message is shorter "
                          "than the receive buffer, which is only allowed when it fits in one "
                          "chunk of {} bytes",
                          describe(request), context->chunk + 1, request.chunks_total, entry.len,
                          context->length, chunk_size));
      return;
    }
    release_context(context);
    ++request.chunks_completed;
  }

  void complete_with_error(const std::source_location& where = std::source_location::current()) {
    fi_cq_err_entry error{};
    const ssize_t ret = fi_cq_readerr(cq, &error, 0);
    if (ret == -FI_EAGAIN) return;
    check_fi(ret, "fi_cq_readerr");
    // fi_cq(3) says err is positive; shm in 1.17 reports it negated.
    const int code = error.err < 0 ? -error.err : error.err;
    char provider_text[256] = {};
    const char* provider_message =
        fi_cq_strerror(cq, error.prov_errno, error.err_data, provider_text, sizeof provider_text);
    const std::string text = fmt::format("provider error {}: {}", error.prov_errno,
                                         provider_message != nullptr ? provider_message : "(none)");
    if (error.op_context == nullptr) {
      // Only injected sends carry no context.
      throw std::runtime_error(fmt::format(
          "{}, {} (tag {:#x})", fi_error_text("fi_tinject", -code, where), text, error.tag));
    }
    auto* context = static_cast<OpContext*>(error.op_context);
    const RequestId id = context->request;
    Request& request = requests[id];
    const std::size_t chunk = context->chunk;
    const bool clear_to_send = context->clear_to_send;
    release_context(context);
    if (clear_to_send) {
      ++request.clear_completed;
    } else {
      ++request.chunks_completed;
    }
    if (code == FI_ECANCELED && request.abandoned) return;  // our own cancel
    std::string detail;
    if (code == FI_ETRUNC) {
      // Some providers (tcp in 1.17) also drop the connection to the peer.
      detail = error.olen > 0 ? fmt::format(
                                    "; the message is {} bytes longer than the receive "
                                    "buffer",
                                    error.olen)
                              : "; the message is longer than the receive buffer";
    }
    const bool was_receive = request.is_send == clear_to_send;
    record_error(
        id, fmt::format("{}, {}; {} ({} {} of {}){}",
                        fi_error_text(was_receive ? "fi_trecv" : "fi_tsend", -code, where), text,
                        describe(request), clear_to_send ? "clear-to-send" : "chunk", chunk + 1,
                        clear_to_send ? request.windows : request.chunks_total, detail));
  }

  // Reads completions and posts backlogged operations; true if anything
  // completed. With FI_PROGRESS_MANUAL this is also what moves data.
  bool progress() {
    fi_cq_tagged_entry entries[kCqBatch];
    const ssize_t count = fi_cq_read(cq, entries, kCqBatch);
    bool completed = false;
    if (count > 0) {
      for (ssize_t i = 0; i < count; ++i) complete(entries[i]);
      completed = true;
    } else if (count == -FI_EAVAIL) {
      complete_with_error();
      completed = true;
    } else if (count != -FI_EAGAIN) {
      check_fi(count, "fi_cq_read");
    }
    if (completed) {
      send_backlog.dirty = true;
      recv_backlog.dirty = true;
    }
    if (send_backlog.dirty && send_backlog.head != kNoRequest) drain(send_backlog);
    if (recv_backlog.dirty && recv_backlog.head != kNoRequest) drain(recv_backlog);
    return completed;
  }

  void check_active(RequestId id) const {
    if (id >= requests.size() || !requests[id].active) {
      throw std::invalid_argument(
          fmt::format("rank {}: request {} is not outstanding (already waited for?)", rank, id));
    }
  }

  // Polls until every request in `ids` has finished, bounded by `timeout`
  // (zero: no bound). `what` names the waiter in the timeout message.
  void progress_until_finished(std::span<const RequestId> ids, std::chrono::milliseconds timeout,
                               std::string_view what) {
    const bool bounded = timeout.count() > 0;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::size_t first_unfinished = 0;
    unsigned idle_polls = 0;
    for (std::uint64_t polls = 1;; ++polls) {
      while (first_unfinished < ids.size() && requests[ids[first_unfinished]].finished()) {
        ++first_unfinished;
      }
      if (first_unfinished == ids.size()) return;
      if (progress()) {
        idle_polls = 0;
      } else if (++idle_polls > kPollsBeforeYield) {
        sched_yield();
      }
      // The clock costs about as much as a poll of shm: read it rarely.
      if (bounded && polls % 256 == 0 && std::chrono::steady_clock::now() > deadline) {
        throw_timeout(ids, timeout, what);
      }
    }
  }

  [[noreturn]] void throw_timeout(std::span<const RequestId> ids, std::chrono::milliseconds timeout,
                                  std::string_view what) {
    constexpr std::size_t kListed = 16;
    std::string pending;
    std::size_t listed = 0;
    std::size_t unlisted = 0;
    for (const RequestId id : ids) {
      const Request& request = requests[id];
      if (request.finished()) continue;
      if (listed == kListed) {
        ++unlisted;
        continue;
      }
      if (listed++ > 0) pending += ", ";
      pending += describe(request);
      if (request.split()) {
        pending += fmt::format(
            " ({} of {} chunks posted, {} completed, {} of {} clear-to-sends {})",
            request.chunks_posted, request.chunks_total, request.chunks_completed,
            request.clear_completed, request.windows, request.is_send ? "received" : "sent");
      } else if (request.chunks_posted < request.chunks_total) {
        pending += " (not yet posted: the provider pushed back)";
      }
    }
    if (unlisted > 0) pending += fmt::format(" and {} more", unlisted);
    pending += fmt::format("; {} libfabric operations in flight", outstanding_operations);
    throw TimeoutError(
        fmt::format("rank {}: {} timed out after {} ms (provider {}) waiting for: {}", rank, what,
                    timeout.count(), info->fabric_attr->prov_name, pending));
  }

  // Releases the finished requests and rethrows the first error among them.
  void finish(std::span<const RequestId> ids) {
    const std::string* first_error = nullptr;
    for (const RequestId id : ids) {
      if (first_error == nullptr && requests[id].active && !requests[id].error.empty()) {
        first_error = &requests[id].error;
      }
    }
    if (first_error == nullptr) {
      for (const RequestId id : ids) release_request(id);
      return;
    }
    std::runtime_error error(fmt::format("rank {}: {}", rank, *first_error));
    for (const RequestId id : ids) release_request(id);
    throw error;
  }

  void wait_all(std::span<const RequestId> ids, std::chrono::milliseconds timeout,
                std::string_view what) {
    for (const RequestId id : ids) check_active(id);
    progress_until_finished(ids, timeout, what);
    finish(ids);
  }

  // Dissemination barrier (Hensgen, Finkel & Manber) over zero-length
  // messages with internal tags, so that it drives libfabric progress while
  // it waits, which MPI_Barrier would not.
  void barrier(std::chrono::milliseconds timeout) {
    int round = 0;
    for (int distance = 1; distance < size; distance *= 2, ++round) {
      const int to = (rank + distance) % size;
      const int from = (rank - distance + size) % size;
      const RequestId ids[2] = {start(nullptr, 0, nullptr, from, kInternalTag + round, false),
                                start(nullptr, 0, nullptr, to, kInternalTag + round, true)};
      wait_all(ids, timeout, "barrier");
    }
  }

  // --- memory registration --------------------------------------------------

  void register_region(std::span<std::byte> region) {
    if (!registration_required || region.empty()) return;
    std::byte* begin = region.data();
    std::byte* end = begin + region.size();
    auto it = std::lower_bound(regions.begin(), regions.end(), begin,
                               [](const Region& r, const std::byte* p) { return r.begin < p; });
    for (auto same = it; same != regions.end() && same->begin == begin; ++same) {
      if (same->end == end) {
        ++same->references;
        return;
      }
    }
    fid_mr* mr = nullptr;
    // Local access only: nothing here is ever the target of RMA. The key
    // matters only when the provider does not choose it (no FI_MR_PROV_KEY).
    const std::uint64_t key = next_mr_key++;
    check_fi(fi_mr_reg(domain, begin, region.size(), FI_SEND | FI_RECV, 0, key, 0, &mr, nullptr),
             "fi_mr_reg", fmt::format("{} bytes at {}", region.size(), static_cast<void*>(begin)));
    if ((info->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0) {
      try {
        check_fi(fi_mr_bind(mr, &ep->fid, 0), "fi_mr_bind");
        check_fi(fi_mr_enable(mr), "fi_mr_enable");
      } catch (...) {
        fi_close(&mr->fid);
        throw;
      }
    }
    regions.insert(it, Region{begin, end, mr, fi_mr_desc(mr), 1});
  }

  void deregister_region(std::span<std::byte> region) {
    if (!registration_required || region.empty()) return;
    std::byte* begin = region.data();
    std::byte* end = begin + region.size();
    auto it = std::find_if(regions.begin(), regions.end(),
                           [&](const Region& r) { return r.begin == begin && r.end == end; });
    if (it == regions.end()) {
      throw std::invalid_argument(
          fmt::format("deregister_memory: {} bytes at {} were never registered", region.size(),
                      static_cast<void*>(begin)));
    }
    if (--it->references > 0) return;
    check_fi(fi_close(&it->mr->fid), "fi_close", "memory region");
    regions.erase(it);
  }
};

OfiTransport::OfiTransport(MPI_Comm comm, std::string provider_name, OfiOptions options)
    : Transport(comm_rank(comm), comm_size(comm)), state_(std::make_unique<State>()) {
  State& state = *state_;
  state.rank = rank();
  state.size = size();
  state.options = options;

  // Opening can fail on one rank only (a provider missing on one node); all
  // ranks agree on the outcome before anyone waits for the others' names.
  enum Outcome : int { kOpened = 0, kUnavailable = 1, kFailed = 2 };
  int outcome = kOpened;
  std::string failure;
  try {
    state.open(provider_name);
  } catch (const OfiProviderUnavailable& error) {
    outcome = kUnavailable;
    failure = error.what();
  } catch (const std::exception& error) {
    outcome = kFailed;
    failure = error.what();
  }
  std::vector<int> outcomes(static_cast<std::size_t>(size()));
  check_mpi(MPI_Allgather(&outcome, 1, MPI_INT, outcomes.data(), 1, MPI_INT, comm),
            "MPI_Allgather");
  const auto worst = std::max_element(outcomes.begin(), outcomes.end());
  if (*worst != kOpened) {
    if (failure.empty()) {
      failure = fmt::format("rank {} could not open libfabric provider '{}' (see its message)",
                            worst - outcomes.begin(), provider_name);
    }
    if (*worst == kUnavailable) throw OfiProviderUnavailable(failure);
    throw std::runtime_error(failure);
  }

  // Every rank must have chosen the same provider and split messages the
  // same way, or chunks would not line up.
  const std::string chosen = state.info->fabric_attr->prov_name;
  const unsigned long long chunk = state.chunk_size;
  unsigned long long chunk_min = 0;
  unsigned long long chunk_max = 0;
  check_mpi(MPI_Allreduce(&chunk, &chunk_min, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm),
            "MPI_Allreduce");
  check_mpi(MPI_Allreduce(&chunk, &chunk_max, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm),
            "MPI_Allreduce");
  int name_length = static_cast<int>(chosen.size());
  int name_length_max = 0;
  check_mpi(MPI_Allreduce(&name_length, &name_length_max, 1, MPI_INT, MPI_MAX, comm),
            "MPI_Allreduce");
  std::vector<char> provider_names(static_cast<std::size_t>(name_length_max + 1) *
                                   static_cast<std::size_t>(size()));
  std::vector<char> own_name(static_cast<std::size_t>(name_length_max + 1), '\0');
  std::copy(chosen.begin(), chosen.end(), own_name.begin());
  check_mpi(MPI_Allgather(own_name.data(), name_length_max + 1, MPI_CHAR, provider_names.data(),
                          name_length_max + 1, MPI_CHAR, comm),
            "MPI_Allgather");
  for (int r = 0; r < size(); ++r) {
    const std::string other(&provider_names[static_cast<std::size_t>(r * (name_length_max + 1))]);
    if (other != chosen) {
      throw std::runtime_error(
          fmt::format("ranks chose different libfabric providers: rank {} '{}', rank {} '{}'",
                      rank(), chosen, r, other));
    }
  }
  if (chunk_min != chunk_max) {
    throw std::runtime_error(
        fmt::format("ranks split messages at different sizes (from {} to {} bytes): set "
                    "COLLBENCH_OFI_MAX_MSG the same on every rank",
                    chunk_min, chunk_max));
  }
  const unsigned long long window = state.chunk_window;
  unsigned long long window_min = 0;
  check_mpi(MPI_Allreduce(&window, &window_min, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm),
            "MPI_Allreduce");
  state.chunk_window = static_cast<std::size_t>(window_min);

  // Endpoint names are opaque bytes of a provider-defined length.
  const std::vector<char> name = state.endpoint_name();
  const int name_bytes = static_cast<int>(name.size());
  int stride = 0;
  check_mpi(MPI_Allreduce(&name_bytes, &stride, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  std::vector<char> padded(static_cast<std::size_t>(stride), '\0');
  std::copy(name.begin(), name.end(), padded.begin());
  std::vector<char> names(static_cast<std::size_t>(stride) * static_cast<std::size_t>(size()));
  check_mpi(MPI_Allgather(padded.data(), stride, MPI_BYTE, names.data(), stride, MPI_BYTE, comm),
            "MPI_Allgather");
  if (static_cast<std::size_t>(stride) != name.size()) {
    throw std::runtime_error(fmt::format(
        "endpoint names differ in length across ranks ({} and {} bytes) for provider {}",
        name.size(), stride, chosen));
  }
  state.insert_peers(names, static_cast<std::size_t>(stride));

  // A first exchange over the fabric itself: a provider that cannot reach
  // the peers fails here, with a message, instead of in the first benchmark.
  state.barrier(state.options.setup_timeout);
}

OfiTransport::~OfiTransport() {
  State& state = *state_;
  // With requests still outstanding (a wait timed out and was abandoned)
  // or an exception unwinding, the peers may never arrive: just close.
  const bool quiet = std::none_of(state.requests.begin(), state.requests.end(),
                                  [](const State::Request& r) { return r.active; });
  if (state.ep != nullptr && quiet && std::uncaught_exceptions() == 0) {
    try {
      state.barrier(state.options.setup_timeout);
    } catch (...) {
      // A peer gone or late: closing is all that is left to do.
    }
  }
}

std::string OfiTransport::provider() const { return state_->info->fabric_attr->prov_name; }

RequestId OfiTransport::isend(std::span<const std::byte> data, int peer, int tag) {
  check_and_note_peer(peer, tag);
  void* desc = state_->lookup_desc(data.data(), data.size());
  // The provider only reads a send buffer; fi_tsend's pointer is const.
  const RequestId id =
      state_->start(const_cast<std::byte*>(data.data()), data.size(), desc, peer, tag, true);
  count_send(data.size());
  return id;
}

RequestId OfiTransport::irecv(std::span<std::byte> data, int peer, int tag) {
  check_and_note_peer(peer, tag);
  void* desc = state_->lookup_desc(data.data(), data.size());
  return state_->start(data.data(), data.size(), desc, peer, tag, false);
}

void OfiTransport::wait(RequestId request) {
  routing_timeouts(
      [&] { state_->wait_all(std::span<const RequestId>(&request, 1), timeout(), "wait"); });
}

void OfiTransport::wait_all(std::span<const RequestId> requests) {
  routing_timeouts([&] { state_->wait_all(requests, timeout(), "wait_all"); });
}

void OfiTransport::barrier() {
  routing_timeouts([&] { state_->barrier(timeout()); });
}

void OfiTransport::register_memory(std::span<std::byte> region) { state_->register_region(region); }

void OfiTransport::deregister_memory(std::span<std::byte> region) {
  state_->deregister_region(region);
}

std::size_t OfiTransport::max_message_size() const { return state_->chunk_size; }
std::size_t OfiTransport::inject_size() const { return state_->inject_limit; }
bool OfiTransport::requires_memory_registration() const { return state_->registration_required; }
bool OfiTransport::manual_progress() const {
  return state_->info->domain_attr->data_progress == FI_PROGRESS_MANUAL;
}
std::uint64_t OfiTransport::operations_posted() const { return state_->operations_posted; }
std::size_t OfiTransport::receive_queue_size() const { return state_->info->rx_attr->size; }

std::string ofi_library_version() {
  const std::uint32_t version = fi_version();
  return fmt::format("{}.{}", FI_MAJOR(version), FI_MINOR(version));
}

std::string ofi_list_providers() {
  InfoPtr hints = allocate_hints();
  fi_info* list = nullptr;
  const int ret = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &list);
  const char* env_provider = std::getenv("FI_PROVIDER");
  std::string out = fmt::format(
      "libfabric {} (built against {}.{}.{}){}\n", ofi_library_version(), FI_MAJOR_VERSION,
      FI_MINOR_VERSION, FI_REVISION_VERSION,
      env_provider != nullptr ? fmt::format(", FI_PROVIDER={}", env_provider) : std::string());
  if (ret != 0) {
    out += fmt::format("no provider found: {}\n",
                       fi_error_text("fi_getinfo", ret, std::source_location::current()));
    return out;
  }
  InfoPtr owner(list);

  using Row = std::vector<std::string>;
  std::vector<Row> rows;
  rows.push_back({"provider", "fabric", "domain", "endpoint", "tagged", "order_sas", "mr_mode",
                  "max_msg_size", "inject_size", "data_progress", "collbench"});
  std::set<Row> seen;
  for (const fi_info* info = list; info != nullptr; info = info->next) {
    Row row{info->fabric_attr->prov_name != nullptr ? info->fabric_attr->prov_name : "?",
            info->fabric_attr->name != nullptr ? info->fabric_attr->name : "?",
            info->domain_attr->name != nullptr ? info->domain_attr->name : "?",
            endpoint_type_text(info->ep_attr->type),
            (info->caps & FI_TAGGED) != 0 ? "yes" : "no",
            (info->tx_attr->msg_order & FI_ORDER_SAS) != 0 ? "yes" : "no",
            mr_mode_text(info->domain_attr->mr_mode),
            size_text(info->ep_attr->max_msg_size),
            std::to_string(info->tx_attr->inject_size),
            progress_text(info->domain_attr->data_progress),
            usable(*info) ? "usable" : "-"};
    if (seen.insert(row).second) rows.push_back(std::move(row));
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const Row& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const Row& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += fmt::format("{:<{}}", row[c], c + 1 < row.size() ? widths[c] + 2 : 0);
    }
    out += line + '\n';
  }
  out +=
      "usable: FI_EP_RDM with FI_TAGGED and FI_ORDER_SAS (select with --ofi-provider NAME, "
      "e.g. the part before ';')\n";
  return out;
}

}  // namespace collbench
