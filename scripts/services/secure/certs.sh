#!/usr/bin/env bash
# A private CA and the certificates the secure profile (and the TLS tests) use, made with openssl:
#   ca.pem/ca.key          the private CA (10 years)
#   server.pem/server.key  CN=localhost, SAN localhost + 127.0.0.1, signed by the CA (825 days)
#   client.pem/client.key  CN=gateway, a client certificate for mutual TLS
#   expired.pem/.key       CN=localhost, signed by the CA, valid only in 2020
#   other-ca.pem           a second CA that signed none of these (an "untrusted" trust store)
# Usage: certs.sh <dir> [days]. Existing files are kept (idempotent); delete the dir to renew.
set -euo pipefail
dir=$1
days=${2:-825}
mkdir -p "$dir"
cd "$dir"
umask 077
[ -s ca.pem ] && [ -s server.pem ] && [ -s client.pem ] && [ -s expired.pem ] && [ -s other-ca.pem ] && exit 0

openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj '/CN=gateway test CA' \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj '/CN=some other CA' \
  -keyout other-ca.key -out other-ca.pem 2>/dev/null

cat >server.ext <<'X'
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=DNS:localhost,IP:127.0.0.1
X
cat >client.ext <<'X'
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
X

sign() { # name subject extfile [extra openssl x509 args...]
  local name=$1 subject=$2 ext=$3; shift 3
  openssl req -new -newkey rsa:2048 -nodes -sha256 -subj "$subject" -keyout "$name.key" -out "$name.csr" 2>/dev/null
  openssl x509 -req -sha256 -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -extfile "$ext" -out "$name.pem" "$@" 2>/dev/null
  rm -f "$name.csr"
}
sign server '/CN=localhost' server.ext -days "$days"
sign client '/CN=gateway' client.ext -days "$days"

# Expired: `openssl ca` is the one tool of Debian 12's openssl (3.0) that takes explicit dates.
mkdir -p ca-db && : >ca-db/index.txt && echo 1000 >ca-db/serial
cat >ca.cnf <<X
[ca]
default_ca = test
[test]
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = any
copy_extensions = none
[any]
commonName = supplied
X
openssl req -new -newkey rsa:2048 -nodes -sha256 -subj '/CN=localhost' -keyout expired.key -out expired.csr 2>/dev/null
openssl ca -batch -config ca.cnf -in expired.csr -out expired.pem -notext -extfile server.ext \
  -startdate 20200101000000Z -enddate 20201231000000Z 2>/dev/null
rm -rf expired.csr ca-db ca.cnf ca.srl
chmod 644 ./*.pem
