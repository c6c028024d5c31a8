#!/usr/bin/env bash
# Makes throwaway certificates, an OCSP responder's index and a CRL for the revocation tests in
# DIR (created if missing), with the openssl command. Nothing here is secret or committed.
#
#   scripts/make-ocsp-test-certs.sh DIR RESPONDER_URL DEAD_URL STALLED_URL
#
# RESPONDER_URL goes into the server certificates' Authority Information Access (OCSP), DEAD_URL
# into query-unreachable.pem's (nothing listens there) and STALLED_URL into query-stalled.pem's
# (something accepts there and never answers). DIR then holds (PEM):
#   ca.pem, ca.key               the CA; ca-db/ is its `openssl ca` database
#   index.txt                    ca-db's index: the status `openssl ocsp -index` answers with
#   responder.pem, responder.key a responder the CA delegated to (extendedKeyUsage OCSPSigning)
#   rogue.pem, rogue.key         a self-signed "responder" nobody trusts
#   other-ca.pem, other-ca.key   a second CA, which issued none of the certificates below
#   both-cas.pem                 ca.pem and other-ca.pem: a tlsCAFile trusting both
#   NAME.pem, NAME.key           server certificates (subjectAltName IP:127.0.0.1, AIA OCSP URL):
#     staple-good staple-revoked staple-unknown staple-rogue must-staple query-good
#     query-revoked query-unreachable query-stalled endpoint-revoked cached crl-good crl-revoked
#   (*-revoked are revoked in index.txt and crl.pem; staple-unknown is unknown to the CA's
#    database; must-staple has the TLS Feature status_request extension)
#   crl.pem                      the CA's CRL
#   NAME.staple                  a DER OCSP response about NAME.pem, for the server to staple:
#     staple-good, staple-revoked, staple-unknown (signed by responder.pem) and staple-rogue
#     (signed by rogue.pem)
set -euo pipefail
# shellcheck source=scripts/lib/test-ca.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/test-ca.sh"

usage="usage: $0 DIR RESPONDER_URL DEAD_URL STALLED_URL"
dir=${1:?$usage}
url=${2:?$usage}
dead=${3:?$usage}
stalled=${4:?$usage}
mkdir -p "$dir"
cd "$dir"
umask 077
subj=/O=oid-test

self_signed_ca ca oid-ocsp-test-ca 30
ca_database 1000

# issue NAME EXTENSIONS [in-database]: NAME.pem and NAME.key signed by the CA.
issue() {
  local name=$1 ext=$2 record=${3:-yes}
  key "$name.key"
  openssl req -new -key "$name.key" -subj "$subj/CN=$name" -out "$name.csr"
  printf '%b\n' "$ext" >"$name.ext"
  if [ "$record" = yes ]; then
    openssl ca -batch -config ca-db/ca.cnf -cert ca.pem -keyfile ca.key -in "$name.csr" \
      -extfile "$name.ext" -notext -out "$name.pem" 2>/dev/null
  else
    openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -set_serial 0x7eadbeef -days 30 \
      -sha256 -extfile "$name.ext" -out "$name.pem" 2>/dev/null
  fi
  rm -f "$name.csr" "$name.ext"
}

server_ext="basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1"
aia="authorityInfoAccess=OCSP;URI:$url"

issue responder 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=OCSPSigning'
for name in staple-good staple-revoked staple-rogue query-good query-revoked endpoint-revoked \
  cached crl-good crl-revoked; do
  issue "$name" "$server_ext\n$aia"
done
issue staple-unknown "$server_ext\n$aia" no
issue must-staple "$server_ext\n$aia\ntlsfeature=status_request"
issue query-unreachable "$server_ext\nauthorityInfoAccess=OCSP;URI:$dead"
issue query-stalled "$server_ext\nauthorityInfoAccess=OCSP;URI:$stalled"
for name in staple-revoked query-revoked endpoint-revoked crl-revoked; do
  openssl ca -config ca-db/ca.cnf -cert ca.pem -keyfile ca.key -revoke "$name.pem" \
    -crl_reason keyCompromise 2>/dev/null
done
openssl ca -config ca-db/ca.cnf -cert ca.pem -keyfile ca.key -gencrl -out crl.pem 2>/dev/null
cp ca-db/index.txt index.txt

self_signed_ca other-ca oid-ocsp-other-ca 30
cat ca.pem other-ca.pem >both-cas.pem

key rogue.key
openssl req -x509 -new -key rogue.key -subj "$subj/CN=oid-rogue-responder" -days 30 -sha256 \
  -out rogue.pem

# staple NAME SIGNER: NAME.staple, the response SIGNER gives about NAME.pem.
staple() {
  openssl ocsp -issuer ca.pem -cert "$1.pem" -no_nonce -reqout "$1.req" >/dev/null 2>&1
  openssl ocsp -index index.txt -CA ca.pem -rsigner "$2.pem" -rkey "$2.key" -reqin "$1.req" \
    -respout "$1.staple" -ndays 1 >/dev/null 2>&1
  rm -f "$1.req"
}
staple staple-good responder
staple staple-revoked responder
staple staple-unknown responder
staple staple-rogue rogue
chmod 0644 ./*.pem ./*.staple
