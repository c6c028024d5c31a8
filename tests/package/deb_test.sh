#!/usr/bin/env bash
# The Debian packages, as a user gets them: built from a build tree with CPack, installed into
# this machine's system with apt-get, used (oid --version, man -w, the completions, a program
# built with find_package and with pkg-config, nothing pointing at any prefix), then removed.
#
#   deb_test.sh BUILD_DIR SOURCE_DIR SCRATCH CXX
#
# It needs root (apt-get install): without it the test is skipped (77), unless CI=true. It refuses
# to run where oid or liboid-dev is installed already, rather than replace or remove them.
set -euo pipefail
build=$1 source=$2 scratch=$3 cxx=$4

fail() {
  echo "deb_test: $*" >&2
  exit 1
}

if [ "$(id -u)" -ne 0 ]; then
  [ "${CI:-}" = "true" ] && fail "needs root to install the packages (CI=true)"
  echo "deb_test: skipped: installing packages needs root"
  exit 77
fi
for p in oid liboid-dev; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    fail "$p is installed on this system already; remove it first (apt-get remove $p)"
  fi
done

rm -rf "$scratch"
mkdir -p "$scratch"
cpack --config "$build/CPackConfig.cmake" -B "$scratch/debs" >"$scratch/cpack.log" 2>&1 ||
  fail "cpack failed: $(cat "$scratch/cpack.log")"
debs=("$scratch"/debs/oid_*.deb "$scratch"/debs/liboid-dev_*.deb)
for d in "${debs[@]}"; do [ -f "$d" ] || fail "cpack made no $d"; done

# What each package holds and needs, before it goes anywhere.
cli_files=$(dpkg-deb -c "${debs[0]}")
dev_files=$(dpkg-deb -c "${debs[1]}")
for f in ./usr/bin/oid ./usr/share/man/man1/oid.1 ./usr/share/man/man1/oid-mongo-dump.1 \
  ./usr/share/bash-completion/completions/oid ./usr/share/zsh/vendor-completions/_oid \
  ./usr/share/doc/oid/copyright; do
  grep -q " $f\$" <<<"$cli_files" || fail "the oid package lacks $f"
done
for f in ./usr/include/oid/mongo.hpp ./usr/lib/liboid-mongo.a ./usr/lib/pkgconfig/oid.pc \
  ./usr/lib/cmake/oid/oid-config.cmake ./usr/share/doc/liboid-dev/copyright; do
  grep -q " $f\$" <<<"$dev_files" || fail "the liboid-dev package lacks $f"
done
if grep -q "/include/\|\.a\$" <<<"$cli_files"; then fail "the oid package holds development files"; fi
if grep -q "/bin/\|/man/" <<<"$dev_files"; then fail "liboid-dev holds the command's files"; fi
depends=$(dpkg-deb -f "${debs[0]}" Depends)
for lib in libssl3 libc6 zlib1g; do
  grep -q "$lib" <<<"$depends" || fail "oid's Depends ($depends) does not name $lib"
done

remove() { apt-get remove -y -qq oid liboid-dev >/dev/null 2>&1 || true; }
trap remove EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${debs[@]}" \
  >"$scratch/apt.log" 2>&1 || fail "apt-get install failed: $(cat "$scratch/apt.log")"

# The command, from the system's PATH.
[ "$(command -v oid)" = /usr/bin/oid ] || fail "oid on the PATH is $(command -v oid), not /usr/bin/oid"
version=$(/usr/bin/oid --version)
[[ $version == "oid "[0-9]* ]] || fail "oid --version says '$version'"
/usr/bin/oid inspect "$(/usr/bin/oid)" >/dev/null || fail "the installed oid cannot inspect its own id"
# Its manual pages, where man looks.
[ "$(man -w oid)" = /usr/share/man/man1/oid.1 ] || fail "man -w oid says '$(man -w oid 2>&1)'"
man -w oid-mongo-restore >/dev/null || fail "man -w oid-mongo-restore finds nothing"
MANWIDTH=80 man oid-mongo-dump 2>/dev/null | grep -q "numParallelCollections" ||
  fail "man oid-mongo-dump does not show --numParallelCollections"
# Its completions, where bash-completion and zsh's compinit look.
registered=$(bash --norc --noprofile -c \
  'source /usr/share/bash-completion/completions/oid && complete -p oid')
[ "$registered" = "complete -F _oid oid" ] || fail "bash: complete -p oid says '$registered'"
zsh_function=$(zsh -f -c 'autoload -U compinit && compinit -u -d /dev/null && print -r -- ${_comps[oid]}')
[ "$zsh_function" = _oid ] || fail "zsh's compinit does not know oid (got '$zsh_function')"

# A program built against the installed libraries, with find_package and with pkg-config.
cmake -DOID_MODE=system -DOID_CONSUMER_SOURCE="$source/tests/package" -DOID_SCRATCH="$scratch/consumer" \
  -DOID_CXX_COMPILER="$cxx" -P "$source/tests/package/run.cmake" >"$scratch/consumer.log" 2>&1 ||
  fail "the consumer did not build against the system's oid: $(cat "$scratch/consumer.log")"

apt-get remove -y -qq oid liboid-dev >"$scratch/apt.log" 2>&1 ||
  fail "apt-get remove failed: $(cat "$scratch/apt.log")"
trap - EXIT
for f in /usr/bin/oid /usr/share/man/man1/oid.1 /usr/include/oid /usr/lib/liboid-mongo.a \
  /usr/lib/pkgconfig/oid.pc; do
  [ ! -e "$f" ] || fail "$f is still there after apt-get remove"
done
echo "deb_test: built, installed, used (command, man pages, completions, find_package, pkg-config) and removed"
