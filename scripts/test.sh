#!/usr/bin/env bash
# Builds collbench and runs its tests, in two tiers.
#
# The default tier is what CI runs (.ci/run): one Release build (build-test/,
# warnings as errors), then every CTest test not labelled `full`, in groups:
#   unit   the GoogleTest binaries (every in-process algorithm at p <= 8, a
#          million elements at p = 3), the tools on synthetic data and bad
#          input, the CSV schema check, the Python script tests, the harness
#          with every rank in one process (harness_inproc)
#   mpi    a short mpirun smoke (np 2-3) and the bad-input table
#   other  the tests with neither label
# --full runs the default tier, then
#   full      the tests labelled `full`: in-process algorithms at p = 9, 13
#             and 16 and a million elements at every p, the mutation tests of
#             the check, the long mpirun tests (np 4-5, libfabric, the harness
#             scenarios), scripts/sim_sweep.sh --quick, fuzzing, Slurm (root), the
#             installed package
#   sanitize  a second build (build-sanitize/, ASan + UBSan) of the unit tests
#             and a small MPI job
#   netsim    the emulated-cluster end-to-end test (root, network namespaces,
#             up to 17 minutes)
#   mpich     a third build (build-mpich/, -DCOLLBENCH_MPI=mpich, MPICH 4
#             installed by setup.sh --mpich) with its unit tests, the mpirun
#             smoke (np 3) and the tests labelled mpich (mpirun.mpich: a short
#             harness run, a forced MPICH algorithm)
# Each group has a time budget for this 2-core machine; the time each took is
# printed, and a group over its budget is named (its tests still pass or fail
# on their own: no test asserts on wall time). A test skipped for a missing
# component (no root, no libfabric provider, no Slurm) is listed with its
# reason. README.md says how long each tier takes.
#
# Usage: scripts/test.sh [--full | --no-sanitize | --sanitize-only | --netsim] [ctest args...]
#   (none)            the default tier
#   --full            everything: the default tier, full, sanitize, netsim, mpich
#   --no-sanitize     --full without the sanitize group
#   --sanitize-only   the sanitize group only
#   --netsim          the netsim group only
#   JOBS              parallel build jobs (default: nproc)
# Extra arguments go to the ctest of every group but sanitize (common ctest
# options only, checked first: -R, -E, -L, -LE, -j, --repeat,
# --output-on-failure, ...; each once and none empty, but -L and -LE, which
# add up: the tests that match every -L and no -LE), e.g.
#   scripts/test.sh -R harness
set -euo pipefail
cd "$(dirname "$0")/.."

# Group name, budget in seconds, labels it runs and labels it leaves out
# (CTest regexes, - for none); in the order they run. The default tier's
# budgets, with the build's, add up to its 15 minutes on 2 cores.
build_budget=450
default_groups=(
  "unit 180 ^unit$ ^(mpi|full)$"
  "mpi 210 ^mpi$ ^full$"
  "other 60 - ^(unit|mpi|full)$"
)
full_group="full 2400 ^full$ ^netsim$"
sanitize_budget=900
netsim_group="netsim 1100 ^netsim$ -"
mpich_budget=900

run_default=1
run_full=0
run_sanitize=0
run_netsim=0
run_mpich=0
case "${1:-}" in
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  --full)
    run_full=1 run_sanitize=1 run_netsim=1 run_mpich=1
    shift
    ;;
  --no-sanitize)
    run_full=1 run_netsim=1 run_mpich=1
    shift
    ;;
  --sanitize-only)
    run_default=0 run_sanitize=1
    shift
    ;;
  --netsim)
    run_default=0 run_netsim=1
    shift
    ;;
esac

# ctest ignores options it does not know (and exits 0), so a mistyped one
# would build everything and then run the wrong tests: the ctest options
# this script passes on are the common ones, checked before building.
# Arrays, not strings matched with " $arg ": a line break in such a string
# made --label-regex and --show-only unknown options.
expects_value=(-R -E -L -LE -j -I --repeat --timeout --tests-regex --exclude-regex --label-regex
  --label-exclude --parallel)
known_flag=(-N -V -VV -Q --output-on-failure --stop-on-failure --rerun-failed --show-only
  --no-tests=error --schedule-random --progress)
one_of() { # one_of WORD LIST...
  local word=$1
  shift
  local item
  for item; do [[ $item != "$word" ]] || return 0; done
  return 1
}
# ctest leaves out only a test that matches every -LE given (3.25), so the
# user's are joined to each group's by |: any one of them leaves a test out.
# Of two -R, -E, -I or --timeout (under either spelling) ctest keeps the
# last without a word, two -j are one level, and two --repeat it refuses only
# after the build: each is refused here, first. -L adds up (ctest runs what
# matches every -L).
declare -A first_value=() first_spelling=()
once() { # once OPTION VALUE
  local name
  case $1 in
    -L | -LE | --label-regex | --label-exclude) return 0 ;;
    -R | --tests-regex) name=-R ;;
    -E | --exclude-regex) name=-E ;;
    -j | --parallel) name=-j ;;
    *) name=$1 ;;
  esac
  if [[ -n ${first_value[$name]+set} ]]; then
    local earlier="'${first_value[$name]}'"
    [[ ${first_spelling[$name]} == "$1" ]] || earlier+=" as ${first_spelling[$name]}"
    echo "test.sh: $1 given twice ($earlier and '$2'); give it once" >&2
    exit 2
  fi
  first_value[$name]=$2 first_spelling[$name]=$1
}
passed_on=()
user_excludes=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  arg=${args[i]}
  if one_of "$arg" "${expects_value[@]}"; then
    if ((i + 1 >= ${#args[@]})); then
      echo "test.sh: $arg needs a value (see scripts/test.sh --help)" >&2
      exit 2
    fi
    i=$((i + 1))
    # An empty value is a variable its caller left unset: -R '' runs everything.
    if [[ -z ${args[i]} ]]; then
      echo "test.sh: $arg needs a value, got an empty one (see scripts/test.sh --help)" >&2
      exit 2
    fi
    once "$arg" "${args[i]}"
    if [[ $arg == -LE || $arg == --label-exclude ]]; then
      user_excludes+=("${args[i]}")
    else
      passed_on+=("$arg" "${args[i]}")
    fi
  elif [[ $arg == --repeat= ]]; then
    echo "test.sh: --repeat needs a value, got an empty one (see scripts/test.sh --help)" >&2
    exit 2
  elif [[ $arg == -* && $arg != --repeat=* && $arg != -j[0-9]* ]] &&
    ! one_of "$arg" "${known_flag[@]}"; then
    echo "test.sh: unknown option '$arg': the first argument may be --full, --no-sanitize," \
      "--sanitize-only or --netsim, the rest go to ctest (-R, -E, -L, -LE, -j, --repeat," \
      "--output-on-failure, ...; see scripts/test.sh --help)" >&2
    exit 2
  elif [[ $arg != -* ]]; then
    echo "test.sh: '$arg' is not an option; ctest's options take their value as the next" \
      "argument (e.g. -R harness; see scripts/test.sh --help)" >&2
    exit 2
  else
    [[ $arg != --repeat=* ]] || once --repeat "${arg#--repeat=}"
    [[ $arg != -j[0-9]* ]] || once -j "${arg#-j}"
    passed_on+=("$arg")
  fi
done

scripts/setup.sh
jobs=${JOBS:-$(nproc)}
timings=()
over=()
failed=()

# timed <name> <budget> <command...>: runs the command, records its time
# and its status, and returns the status.
timed() {
  local name=$1 budget=$2 start status=0
  shift 2
  echo "== $name (budget ${budget} s) =="
  start=$SECONDS
  "$@" || status=$?
  local took=$((SECONDS - start))
  local line
  line=$(printf '%-9s %5d s  (budget %d s)' "$name" "$took" "$budget")
  ((status == 0)) || { line+="  FAILED"; failed+=("$name"); }
  ((took <= budget)) || { line+="  OVER BUDGET"; over+=("$name"); }
  echo "== $line"
  timings+=("$line")
  return $status
}

# The tests of one group that CTest skipped, each with its last line of
# output (its reason), and the "skip ..." lines of tests that left a part
# of themselves out.
report_skips() {
  /usr/bin/python3 - "$1" <<'PYTHON'
import re, sys, xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    lines = [l for l in (case.findtext("system-out") or "").splitlines() if l.strip()]
    if case.find("skipped") is not None:
        print(f"skipped: {case.get('name')}: {lines[-1] if lines else '(it printed no reason)'}")
    elif case.get("status") == "run":
        for line in dict.fromkeys(l for l in lines if re.match(r"(skip|SKIP)\b", l)):
            print(f"{case.get('name')}: {line}")
PYTHON
}

# ctest_group <build dir> <name> [ctest args...]
ctest_group() {
  local dir=$1 name=$2 status=0
  shift 2
  local junit=Testing/test_sh_$name.xml
  rm -f "$dir/$junit"
  (cd "$dir" && ctest --output-on-failure -j 2 --output-junit "$junit" "$@") || status=$?
  if [[ -f $dir/$junit ]]; then report_skips "$dir/$junit"; fi
  return $status
}

# run_group <build dir> "<name> <budget> <labels> <excluded labels>" [ctest args...]
run_group() {
  local dir=$1 name budget include exclude
  read -r name budget include exclude <<<"$2"
  shift 2
  local selection=() excludes=()
  [[ $include == - ]] || selection+=(-L "$include")
  [[ $exclude == - ]] || excludes+=("$exclude")
  excludes+=("${user_excludes[@]}")
  if ((${#excludes[@]} > 0)); then
    selection+=(-LE "$(IFS='|' && echo "${excludes[*]}")")
  fi
  timed "$name" "$budget" ctest_group "$dir" "$name" "${selection[@]}" "$@"
}

if ((run_default || run_full || run_netsim)); then
  # SimGrid ON: the simulated truth tests must never skip for want of it;
  # jemalloc ON: nor the test of the malloc simulations run on.
  cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DCOLLBENCH_WERROR=ON \
    -DCOLLBENCH_WITH_SIMGRID=ON -DCOLLBENCH_WITH_JEMALLOC=ON >/dev/null
  timed build "$build_budget" cmake --build build-test -j "$jobs" || exit 1
  groups=()
  if ((run_default)); then groups+=("${default_groups[@]}"); fi
  if ((run_full)); then groups+=("$full_group"); fi
  for group in "${groups[@]}"; do
    run_group build-test "$group" "${passed_on[@]}" || true
  done
fi

sanitize() {
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_WERROR=ON \
    -DCOLLBENCH_SANITIZE=ON >/dev/null || return
  # Only what the sanitize-labelled tests run: the whole tree under ASan
  # would double the build time for nothing those tests use.
  cmake --build build-sanitize -j "$jobs" --target core_tests collective_mpi_test harness_tests \
    collbench_exe || return
  ctest_group build-sanitize sanitize -L sanitize
}
if ((run_sanitize)); then
  timed sanitize "$sanitize_budget" sanitize || true
fi

if ((run_netsim)); then
  run_group build-test "$netsim_group" "${passed_on[@]}" || true
fi

# The project against MPICH: its own build directory, since the library is
# cached with the compiler's flags.
mpich() {
  scripts/setup.sh --mpich || return
  cmake -S . -B build-mpich -DCMAKE_BUILD_TYPE=Release -DCOLLBENCH_WERROR=ON \
    -DCOLLBENCH_MPI=mpich >/dev/null || return
  cmake --build build-mpich -j "$jobs" || return
  ctest_group build-mpich mpich -L '^(unit|mpich)$' -LE '^full$' "${passed_on[@]}" || return
  ctest_group build-mpich mpich_smoke -R '^collective_mpi_np3$' "${passed_on[@]}"
}
if ((run_mpich)); then
  timed mpich "$mpich_budget" mpich || true
fi

echo "== times ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)) =="
printf '%s\n' "${timings[@]}"
if ((${#over[@]} > 0)); then echo "over budget: ${over[*]} (README.md, Tests)"; fi
if ((${#failed[@]} > 0)); then
  echo "test.sh: failed: ${failed[*]}" >&2
  exit 1
fi
