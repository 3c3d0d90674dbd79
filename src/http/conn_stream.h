#pragma once
// ConnStream: the httplib::Stream a worker hands cpp-httplib for one request. Reads come from the
// request the connection gate has already read whole (never from the socket: a worker does not
// wait for a client's bytes); writes go to the socket, each given write_timeout_ms to be taken
// (a client that stops reading ends its response or live stream instead of holding the thread).
#include <httplib.h>

#include <string>

namespace ts::http {

class ConnStream : public httplib::Stream {
 public:
  ConnStream(int fd, const std::string& request, std::string peer_ip, int peer_port, int write_timeout_ms)
      : fd_(fd), request_(request), peer_ip_(std::move(peer_ip)), peer_port_(peer_port),
        write_timeout_ms_(write_timeout_ms) {}

  bool is_readable() const override { return pos_ < request_.size(); }
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }
  bool write_failed() const { return write_failed_; }

 private:
  int fd_;
  const std::string& request_;
  size_t pos_ = 0;
  std::string peer_ip_;
  int peer_port_;
  int write_timeout_ms_;
  bool write_failed_ = false;
};

}  // namespace ts::http
