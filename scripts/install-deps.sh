#!/usr/bin/env bash
# Installs the Debian 12 packages oid needs to build, test, fuzz and benchmark, when missing.
# Safe to run again: it only calls apt-get when something is not installed yet.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config          # build
  ccache                                    # compiler cache: the suite's five builds share work
  clang libclang-rt-14-dev clang-format-14  # fuzzers (libFuzzer), sanitizers, formatting
  libgtest-dev libgmock-dev                 # tests
  libfmt-dev libcli11-dev libsimdjson-dev   # the command (CLI11), the tests (fmt, simdjson)
  zlib1g-dev                                # the command: oid mongo dump/restore --gzip
  libssl-dev libidn-dev openssl             # client: SCRAM and TLS (libcrypto, libssl), SASLprep; test certificates
  libbenchmark-dev libbson-dev              # benchmarks: Google Benchmark, libbson as the peer
  libmongoc-dev                             # client benchmark: libmongoc as the C peer
  python3-bson python3-pymongo              # BSON interoperability test (json_util needs pymongo)
  strace util-linux                         # system-call counting, unshare for the fleet test
  python3                                   # scripts/uniqueness_model.py (the uniqueness tests)
  python3-venv                              # the Python package (python/): built and tested in a venv
  nsd                                       # DNS server on loopback for the mongodb+srv:// tests
  curl ca-certificates                      # scripts/spec-data.sh: the specification suites
  zsh man-db groff-base                     # the completion and manual page tests
  dpkg-dev file                             # the Debian packages (CPack: dpkg-shlibdeps, file)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo for apt-get" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
