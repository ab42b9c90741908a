# Sourced by loadtest/run.sh and loadtest/ab.sh: the certificates of a secure run, made fresh for it
# with openssl, so that nothing secret outlives the run's folder.
# shellcheck shell=bash

# One CA, and one certificate for 127.0.0.1 signed by it that every ringkv node and etcd member
# serves and presents to its peers (both uses in it: serverAuth and clientAuth, as the chart's
# certificates). P-256, as cert-manager's default ECDSA keys and the chart's own.
# Writes DIR/ca.crt, DIR/ca.key, DIR/node.crt and DIR/node.key.
make_pki() { # dir
  local dir=$1
  command -v openssl >/dev/null || die "a secure run needs openssl: apt-get install -y openssl"
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=ringkv-loadtest-ca \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
    -keyout "$dir/node.key" -out "$dir/node.csr" 2>/dev/null
  openssl x509 -req -in "$dir/node.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
    -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n') \
    -out "$dir/node.crt" 2>/dev/null
  rm -f "$dir/node.csr"
}

# ringkv's settings for TLS on every port (mutual between nodes) with DIR's certificates: what the
# chart turns on by default. Sets the array ringkv_tls_args.
ringkv_tls_settings() { # dir
  ringkv_tls_args=(--ringkv.tls.enabled=true --ringkv.tls.certificate="$1/node.crt"
    --ringkv.tls.private-key="$1/node.key" --ringkv.tls.ca="$1/ca.crt")
}
