// Workloads: the collective messages that one training iteration of a
// catalog model sends, as `collbench --workload SPEC` names them.
//
// Data parallelism, every gradient allreduced (in the caller's element size,
// the run's --dtype):
//   MODEL               every gradient tensor as its own allreduce
//   MODEL:total         the whole gradient as one message
//   MODEL:ddp[=CAP]     PyTorch DDP buckets (first bucket 1 MiB, then CAP,
//                       default 25 MiB)
//   MODEL:fusion[=CAP]  Horovod tensor fusion into buffers of CAP (128 MiB)
//   deepbench           the 7 DeepBench all-reduce sizes, in elements
// Sharded data parallelism, tensor and expert parallelism, in the precision of
// mixed-precision training, bf16 unless the spec ends in :f32 (whatever
// element size the caller passes; see fsdp_messages below):
//   MODEL:fsdp[=UNIT]   PyTorch FSDP FULL_SHARD / ZeRO-3: per wrapped unit an
//                       allgather of its parameters in forward, then in
//                       backward an allgather again and a reduce_scatter of
//                       its gradients. UNIT: block (default; one transformer
//                       block or ResNet stage each, the rest the root) or
//                       model (the whole model one unit)
//   MODEL:zero2[=ELEMENTS]  DeepSpeed ZeRO-2: gradient reduce_scatters in
//                       buckets of ELEMENTS (reduce_bucket_size, 500000000),
//                       then one allgather of the updated parameters
//   MODEL:tp=K[:batch=B][:seq=S]  Megatron tensor parallelism of degree K:
//                       per transformer layer two allreduces of B x S x
//                       hidden elements forward, two backward (B 1, S the
//                       model's sequence); transformers only
//   MODEL:moe[:batch=B][:seq=S][:skew=Z]  expert parallelism: per MoE layer
//                       two alltoallvs forward (dispatch of the tokens to
//                       their experts' ranks, combine of the outputs back)
//                       and two backward, each of B x S x top-k x hidden
//                       elements, the tokens routed to the ranks in Zipf
//                       shares of exponent Z (0, the default: uniform);
//                       mixture-of-experts models only
// CAP is a byte size as sizes.h parses it ("50MiB", "32MB", "1048576").
// Message bytes are elements x the element size, so a CAP holds twice as
// many f16 elements as f32 ones (ELEMENTS counts elements, as DeepSpeed's
// configuration does).
//
// Every message says which collective carries it, by the collective table's
// name (collbench/collectives/collective.h): allreduce, reduce_scatter,
// allgather or alltoallv. Sizes follow that table's convention, the whole
// vector: an allgather of a unit's parameters is the unit's full size, each
// rank holding 1/p of it; a reduce_scatter reduces the full gradient and
// leaves each rank 1/p; an alltoallv is what one rank sends in all (its
// tokens' copies, before they are split over the ranks).
//
// A Workload carries two views of the same messages:
//   sequence  one iteration's messages in the order they are issued, each
//             with its collective, for the per-model exchange benchmark;
//   distinct  per collective (in the table's order), one message per
//             distinct byte size, ascending, with the number of times it
//             occurs per iteration, for per-size benchmarks (an alltoallv
//             row stands for the dispatches and combines of its size, and
//             carries its first member's direction).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/catalog/catalog.h"

namespace collbench {

enum class WorkloadKind { tensors, total, ddp, fusion, deepbench, fsdp, zero2, tp, moe };
std::string_view to_string(WorkloadKind kind);

// torch.distributed._DEFAULT_FIRST_BUCKET_BYTES and DDP's bucket_cap_mb=25.
inline constexpr std::uint64_t kDdpFirstBucketBytes = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kDdpBucketBytes = std::uint64_t{25} << 20;
// Horovod's default HOROVOD_FUSION_THRESHOLD: 128 MiB since v0.21.0 (its
// CHANGELOG.md, v0.21.0 "Changed": "Changed default cycle time from 5ms to
// 1ms and fusion threshold from 64MB to 128MB", horovod/horovod#2468; 64 MiB
// before). Its MB are MiB: horovod/common/operations.cc sets
// SetTensorFusionThresholdBytes(128 * 1024 * 1024).
inline constexpr std::uint64_t kHorovodFusionBytes = std::uint64_t{128} << 20;

// DeepSpeed's zero_optimization defaults (deepspeed/runtime/zero/config.py,
// DeepSpeedZeroConfig: reduce_bucket_size = pp_int(5e8),
// allgather_bucket_size = pp_int(5e8); docs/config-json: "Number of
// elements reduced/allreduced at a time", "... allgathered at a time"),
// both counted in elements.
inline constexpr std::uint64_t kZeroReduceBucketElements = 500'000'000;
inline constexpr std::uint64_t kZeroAllgatherBucketElements = 500'000'000;
// Mixed-precision training's communication dtype for fsdp, zero2, tp and moe
// (bf16), and the :f32 option's.
inline constexpr std::size_t kBf16Bytes = 2;
inline constexpr std::size_t kF32Bytes = 4;

// The collectives of workload messages, as collective.h's table names them,
// in its order.
inline constexpr std::string_view kAllreduce = "allreduce";
inline constexpr std::string_view kReduceScatter = "reduce_scatter";
inline constexpr std::string_view kAllgather = "allgather";
inline constexpr std::string_view kAlltoallv = "alltoallv";
inline constexpr std::array<std::string_view, 4> kWorkloadCollectives = {kAllreduce, kReduceScatter,
                                                                         kAllgather, kAlltoallv};

// The largest routing skew (Zipf exponent) moe accepts. Beyond it the
// routing is all but one hot rank whatever the rank count: with shares
// proportional to 1/k^4 the hottest rank's is at least 1/zeta(4) =
// 90/pi^4 = 92%.
inline constexpr double kMaxRoutingSkew = 4;

// DeepBench's all-reduce sizes (baidu-research/DeepBench, all_reduce
// kernels), counted in floats.
inline constexpr std::array<std::uint64_t, 7> kDeepBenchAllreduceElements = {
    100000, 3097600, 4194304, 6553600, 16777217, 38360000, 64500000};

// A run of consecutive tensors of Model::tensors_backprop_order reduced as
// one message. Tensors are never split across buckets.
struct Bucket {
  std::size_t first_tensor = 0;
  std::size_t tensor_count = 0;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  std::uint64_t cap_bytes = 0;  // the cap in force while this bucket filled
};

// PyTorch DDP's bucket assignment after its first-iteration rebuild
// (Reducer::rebuild_buckets -> compute_bucket_assignment_by_size), with the
// tensors in gradient-ready order: a tensor is appended to the open bucket,
// and the bucket closes as soon as its size reaches the cap (>=). The first
// bucket's cap is `first_cap_bytes`, every later one `cap_bytes`. So, as in
// torch, a closed bucket may pass its cap by less than its last tensor, and
// a tensor larger than the cap closes the bucket it joins.
// Throws std::invalid_argument for a zero element size or cap.
std::vector<Bucket> ddp_buckets(const Model& model, std::size_t element_bytes,
                                std::uint64_t cap_bytes = kDdpBucketBytes,
                                std::uint64_t first_cap_bytes = kDdpFirstBucketBytes);

// Horovod tensor fusion (Controller::FuseResponses) with every gradient
// ready in backprop order: tensors fill a buffer of `cap_bytes` in order; a
// tensor that would overflow it starts the next buffer, and a tensor larger
// than the cap travels alone. Per-cycle readiness and alignment padding are
// not modelled. Throws std::invalid_argument for a zero element size or cap.
std::vector<Bucket> fusion_buckets(const Model& model, std::size_t element_bytes,
                                   std::uint64_t cap_bytes = kHorovodFusionBytes);

struct Message {
  std::string collective;  // "allreduce", "reduce_scatter", "allgather" or "alltoallv"
  // Tensor name, "bucket N", "all N tensors", "N elements", or for fsdp
  // "UNIT forward" / "UNIT backward" / "UNIT gradients", for tp "layer L
  // attention forward" and the like, for moe "layer L dispatch forward",
  // "layer L combine backward" and the like.
  std::string item;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  int multiplicity = 1;  // occurrences per iteration (1 in `sequence`)
  // alltoallv messages only (moe):
  // Zipf exponent of the destination ranks' share of the tokens (0 =
  // uniform); the collective defines the shares.
  double routing_skew = 0;
  // false: tokens go from their rank to the experts' ranks (dispatch, every
  // rank sends `elements`); true: the transpose (expert outputs come back:
  // combine, every rank receives `elements`).
  bool routing_returns = false;
};

// What FSDP wraps as one unit (MODEL:fsdp=UNIT).
enum class FsdpUnit { block, model };
std::string_view to_string(FsdpUnit unit);

// A wrapped unit's flat parameter: its name ("" for the root) and size.
struct FlatUnit {
  std::string name;
  std::uint64_t elements = 0;
  // Its messages' item prefix: the name, or "root".
  std::string label() const { return name.empty() ? std::string("root") : name; }
};
// The flat parameters fsdp_messages gathers: the root first (0 elements
// when every tensor is in a unit), then the units in forward (registration)
// order.
std::vector<FlatUnit> fsdp_units(const Model& model, FsdpUnit unit);

// PyTorch FSDP (FULL_SHARD) or ZeRO-3, one iteration, with each unit's
// parameters gathered as one flat parameter (FSDP's FlatParameter). Units
// are the model's (ParamTensor::unit: one transformer block or residual
// stage each; with FsdpUnit::model none), and the root unit holds every
// other tensor (embeddings, head, final norm, stem):
//   forward   allgather of the root, then of each unit, in forward order;
//   backward  per unit, last first: allgather of its parameters again (they
//             were freed after forward), then reduce_scatter of its
//             gradients; last, reduce_scatter of the root's gradients.
// The root is not gathered again for backward: FSDP keeps the root's
// parameters unsharded after forward since backward needs them at once
// (torch/distributed/fsdp/_runtime_utils.py, _post_forward_reshard:
// "free_unsharded_flat_param = not state._is_root and ..."; FSDP2's
// fully_shard: "The root FSDP state has its value specially set to False
// [reshard_after_forward] as a heuristic since its parameters would
// typically be immediately all-gathered for backward"). Prefetching
// (backward_prefetch) moves when a gather is issued, not its size, and is
// not modelled; nor is the padding that makes a flat parameter divisible by
// the rank count. Throws std::invalid_argument for a zero element size.
std::vector<Message> fsdp_messages(const Model& model, FsdpUnit unit, std::size_t element_bytes);

// DeepSpeed ZeRO-2, one iteration: gradients reduce_scatter in buckets
// filled in backprop order (stage_1_and_2.py,
// reduce_independent_p_g_buckets_and_remove_grads: a gradient that would
// take the bucket past reduce_bucket_size elements first flushes it, so a
// tensor larger than the bucket travels alone; as fusion_buckets with the
// cap in elements), then the optimizer's updated parameters return by one
// allgather of all of them (all_gather_dp_groups, which calls
// all_gather_into_tensor once per parameter group when torch has it; its
// allgather_bucket_size chunks only the fallback path). One parameter
// group. DeepSpeed issues a bucket's reduce_scatter as reduces of each
// rank's partition; it is counted as the reduce_scatter it amounts to.
// Throws std::invalid_argument for a zero element size or bucket.
std::vector<Message> zero2_messages(const Model& model, std::uint64_t bucket_elements,
                                    std::size_t element_bytes);
// zero2_messages' gradient buckets, in backprop order.
std::vector<Bucket> zero2_buckets(const Model& model, std::uint64_t bucket_elements,
                                  std::size_t element_bytes);

// Megatron-LM tensor parallelism (Shoeybi et al. 2019, "Megatron-LM", §3,
// Fig. 4): in each transformer layer the attention block and the MLP each
// end in a row-parallel linear layer whose partial outputs are allreduced
// (the g operator) in forward, and each begins with a column-parallel one
// whose input gradients are allreduced (its conjugate f) in backward: per
// layer two allreduces forward (attention, then MLP) and two backward
// (MLP, then attention, last layer first), each of batch x sequence x
// hidden elements. The degree does not change their size; it must divide
// the attention and key/value heads (Megatron's requirement), and be at
// least 2 (degree 1 exchanges nothing). The embedding's and the loss's
// allreduces are not counted. Throws std::invalid_argument for a model
// that is not a transformer, a bad degree, batch or sequence.
std::vector<Message> tensor_parallel_messages(const Model& model, std::int64_t degree,
                                              std::uint64_t batch, std::uint64_t sequence,
                                              std::size_t element_bytes);

// Expert parallelism of a mixture-of-experts model, one iteration, the
// experts of every MoE layer spread over the ranks and each rank holding
// batch x sequence tokens (GShard, Lepikhin et al. 2020, §2: the
// position-wise MoE layer, its experts sharded over the devices, each
// token dispatched to its top-2 experts and their outputs combined back;
// DeepSpeed-MoE, deepspeed/moe/sharded_moe.py MOELayer: _AllToAll
// of the dispatched input to the experts' ranks, then of the expert output
// back; Megatron-Core's MoEAlltoAllTokenDispatcher,
// megatron/core/transformer/moe/token_dispatcher.py: the same two
// all-to-alls with per-rank input and output splits, an alltoallv). Every
// transformer layer of a model with experts is an MoE layer (Mixtral's
// are). Per layer in forward an alltoallv dispatching the tokens
// (routing_returns false), then one bringing the expert outputs back
// (routing_returns true); in backward, last layer first, the gradient of
// the combine (the same direction as a dispatch, routing_returns false),
// then the gradient of the dispatch (routing_returns true): an all-to-all's
// gradient is the transposed all-to-all. Each message is batch x sequence x
// experts_per_token x hidden elements: every token goes to its top-k
// experts, each copy `hidden` elements. Which rank receives how many is
// `skew`'s Zipf shares, defined by the alltoallv collective. Not modelled:
// the capacity factor and token dropping (no capacity limit: every routed
// copy travels), the router's own gradient, and any data-parallel or
// tensor-parallel exchange beside the experts'. Throws
// std::invalid_argument for a model without experts, a zero batch,
// sequence or element size, a size that overflows 64 bits, or a skew that
// is negative, not finite or above kMaxRoutingSkew.
std::vector<Message> moe_messages(const Model& model, std::uint64_t batch, std::uint64_t sequence,
                                  double skew, std::size_t element_bytes);

struct Workload {
  std::string spec;   // canonical form, e.g. "resnet50:ddp=25MiB"
  std::string model;  // empty for deepbench
  WorkloadKind kind = WorkloadKind::tensors;
  std::uint64_t cap_bytes = 0;           // ddp and fusion only
  std::uint64_t bucket_elements = 0;     // zero2 only
  FsdpUnit fsdp_unit = FsdpUnit::block;  // fsdp only
  std::int64_t tensor_parallel = 0;      // tp only: the degree K
  std::uint64_t batch = 0;               // tp and moe only
  std::uint64_t sequence_length = 0;     // tp and moe only
  double routing_skew = 0;               // moe only
  std::size_t element_bytes = 0;         // of every message (fsdp, zero2, tp, moe: bf16 2 or f32 4)
  std::vector<Message> sequence;
  std::vector<Message> distinct;
};

// Throws std::invalid_argument quoting `spec` and saying what is accepted:
// unknown model (with the list of known names), unknown kind, a cap where
// none is taken, an empty or invalid cap, a zero element size, an unknown
// fsdp unit or ':' option, tp on a model that is not a transformer or with
// a bad degree, batch or sequence, moe on a model without experts or with a
// bad batch, sequence or skew. `element_bytes` is the element size of
// the kinds that take the caller's (see the file comment).
Workload parse_workload(std::string_view spec, std::size_t element_bytes);
// Several specs separated by commas, e.g. "resnet50:ddp,llama2_7b:fsdp".
std::vector<Workload> parse_workloads(std::string_view specs, std::size_t element_bytes);
// The grammar above as help text for command-line tools.
std::string workload_syntax();

}  // namespace collbench
