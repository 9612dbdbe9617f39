#!/usr/bin/env bash
# netsim.sh: an emulated cluster on one machine. Each host is a network
# namespace with one veth port into a bridge; the bridge lives in a namespace
# of its own, so nothing is added to the machine's own network namespace.
# Each host's link is shaped with tc tbf to RATE in both directions: on the
# host's side of the veth (what it sends) and on the bridge's side (what it
# receives), so it behaves like a full-duplex NIC port.
#
# Usage:
#   netsim.sh up N [--rate RATE] [--slow HOST:RATE]... [--id ID] [--subnet A.B.C]
#                  [--burst BYTES] [--queue MS] [--owner PID]
#       Creates hosts h0..h(N-1) (2 <= N <= 64) at A.B.C.1..N (default subnet 10.251.0,
#       a /24), every link at RATE (default 200mbit) except the --slow ones. RATE is a tc
#       rate: a number with bit, kbit, mbit or gbit (bits/s; k = 1000). HOST is hK or K.
#       Prints the cluster id (default: a fresh random one) as the last line of stdout.
#       --owner PID: the process the cluster belongs to (see down --stale).
#   netsim.sh down ID... | --all | --stale [PREFIX]
#       Stops what still runs in the cluster's namespaces and removes everything `up`
#       created for it (namespaces, veths, bridge, /etc/netns/<ns>, state). --all: every
#       netsim cluster on this machine; --stale: those whose --owner process is gone (and
#       whose id starts with PREFIX), e.g. left by a test that was killed.
#   netsim.sh mpirun [--id ID] [--ppn K] [--] MPIRUN_ARGS...
#       Runs `mpirun MPIRUN_ARGS` from inside h0's namespace with a hostfile of the hosts
#       (K slots each, default 1), a launch agent that starts orted inside each host's
#       namespace (with its own hostname), the TCP BTL and OOB restricted to the test
#       subnet, pml ob1, the TCP BTL tuned for slow links (see TCP_BTL_FLAGS),
#       mpi_yield_when_idle and --oversubscribe. An --mca NAME in MPIRUN_ARGS replaces
#       the default for NAME (mpirun refuses a parameter given twice).
#   netsim.sh exec [--id ID] HOST CMD [ARGS...]
#       Runs a command inside a host's namespace, with the host's hostname.
#   netsim.sh measure [--id ID] SRC DST [BYTES]
#       Timed TCP transfer of BYTES (default 16MiB worth: 16777216) from SRC to DST;
#       prints the payload rate in Mbit/s and the rate the shaping should give.
#   netsim.sh show [ID]     The cluster's hosts, addresses, rates and qdiscs.
#   netsim.sh list          Every netsim cluster on this machine.
#   netsim.sh agent ...     (internal) the plm_rsh_agent mpirun calls.
#
# ID defaults to $NETSIM_ID, else to the only cluster there is. Needs root (exit 2
# otherwise). Bad arguments exit 2 with what is accepted. Every option once (a second
# value is refused, not silently preferred), but --slow: once per host.
#
# What tbf counts: the length of each frame as the kernel queues it, i.e. the L2 frame
# without preamble, start delimiter, FCS and inter-frame gap (a TSO/GSO super-packet
# counts as its segments, headers included). A full TCP segment with timestamps at
# MTU 1500 carries 1448 B of payload in 1514 B, so a link of RATE gives at most
# RATE x 1448/1514 = 95.64% of RATE as TCP payload (a real Ethernet port, which also
# sends 24 B of preamble, FCS and gap per frame, gives 1448/1538 = 94.15%). The ACKs
# of the opposite direction share a link with the data a host sends.
set -euo pipefail

readonly STATE_ROOT=/run/collbench-netsim
readonly PAYLOAD_PER_FRAME=1448 # TCP payload of a full segment (MTU 1500, timestamps)
readonly FRAME_BYTES=1514       # what tbf counts for it: 14 + 20 + 32 + 1448
script_path=$(readlink -f "${BASH_SOURCE[0]}")
readonly script_path

die() {
  echo "netsim.sh: $*" >&2
  exit 2
}
fail() {
  echo "netsim.sh: $*" >&2
  exit 1
}
usage() { sed -n '2,/^set -euo/p' "$script_path" | sed '$d' | sed 's/^# \{0,1\}//'; }
# need_value "$@" MESSAGE: the option in $1 must have a non-empty value in $2,
# its first (of a repeated option one value would be dropped): the caller's
# local array `options_given` holds the values seen. Only --slow adds up.
need_value() {
  (($# >= 3)) && [[ -n $2 ]] || die "${!#}"
  [[ $1 == --slow || -z ${options_given["$1"]+set} ]] ||
    die "$1 given twice ('${options_given["$1"]}' and '$2'); give it once"
  options_given["$1"]=$2
}

need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    die "needs root (it creates network namespaces and tc qdiscs); run it as root or with sudo"
  fi
  command -v ip >/dev/null || die "needs 'ip' and 'tc' (Debian package iproute2)"
  command -v tc >/dev/null || die "needs 'tc' (Debian package iproute2)"
}

# rate_bps RATE: bits per second of a tc rate, or empty when malformed.
rate_bps() {
  local rate=$1
  [[ $rate =~ ^([0-9]+([.][0-9]+)?)(bit|kbit|mbit|gbit)$ ]] || return 0
  local number=${BASH_REMATCH[1]} unit=${BASH_REMATCH[3]} factor
  case $unit in
    bit) factor=1 ;;
    kbit) factor=1000 ;;
    mbit) factor=1000000 ;;
    gbit) factor=1000000000 ;;
  esac
  awk -v n="$number" -v f="$factor" 'BEGIN { v = n * f; if (v >= 8000) printf "%.0f\n", v }'
}

valid_id() { [[ $1 =~ ^[a-z0-9]{3,8}$ ]]; }

python_path() { # Debian's python3 first (the one with matplotlib), then PATH's
  if [[ -x /usr/bin/python3 ]]; then
    echo /usr/bin/python3
  else
    command -v python3 || die "needs python3"
  fi
}

# Exits 0 when a TCP connect to port 9 of every address is answered (refused
# counts: the host is there), 1 naming the first that is not, within 5 s each.
readonly REACH_PY='
import socket, sys, time
for addr in sys.argv[1:]:
    deadline = time.monotonic() + 5
    while True:
        try:
            socket.create_connection((addr, 9), timeout=1).close(); break
        except ConnectionRefusedError:
            break
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit("netsim.sh: no answer from %s: %s" % (addr, e))
            time.sleep(0.1)
'

# ---------------------------------------------------------------- cluster state
# $STATE_ROOT/ID/hosts: one line per host "NAME ADDRESS NAMESPACE RATE RATE_BPS"
# $STATE_ROOT/ID/config: shell assignments (subnet, switch namespace, host count)

resolve_id() { # resolve_id [ID]: prints the cluster id to use
  local id=${1:-${NETSIM_ID:-}}
  if [[ -n $id ]]; then
    valid_id "$id" || die "bad cluster id '$id' (3-8 lowercase letters or digits)"
    [[ -d $STATE_ROOT/$id ]] || die "no netsim cluster '$id' (see: netsim.sh list)"
    echo "$id"
    return
  fi
  local ids=()
  if [[ -d $STATE_ROOT ]]; then
    mapfile -t ids < <(find "$STATE_ROOT" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
  fi
  case ${#ids[@]} in
    0) die "no netsim cluster is up (netsim.sh up N)" ;;
    1) echo "${ids[0]}" ;;
    *) die "several netsim clusters are up (${ids[*]}); pass --id ID or set NETSIM_ID" ;;
  esac
}

load_cluster() { # load_cluster ID: sets host_names, host_addrs, host_ns, host_rates, host_bps
  local id=$1 name addr ns rate bps
  state_dir=$STATE_ROOT/$id
  subnet="" switch_ns="" host_count="" created_utc=""
  # shellcheck disable=SC1091
  source "$state_dir/config"
  host_names=() host_addrs=() host_ns=() host_rates=() host_bps=()
  while read -r name addr ns rate bps; do
    host_names+=("$name") host_addrs+=("$addr") host_ns+=("$ns")
    host_rates+=("$rate") host_bps+=("$bps")
  done <"$state_dir/hosts"
}

host_index() { # host_index NAME|ADDRESS|K: prints the index, or fails
  local want=$1 i
  [[ $want =~ ^[0-9]+$ ]] && want=h$want
  for i in "${!host_names[@]}"; do
    if [[ ${host_names[i]} == "$want" || ${host_addrs[i]} == "$want" ]]; then
      echo "$i"
      return 0
    fi
  done
  return 1
}

# ---------------------------------------------------------------- down
process_start() { # process_start PID: the start time of a process (to tell a reused pid)
  [[ -r /proc/$1/stat ]] || return 1
  awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat"
}

is_stale() { # is_stale ID: the cluster has an owner and it is gone
  local config=$STATE_ROOT/$1/config owner_pid="" owner_start=""
  [[ -f $config ]] || return 1
  owner_pid=$(sed -n 's/^owner_pid=//p' "$config")
  owner_start=$(sed -n 's/^owner_start=//p' "$config")
  [[ -n $owner_pid ]] || return 1
  [[ $(process_start "$owner_pid" 2>/dev/null) != "$owner_start" ]]
}

remove_cluster() { # remove_cluster ID: best effort, never fails
  local id=$1 dir=$STATE_ROOT/$1 ns pids
  local namespaces=()
  if [[ -f $dir/namespaces ]]; then
    mapfile -t namespaces <"$dir/namespaces"
  fi
  # Namespaces are named after the id, so also catch ones created before the
  # state file was written.
  while read -r ns _; do
    [[ $ns == "$id"-* ]] && namespaces+=("$ns")
  done < <(ip netns list 2>/dev/null)
  mapfile -t namespaces < <(printf '%s\n' "${namespaces[@]}" | sort -u | sed '/^$/d')
  for ns in "${namespaces[@]}"; do
    # Processes still running in the cluster (orted, ranks, listeners) were
    # started by this script's users inside these namespaces: stop them by pid.
    pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ' || true)
    if [[ -n ${pids// /} ]]; then
      # shellcheck disable=SC2086
      kill -TERM $pids 2>/dev/null || true
      sleep 0.5
      pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ' || true)
      # shellcheck disable=SC2086
      [[ -n ${pids// /} ]] && kill -KILL $pids 2>/dev/null || true
    fi
  done
  for ns in "${namespaces[@]}"; do
    # Deleting a namespace deletes the veth ends in it, and with them their peers.
    ip netns delete "$ns" 2>/dev/null || true
    [[ -d /etc/netns/$ns ]] && rm -rf "/etc/netns/${ns:?}"
  done
  rmdir /etc/netns 2>/dev/null || true
  rm -rf "${dir:?}"
  rmdir "$STATE_ROOT" 2>/dev/null || true
}

cmd_down() {
  need_root
  [[ $# -gt 0 ]] || die "down needs cluster ids or --all (see: netsim.sh list)"
  local ids=() id all=()
  if [[ -d $STATE_ROOT ]]; then
    mapfile -t all < <(find "$STATE_ROOT" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')
  fi
  if [[ $1 == --all ]]; then
    [[ $# -eq 1 ]] || die "down --all takes no other argument"
    ids=("${all[@]}")
  elif [[ $1 == --stale ]]; then
    [[ $# -le 2 ]] || die "down --stale takes at most an id prefix"
    for id in "${all[@]}"; do
      [[ $id == "${2:-}"* ]] && is_stale "$id" && ids+=("$id")
    done
  else
    for id in "$@"; do
      valid_id "$id" || die "bad cluster id '$id' (3-8 lowercase letters or digits)"
      ids+=("$id")
    done
  fi
  for id in "${ids[@]}"; do
    remove_cluster "$id"
    echo "netsim.sh: removed cluster $id" >&2
  done
}

# ---------------------------------------------------------------- up
# shape_link NS DEV RATE BURST LIMIT: the link's rate on DEV's egress, with
# tbf (which also splits TSO/GSO super-packets into frames when they exceed
# the bucket, so every frame is paced).
shape_link() {
  ip netns exec "$1" tc qdisc add dev "$2" root handle 1: tbf rate "$3" burst "$4" limit "$5"
}

up_id=""
up_cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n $up_id ]]; then
    echo "netsim.sh: up failed or was interrupted; removing cluster $up_id" >&2
    remove_cluster "$up_id"
  fi
  exit "$status"
}

cmd_up() {
  need_root
  [[ $# -gt 0 ]] || die "up needs the number of hosts N (2..64)"
  local n=$1
  shift
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 2 && n <= 64)) || die "up: N must be a number of hosts, 2..64 (got '$n')"
  local rate=200mbit subnet=10.251.0 id="" burst="" queue_ms=20 owner=""
  local slow=()
  local -A options_given=()
  while [[ $# -gt 0 ]]; do
    case $1 in
      --rate) need_value "$@" "--rate needs a value"; rate=$2; shift 2 ;;
      --slow) need_value "$@" "--slow needs HOST:RATE"; slow+=("$2"); shift 2 ;;
      --id) need_value "$@" "--id needs a value"; id=$2; shift 2 ;;
      --subnet) need_value "$@" "--subnet needs A.B.C"; subnet=$2; shift 2 ;;
      --burst) need_value "$@" "--burst needs bytes"; burst=$2; shift 2 ;;
      --queue) need_value "$@" "--queue needs milliseconds"; queue_ms=$2; shift 2 ;;
      --owner) need_value "$@" "--owner needs a process id"; owner=$2; shift 2 ;;
      *) die "up: unknown argument '$1'; accepted: --rate RATE, --slow HOST:RATE, --id ID, --subnet A.B.C, --burst BYTES, --queue MS, --owner PID" ;;
    esac
  done
  [[ -n $(rate_bps "$rate") ]] || die "up: bad --rate '$rate'; a tc rate such as 200mbit, 1gbit, 50000kbit (bit, kbit, mbit, gbit; at least 8kbit)"
  [[ $subnet =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] || die "up: bad --subnet '$subnet'; three octets of a private /24, e.g. 10.251.0"
  local o1=${BASH_REMATCH[1]} o2=${BASH_REMATCH[2]} o3=${BASH_REMATCH[3]}
  ((o2 <= 255 && o3 <= 255)) || die "up: bad --subnet '$subnet'"
  if ! ((o1 == 10)) && ! ((o1 == 192 && o2 == 168)) && ! ((o1 == 172 && o2 >= 16 && o2 <= 31)); then
    die "up: --subnet '$subnet' is not private (RFC 1918: 10.x.y, 172.16-31.y, 192.168.y)"
  fi
  [[ -z $burst || $burst =~ ^[0-9]+$ ]] || die "up: --burst must be a number of bytes"
  [[ $queue_ms =~ ^[0-9]+$ ]] && ((queue_ms >= 1)) || die "up: --queue must be a whole number of milliseconds >= 1"
  local owner_start=""
  if [[ -n $owner ]]; then
    [[ $owner =~ ^[0-9]+$ ]] && owner_start=$(process_start "$owner") ||
      die "up: --owner '$owner' is not a running process id"
  fi

  local rates=() i
  for ((i = 0; i < n; i++)); do rates+=("$rate"); done
  local spec host hrate slowed=()
  for spec in "${slow[@]}"; do
    [[ $spec == *:* ]] || die "up: bad --slow '$spec'; HOST:RATE, e.g. h3:50mbit"
    host=${spec%%:*} hrate=${spec#*:}
    [[ $host =~ ^h?([0-9]+)$ ]] || die "up: bad host '$host' in --slow; h0..h$((n - 1)) or 0..$((n - 1))"
    i=$((10#${BASH_REMATCH[1]}))
    ((i < n)) || die "up: host '$host' in --slow does not exist; h0..h$((n - 1))"
    [[ -n $(rate_bps "$hrate") ]] || die "up: bad rate '$hrate' in --slow; a tc rate such as 50mbit"
    [[ -z ${slowed[i]:-} ]] || die "up: h$i given twice in --slow ('${slowed[i]}' and '$spec'); give each host once"
    slowed[i]=$spec
    rates[i]=$hrate
  done

  mkdir -p "$STATE_ROOT"
  if [[ -n $id ]]; then
    valid_id "$id" || die "up: bad --id '$id' (3-8 lowercase letters or digits)"
    mkdir "$STATE_ROOT/$id" 2>/dev/null || die "up: cluster id '$id' is already in use"
  else
    local tries=0
    while :; do
      id=n$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
      mkdir "$STATE_ROOT/$id" 2>/dev/null && break
      ((++tries < 20)) || fail "could not find a free cluster id under $STATE_ROOT"
    done
  fi
  up_id=$id
  trap up_cleanup EXIT INT TERM
  local dir=$STATE_ROOT/$id sw=$id-sw
  : >"$dir/hosts"
  echo "$sw" >"$dir/namespaces"

  ip netns add "$sw"
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge stp_state 0 forward_delay 0
  ip -n "$sw" link set br0 up

  local ns addr bps b limit tsq hosts_text
  hosts_text="127.0.0.1 localhost"$'\n'
  for ((i = 0; i < n; i++)); do
    hosts_text+="$subnet.$((i + 1)) h$i"$'\n'
  done
  for ((i = 0; i < n; i++)); do
    ns=$id-h$i addr=$subnet.$((i + 1))
    echo "$ns" >>"$dir/namespaces"
    ip netns add "$ns"
    mkdir -p "/etc/netns/$ns"
    printf '%s' "$hosts_text" >"/etc/netns/$ns/hosts"
    # TCP Small Queues: at most ~0.5 ms of the rate (at least 16 KiB) of one
    # socket's data waits in the link's queue, as a real NIC's byte queue limit
    # keeps it short; the kernel's 4 MiB default is 170 ms at 200 Mbit/s, and
    # acknowledgements and MPI control messages to other peers wait behind it.
    tsq=$(awk -v r="$(rate_bps "${rates[i]}")" 'BEGIN { t = r / 8 * 0.0005; if (t < 16384) t = 16384; printf "%.0f", t }')
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
      net.ipv4.tcp_limit_output_bytes="$tsq"
    ip -n "$ns" link set lo up
    # The host's port is eth0; the switch's port for it is named after the host.
    ip -n "$ns" link add eth0 type veth peer name "h$i" netns "$sw"
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$sw" link set "h$i" master br0
    ip -n "$ns" link set eth0 up
    ip -n "$sw" link set "h$i" up
    bps=$(rate_bps "${rates[i]}")
    # Bucket: 500 us at the rate, at least 2 full frames. Whatever the bucket
    # holds after an idle moment leaves at once, so a message that fits in it
    # is not slowed down by the rate; but tbf's timer fires late on a VM, and
    # tokens beyond the bucket are lost: on one 2-vCPU VM a TCP stream over a
    # 200 Mbit/s link carried 81% of its payload rate at 100 us (2 frames),
    # 96% at 250 us, 99.5% at 500 us (docs/characterize.md). Queue: --queue
    # ms at the rate, at least 64 KiB (a switch port's buffer).
    b=${burst:-$(awk -v r="$bps" 'BEGIN { b = r / 8 * 0.0005; if (b < 3028) b = 3028; printf "%.0f", b }')}
    limit=$(awk -v r="$bps" -v q="$queue_ms" 'BEGIN { l = r / 8 * q / 1000; if (l < 65536) l = 65536; printf "%.0f", l }')
    shape_link "$ns" eth0 "${rates[i]}" "$b" "$limit"
    shape_link "$sw" "h$i" "${rates[i]}" "$b" "$limit"
    echo "h$i $addr $ns ${rates[i]} $bps" >>"$dir/hosts"
  done
  {
    echo "subnet=$subnet"
    echo "switch_ns=$sw"
    echo "host_count=$n"
    echo "created_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "owner_pid=$owner"
    echo "owner_start=$owner_start"
  } >"$dir/config"

  # h0 must reach every other host before the cluster is handed out: a TCP
  # connect to a closed port that is refused proves the path (there is no ping).
  local py targets=()
  py=$(python_path)
  for ((i = 1; i < n; i++)); do targets+=("$subnet.$((i + 1))"); done
  ip netns exec "$id-h0" "$py" -c "$REACH_PY" "${targets[@]}" ||
    fail "h0 cannot reach every host (see above)"
  up_id=""
  trap - EXIT INT TERM
  echo "netsim.sh: cluster $id up: $n hosts on $subnet.0/24 ($(show_rates "$dir"))" >&2
  echo "$id"
}

show_rates() { # one-line summary of the rates in a state dir
  awk '{ c[$4] = c[$4] (c[$4] ? "," : "") $1 } END { s = ""; for (r in c) s = s (s ? "; " : "") r ": " c[r]; print s }' "$1/hosts"
}

# ---------------------------------------------------------------- exec / agent
# run_in_host INDEX CMD...: runs CMD in the host's namespace with its hostname.
run_in_host() {
  local i=$1
  shift
  exec ip netns exec "${host_ns[i]}" unshare --uts -- /bin/sh -c 'hostname "$0" && exec "$@"' \
    "${host_names[i]}" "$@"
}

take_id_option() { # parses a leading --id ID; sets cluster_id and args_left
  cluster_id=""
  args_left=("$@")
  if [[ ${args_left[0]:-} == --id ]]; then
    [[ -n ${args_left[1]:-} ]] || die "--id needs a value"
    cluster_id=${args_left[1]}
    args_left=("${args_left[@]:2}")
  fi
  cluster_id=$(resolve_id "$cluster_id")
}

cmd_exec() {
  need_root
  take_id_option "$@"
  set -- "${args_left[@]}"
  [[ $# -ge 2 ]] || die "exec needs HOST and a command"
  load_cluster "$cluster_id"
  local i
  i=$(host_index "$1") || die "exec: no host '$1' in cluster $cluster_id; hosts: ${host_names[*]}"
  shift
  run_in_host "$i" "$@"
}

# Called by mpirun (plm_rsh_agent) as ssh would be: [options] HOST COMMAND WORDS...
# The words form one shell command line, as with ssh.
cmd_agent() {
  [[ ${1:-} == --id ]] || die "agent is internal: netsim.sh agent --id ID HOST COMMAND..."
  local id=$2
  shift 2
  load_cluster "$(resolve_id "$id")"
  while [[ $# -gt 0 && $1 == -* ]]; do shift; done
  [[ $# -ge 2 ]] || die "agent: expected HOST COMMAND..."
  local i
  i=$(host_index "$1") || die "agent: no host '$1' in cluster $id; hosts: ${host_names[*]}"
  shift
  run_in_host "$i" /bin/bash -c "$*"
}

# ---------------------------------------------------------------- mpirun
# OpenMPI's TCP BTL for links hundreds of times slower than the fabrics its
# byte-sized buffers and thresholds were chosen for (tests/netsim_e2e.sh
# measured each choice; docs/characterize.md has the numbers):
# - flags without "put" (and "hetero-rdma"): with put, the rest of a large
#   message goes as ONE fragment, and a control message for the opposite
#   direction (the rendezvous reply of a simultaneous exchange) waits behind
#   it until the whole message is out: pairwise exchanges then run half duplex
#   at up to twice their time, depending on event order;
# - btl_tcp_sndbuf 128 KiB (the kernel doubles it; autotuning lets a socket
#   grow to 4 MiB, 170 ms at 200 Mbit/s): what a control message can find
#   queued ahead of it in the same connection;
# - eager limit and fragment size 1 MiB: a rendezvous round trip crosses the
#   peers' queues, which at these rates take milliseconds, so a message of up
#   to 1 MiB (a ring step of a 4 MiB allreduce on 4 ranks) goes in one trip.
readonly TCP_BTL_FLAGS=send,inplace,need-ack,need-csum
readonly TCP_BTL_SNDBUF=131072
readonly TCP_BTL_EAGER=1048576

cmd_mpirun() {
  need_root
  local id="" ppn=1
  local -A options_given=()
  while [[ $# -gt 0 ]]; do
    case $1 in
      --id) need_value "$@" "--id needs a value"; id=$2; shift 2 ;;
      --ppn) need_value "$@" "--ppn needs a value"; ppn=$2; shift 2 ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  [[ $ppn =~ ^[0-9]+$ ]] && ((ppn >= 1)) || die "mpirun: --ppn must be a whole number >= 1"
  [[ $# -gt 0 ]] || die "mpirun needs mpirun arguments, e.g. netsim.sh mpirun -np 4 ./prog"
  id=$(resolve_id "$id")
  load_cluster "$id"
  # Open MPI's launcher by name (the flags below are its own): the `mpirun`
  # alternative may be MPICH's (scripts/mpi_launcher.sh).
  command -v mpirun.openmpi >/dev/null || die "mpirun.openmpi not found (Debian package openmpi-bin)"
  local hostfile=$state_dir/hostfile.ppn$ppn i
  if [[ ! -f $hostfile ]]; then
    for i in "${!host_names[@]}"; do echo "${host_names[i]} slots=$ppn"; done >"$hostfile.tmp"
    mv "$hostfile.tmp" "$hostfile"
  fi
  # The agent: this script, with the cluster id. mpirun splits the value on spaces.
  [[ $script_path != *" "* ]] || die "mpirun: the launch agent path must not contain spaces: $script_path"
  # Default MCA parameters; one the caller passes (--mca NAME VALUE) replaces
  # ours, since mpirun refuses a parameter given twice.
  # shellcheck disable=SC2054 # the commas are inside values
  local defaults=(
    plm_rsh_agent "$script_path agent --id $id"
    plm_rsh_no_tree_spawn 1
    pml ob1
    btl self,vader,tcp
    btl_tcp_flags "$TCP_BTL_FLAGS"
    btl_tcp_sndbuf "$TCP_BTL_SNDBUF"
    btl_tcp_eager_limit "$TCP_BTL_EAGER"
    btl_tcp_rndv_eager_limit "$TCP_BTL_EAGER"
    btl_tcp_max_send_size "$TCP_BTL_EAGER"
    btl_tcp_if_include "$subnet.0/24"
    oob_tcp_if_include "$subnet.0/24"
    mpi_yield_when_idle 1
  )
  local given=() a mca=()
  local args=("$@")
  for ((a = 0; a < ${#args[@]} - 1; a++)); do
    [[ ${args[a]} == --mca || ${args[a]} == -mca ]] && given+=("${args[a + 1]}")
  done
  for ((a = 0; a < ${#defaults[@]}; a += 2)); do
    printf '%s\n' "${given[@]}" | grep -qxF "${defaults[a]}" && continue
    mca+=(--mca "${defaults[a]}" "${defaults[a + 1]}")
  done
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
  run_in_host 0 mpirun.openmpi --hostfile "$hostfile" "${mca[@]}" --oversubscribe --bind-to none "$@"
}

# ---------------------------------------------------------------- measure
readonly MEASURE_PY='
import socket, sys, time
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "recv":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen(1); s.settimeout(30)
    print("listening", flush=True)
    c, _ = s.accept(); c.settimeout(120)
    total = 0; first = None
    while True:
        b = c.recv(1 << 20)
        if not b: break
        if first is None: first = time.perf_counter()
        total += len(b)
    last = time.perf_counter()
    c.sendall(b"%d %.9f" % (total, last - first)); c.close()
else:
    n = int(sys.argv[4]); chunk = b"\0" * (1 << 20)
    c = socket.create_connection((addr, port), timeout=30); c.settimeout(120)
    left = n
    while left > 0:
        k = min(left, len(chunk)); c.sendall(chunk[:k]); left -= k
    c.shutdown(socket.SHUT_WR)
    print(c.recv(100).decode())
'

cmd_measure() {
  need_root
  take_id_option "$@"
  set -- "${args_left[@]}"
  [[ $# -ge 2 && $# -le 3 ]] || die "measure needs SRC DST [BYTES]"
  load_cluster "$cluster_id"
  local src dst bytes=${3:-16777216}
  src=$(host_index "$1") || die "measure: no host '$1'; hosts: ${host_names[*]}"
  dst=$(host_index "$2") || die "measure: no host '$2'; hosts: ${host_names[*]}"
  ((src != dst)) || die "measure: SRC and DST must differ"
  [[ $bytes =~ ^[0-9]+$ ]] && ((bytes >= 1048576)) || die "measure: BYTES must be a number >= 1048576"
  local py
  py=$(python_path)
  local port=$((20000 + RANDOM % 20000)) fifo result
  fifo=$(mktemp -u)
  mkfifo "$fifo"
  ip netns exec "${host_ns[dst]}" "$py" -c "$MEASURE_PY" recv "${host_addrs[dst]}" "$port" >"$fifo" &
  local receiver=$!
  local line
  read -r -t 10 line <"$fifo" || true
  rm -f "$fifo"
  [[ $line == listening ]] || {
    kill "$receiver" 2>/dev/null || true
    fail "measure: the receiver on ${host_names[dst]} did not start"
  }
  result=$(ip netns exec "${host_ns[src]}" "$py" -c "$MEASURE_PY" send "${host_addrs[dst]}" "$port" "$bytes")
  wait "$receiver" || true
  local expected_bps
  expected_bps=$(printf '%s\n%s\n' "${host_bps[src]}" "${host_bps[dst]}" | sort -n | head -1)
  awk -v r="$result" -v e="$expected_bps" -v s="${host_names[src]}" -v d="${host_names[dst]}" \
    -v p="$PAYLOAD_PER_FRAME" -v f="$FRAME_BYTES" 'BEGIN {
      split(r, a, " "); mbit = a[1] * 8 / a[2] / 1e6; want = e * p / f / 1e6
      printf "%s -> %s: %d bytes in %.3f s = %.1f Mbit/s payload (shaping allows %.1f = %.0f Mbit/s x %d/%d), %.1f%%\n",
        s, d, a[1], a[2], mbit, want, e / 1e6, p, f, 100 * mbit / want }'
}

# ---------------------------------------------------------------- show / list
cmd_show() {
  need_root
  local id
  id=$(resolve_id "${1:-}")
  load_cluster "$id"
  echo "cluster $id: ${#host_names[@]} hosts, subnet $subnet.0/24, switch namespace $switch_ns, created $created_utc"
  local i
  for i in "${!host_names[@]}"; do
    printf '%-4s %-15s %-12s %-10s\n' "${host_names[i]}" "${host_addrs[i]}" "${host_ns[i]}" "${host_rates[i]}"
    printf '      send: %s\n' "$(ip netns exec "${host_ns[i]}" tc qdisc show dev eth0 | head -1)"
    printf '      recv: %s\n' "$(ip netns exec "$switch_ns" tc qdisc show dev "${host_names[i]}" | head -1)"
  done
}

cmd_list() {
  need_root
  [[ -d $STATE_ROOT ]] || return 0
  local dir id
  for dir in "$STATE_ROOT"/*/; do
    [[ -d $dir ]] || continue
    id=$(basename "$dir")
    if [[ -f $dir/config && -f $dir/hosts ]]; then
      # shellcheck disable=SC1091
      local stale=""
      is_stale "$id" && stale=" [stale: its owner process is gone]"
      # shellcheck disable=SC2154 # host_count, subnet, created_utc come from the config
      (source "$dir/config" && echo "$id: $host_count hosts, $subnet.0/24, created $created_utc ($(show_rates "$dir"))$stale")
    else
      echo "$id: incomplete (being created, or left by a crash: netsim.sh down $id)"
    fi
  done
}

# ---------------------------------------------------------------- main
[[ $# -gt 0 ]] || {
  usage >&2
  exit 2
}
command=$1
shift
case $command in
  -h | --help | help) usage ;;
  up) cmd_up "$@" ;;
  down) cmd_down "$@" ;;
  mpirun) cmd_mpirun "$@" ;;
  exec) cmd_exec "$@" ;;
  agent) cmd_agent "$@" ;;
  measure) cmd_measure "$@" ;;
  show) cmd_show "$@" ;;
  list) cmd_list "$@" ;;
  *) die "unknown command '$command'; accepted: up, down, mpirun, exec, measure, show, list (--help)" ;;
esac
