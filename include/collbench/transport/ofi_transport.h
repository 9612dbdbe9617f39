// libfabric transport: reliable-datagram endpoints (FI_EP_RDM) with tagged
// messages (FI_TAGGED), one completion queue and one address vector. No MPI:
// endpoint names are exchanged through a Bootstrap (bootstrap.h: MPI, or a
// folder the ranks share) when the transport is built, and nothing else
// goes through it afterwards: barrier() and the synchronisation at
// destruction are a dissemination barrier over libfabric, so that they
// drive libfabric's progress while they wait.
//
// Matching. The 64-bit libfabric tag carries the sender's rank (bits 17..48)
// and the user tag (bits 0..14; bits 15 and 16 mark the transport's own
// traffic: barrier and clear-to-send), and receives match it with
// ignore = 0, so a receive only ever matches its peer and tag even on
// providers without FI_DIRECTED_RECV (where that capability exists, the
// peer's address is passed as well). MPI's rule that
// a receive matches the oldest unmatched send from the same peer with the
// same tag follows from two libfabric guarantees that this transport
// requires from fi_getinfo: FI_ORDER_SAS on both sides (sends are processed
// by the receiver in the order they were posted) and "posted receives are
// searched in the order in which they were posted" (fi_tagged(3)).
//
// Provider requirements honoured:
// - messages above the provider's max_msg_size (or a smaller forced limit)
//   are split into chunks posted in order with the same tag on both sides;
//   by the ordering rule above chunk i of a send matches chunk i of its
//   receive. The receiver drives the transfer: it posts a window of chunk
//   receives, then sends a zero-length clear-to-send (tag bit 16), and only
//   then are that window's chunks sent, so chunks never arrive unexpected.
//   Sender and receiver must agree on the size of a split message: a
//   shorter one is reported as an error instead of silently spilling into
//   the next message;
// - FI_MR_LOCAL (verbs, efa, ...): register_memory() calls fi_mr_reg (and
//   binds to the endpoint under FI_MR_ENDPOINT); a send or receive on an
//   unregistered buffer throws instead of registering behind the caller's
//   back inside a timed loop;
// - manual data progress: waits poll the completion queue, which drives it;
// - FI_EAGAIN on post (and shm's -FI_ENOMEM, its way of saying the same):
//   the operation is queued and posted again whenever the completion queue
//   is read, so isend/irecv never block, like MPI_Isend/MPI_Irecv. A queued
//   operation holds back only later ones with its peer and tag (which must
//   match after it) and, for a send the provider refused, later sends to
//   that peer; traffic with other peers goes on;
// - inject size: fi_tinject is used for payloads up to inject_size only when
//   asked for (OfiOptions::use_inject). An injected message has no
//   completion, and with manual progress it can sit in the sender's queue
//   (e.g. while a connection is being set up) until the sender polls again;
//   a rank that has finished and then blocks in MPI hangs its peer. (Seen
//   with sockets: a message injected to a peer not yet connected never
//   arrived once the sender sat in MPI_Barrier.) Without injection a send
//   completes only when the provider reports it, which none of the
//   providers tested (tcp;ofi_rxm, shm, sockets) did before the message had
//   left the process.
//
// Known provider limitation: shm (libfabric 1.17) keeps posted receives and
// messages that arrived before their receive in one pool of rx_attr->size
// (1024) entries, has no flow control towards senders, and cannot post a
// receive while the pool is full, even one that would match a message in
// it. More than about that many messages in flight towards one rank, sent
// before their receives are posted, can therefore deadlock it. tcp;ofi_rxm
// and sockets are flow-controlled by TCP and have no such bound. Split
// messages are always safe: they are receiver-driven (a clear-to-send per
// window of chunks), and at most half the pool is ever used by this
// transport's posted receives, shared out per peer.
//
// Errors: every libfabric call is checked and reported in fabtests' form,
// "fi_tsend(): progress.cpp:123, ret=-11 (Resource temporarily
// unavailable)", followed by the peer and tag; error completions are read
// with fi_cq_readerr and reported with the provider's fi_cq_strerror text.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "collbench/transport/bootstrap.h"
#include "collbench/transport/transport.h"

namespace collbench {

// Thrown by the constructor when no provider of the requested name offers
// FI_EP_RDM endpoints with FI_TAGGED and FI_ORDER_SAS here; the message names
// those that do, so a test can skip instead of fail.
class OfiProviderUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OfiOptions {
  // Largest chunk put on the wire; 0 means the provider's max_msg_size, or
  // the environment variable COLLBENCH_OFI_MAX_MSG when that is set. A small
  // value lets tests exercise message splitting on providers whose limit is
  // effectively unbounded. Must be the same on all ranks (checked).
  std::size_t max_message_size = 0;
  // Register memory even when the provider does not ask for FI_MR_LOCAL (or
  // COLLBENCH_OFI_FORCE_MR=1), so that the registration path runs, and is
  // tested, on providers that do not need it.
  bool force_memory_registration = false;
  // Send payloads up to the provider's inject_size with fi_tinject (or
  // COLLBENCH_OFI_INJECT=1). Off by default; see the header comment.
  bool use_inject = false;
  // Bound on the barrier over the fabric, barrier() and those at construction
  // and destruction (the bootstrap bounds its own exchange).
  std::chrono::milliseconds setup_timeout{60'000};
};

class OfiTransport final : public Transport {
 public:
  // Collective over the bootstrap's ranks: opens the provider named
  // `provider_name` ("tcp", "shm", "verbs", "tcp;ofi_rxm", ...; empty:
  // FI_PROVIDER or libfabric's first choice) on every rank and exchanges
  // endpoint names in one bootstrap.allgather. Every rank throws if any
  // rank fails, so no rank is left waiting for the others. The bootstrap is
  // not used after the constructor returns.
  OfiTransport(Bootstrap& bootstrap, std::string provider_name, OfiOptions options = {});
  // Waits (bounded by OfiOptions::setup_timeout) for all ranks to reach
  // their destructor before closing the endpoint, so that nothing still
  // queued in this process is lost to a peer.
  ~OfiTransport() override;

  std::string_view kind() const override { return "ofi"; }
  // As fi_getinfo reports it, e.g. "tcp;ofi_rxm".
  std::string provider() const override;

  RequestId isend(std::span<const std::byte> data, int peer, int tag) override;
  RequestId irecv(std::span<std::byte> data, int peer, int tag) override;
  void wait(RequestId request) override;
  void wait_all(std::span<const RequestId> requests) override;
  // Polls the completion queue until `deadline`, then throws TimeoutError
  // naming the pending peers and tags, and the chunks and queued operations
  // behind them.
  bool wait_until(std::span<const RequestId> requests, std::span<bool> done,
                  Clock::time_point deadline) override;
  // Bounded by OfiOptions::setup_timeout.
  void barrier() override;
  // Drives progress once and says whether the request is complete; a
  // complete request is returned to the pool (its error, if any, thrown),
  // as MPI_Test does. Throws std::invalid_argument for a request that is
  // not outstanding.
  bool test(RequestId request) override;

  void register_memory(std::span<std::byte> region) override;
  void deregister_memory(std::span<std::byte> region) override;

  // What was negotiated with the provider, for reports and tests.
  std::size_t max_message_size() const;  // chunk size actually used
  std::size_t inject_size() const;       // 0 unless use_inject
  bool requires_memory_registration() const;
  bool manual_progress() const;
  // Number of libfabric operations that carried data (chunks, not
  // messages; clear-to-sends not included) posted since construction.
  std::uint64_t operations_posted() const;
  // The provider's receive queue depth (rx_attr->size). For shm it also
  // bounds what may be in flight towards one rank: see the header comment.
  std::size_t receive_queue_size() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A table of what fi_getinfo offers on this node: provider, fabric, domain,
// endpoint type, and the capabilities this transport depends on (tagged,
// FI_ORDER_SAS, MR mode, max message size, inject size, progress), with a
// last column saying whether `--transport ofi` can use the entry.
std::string ofi_list_providers();

// The libfabric version in use at run time, e.g. "1.17" (fi_version()).
std::string ofi_library_version();

}  // namespace collbench
