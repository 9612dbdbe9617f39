# shellcheck shell=bash
# Sourced by the shell tests: the checks they share.
#   expect DESCRIPTION EXPECTED ACTUAL   one line, "ok: ..." or "FAIL: ..."
#                                        (counted in `failures`)
#   expectations_met                     the test's last line: true when no
#                                        expect failed
#   scratch_dir NAME                     a fresh folder in `scratch`, removed
#                                        when the test exits
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
