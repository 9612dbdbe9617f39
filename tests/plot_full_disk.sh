#!/usr/bin/env bash
# scripts/plot.py into a folder holding an earlier run's PNGs, when the disk
# fills after the first PNG of the new run is written: every PNG must stay
# the earlier run's, none of the new ones may appear, no temporary may be
# left, and plot.py exits 2 with one line (no traceback). Then, with room
# again, the folder holds the new run's PNGs.
#
# The full disk is a file size limit (ulimit -f, SIGXFSZ ignored: writes fail
# with EFBIG as with ENOSPC) that the first PNG the new run writes fits under
# and a later one does not (the order is read from a scratch run's mtimes).
#
# Usage: plot_full_disk.sh PYTHON PLOT_PY OLD_PREDICTIONS.csv NEW_PREDICTIONS.csv
set -euo pipefail

usage="usage: plot_full_disk.sh PYTHON PLOT_PY OLD_PREDICTIONS.csv NEW_PREDICTIONS.csv"
python=${1:?$usage} plot=${2:?$usage} old_csv=${3:?$usage} new_csv=${4:?$usage}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/plot_full_disk.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
listing() { (cd "$1" && find . -mindepth 1 | sort | tr '\n' ' '); }

out=$scratch/out
"$python" "$plot" fit --predictions "$old_csv" --out "$out" >/dev/null
cp -a "$out" "$scratch/old"
"$python" "$plot" fit --predictions "$new_csv" --out "$scratch/new" >/dev/null
mapfile -t written < <(cd "$scratch/new" && stat -c '%.9Y %s %n' -- *.png | sort -n)
first_bytes=$(awk '{ print $2 }' <<<"${written[0]}")
limit_kib=$((first_bytes / 1024 + 1)) # bash's ulimit -f counts KiB
awk -v limit=$((limit_kib * 1024)) 'NR > 1 && $2 > limit { found = 1 } END { exit !found }' \
  < <(printf '%s\n' "${written[@]}") ||
  fail "no PNG after the first is larger than the limit ($limit_kib KiB): ${written[*]}"
echo "limit $limit_kib KiB: the first new PNG ($(awk '{ print $3, $2 }' <<<"${written[0]}") B) fits, a later one does not"
shared=$(comm -12 <(ls "$scratch/old") <(ls "$scratch/new") | wc -l)
((shared > 0)) || fail "the old and new runs share no PNG name: nothing could be overwritten"

status=0
(
  trap '' XFSZ
  ulimit -S -f "$limit_kib"
  exec "$python" "$plot" fit --predictions "$new_csv" --out "$out"
) >"$scratch/stdout" 2>"$scratch/stderr" || status=$?
echo "exit status $status; stderr: $(cat "$scratch/stderr")"
((status == 2)) || fail "exit status $status, expected 2"
(($(wc -l <"$scratch/stderr") == 1)) || fail "expected one line on stderr"
! grep -q Traceback "$scratch/stderr" || fail "a traceback"
[[ $(listing "$out") == "$(listing "$scratch/old")" ]] ||
  fail "the folder holds $(listing "$out"), the earlier run had $(listing "$scratch/old")"
for png in "$scratch/old"/*.png; do
  cmp -s "$png" "$out/$(basename "$png")" || fail "$(basename "$png") is no longer the earlier run's"
done
echo "the earlier run's $(ls "$out" | wc -l) PNGs unchanged ($shared of them drawn again by the new run), nothing left behind"

"$python" "$plot" fit --predictions "$new_csv" --out "$out" >/dev/null
for png in "$scratch/new"/*.png; do
  cmp -s "$png" "$out/$(basename "$png")" || fail "$(basename "$png") is not the new run's"
done
echo "with room again: the new run's PNGs"
