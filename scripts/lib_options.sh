# shellcheck shell=bash
# Sourced by the scripts whose options are `--name VALUE` and flags: their one
# parser. The script defines `usage` (its help) and `bad` (one line on
# stderr, exit 2) first.
#   parse_options TABLE ARGS...   TABLE: the name of an associative array from
#                                 each value option to the variable it sets.
#                                 -h/--help prints the usage and exits 0; a
#                                 value option without its value is refused;
#                                 every other argument is left, in order, in
#                                 the array `arguments` for the script to judge.
parse_options() {
  local -n table=$1
  shift
  arguments=()
  while (($#)); do
    case $1 in
      -h | --help) usage; exit 0 ;;
    esac
    if [[ -n ${table["$1"]+set} ]]; then
      (($# >= 2)) || bad "$1 needs a value"
      printf -v "${table["$1"]}" '%s' "$2"
      shift 2
    else
      arguments+=("$1")
      shift
    fi
  done
}
