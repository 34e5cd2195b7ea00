//===- PeerSocket.cpp - Noticing a client that left a plain request -------===//
#include "PeerSocket.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ingot::server {
namespace {

/// "addr", port of a socket address (IPv4 or IPv6), or false.
bool endpoint(const sockaddr_storage &a, std::string *addr, int *port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto *in = reinterpret_cast<const sockaddr_in *>(&a);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    *port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto *in = reinterpret_cast<const sockaddr_in6 *>(&a);
    inet_ntop(AF_INET6, &in->sin6_addr, buf, sizeof buf);
    *port = ntohs(in->sin6_port);
  } else {
    return false;
  }
  *addr = buf;
  return true;
}

bool matches(int fd, const std::string &remoteAddr, int remotePort,
             const std::string &localAddr, int localPort) {
  sockaddr_storage peer{}, self{};
  socklen_t pl = sizeof peer, sl = sizeof self;
  if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &pl) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&self), &sl) != 0)
    return false;
  std::string ra, la;
  int rp = 0, lp = 0;
  return endpoint(peer, &ra, &rp) && endpoint(self, &la, &lp) &&
         rp == remotePort && lp == localPort && ra == remoteAddr &&
         la == localAddr;
}

} // namespace

int findConnectionSocket(const std::string &remoteAddr, int remotePort,
                         const std::string &localAddr, int localPort) {
  DIR *dir = opendir("/proc/self/fd");
  if (!dir)
    return -1;
  int found = -1;
  while (dirent *e = readdir(dir)) {
    char *end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (*end || end == e->d_name || fd == dirfd(dir))
      continue;
    struct stat st{};
    if (fstat(int(fd), &st) != 0 || !S_ISSOCK(st.st_mode))
      continue;
    if (matches(int(fd), remoteAddr, remotePort, localAddr, localPort)) {
      found = int(fd);
      break;
    }
  }
  closedir(dir);
  return found;
}

bool peerClosed(int fd) {
  char byte;
  const ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0)
    return true; // orderly shutdown by the peer
  return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

} // namespace ingot::server
