// Provider selection and the fabric's resources: fi_getinfo with the hints
// this transport needs, then fabric, domain, completion queue, address
// vector and endpoint, opened and closed in fabtests' order; and the table
// of providers for --list-providers.
#include <rdma/fabric.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <set>

#include "ofi_state.h"

namespace collbench {
namespace {

// The API version asked of fi_getinfo: the oldest whose semantics this file
// is written for (domain_attr->mr_mode bits, FI_CONTEXT2).
constexpr std::uint32_t kApiVersion = FI_VERSION(1, 9);

std::string_view file_name(const std::source_location& where) {
  const std::string_view path = where.file_name();
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

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

}  // namespace

// fabtests' FT_PRINTERR format: "fi_call(): file:line, ret=N (fi_strerror)".
std::string fi_error_text(const char* call, long ret, const std::source_location& where) {
  return fmt::format("{}(): {}:{}, ret={} ({})", call, file_name(where), where.line(), ret,
                     fi_strerror(static_cast<int>(-ret)));
}

void check_fi(long ret, const char* call, std::string_view context,
              const std::source_location& where) {
  if (ret >= 0) return;
  throw std::runtime_error(
      fmt::format("{}{}{}", fi_error_text(call, ret, where), context.empty() ? "" : ": ", context));
}

OfiTransport::State::~State() { close_all(); }

void OfiTransport::State::close_all() {
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

void OfiTransport::State::open(const std::string& provider_name) {
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

std::vector<char> OfiTransport::State::endpoint_name() const {
  std::size_t length = 0;
  int ret = fi_getname(&ep->fid, nullptr, &length);
  if (ret != -FI_ETOOSMALL) check_fi(ret, "fi_getname", "querying the name's length");
  std::vector<char> name(length);
  check_fi(fi_getname(&ep->fid, name.data(), &length), "fi_getname");
  name.resize(length);
  return name;
}

void OfiTransport::State::insert_peers(const std::vector<char>& names, std::size_t stride) {
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
