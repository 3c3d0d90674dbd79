#pragma once
// Certificates for the TLS tests of the websocket source, made fresh per test run with the
// `openssl` command (Debian's openssl, in the Makefile's DEB_PACKAGES) into a scratch folder:
// a test CA, a server certificate it signs for localhost and 127.0.0.1, a second server
// certificate it signs for another name only, and an unrelated CA (the "wrong CA").
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace ts::testing {

struct TestCerts {
  std::filesystem::path ca;            // the CA that signed server.pem and other-name.pem
  std::filesystem::path server_cert;   // CN=localhost, SAN DNS:localhost, IP:127.0.0.1
  std::filesystem::path server_key;
  std::filesystem::path other_name_cert;  // SAN DNS:feed.example.invalid only
  std::filesystem::path other_name_key;
  std::filesystem::path wrong_ca;      // a CA that signed nothing here
  std::string error;                   // why the certificates could not be made ("" = made)
};

inline TestCerts make_test_certs(const std::filesystem::path& dir) {
  TestCerts c;
  const std::string d = dir.string();
  const std::string log = d + "/openssl.log";
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  {
    std::ofstream(dir / "server.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n";
    std::ofstream(dir / "other.ext") << "subjectAltName=DNS:feed.example.invalid\nbasicConstraints=CA:FALSE\n";
  }
  const std::string cmd =
      "cd '" + d + "' && {" +
      " openssl req -x509 " + key + " -keyout ca.key -out ca.pem -days 2 -subj '/CN=ticksentry test CA' &&" +
      " openssl req -x509 " + key + " -keyout wrong-ca.key -out wrong-ca.pem -days 2 -subj '/CN=another CA' &&" +
      " openssl req " + key + " -keyout server.key -out server.csr -subj '/CN=localhost' &&" +
      " openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext"
      " -out server.pem &&" +
      " openssl req " + key + " -keyout other.key -out other.csr -subj '/CN=feed.example.invalid' &&" +
      " openssl x509 -req -in other.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile other.ext"
      " -out other.pem; } >'" + log + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    c.error = "the openssl command could not make test certificates (see " + log + ")";
    return c;
  }
  c.ca = dir / "ca.pem";
  c.server_cert = dir / "server.pem";
  c.server_key = dir / "server.key";
  c.other_name_cert = dir / "other.pem";
  c.other_name_key = dir / "other.key";
  c.wrong_ca = dir / "wrong-ca.pem";
  return c;
}

}  // namespace ts::testing
