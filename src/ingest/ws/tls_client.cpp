#include "ingest/ws/tls_client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>

namespace ts {

namespace ssl = boost::asio::ssl;

Result<std::shared_ptr<ssl::context>> make_tls_client_context(const std::string& ca_file) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  if (ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec) return Status(StatusCode::kInternal, "TLS: the system CA store cannot be used: " + ec.message());
  } else {
    ctx->load_verify_file(ca_file, ec);
    if (ec) {
      return Status(StatusCode::kInvalidArgument,
                    "--ca-file " + ca_file + ": not a readable PEM certificate file (" + ec.message() + ")");
    }
  }
  return ctx;
}

Status prepare_tls_client(SSL* ssl, const std::string& host) {
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(host, ec);
  const bool ip_literal = !ec;
  if (ip_literal) {
    if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) != 1) {
      return Status(StatusCode::kInternal, "TLS: cannot check the certificate against address " + host);
    }
    return Status::ok();
  }
  if (SSL_set_tlsext_host_name(ssl, host.c_str()) != 1) {
    return Status(StatusCode::kInternal, "TLS: cannot set the server name (SNI) " + host);
  }
  if (SSL_set1_host(ssl, host.c_str()) != 1) {
    return Status(StatusCode::kInternal, "TLS: cannot check the certificate against host " + host);
  }
  return Status::ok();
}

TlsFailure describe_tls_failure(SSL* ssl, const boost::system::error_code& ec) {
  TlsFailure f;
  const long verify = ssl != nullptr ? SSL_get_verify_result(ssl) : X509_V_OK;
  if (verify != X509_V_OK) {
    f.certificate = true;
    f.text = std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify);
    return f;
  }
  f.text = ec.message();
  if (ec.category() == boost::asio::error::get_ssl_category()) {
    char buf[256];
    ERR_error_string_n(static_cast<unsigned long>(ec.value()), buf, sizeof buf);
    f.text = buf;
  }
  return f;
}

}  // namespace ts
