//===- PeerSocket.h - Noticing a client that left a plain request -*- C++ -*-===//
//
// cpp-httplib 0.11 (Debian 12's) gives a handler no view of its socket, and
// a non-streamed response writes nothing until the end, so a departed
// client would go unnoticed until its whole completion had run. The
// connection's socket is found instead by its two endpoints (each TCP
// connection has a unique pair), among this process's descriptors, and
// polled: a readable socket that yields 0 bytes on a peek has been closed
// by the peer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace ingot::server {

/// The descriptor of the connection from remoteAddr:remotePort to
/// localAddr:localPort, or -1 if none matches.
int findConnectionSocket(const std::string &remoteAddr, int remotePort,
                         const std::string &localAddr, int localPort);

/// The peer has closed its end (an orderly shutdown or a reset).
bool peerClosed(int fd);

} // namespace ingot::server
