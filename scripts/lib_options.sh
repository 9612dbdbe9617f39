# shellcheck shell=bash
# Sourced by the scripts whose options are `--name VALUE` and flags: their one
# parser. The script defines `usage` (its help) and `bad` (one line on
# stderr, exit 2) first.
#   parse_options TABLE ARGS...   TABLE: the name of an associative array from
#                                 each value option to the variable it sets.
#                                 -h/--help prints the usage and exits 0; a
#                                 value option without its value, with an
#                                 empty one or given twice is refused; every
#                                 other argument is left, in order, in the
#                                 array `arguments` for the script to judge.
# An empty value is a variable its caller left unset (`--ranks ""` ran the
# whole default grid), and of a repeated option one value would be dropped.
parse_options() {
  local -n table=$1
  local -A given=()
  shift
  arguments=()
  while (($#)); do
    case $1 in
      -h | --help) usage; exit 0 ;;
    esac
    if [[ -n ${table["$1"]+set} ]]; then
      (($# >= 2)) || bad "$1 needs a value"
      [[ -n $2 ]] || bad "$1 needs a value, got an empty one"
      [[ -z ${given["$1"]+set} ]] || bad "$1 given twice ('${given["$1"]}' and '$2'); give it once"
      given["$1"]=$2
      printf -v "${table["$1"]}" '%s' "$2"
      shift 2
    else
      arguments+=("$1")
      shift
    fi
  done
}

# make_out_dir DIR: the --out-dir made now, so that one that cannot be made
# or written is refused (one line, through `bad`) before anything runs.
# made_out_dir names it when this call made it, for unmake_out_dir.
make_out_dir() {
  local why
  made_out_dir=""
  [[ -d $1 ]] || made_out_dir=$1
  why=$(mkdir -p -- "$1" 2>&1) || bad "--out-dir $1: cannot create it (${why##*: })"
  [[ -w $1 ]] || bad "--out-dir $1: not writable"
}

# unmake_out_dir: the folder make_out_dir made, removed again if the run
# ended before writing its outputs there (an EXIT trap's part): outputs
# whole or absent, the folder too.
unmake_out_dir() {
  [[ -z ${made_out_dir:-} ]] || rmdir -- "$made_out_dir" 2>/dev/null || true
}
