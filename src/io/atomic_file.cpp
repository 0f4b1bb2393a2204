#include "tandem/io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>

#include "core/file_descriptor.h"
#include "tandem/core/error.h"

namespace tandem::io {

namespace fs = std::filesystem;

namespace {

// The temporary files this process is writing now. Another thread's file
// is in use even before its flock is taken, so it is never taken for stale.
class ActiveTempFiles {
 public:
  void add(const std::string& path) {
    std::lock_guard<std::mutex> guard(mutex_);
    paths_.insert(path);
  }
  void remove(const std::string& path) {
    std::lock_guard<std::mutex> guard(mutex_);
    paths_.erase(path);
  }
  bool contains(const std::string& path) const {
    std::lock_guard<std::mutex> guard(mutex_);
    return paths_.count(path) != 0;
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::string> paths_;
};

ActiveTempFiles& active_temp_files() {
  static ActiveTempFiles files;
  return files;
}

using tandem::detail::errno_text;

fs::path directory_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

// A positive decimal number; nullopt for anything else.
std::optional<long> parse_pid(std::string_view digits) {
  long pid = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (error != std::errc() || end != digits.data() + digits.size() || pid <= 0) {
    return std::nullopt;
  }
  return pid;
}

bool process_exists(long pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// Whether some writer may still be writing `temp`: its process is alive
// (another process's pid could have been reused; keeping the file is the
// safe side), it is one of ours, or someone holds its lock (a process that
// inherited the descriptor).
bool may_be_in_use(const fs::path& temp, long pid) {
  if (pid == ::getpid()) {
    if (active_temp_files().contains(temp.string())) return true;
  } else if (process_exists(pid)) {
    return true;
  }
  int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return true;
  bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

// `.<target_name>.tmp.`: what the names of its temporary files start with.
std::string temp_name_prefix(std::string_view target_name) {
  std::string prefix = ".";
  prefix.append(target_name);
  prefix.append(".tmp.");
  return prefix;
}

// The writer's pid in the name of one of `target_name`'s temporary files,
// or nullopt if `file_name` is not one.
std::optional<long> temp_file_writer(std::string_view file_name,
                                     std::string_view target_name) {
  const std::string prefix = temp_name_prefix(target_name);
  if (file_name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = file_name.substr(prefix.size());
  size_t dot = rest.find('.');
  std::string_view sequence =
      rest.substr(dot == std::string_view::npos ? rest.size() : dot + 1);
  if (sequence.empty() ||
      sequence.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return parse_pid(rest.substr(0, dot));
}

}  // namespace

bool is_temp_file_name(std::string_view file_name, std::string_view target_name) {
  return temp_file_writer(file_name, target_name).has_value();
}

size_t remove_stale_temp_files(const fs::path& path) {
  const std::string target_name = path.filename().string();
  size_t removed = 0;
  std::error_code error;
  for (fs::directory_iterator it(directory_of(path), error), end; !error && it != end;
       it.increment(error)) {
    auto writer = temp_file_writer(it->path().filename().string(), target_name);
    if (!writer || may_be_in_use(it->path(), *writer)) continue;
    if (::unlink(it->path().c_str()) == 0) ++removed;
  }
  return removed;
}

AtomicFile::AtomicFile(fs::path path) : path_(std::move(path)) {
  TANDEM_CHECK(path_.has_filename(),
               "cannot write '",
               path_.string(),
               "': the path names a directory, not a file");
  remove_stale_temp_files(path_);
  static std::atomic<uint64_t> sequence{0};
  std::string temp_name = temp_name_prefix(path_.filename().string());
  temp_name.append(std::to_string(::getpid()));
  temp_name.append(".");
  temp_name.append(std::to_string(sequence.fetch_add(1)));
  temp_path_ = directory_of(path_) / temp_name;
  active_temp_files().add(temp_path_.string());
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    int error = errno;
    active_temp_files().remove(temp_path_.string());
    fail("creating the temporary file", error);
  }
  // Marks the file as in use for other processes' stale-file cleanup. A
  // filesystem without flock only makes that cleanup more cautious.
  ::flock(fd_, LOCK_EX | LOCK_NB);
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::fail(std::string_view action, int error) const {
  throw Error(tandem::detail::str("cannot write '",
                                  path_.string(),
                                  "': ",
                                  action,
                                  " failed: ",
                                  errno_text(error),
                                  " (temporary file '",
                                  temp_path_.string(),
                                  "')"));
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(temp_path_.c_str());
  }
  active_temp_files().remove(temp_path_.string());
}

void AtomicFile::write(const void* data, size_t size) {
  TANDEM_CHECK(fd_ >= 0 && !committed_,
               "cannot write '",
               path_.string(),
               "': the file was already committed");
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t written = ::write(fd_, bytes, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail("writing the temporary file", errno);
    }
    bytes += written;
    size -= static_cast<size_t>(written);
  }
}

void AtomicFile::commit() {
  TANDEM_CHECK(fd_ >= 0 && !committed_,
               "cannot write '",
               path_.string(),
               "': the file was already committed");
  if (::fsync(fd_) != 0) fail("flushing the temporary file", errno);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    fail("renaming the temporary file over it", errno);
  }
  committed_ = true;
  // The data was synced, so closing cannot lose it; the lock goes with it.
  ::close(fd_);
  fd_ = -1;
  active_temp_files().remove(temp_path_.string());
  // Without syncing the directory, a crash could forget the rename.
  int dir = ::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) fail("opening its directory to sync the rename", errno);
  int synced = ::fsync(dir);
  int error = errno;
  ::close(dir);
  // EINVAL: the filesystem cannot sync directories (nothing more to do).
  if (synced != 0 && error != EINVAL)
    fail("syncing its directory after the rename", error);
}

void write_file_atomically(const fs::path& path, std::string_view bytes) {
  AtomicFile file(path);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

}  // namespace tandem::io
