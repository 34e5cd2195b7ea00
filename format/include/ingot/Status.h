//===- Status.h - Error reporting without exceptions ------------*- C++ -*-===//
//
// The runtime reports every failure as a Status carrying a message that names
// the file, tensor, node or input involved. Callers propagate it unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <utility>

namespace ingot {

class Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  bool isOk() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

} // namespace ingot
