// Atomic file writes: a file at `path` holds either its old contents or the
// complete new ones, never a mix, whenever the writer dies (SIGKILL, power
// loss after commit) or fails (disk full, I/O error).
//
//   tandem::io::AtomicFile file("ckpt/latest.safetensors");
//   file.write(header.data(), header.size());
//   file.write(payload.data(), payload.size());
//   file.commit();   // now, and only now, the path shows the new file
//   // leaving scope without commit() (an exception) removes the temporary
//
// How: the bytes go to a temporary file beside the target (same directory,
// so the same filesystem), named `.<name>.tmp.<pid>.<n>`; commit() fsyncs it,
// renames it over the target (POSIX rename is atomic) and fsyncs the
// directory so the rename itself survives a crash. The writer holds an
// flock on its temporary file while it exists, so a temporary file nobody
// holds was left by a writer that died; the next AtomicFile for the same
// path removes those (see remove_stale_temp_files). Errors name the path
// and the system's reason (errno text).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

namespace tandem::io {

class AtomicFile {
 public:
  /// Removes stale temporary files of `path`, then creates a new one.
  explicit AtomicFile(std::filesystem::path path);
  /// Without commit(): removes the temporary file; the target is untouched.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  /// Makes the written bytes the contents of path(). Call at most once.
  void commit();

  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& temp_path() const { return temp_path_; }

 private:
  [[noreturn]] void fail(std::string_view action, int error) const;
  void discard() noexcept;

  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes `bytes` to `path` with an AtomicFile.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// Removes the temporary files that AtomicFile writers of `path` left when
/// they died (those no live writer holds); returns how many it removed.
/// Files it cannot inspect or remove are left alone.
size_t remove_stale_temp_files(const std::filesystem::path& path);

/// Whether `file_name` has the form of a temporary file of a target named
/// `target_name` (`.<target_name>.tmp.<pid>.<n>`).
bool is_temp_file_name(std::string_view file_name, std::string_view target_name);

}  // namespace tandem::io
