# Sourced by scripts/make-test-certs.sh and scripts/make-ocsp-test-certs.sh: the pieces of a
# throwaway test CA that both need. Expects `subj` (the subject prefix, e.g. /O=oid-test) and runs
# in the directory the certificates go to.

# key FILE: a new P-256 private key.
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# self_signed_ca NAME CN DAYS: NAME.key and NAME.pem, a CA certificate for CN.
self_signed_ca() {
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -subj "$subj/CN=$2" -days "$3" -sha256 \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -out "$1.pem"
}

# ca_database SERIAL: ca-db/, an empty `openssl ca` database (index, serial and CRL number from
# SERIAL) and its configuration ca-db/ca.cnf: 30-day certificates, 1-day CRLs, any subject with a
# common name, no extensions copied from requests (each certificate's come from -extfile).
# `openssl ca` is what can backdate a certificate (-startdate) and keep the index an OCSP
# responder answers from; `openssl x509 -req` can do neither.
ca_database() {
  mkdir -p ca-db
  : >ca-db/index.txt
  echo "$1" >ca-db/serial
  echo "$1" >ca-db/crlnumber
  cat >ca-db/ca.cnf <<CNF
[ca]
default_ca = test
[test]
database = ca-db/index.txt
new_certs_dir = ca-db
serial = ca-db/serial
crlnumber = ca-db/crlnumber
default_md = sha256
default_days = 30
default_crl_days = 1
policy = any
copy_extensions = none
unique_subject = no
[any]
organizationName = optional
commonName = supplied
CNF
}
