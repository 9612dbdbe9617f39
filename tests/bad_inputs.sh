#!/usr/bin/env bash
# Runs the table of bad inputs (tests/bad_inputs.tsv, format in its header):
# every row in a fresh, empty folder that is also its working directory,
# bounded by a timeout. A row passes when the command exits with the status
# given, its stderr has the fragment, no crash (a Python traceback, a C++
# terminate, a signal) and the folder is still empty afterwards (no output
# file, not even a partial one). Every failing row is reported, then one
# summary line.
#
# Usage: bad_inputs.sh BUILD_DIR SOURCE_DIR [TABLE]
# Environment: COLLBENCH_MPIRUN (mpirun with its options, for @MPIRUN@);
# BAD_INPUTS_TIMEOUT (seconds per row, default 60); BAD_INPUTS_FILTER (run
# only rows whose name matches this extended regex); BAD_INPUTS_JOBS (rows at
# once, default the cores).
set -uo pipefail

build=$(cd "${1:?usage: bad_inputs.sh BUILD_DIR SOURCE_DIR [TABLE]}" && pwd)
source_dir=$(cd "${2:?usage: bad_inputs.sh BUILD_DIR SOURCE_DIR [TABLE]}" && pwd)
table=${3:-$source_dir/tests/bad_inputs.tsv}
limit=${BAD_INPUTS_TIMEOUT:-60}
filter=${BAD_INPUTS_FILTER:-}
fixtures=$source_dir/tests/bad_inputs
mpirun=${COLLBENCH_MPIRUN:-mpirun --oversubscribe}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/bad_inputs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

have_ofi=0
# Not grep -q: it would exit at the first match and, under pipefail, the
# SIGPIPE of collbench writing the rest of --help would make this false.
if "$build/benchmarks/harness/collbench" --help 2>/dev/null | grep -- "--transport KIND.*ofi" >/dev/null; then
  have_ofi=1
fi

# expand TEXT ROW_FOLDER: the placeholders replaced.
expand() {
  local text=$1 folder=$2
  text=${text//@BIN@/$build}
  text=${text//@SRC@/$source_dir}
  text=${text//@FIX@/$fixtures}
  text=${text//@TMP@/$folder}
  text=${text//@MPIRUN@/$mpirun}
  printf '%s' "$text"
}

# check_row NAME STATUS FRAGMENT COMMAND: runs one row in its folder and
# writes its verdict to $scratch/NAME.verdict: "ok", or what went wrong.
check_row() {
  local name=$1 status=$2 fragment=$3 command=$4
  local folder=$scratch/$name expanded wanted got left report
  mkdir "$folder"
  expanded=$(expand "$command" "$folder")
  wanted=$(expand "$fragment" "$folder")
  (cd "$folder" && exec timeout -k 5 "$limit" bash -c "$expanded") \
    </dev/null >"$scratch/$name.stdout" 2>"$scratch/$name.stderr"
  got=$?
  local problems=()
  if ((got == 124 || got == 137)); then
    problems+=("did not finish within $limit s")
  elif ((got != status)); then
    problems+=("exit status $got, expected $status")
  fi
  grep -qF -- "$wanted" "$scratch/$name.stderr" || problems+=("stderr lacks: $wanted")
  if grep -qE "Traceback \(most recent call last\)|terminate called|Segmentation fault|core dumped|Assertion .* failed" \
    "$scratch/$name.stderr"; then
    problems+=("crashed (see stderr)")
  fi
  left=$(cd "$folder" && find . -mindepth 1 | sort | head -5 | tr '\n' ' ')
  [[ -z $left ]] || problems+=("left files behind: $left")

  if ((${#problems[@]} == 0)); then
    echo ok >"$scratch/$name.verdict"
  else
    report="$name: $(printf '%s; ' "${problems[@]}")"
    report+=$'\n'"    command: $expanded"
    report+=$'\n'"    stderr:  $(head -c 600 "$scratch/$name.stderr" | sed '2,$s/^/             /')"
    printf '%s\n' "$report" >"$scratch/$name.verdict"
  fi
}

# Rows run $jobs at a time (BAD_INPUTS_JOBS, default: the cores): most are
# single processes that wait on little but their own start-up. Verdicts are
# read back in the table's order.
jobs=${BAD_INPUTS_JOBS:-$(nproc)}
rows=0 passed=0 skipped=0
failures=()
names=()
declare -A programs=()
start=$SECONDS
while IFS=$'\t' read -r name status fragment command extra || [[ -n ${name:-} ]]; do
  [[ -z $name || $name == \#* ]] && continue
  if [[ -z ${command:-} || -n ${extra:-} || ! $status =~ ^[0-9]+$ ]]; then
    failures+=("$name: malformed row in $table (4 TAB-separated columns)")
    rows=$((rows + 1))
    continue
  fi
  [[ -n $filter && ! $name =~ $filter ]] && continue
  rows=$((rows + 1))
  programs[${name%%_*}]=1
  if [[ $command == @NEEDS_OFI@* ]]; then
    if ((!have_ofi)); then
      skipped=$((skipped + 1))
      echo "skip $name: collbench was built without libfabric"
      continue
    fi
    command=${command#@NEEDS_OFI@ }
  fi
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
  check_row "$name" "$status" "$fragment" "$command" &
  names+=("$name")
done <"$table"
wait

for name in "${names[@]}"; do
  if [[ $(cat "$scratch/$name.verdict" 2>/dev/null) == ok ]]; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failures+=("$(cat "$scratch/$name.verdict" 2>/dev/null || echo "$name: no verdict")")
    echo "FAIL $name"
  fi
done

if ((${#failures[@]} > 0)); then
  echo
  echo "Failing rows:"
  printf '%s\n' "${failures[@]}"
fi
echo
echo "bad_inputs: $rows rows over ${#programs[@]} programs: $passed passed, ${#failures[@]} failed," \
  "$skipped skipped, in $((SECONDS - start)) s"
((${#failures[@]} == 0 && rows > 0))
