#!/usr/bin/env bash
# The manual pages and shell completions that oid_docgen generates (cli/docgen.cpp), checked
# against the built `oid` itself:
#
#   cli_docs_test.sh manual OID MAN_DIR       every command that `oid help` lists has its page,
#                                             which groff renders without a warning and which
#                                             names every flag the command's --help names
#   cli_docs_test.sh completion COMPLETION_DIR   bash (complete -p, then _oid on partial words)
#                                             and zsh (_oid with compsys' builtins stubbed)
set -euo pipefail

fail() {
  echo "cli_docs_test: $*" >&2
  exit 1
}

# The subcommands a help text lists, one a line.
subcommands_in() { awk '/^Subcommands:/ {on = 1; next} on && /^$/ {on = 0} on && /^  [a-z]/ {print $1}'; }

# The flags a help text lists (-d, --db, ...), one a line.
flags_in() {
  awk '/^  -/ {print $1}' | tr ',' '\n' | sed -n 's/^\(--*[A-Za-z][A-Za-z0-9-]*\).*/\1/p'
}

check_manual() {
  local oid=$1 man_dir=$2 pages=0
  # Breadth first from oid itself: "" is oid, "mongo dump" is oid mongo dump.
  local -a queue=("")
  while ((${#queue[@]})); do
    local path=${queue[0]}
    queue=("${queue[@]:1}")
    local help page warnings
    # shellcheck disable=SC2086  # the path's words are the arguments
    help=$("$oid" help $path)
    page=$man_dir/oid${path:+-${path// /-}}.1
    [ -f "$page" ] || fail "'oid $path' has no manual page ($page)"
    pages=$((pages + 1))
    warnings=$(groff -man -ww -z "$page" 2>&1) || fail "groff failed on $page: $warnings"
    [ -z "$warnings" ] || fail "groff warns on $page: $warnings"
    local rendered
    rendered=$(MANWIDTH=200 man -l "$page" 2>/dev/null | sed 's/\x08.//g')
    while read -r flag; do
      grep -q -- "$flag\b" <<<"$rendered" || fail "$page does not name $flag, which 'oid help $path' lists"
    done < <(flags_in <<<"$help")
    while read -r sub; do
      queue+=("${path:+$path }$sub")
    done < <(subcommands_in <<<"$help")
  done
  local files
  files=$(find "$man_dir" -name 'oid*.1' | wc -l)
  [ "$files" -eq "$pages" ] || fail "$files pages in $man_dir, but oid has $pages commands"
  echo "cli_docs_test: $pages commands, each with its page; groff is silent; every flag is named"
}

# bash: what _oid offers for the words given, the last being the one completed.
bash_offers() {
  bash --norc --noprofile -c '
    source "$1/oid.bash"
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _oid
    ((${#COMPREPLY[@]} == 0)) || printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$completion_dir" "$@"
}

expect_bash() {
  local want=$1 got
  shift
  got=$(bash_offers "$@")
  [ "$got" = "$want" ] || fail "bash: '$*' offers '$got', not '$want'"
}

# zsh: what _oid offers, with compsys' functions replaced by ones that print their candidates
# (_describe's matching the word's start, as compsys would).
zsh_offers() {
  zsh -f -c '
    dir=$1; shift
    compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@" }
    _describe() { local -a items=("${(@P)${@[-1]}}"); items=("${items[@]%%:*}"); print -rl -- ${(M)items:#${words[CURRENT]}*} }
    compdef() { : }
    _files() { print -r -- "(files${1:+ $1})" }
    compset() { return 0 }
    source "$dir/_oid"
    words=("$@")
    CURRENT=${#words}
    _oid
  ' _ "$completion_dir" "$@" | sort | tr '\n' ' '
}

expect_zsh() {
  local want=$1 got
  shift
  got=$(zsh_offers "$@")
  [ "$got" = "$want" ] || fail "zsh: '$*' offers '$got', not '$want'"
}

check_completion() {
  [ -f "$completion_dir/oid.bash" ] || fail "no $completion_dir/oid.bash"
  [ -f "$completion_dir/_oid" ] || fail "no $completion_dir/_oid"
  local registered
  registered=$(bash --norc --noprofile -c 'source "$1/oid.bash"; complete -p oid' _ "$completion_dir")
  [ "$registered" = "complete -F _oid oid" ] || fail "bash: complete -p oid says '$registered'"

  local scratch
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' RETURN
  mkdir "$scratch/dumpdir"
  touch "$scratch/tweets.bson" "$scratch/tweets.json"

  expect_bash "mongo " oid mon
  expect_bash "databases delete drop dump " oid mongo d
  expect_bash "create drop list " oid mongo indexes ""
  # A flag takes no value: the word after it is still a command.
  expect_bash "create drop list " oid mongo --help indexes ""
  expect_bash "--type " oid mongo export --ty
  expect_bash "csv json " oid mongo export --type ""
  expect_bash "csv json " oid mongo export --type = ""
  expect_bash "csv " oid mongo export --type = c
  expect_bash "csv json " oid mongo export -d shop -c orders --type ""
  expect_bash "--jsonArray --jsonFormat " oid mongo export --uri mongodb://x/ --js
  expect_bash "compact64 snowflake sonyflake " oid new --layout ""
  expect_bash "canonical relaxed " oid bson dump --mode ""
  expect_bash "$scratch/tweets.bson " oid bson dump "$scratch/tweets.b"
  expect_bash "$scratch/dumpdir " oid mongo dump --out "$scratch/du"
  expect_bash "$scratch/tweets.json " oid mongo import shop.tweets --file "$scratch/tweets.j"
  expect_bash "$scratch/tweets.bson " oid mongo restore --archive = "$scratch/tweets.b"
  # --archive takes its file only after '=': the word after a bare --archive is an argument.
  expect_bash "--excludeCollection --excludeCollectionsWithPrefix " oid mongo dump --archive --exc
  expect_bash "" oid mongo find --limit ""
  expect_bash "--help --version " oid --
  # A flag's value is not a command: "mongo" after --db is the database's name.
  expect_bash "" oid mongo dump --db mongo ""

  expect_zsh "bson check-unique convert help inspect mongo new range " oid ""
  expect_zsh "create drop list " oid mongo indexes ""
  expect_zsh "csv json " oid mongo export --type ""
  expect_zsh "csv json " oid mongo export --type=
  expect_zsh "insert merge upsert " oid mongo import shop.t --mode ""
  expect_zsh "(files) " oid bson dump ""
  expect_zsh "(files -/) " oid mongo dump --out ""
  expect_zsh "--help --version " oid --
  echo "cli_docs_test: bash and zsh complete commands, flags, their values and files"
}

case "${1:-}" in
  manual)
    [ $# -eq 3 ] || fail "usage: cli_docs_test.sh manual OID MAN_DIR"
    check_manual "$2" "$3"
    ;;
  completion)
    [ $# -eq 2 ] || fail "usage: cli_docs_test.sh completion COMPLETION_DIR"
    completion_dir=$2
    check_completion
    ;;
  *) fail "usage: cli_docs_test.sh manual OID MAN_DIR | completion COMPLETION_DIR" ;;
esac
