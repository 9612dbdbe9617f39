// The ring reduce-scatter and allgather phases, segmented and pipelined
// (phases.h).
#include <algorithm>
#include <limits>
#include <utility>

#include "phases.h"

namespace collbench::detail {
std::vector<RingStep> ring_reduce_scatter_steps(int ranks, int final_block) {
  std::vector<RingStep> steps;
  for (int step = 0; step + 1 < ranks; ++step) {
    steps.push_back({ring_index(final_block + ranks - 2 - step, ranks), true});
  }
  return steps;
}

std::vector<RingStep> ring_allgather_steps(int ranks, int own_block) {
  std::vector<RingStep> steps;
  for (int step = 0; step + 1 < ranks; ++step) {
    steps.push_back({ring_index(own_block - 1 - step, ranks), false});
  }
  return steps;
}

RingRelay::RingRelay(CollectiveBase& algorithm, RingBuffers& buffers, std::vector<RingStep> steps,
                     std::size_t segment_bytes, int reduce_tag, int forward_tag, int sum_rotation)
    : algorithm_(algorithm),
      buffers_(buffers),
      steps_(std::move(steps)),
      left_(algorithm.rank_at(-1)),
      right_(algorithm.rank_at(1)),
      reduce_tag_(reduce_tag),
      forward_tag_(forward_tag),
      sum_rotation_(static_cast<std::size_t>(sum_rotation)) {
  // Segments pipeline the work on an arrival: forwarding it, or reducing it
  // while the next arrives. The one step of a relay that does neither (an
  // allgather of 2 ranks) travels whole: in segments it is only more
  // messages (allgather of 4 MiB at 2 ranks over shared memory: 13% slower
  // in 512 KiB segments; docs/performance.md).
  const bool pipelines = steps_.size() > 1 || (!steps_.empty() && steps_[0].reduces);
  segment_elements_ = pipelines ? segment_elements(segment_bytes, algorithm.element_bytes_)
                                : std::numeric_limits<std::size_t>::max();
  const std::size_t count = algorithm.spec_.count;
  const int ranks = algorithm.ranks_;
  for (const RingStep& step : steps_) {
    const Block incoming = partition(count, ranks, step.block);
    planned_.push_back({incoming, segments_in(incoming.count), 0});
  }
  for (std::size_t step = steps_.size(); step-- > 0;) {
    const bool phase_goes_on =
        step + 1 < steps_.size() && steps_[step + 1].reduces == steps_[step].reduces;
    planned_[step].phase_end = phase_goes_on ? planned_[step + 1].phase_end : step + 1;
  }
  if (!steps_.empty()) {
    first_outgoing_ = partition(count, ranks, ring_index(steps_[0].block + 1, ranks));
    first_segments_ = segments_in(first_outgoing_.count);
  }
  const std::size_t per_step = segments_in(partition(count, ranks, 0).count);
  forwards_end_.assign(steps_.size(), 0);
  for (auto& requests : step_receives_) requests.reserve(per_step);
  phase_receives_.reserve(steps_.size() * per_step);
  // Both: finish() swaps them at a phase boundary; and the last step's
  // receives join them.
  for (auto* sends : {&sends_, &handoff_sends_}) sends->reserve((steps_.size() + 2) * per_step);
}

std::size_t RingRelay::segments_in(std::size_t elements) const {
  return segment_count(elements, segment_elements_);
}

Block RingRelay::segment(Block within, std::size_t k) const {
  const std::size_t begin = k * segment_elements_;
  return {within.offset + begin, std::min(segment_elements_, within.count - begin)};
}

int RingRelay::tag_of(std::size_t step) const {
  return steps_[step].reduces ? reduce_tag_ : forward_tag_;
}

void RingRelay::post_receives(std::size_t step, std::vector<RequestId>& requests) {
  const Block incoming = planned_[step].incoming;
  const int index = static_cast<int>(step);
  for (std::size_t k = 0; k < planned_[step].segments; ++k) {
    const Block part = segment(incoming, k);
    requests.push_back(algorithm_.recv(buffers_.ring_arrival(index, incoming, part), part.count,
                                       left_, tag_of(step)));
  }
}

void RingRelay::begin_phase(std::size_t begin) {
  if (steps_[begin].reduces) {
    post_receives(begin, step_receives_[begin % 2]);
  } else {
    for (std::size_t step = begin; step < planned_[begin].phase_end; ++step) {
      post_receives(step, phase_receives_);
    }
  }
}

void RingRelay::start() {
  if (steps_.empty()) return;
  begin_phase(0);
  for (std::size_t k = 0; k < first_segments_; ++k) {
    const Block part = segment(first_outgoing_, k);
    sends_.push_back(algorithm_.send(buffers_.ring_source(part), part.count, right_, tag_of(0)));
  }
}

void RingRelay::forward(std::size_t step, const std::byte* data, Block part,
                        std::size_t phase_end) {
  if (step + 1 == steps_.size()) return;
  const RequestId id = algorithm_.send(data, part.count, right_, tag_of(step + 1));
  (step + 1 == phase_end ? handoff_sends_ : sends_).push_back(id);
}

void RingRelay::wait_forwards_of(std::size_t step) {
  const std::size_t end = forwards_end_[step];
  if (end <= sends_waited_) return;
  algorithm_.transport_.wait_all(
      std::span<const RequestId>(sends_.data() + sends_waited_, end - sends_waited_));
  sends_waited_ = end;
}

void RingRelay::wait_sends() {
  if (sends_waited_ < sends_.size()) {
    algorithm_.transport_.wait_all(
        std::span<const RequestId>(sends_.data() + sends_waited_, sends_.size() - sends_waited_));
  }
  sends_.clear();
  sends_waited_ = 0;
}

void RingRelay::reduce_phase(std::size_t begin, std::size_t end) {
  for (std::size_t step = begin; step < end; ++step) {
    if (step + 1 < end) {
      // Step step+1 arrives where step step+1−k's sum was forwarded from.
      if (sum_rotation_ > 0 && step + 1 >= begin + sum_rotation_) {
        wait_forwards_of(step + 1 - sum_rotation_);
      }
      post_receives(step + 1, step_receives_[(step + 1) % 2]);
    }
    const Block incoming = planned_[step].incoming;
    const int index = static_cast<int>(step);
    std::vector<RequestId>& requests = step_receives_[step % 2];
    const bool last_of_all = step + 1 == steps_.size();
    for (std::size_t k = 0; k < requests.size(); ++k) {
      if (last_of_all && k + 1 == requests.size()) {
        // The call's last receive: waited for with the sends, in one wait.
        sends_.push_back(requests[k]);
        wait_sends();
      } else {
        algorithm_.transport_.wait(requests[k]);
      }
      const Block part = segment(incoming, k);
      std::byte* sum = buffers_.ring_sum(index, incoming, part);
      algorithm_.reduce_ordered(sum, algorithm_.in_at(part.offset),
                                buffers_.ring_arrival(index, incoming, part), part.count);
      forward(step, sum, part, end);
    }
    requests.clear();
    forwards_end_[step] = sends_.size();
  }
}

void RingRelay::forward_phase(std::size_t begin, std::size_t end) {
  std::size_t next_receive = 0;
  for (std::size_t step = begin; step < end; ++step) {
    if (step + 1 == steps_.size()) {
      // The last step forwards nothing: its receives are waited for with
      // the sends, in finish()'s one wait.
      sends_.insert(sends_.end(), phase_receives_.begin() + next_receive, phase_receives_.end());
      break;
    }
    const Block incoming = planned_[step].incoming;
    const int index = static_cast<int>(step);
    for (std::size_t k = 0; k < planned_[step].segments; ++k) {
      algorithm_.transport_.wait(phase_receives_[next_receive++]);
      const Block part = segment(incoming, k);
      forward(step, buffers_.ring_arrival(index, incoming, part), part, end);
    }
  }
  phase_receives_.clear();
}

void RingRelay::finish() {
  for (std::size_t begin = 0; begin < steps_.size();) {
    const std::size_t end = planned_[begin].phase_end;
    if (steps_[begin].reduces) {
      reduce_phase(begin, end);
    } else {
      forward_phase(begin, end);
    }
    // What this phase forwarded may be overwritten by the next one: MPI's
    // rule is that a buffer of a pending send is not written. No test can
    // show this wait missing: the allgather's data depends on every
    // reduce-scatter send having arrived (a mutant posting the receives
    // first passes every suite). The handoff carries the next phase's first
    // step.
    wait_sends();
    std::swap(sends_, handoff_sends_);
    if (end < steps_.size()) begin_phase(end);
    begin = end;
  }
  wait_sends();
}

}  // namespace collbench::detail
