#pragma once
// TLS for the websocket source's wss:// stream and https:// REST snapshots: OpenSSL through
// Boost.Asio's ssl wrapper (header-only; links libssl/libcrypto from Debian's libssl-dev).
//
// - make_tls_client_context(): TLS 1.2 or later, the peer's certificate verified (always: there
//   is no switch to turn it off) against the PEM file `ca_file` when one is given (--ca-file),
//   else the system's CA store (OpenSSL's default paths, /etc/ssl/certs on Debian).
// - prepare_tls_client(): per connection, before the handshake: SNI for a host name (not for an
//   IP literal, RFC 6066) and the name or address the certificate must carry (OpenSSL's own
//   RFC 6125 check: SSL_set1_host / X509_VERIFY_PARAM_set1_ip_asc).
// - describe_tls_failure(): after a failed handshake, what a person can act on: the X509 verify
//   result ("certificate verify failed: self-signed certificate in certificate chain") when the
//   certificate was the problem, else the error's message.
// Threading: a context is read-only after creation and may be shared by the connections of one
// client thread; the SSL* functions act on one connection.
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include "core/status.h"

namespace ts {

// kInvalidArgument naming the file when `ca_file` cannot be read as PEM certificates.
Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_client_context(const std::string& ca_file);

// kInternal when OpenSSL refuses the name (it does not on valid input).
Status prepare_tls_client(SSL* ssl, const std::string& host);

struct TlsFailure {
  bool certificate = false;  // the peer's certificate did not verify (a retry cannot fix it)
  std::string text;
};
TlsFailure describe_tls_failure(SSL* ssl, const boost::system::error_code& ec);

}  // namespace ts
