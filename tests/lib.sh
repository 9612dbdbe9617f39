# shellcheck shell=bash
# Sourced by the shell tests: the checks they share.
#   expect DESCRIPTION EXPECTED ACTUAL   one line, "ok: ..." or "FAIL: ..."
#                                        (counted in `failures`)
#   expectations_met                     the test's last line: true when no
#                                        expect failed
#   scratch_dir NAME                     a fresh folder in `scratch`, removed
#                                        when the test exits
#   fail MESSAGE                         "FAIL (TEST): MESSAGE" on stderr, TEST
#                                        the script's name; ends the test
#   check_csv FILE [ARGS...] <<'PYTHON'  the Python on stdin run over the CSV
#                                        FILE (sys.argv[1], ARGS after it)
#                                        with `rows`, `header` and
#                                        `fail(message)` defined; fails the
#                                        test when it exits non-zero
failures=0
expect() { # DESCRIPTION EXPECTED ACTUAL
  if [[ $2 != "$3" ]]; then
    echo "FAIL: $1: expected '$2', got '$3'"
    failures=$((failures + 1))
  else
    echo "ok: $1: $3"
  fi
}

expectations_met() {
  ((failures == 0)) || echo "$failures expectations failed"
  ((failures == 0))
}

scratch_dir() { # NAME
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  # shellcheck disable=SC2064  # the folder's name now, not at exit
  trap "rm -rf '$scratch'" EXIT
}

fail() { # MESSAGE
  echo "FAIL ($(basename "$0" .sh)): $*" >&2
  exit 1
}

# Every row is checked to have the header's field count first: a torn or
# half-written row is what the writers promise never to leave.
check_csv() { # FILE [ARGS...], the check's Python on stdin
  local file=$1
  shift
  "${python:-/usr/bin/python3}" - "$file" "$@" <<PYTHON || fail "CSV check of $file failed"
import csv, json, math, os, sys
path = sys.argv[1]
with open(path, newline="") as handle:
    reader = csv.reader(handle)
    header = next(reader)
    raw = list(reader)
for number, fields in enumerate(raw, start=2):
    if len(fields) != len(header):
        sys.exit(f"{path}:{number}: {len(fields)} fields for {len(header)} columns")
rows = [dict(zip(header, fields)) for fields in raw]
def fail(message):
    sys.exit(message)
$(cat)
PYTHON
}
