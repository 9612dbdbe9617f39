// The MPI library's datatypes and operations for the `mpi` algorithms; see
// library.h.
#include "mpi/library.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "algorithm_common.h"
#include "collbench/collectives/library.h"
#include "collbench/collectives/mpi_library.h"
#include "collbench/core/reduce.h"
#include "collbench/transport/mpi_transport.h"

namespace collbench::detail {
namespace {

template <DType kType, ReduceOp kOp>
void user_reduce(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  reduce_inplace(kType, kOp, inout, in, static_cast<std::size_t>(*len));
}

template <DType kType>
MPI_User_function* user_function(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      return user_reduce<kType, ReduceOp::sum>;
    case ReduceOp::min:
      return user_reduce<kType, ReduceOp::min>;
    case ReduceOp::max:
      return user_reduce<kType, ReduceOp::max>;
  }
  return nullptr;
}

}  // namespace

MpiLibraryCall::MpiLibraryCall(Transport& transport, const CollectiveSpec& spec,
                               std::string_view collective, const OmpiTunedAlgorithm* forced) {
  auto* mpi = dynamic_cast<MpiTransport*>(&transport.unwrapped());
  if (mpi == nullptr) {
    throw std::invalid_argument(fmt::format("{} algorithm 'mpi' needs the mpi transport, not '{}'",
                                            collective, transport.kind()));
  }
  comm_ = mpi->comm();
  if (spec.count > static_cast<std::size_t>(INT_MAX)) {
    throw std::invalid_argument(fmt::format(
        "{} algorithm 'mpi': {} elements exceed MPI's int count", collective, spec.count));
  }
  // Before any datatype or operation is made, which a throw would leak.
  const MpichCollective* mpich = find_mpich_tuned(collective);
  if (forced != nullptr && mpich != nullptr &&
      find_mpich_tuned_algorithm(*mpich, forced->row) == forced) {
    if (mpich->needs_equal_blocks && spec.count % static_cast<std::size_t>(mpi->size()) != 0) {
      throw std::invalid_argument(fmt::format(
          "{} algorithm '{}': {} elements do not divide into {} ranks ({} governs the "
          "equal-block call only)",
          collective, forced->row, spec.count, mpi->size(), mpich_algorithm_variable(*mpich)));
    }
    mpich_forced_ = mpich_forced_value(*mpich, *forced);
    mpich_collective_ = mpich;
  } else if (forced != nullptr) {
    const OmpiTunedCollective* library = find_ompi_tuned(collective);
    if (library == nullptr || find_ompi_tuned_algorithm(*library, forced->row) != forced) {
      throw std::invalid_argument(
          fmt::format("{} has no Open MPI algorithm '{}'", collective, forced->row));
    }
    if (library->needs_equal_blocks && spec.count % static_cast<std::size_t>(mpi->size()) != 0) {
      throw std::invalid_argument(fmt::format(
          "{} algorithm '{}': {} elements do not divide into {} ranks (coll_tuned_{}_algorithm "
          "governs the equal-block call only)",
          collective, forced->row, spec.count, mpi->size(), library->library));
    }
    owned_comm_ = forced_communicator(comm_, *library, *forced);
    comm_ = owned_comm_;
  }
  switch (spec.dtype) {
    case DType::f32:
      datatype_ = MPI_FLOAT;
      break;
    case DType::f64:
      datatype_ = MPI_DOUBLE;
      break;
    case DType::f16:
    case DType::bf16:
      check_mpi(MPI_Type_contiguous(2, MPI_BYTE, &owned_type_), "MPI_Type_contiguous");
      check_mpi(MPI_Type_commit(&owned_type_), "MPI_Type_commit");
      datatype_ = owned_type_;
      break;
  }
  if (spec.dtype == DType::f16 || spec.dtype == DType::bf16) {
    MPI_User_function* function = spec.dtype == DType::f16 ? user_function<DType::f16>(spec.op)
                                                           : user_function<DType::bf16>(spec.op);
    check_mpi(MPI_Op_create(function, /*commute=*/1, &owned_op_), "MPI_Op_create");
    op_ = owned_op_;
  } else {
    op_ = spec.op == ReduceOp::min ? MPI_MIN : spec.op == ReduceOp::max ? MPI_MAX : MPI_SUM;
  }
}

MpiLibraryCall::~MpiLibraryCall() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (owned_op_ != MPI_OP_NULL) MPI_Op_free(&owned_op_);
  if (owned_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&owned_type_);
  if (owned_comm_ != MPI_COMM_NULL) MPI_Comm_free(&owned_comm_);
}

namespace {

// MPI_T, initialized on first use and never finalized: Open MPI 4.1's
// MPI_T_finalize after MPI_Finalize crashes, and the process ends anyway.
// Empty when ready, else why not.
const std::string& mpi_t_failure() {
  static const std::string failure = [] {
    int provided = 0;
    const int rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    return rc == MPI_SUCCESS ? std::string() : fmt::format("MPI_T_init_thread failed ({})", rc);
  }();
  return failure;
}

// The control variable's index, or -1 when the library has none of that name.
int cvar_index(const std::string& name) {
  int index = -1;
  if (MPI_T_cvar_get_index(name.c_str(), &index) != MPI_SUCCESS) return -1;
  return index;
}

std::string algorithm_variable(const OmpiTunedCollective& collective) {
  return fmt::format("coll_tuned_{}_algorithm", collective.library);
}

// The name of the enumerator of `value` of the control variable at `index`;
// nullopt when it has none.
std::optional<std::string> enumerator_name(int index, int value) {
  char name[256];
  int name_length = sizeof name;
  char description[1024];
  int description_length = sizeof description;
  int verbosity = 0, binding = 0, scope = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  if (MPI_T_cvar_get_info(index, name, &name_length, &verbosity, &type, &enumtype, description,
                          &description_length, &binding, &scope) != MPI_SUCCESS ||
      enumtype == MPI_T_ENUM_NULL) {
    return std::nullopt;
  }
  int items = 0;
  char enum_name[256];
  int enum_name_length = sizeof enum_name;
  if (MPI_T_enum_get_info(enumtype, &items, enum_name, &enum_name_length) != MPI_SUCCESS) {
    return std::nullopt;
  }
  for (int item = 0; item < items; ++item) {
    int item_value = 0;
    char item_name[256];
    int item_name_length = sizeof item_name;
    if (MPI_T_enum_get_item(enumtype, item, &item_value, item_name, &item_name_length) ==
            MPI_SUCCESS &&
        item_value == value) {
      return std::string(item_name);
    }
  }
  return std::nullopt;
}

// A control variable without an object binding, held for reading and writing.
class ControlVariable {
 public:
  explicit ControlVariable(int index) {
    int count = 0;
    check_mpi(MPI_T_cvar_handle_alloc(index, nullptr, &handle_, &count), "MPI_T_cvar_handle_alloc");
  }
  ~ControlVariable() { MPI_T_cvar_handle_free(&handle_); }
  ControlVariable(const ControlVariable&) = delete;
  ControlVariable& operator=(const ControlVariable&) = delete;

  // Zero-filled wider than any integer or bool the library may write.
  long long read() const {
    long long value = 0;
    check_mpi(MPI_T_cvar_read(handle_, &value), "MPI_T_cvar_read");
    return value;
  }
  void write(int value) { check_mpi(MPI_T_cvar_write(handle_, &value), "MPI_T_cvar_write"); }

 private:
  MPI_T_cvar_handle handle_ = MPI_T_CVAR_HANDLE_NULL;
};

// MPICH's forced algorithms: per collective of its table, the value its
// variable had at launch (the row it forces) and a handle to write it with.
struct MpichLaunchValue {
  std::string name;  // as set in the environment; empty: not set
  int value = 0;     // the variable's integer for it
  int index = -1;    // the variable's MPI_T index; -1: the library has none
  std::unique_ptr<ControlVariable> variable;
};

// Whether every rank of MPI_COMM_WORLD shares one node: MPICH 4.0.2's smp
// algorithms, forced there, crash (a segmentation fault in the library,
// seen on allreduce with 2 ranks), as they need a communicator of node
// leaders. Decided with the launch values, collectively, right after MPI_Init.
bool& mpich_one_node() {
  static bool one_node = false;
  return one_node;
}

std::vector<MpichLaunchValue>& mpich_launch_values() {
  static std::vector<MpichLaunchValue> values = [] {
    std::vector<MpichLaunchValue> held(mpich_tuned_collectives().size());
    if (!mpi_t_failure().empty()) return held;
    for (std::size_t i = 0; i < held.size(); ++i) {
      const std::string variable = mpich_algorithm_variable(mpich_tuned_collectives()[i]);
      held[i].index = cvar_index(variable);
      if (held[i].index < 0) continue;
      const char* launched = std::getenv(variable.c_str());
      held[i].variable = std::make_unique<ControlVariable>(held[i].index);
      held[i].value = static_cast<int>(held[i].variable->read());
      if (launched == nullptr || std::string_view(launched).empty()) continue;
      held[i].name = launched;
      // Auto is MPICH's first value, 0: every call but a forced row's.
      held[i].variable->write(0);
    }
    // After the variables are back on auto: the split runs collectives.
    if (cvar_index(mpich_algorithm_variable(mpich_tuned_collectives().front())) >= 0) {
      MPI_Comm node = MPI_COMM_NULL;
      int world = 0, local = 0;
      MPI_Comm_size(MPI_COMM_WORLD, &world);
      check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                "MPI_Comm_split_type");
      MPI_Comm_size(node, &local);
      MPI_Comm_free(&node);
      mpich_one_node() = local == world;
    }
    return held;
  }();
  return values;
}

MpichLaunchValue& mpich_launch_value(const MpichCollective& collective) {
  return mpich_launch_values()[static_cast<std::size_t>(&collective -
                                                        mpich_tuned_collectives().data())];
}

}  // namespace

void hold_mpich_forced_algorithms() { mpich_launch_values(); }

std::string mpich_tuned_probe(const MpichCollective& collective,
                              const OmpiTunedAlgorithm& algorithm, bool offered_only) {
  if (!mpi_t_failure().empty()) return mpi_t_failure();
  const std::string variable = mpich_algorithm_variable(collective);
  const MpichLaunchValue& launch = mpich_launch_value(collective);
  if (launch.index < 0) {
    return fmt::format("the MPI library has no control variable {} (MPICH's)", variable);
  }
  if (offered_only) return {};
  const std::string_view name = mpich_algorithm_name(algorithm);
  if (name == "smp" && mpich_one_node()) {
    return "MPICH 4.0.2's smp algorithms need ranks on more than one node (forced on one, the "
           "library crashes)";
  }
  if (launch.name != name) {
    return fmt::format(
        "MPICH reads {} at launch only, for every communicator: launch once per algorithm with "
        "{}={} in every rank's environment (this launch: {})",
        variable, variable, name, launch.name.empty() ? "not set" : launch.name);
  }
  return {};
}

int mpich_forced_value(const MpichCollective& collective, const OmpiTunedAlgorithm& algorithm) {
  if (const std::string reason = mpich_tuned_probe(collective, algorithm, false); !reason.empty()) {
    throw std::invalid_argument(
        fmt::format("{} algorithm '{}': {}", collective.collective, algorithm.row, reason));
  }
  return mpich_launch_value(collective).value;
}

MpiLibraryCall::ForcedScope::ForcedScope(const MpiLibraryCall& call) : call_(call) {
  if (call_.mpich_forced_ < 0) return;
  mpich_launch_value(*call_.mpich_collective_).variable->write(call_.mpich_forced_);
}

MpiLibraryCall::ForcedScope::~ForcedScope() {
  if (call_.mpich_forced_ < 0) return;
  mpich_launch_value(*call_.mpich_collective_).variable->write(0);
}

std::string ompi_tuned_probe(const OmpiTunedCollective& collective,
                             const OmpiTunedAlgorithm& algorithm, bool offered_only) {
  if (!mpi_t_failure().empty()) return mpi_t_failure();
  const std::string variable = algorithm_variable(collective);
  const int index = cvar_index(variable);
  if (index < 0) {
    return fmt::format(
        "the MPI library has no control variable {} (Open MPI's coll tuned component, 4.1 or "
        "later, not excluded with --mca coll)",
        variable);
  }
  const std::string_view expected = algorithm.row.substr(kOmpiRowPrefix.size());
  std::optional<std::string> name = enumerator_name(index, algorithm.id);
  if (!name) {
    return fmt::format("the MPI library's {} has no algorithm {} ({})", variable, algorithm.id,
                       expected);
  }
  std::replace(name->begin(), name->end(), '-', '_');
  if (*name != expected) {
    return fmt::format("the MPI library's {} {} is '{}', not '{}' (the ids of Open MPI 4.1)",
                       variable, algorithm.id, *name, expected);
  }
  if (offered_only) return {};
  const int dynamic = cvar_index("coll_tuned_use_dynamic_rules");
  if (dynamic < 0 || ControlVariable(dynamic).read() == 0) {
    return fmt::format(
        "Open MPI reads {} only with coll_tuned_use_dynamic_rules set at launch "
        "(OMPI_MCA_coll_tuned_use_dynamic_rules=1 in every rank's environment, or mpirun --mca "
        "coll_tuned_use_dynamic_rules 1)",
        variable);
  }
  return {};
}

MPI_Comm forced_communicator(MPI_Comm base, const OmpiTunedCollective& collective,
                             const OmpiTunedAlgorithm& algorithm) {
  if (const std::string reason = ompi_tuned_probe(collective, algorithm, false); !reason.empty()) {
    throw std::invalid_argument(
        fmt::format("{} algorithm '{}': {}", collective.collective, algorithm.row, reason));
  }
  ControlVariable variable(cvar_index(algorithm_variable(collective)));
  const auto before = static_cast<int>(variable.read());
  variable.write(algorithm.id);
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_dup(base, &comm);
  variable.write(before);
  check_mpi(rc, "MPI_Comm_dup", "{} algorithm '{}'", collective.collective, algorithm.row);
  return comm;
}

}  // namespace collbench::detail

namespace collbench {

void use_mpi_library_collectives() {
  set_library_build("allreduce", detail::build_mpi_allreduce);
  set_library_build("reduce_scatter", detail::build_mpi_reduce_scatter);
  set_library_build("allgather", detail::build_mpi_allgather);
  set_library_build("broadcast", detail::build_mpi_broadcast);
  set_library_build("reduce", detail::build_mpi_reduce);
  set_library_build("alltoall", detail::build_mpi_alltoall);
  set_library_build("alltoallv", detail::build_mpi_alltoallv);
  set_ompi_tuned_probe(detail::ompi_tuned_probe);
  set_mpich_tuned_probe(detail::mpich_tuned_probe);
}

void hold_mpich_forced_algorithms() { detail::hold_mpich_forced_algorithms(); }

}  // namespace collbench
