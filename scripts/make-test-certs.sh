#!/usr/bin/env bash
# Makes throwaway certificates for the TLS integration tests in DIR (created if missing), with the
# openssl command. Nothing here is secret or committed: every run makes new keys.
#
#   scripts/make-test-certs.sh DIR
#
# DIR then holds (PEM; keys unencrypted, mode 0600):
#   ca.pem, ca.key                   a CA that signs everything below but other-ca-client.pem
#   server.pem, server.key           the server: subjectAltName IP:127.0.0.1 and DNS:localhost
#   server-bundle.pem                server.pem + server.key in one file (tlsCertificateKeyFile form)
#   client.pem, client.key           a client certificate (CN=oid-test-client, clientAuth)
#   client-bundle.pem                client.pem + client.key in one file
#   client-encrypted.pem             client.pem + client.key encrypted with the password in
#                                    client-encrypted.password (for tlsCertificateKeyFilePassword)
#   expired.pem, expired.key         a server certificate from ca.pem that expired in the past
#   other-ca.pem, other-ca.key       a second CA, trusted by nobody
#   other-server.pem, other-server.key   a server certificate (127.0.0.1, localhost) from other-ca
#   other-ca-client-bundle.pem       a client certificate and key from other-ca
#   wrong-host.pem, wrong-host.key   a server certificate from ca.pem for DNS:wrong.example only
set -euo pipefail
# shellcheck source=scripts/lib/test-ca.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/test-ca.sh"

dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
cd "$dir"
umask 077

days=30
subj=/O=oid-test

ca() { self_signed_ca "$1" "$2" "$days"; }  # ca NAME CN

# leaf NAME CA CN EXTENSIONS [openssl x509 date options...]
leaf() {
  local name=$1 signer=$2 cn=$3 ext=$4
  shift 4
  key "$name.key"
  openssl req -new -key "$name.key" -subj "$subj/CN=$cn" -out "$name.csr"
  printf '%b\n' "$ext" >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA "$signer.pem" -CAkey "$signer.key" -CAcreateserial \
    -sha256 -extfile "$name.ext" "$@" -out "$name.pem" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

server_ext='basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost'
client_ext='basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth'

ca ca oid-test-ca
leaf server ca localhost "$server_ext" -days "$days"
leaf client ca oid-test-client "$client_ext" -days "$days"
leaf wrong-host ca wrong.example \
  'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:wrong.example' \
  -days "$days"
# Expired: valid for one day in January 2020. OpenSSL 3.0's `x509 -req` cannot set a start date
# in the past; `openssl ca` can (-startdate/-enddate), given a scratch database.
key expired.key
openssl req -new -key expired.key -subj "$subj/CN=localhost" -out expired.csr
printf '%b\n' "$server_ext" >expired.ext
ca_database 01
openssl ca -batch -config ca-db/ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr \
  -startdate 20200101000000Z -enddate 20200102000000Z -extfile expired.ext -notext \
  -out expired.pem 2>/dev/null
rm -rf ca-db expired.csr expired.ext

ca other-ca oid-test-other-ca
leaf other-server other-ca localhost "$server_ext" -days "$days"
leaf other-ca-client other-ca oid-test-client "$client_ext" -days "$days"

cat server.pem server.key >server-bundle.pem
cat client.pem client.key >client-bundle.pem
cat other-ca-client.pem other-ca-client.key >other-ca-client-bundle.pem
rm -f other-ca-client.pem other-ca-client.key
openssl rand -hex 12 >client-encrypted.password
{
  cat client.pem
  openssl pkcs8 -topk8 -in client.key -v2 aes-256-cbc -passout "file:client-encrypted.password"
} >client-encrypted.pem
rm -f ./*.srl
# Certificates are public: readable; keys and the password stay 0600.
chmod 0644 ./*.pem
chmod 0600 ./*.key client-encrypted.password server-bundle.pem client-bundle.pem \
  other-ca-client-bundle.pem client-encrypted.pem
