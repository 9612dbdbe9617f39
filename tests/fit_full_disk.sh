#!/usr/bin/env bash
# collbench-fit into a folder holding an earlier run's models.csv,
# predictions.csv and selections.csv, when the disk fills while it writes:
# every file must stay the earlier run's (never a new models.csv next to an old predictions.csv),
# no temporary may be left, and the tool exits 2 with one line. Then, with
# room again, both must be the new run's.
#
# The full disk is a file size limit (ulimit -f, SIGXFSZ ignored, so that a
# write fails with EFBIG as it fails with ENOSPC on a full disk) between the
# sizes of the two new files: models.csv fits, predictions.csv does not.
# Works as root (the limit binds root too) and needs no mount.
#
# Usage: fit_full_disk.sh COLLBENCH_FIT OLD.csv NEW.csv
set -euo pipefail

fit=${1:?usage: fit_full_disk.sh COLLBENCH_FIT OLD.csv NEW.csv}
old_csv=${2:?usage: fit_full_disk.sh COLLBENCH_FIT OLD.csv NEW.csv}
new_csv=${3:?usage: fit_full_disk.sh COLLBENCH_FIT OLD.csv NEW.csv}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fit_full_disk.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

out=$scratch/out
"$fit" "$old_csv" --out-dir "$out" >/dev/null
mkdir "$scratch/old"
cp "$out/models.csv" "$out/predictions.csv" "$out/selections.csv" "$scratch/old/"
# What the new run writes, to size the limit and to compare with at the end.
"$fit" "$new_csv" --out-dir "$scratch/new" >/dev/null
for file in models.csv predictions.csv; do
  ! cmp -s "$scratch/old/$file" "$scratch/new/$file" ||
    fail "the two inputs give the same $file: the test could not tell old from new"
done
models_bytes=$(stat -c %s "$scratch/new/models.csv")
predictions_bytes=$(stat -c %s "$scratch/new/predictions.csv")
limit_kib=$((models_bytes / 1024 + 1)) # bash's ulimit -f counts KiB
((predictions_bytes > limit_kib * 1024)) ||
  fail "predictions.csv ($predictions_bytes B) is not larger than the limit ($limit_kib KiB)"
echo "limit $limit_kib KiB: new models.csv $models_bytes B fits, predictions.csv" \
  "$predictions_bytes B does not"

status=0
(
  trap '' XFSZ
  ulimit -S -f "$limit_kib"
  exec "$fit" "$new_csv" --out-dir "$out"
) >"$scratch/stdout" 2>"$scratch/stderr" || status=$?
echo "exit status $status; stderr: $(cat "$scratch/stderr")"
((status == 2)) || fail "exit status $status, expected 2"
(($(wc -l <"$scratch/stderr") == 1)) || fail "expected one line on stderr"
grep -Eq "File too large|size limit" "$scratch/stderr" || fail "stderr does not say the write failed"
for file in models.csv predictions.csv selections.csv; do
  cmp -s "$scratch/old/$file" "$out/$file" || fail "$file is no longer the earlier run's"
done
leftovers=$(find "$out" -mindepth 1 ! -name models.csv ! -name predictions.csv ! -name selections.csv)
[[ -z $leftovers ]] || fail "left behind: $leftovers"
echo "every file still the earlier run's, nothing left behind"

"$fit" "$new_csv" --out-dir "$out" >/dev/null
for file in models.csv predictions.csv; do
  cmp -s "$scratch/new/$file" "$out/$file" || fail "$file is not the new run's"
done
echo "with room again: both files the new run's"
