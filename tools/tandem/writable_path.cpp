#include "writable_path.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tandem/core/error.h"

namespace tandem::cli {

void check_writable(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ignored;
  if (fs::is_directory(path, ignored)) {
    throw Error("cannot write the " + what + " '" + path +
                "': it is a folder (give a file name in it)");
  }
  const fs::path parent = fs::path(path).parent_path();
  const fs::path folder = parent.empty() ? fs::path(".") : parent;
  // The atomic writers put their temporary file beside the target, so a
  // file made there is what the real write will need.
  const fs::path probe = folder / (".tandem-write-probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    const int reason = errno;
    throw Error("cannot write the " + what + " '" + path + "': creating a file in '" +
                folder.string() + "' failed: " + std::strerror(reason));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  if (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), W_OK) != 0) {
    const int reason = errno;
    throw Error("cannot write the " + what + " '" + path + "': " + std::strerror(reason));
  }
}

}  // namespace tandem::cli
