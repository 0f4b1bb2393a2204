// Private: POSIX file plumbing shared by the file readers and writers.
#pragma once

#include <unistd.h>

#include <string>
#include <system_error>

namespace tandem::detail {

/// Owns a file descriptor (negative: none) and closes it however the owner
/// exits. For reading: a failed close of a read-only descriptor loses
/// nothing, so it is not reported.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

/// strerror's text for `error`, thread-safe.
inline std::string errno_text(int error) {
  return std::generic_category().message(error);
}

}  // namespace tandem::detail
