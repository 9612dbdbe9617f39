// The progress engine: posting operations (queued when the provider pushes
// back, split messages driven by the receiver's clear-to-sends) and reading
// the completion queue, which with FI_PROGRESS_MANUAL is also what moves
// data.
#include <algorithm>
#include <exception>

#include "ofi_state.h"

namespace collbench {

OpContext* OfiTransport::State::acquire_context(RequestId request, std::size_t chunk,
                                                std::size_t length, bool clear_to_send) {
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
  context->counted = !clear_to_send && context->is_receive && requests[request].tag < kInternalTag;
  if (context->counted) ++posted_receives[static_cast<std::size_t>(requests[request].peer)];
  context->next_free = nullptr;
  return context;
}

void OfiTransport::State::release_context(OpContext* context) {
  context->in_use = false;
  --outstanding_operations;
  if (context->counted) {
    --posted_receives[static_cast<std::size_t>(requests[context->request].peer)];
  }
  context->next_free = free_contexts;
  free_contexts = context;
}

std::string OfiTransport::State::describe(const Request& request) const {
  const char* direction = request.is_send ? "send to" : "recv from";
  if (request.tag >= kInternalTag) {
    return fmt::format("{} rank {} (barrier round {}), {} bytes", direction, request.peer,
                       request.tag - kInternalTag, request.size);
  }
  return fmt::format("{} rank {} tag {}, {} bytes", direction, request.peer, request.tag,
                     request.size);
}

RequestId OfiTransport::State::start(std::byte* buffer, std::size_t length, void* desc, int peer,
                                     int tag, bool is_send) {
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

std::string OfiTransport::State::current_exception_text() {
  try {
    throw;
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "unknown error";
  }
}

void OfiTransport::State::push_backlog(Backlog& backlog, RequestId id) {
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
OfiTransport::State::Posted OfiTransport::State::post_chunks(RequestId id) {
  Request& request = requests[id];
  if (request.abandoned) return Posted::kAll;
  if (request.is_send) {
    // One clear-to-send receive outstanding at a time: its completion
    // clears the next window (see complete()).
    if (request.clear_posted < request.windows && request.clear_posted == request.clear_completed) {
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
    const std::size_t windows_posted =
        (request.chunks_posted / chunk_window) +
        (request.chunks_posted == request.chunks_total && request.chunks_posted % chunk_window != 0
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
OfiTransport::State::Posted OfiTransport::State::post_chunk(RequestId id) {
  Request& request = requests[id];
  const std::size_t chunk = request.chunks_posted;
  const std::size_t offset = chunk * chunk_size;
  const std::size_t length = std::min(chunk_size, request.size - offset);
  std::byte* data = request.buffer == nullptr ? nullptr : request.buffer + offset;
  // Never the transport's own messages: an injected barrier message could
  // still be queued when the sender leaves the barrier (see the header).
  if (request.is_send && inject_limit > 0 && length <= inject_limit && request.tag < kInternalTag) {
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
OfiTransport::State::Posted OfiTransport::State::post_clear_to_send(RequestId id) {
  Request& request = requests[id];
  const int receiver = request.is_send ? request.peer : rank;
  const std::uint64_t tag = (static_cast<std::uint64_t>(receiver) << kTagBits) | kClearToSendBit |
                            static_cast<std::uint64_t>(request.tag);
  OpContext* context = acquire_context(id, request.clear_posted, 0, true);
  const ssize_t ret =
      request.is_send
          ? fi_trecv(ep, nullptr, 0, nullptr, directed_recv ? request.address : FI_ADDR_UNSPEC, tag,
                     0, &context->provider_context)
          : fi_tsend(ep, nullptr, 0, nullptr,
                     peer_addresses[static_cast<std::size_t>(request.peer)], tag,
                     &context->provider_context);
  if (ret != 0) {
    release_context(context);
    if (ret == -FI_EAGAIN || ret == -FI_ENOMEM) return Posted::kProviderFull;
    check_fi(ret, request.is_send ? "fi_trecv" : "fi_tsend",
             fmt::format("{} (clear-to-send {} of {})", describe(request), request.clear_posted + 1,
                         request.windows));
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
void OfiTransport::State::drain(Backlog& backlog) {
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

void OfiTransport::State::record_error(RequestId id, std::string message) {
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

void OfiTransport::State::complete(const fi_cq_tagged_entry& entry) {
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
    record_error(id,
                 fmt::format("{}: chunk {} of {} carried {} of {} bytes: the message is shorter "
                             "than the receive buffer, which is only allowed when it fits in one "
                             "chunk of {} bytes",
                             describe(request), context->chunk + 1, request.chunks_total, entry.len,
                             context->length, chunk_size));
    return;
  }
  release_context(context);
  ++request.chunks_completed;
}

void OfiTransport::State::complete_with_error(const std::source_location& where) {
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
  record_error(id,
               fmt::format("{}, {}; {} ({} {} of {}){}",
                           fi_error_text(was_receive ? "fi_trecv" : "fi_tsend", -code, where), text,
                           describe(request), clear_to_send ? "clear-to-send" : "chunk", chunk + 1,
                           clear_to_send ? request.windows : request.chunks_total, detail));
}

// Reads completions and posts backlogged operations; true if anything
// completed. With FI_PROGRESS_MANUAL this is also what moves data.
bool OfiTransport::State::progress() {
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

}  // namespace collbench
