// Atomic writes (reliability spec T18, T19): a writer killed at any moment
// or failing after k bytes leaves the previous file intact and no partial
// file under the final name; its temporary file is recognised and removed
// by the next save; errors name the path and the system's reason.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "io/io_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::io {
namespace {

namespace fs = std::filesystem;
using tandem::testing::throws_with;
using testing::count_files_starting_with;
using testing::read_file;
using testing::ScratchDir;

const std::string kName = "ck.safetensors";
const std::string kTempPrefix = "." + kName + ".tmp.";

// Version v of a 1 MB "checkpoint": every byte depends on v.
TensorMap version_tensors(int v) {
  return {{"big", full({256 * 1024}, v, kFloat32)},
          {"small", tandem::tensor<int64_t>({v, 2 * v, 3 * v})}};
}
Metadata version_metadata(int v) { return {{"version", std::to_string(v)}}; }

// The pid of a process that has exited and been reaped.
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST(AtomicFile, T18_SigkillAtAnyMomentLeavesACompleteFile) {
  ScratchDir dir;
  const fs::path path = dir.path() / kName;
  constexpr int kVersions = 4;
  std::vector<TensorMap> versions;
  std::vector<std::string> complete;  // each version's exact bytes
  for (int v = 0; v < kVersions; ++v) {
    versions.push_back(version_tensors(v));
    complete.push_back(serialize(versions[v], version_metadata(v)));
  }
  save_tensors(versions[0], path, version_metadata(0));

  size_t kills_with_temp_files = 0;
  std::set<std::string> seen;
  for (int k = 0; k < 40; ++k) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Saves versions 1..3 in turn until killed (no tensor ops here: the
      // tensors were made before the fork).
      try {
        for (int i = 0; i < 100000; ++i) {
          int v = 1 + i % (kVersions - 1);
          save_tensors(versions[v], path, version_metadata(v));
        }
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    // Kill times spread over 0-25 ms, which covers every phase of a save.
    std::this_thread::sleep_for(std::chrono::microseconds((k * 7919) % 25000));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "the saving child failed on its own, status " << status;

    if (count_files_starting_with(dir.path(), kTempPrefix) > 0) ++kills_with_temp_files;
    const std::string bytes = read_file(path);
    bool is_complete = false;
    for (const std::string& version : complete)
      is_complete = is_complete || bytes == version;
    ASSERT_TRUE(is_complete) << "after kill " << k << " the file has " << bytes.size()
                             << " bytes matching no complete version";
    auto loaded = load_safetensors(path);
    EXPECT_TRUE(loaded.checksum_verified);
    seen.insert(loaded.metadata.at("version"));
  }
  EXPECT_GT(kills_with_temp_files, 0u) << "no kill landed inside a save";
  EXPECT_GT(seen.size(), 1u) << "the children never finished a save";
  // The next save removes what the killed writers left.
  save_tensors(versions[0], path, version_metadata(0));
  EXPECT_EQ(count_files_starting_with(dir.path(), kTempPrefix), 0u);
  EXPECT_EQ(read_file(path), complete[0]);
}

// Runs `save` in a child whose files may not grow past `limit` bytes, so the
// write fails with EFBIG after `limit` bytes; returns the child's error
// message ("" if the save succeeded).
std::string save_with_file_size_limit(rlim_t limit, const std::function<void()>& save) {
  int pipe_fds[2];
  EXPECT_EQ(::pipe(pipe_fds), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);  // fail the write instead of killing us
    rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    std::string message;
    try {
      save();
    } catch (const Error& e) {
      message = e.what();
    }
    if (!message.empty()) (void)!::write(pipe_fds[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  ssize_t got = 0;
  while ((got = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0)
    message.append(buffer, got);
  ::close(pipe_fds[0]);
  ::waitpid(child, nullptr, 0);
  return message;
}

TEST(AtomicFile, T18_IoErrorAfterKBytesLeavesThePreviousFile) {
  ScratchDir dir;
  const fs::path path = dir.path() / kName;
  const TensorMap old_tensors = {{"w", full({1000}, 1.0, kFloat64)}};
  const TensorMap new_tensors = {{"w", full({1000}, 2.0, kFloat64)}};
  save_tensors(old_tensors, path);
  const std::string old_bytes = read_file(path);
  const std::string new_bytes = serialize(new_tensors);
  const size_t size = new_bytes.size();
  for (size_t k :
       {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{100}, size / 2, size - 1}) {
    std::string message =
        save_with_file_size_limit(k, [&] { save_tensors(new_tensors, path); });
    EXPECT_NE(message.find("cannot write '" + path.string() + "'"), std::string::npos)
        << "k = " << k << ": " << message;
    EXPECT_NE(message.find("File too large"), std::string::npos) << message;
    EXPECT_EQ(read_file(path), old_bytes) << "k = " << k;
    EXPECT_EQ(count_files_starting_with(dir.path(), kTempPrefix), 0u) << "k = " << k;
  }
  EXPECT_EQ(save_with_file_size_limit(size, [&] { save_tensors(new_tensors, path); }),
            "");
  EXPECT_EQ(read_file(path), new_bytes);
}

TEST(AtomicFile, T19_ErrorsNameThePathAndTheReason) {
  ScratchDir dir;
  const fs::path not_a_dir = dir.path() / "plain_file";
  testing::write_file(not_a_dir, "x");
  EXPECT_TRUE(throws_with([&] { write_file_atomically(not_a_dir / kName, "data"); },
                          "cannot write '" + (not_a_dir / kName).string() +
                              "': creating the temporary file failed: Not a directory"));
  EXPECT_TRUE(
      throws_with([&] { write_file_atomically(dir.path() / "missing" / kName, "x"); },
                  "No such file or directory"));
  EXPECT_TRUE(throws_with([&] { write_file_atomically("/proc/tandem_io_test", "x"); },
                          "cannot write '/proc/tandem_io_test'"));
  EXPECT_TRUE(throws_with([&] { write_file_atomically(dir.path() / "", "x"); },
                          "names a directory"));
  // Renaming over a directory fails after the data was written: the
  // temporary file must still go.
  fs::create_directory(dir.path() / "a_dir");
  EXPECT_TRUE(throws_with([&] { write_file_atomically(dir.path() / "a_dir", "x"); },
                          "renaming the temporary file over it failed"));
  EXPECT_EQ(count_files_starting_with(dir.path(), ".a_dir.tmp."), 0u);
}

TEST(AtomicFile, T19_ReadOnlyDirectoryKeepsTheOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "permission checks do not apply to root";
  ScratchDir dir;
  const fs::path sub = dir.path() / "ro";
  fs::create_directory(sub);
  write_file_atomically(sub / kName, "old");
  ::chmod(sub.c_str(), 0555);
  EXPECT_TRUE(throws_with([&] { write_file_atomically(sub / kName, "new"); },
                          "Permission denied"));
  ::chmod(sub.c_str(), 0755);
  EXPECT_EQ(read_file(sub / kName), "old");
}

TEST(AtomicFile, UncommittedFilesVanishAndCommittedOnesAppear) {
  ScratchDir dir;
  const fs::path path = dir.path() / kName;
  write_file_atomically(path, "old");
  {
    AtomicFile file(path);
    file.write("new", 3);
    EXPECT_TRUE(fs::exists(file.temp_path()));
    EXPECT_EQ(read_file(path), "old");
  }
  EXPECT_EQ(read_file(path), "old");
  EXPECT_EQ(count_files_starting_with(dir.path(), kTempPrefix), 0u);
  AtomicFile file(path);
  file.write("new", 3);
  file.commit();
  EXPECT_EQ(read_file(path), "new");
  EXPECT_FALSE(fs::exists(file.temp_path()));
  EXPECT_TRUE(throws_with([&] { file.write("x", 1); }, "already committed"));
}

TEST(AtomicFile, StaleTempFilesAreRecognisedAndOnlyTheyAreRemoved) {
  EXPECT_TRUE(is_temp_file_name(".ck.safetensors.tmp.123.0", kName));
  EXPECT_FALSE(is_temp_file_name(".ck.safetensors.tmp.123", kName));
  EXPECT_FALSE(is_temp_file_name(".ck.safetensors.tmp.abc.0", kName));
  EXPECT_FALSE(is_temp_file_name(".ck.safetensors.tmp.123.0x", kName));
  EXPECT_FALSE(is_temp_file_name(".other.tmp.123.0", kName));
  EXPECT_FALSE(is_temp_file_name("ck.safetensors", kName));

  ScratchDir dir;
  const fs::path path = dir.path() / kName;
  auto make = [&](const std::string& name) {
    testing::write_file(dir.path() / name, "partial");
    return dir.path() / name;
  };
  const fs::path dead = make(kTempPrefix + std::to_string(dead_pid()) + ".0");
  const fs::path live = make(kTempPrefix + "1.0");  // init never dies
  const fs::path other = make(".other.safetensors.tmp.999999.0");
  // Our own pid but no writer of ours: left by an earlier process that had
  // this pid (as after a container restart), unless someone holds it.
  const fs::path held = make(kTempPrefix + std::to_string(::getpid()) + ".999");
  int lock_fd = ::open(held.c_str(), O_RDONLY);
  ASSERT_EQ(::flock(lock_fd, LOCK_EX), 0);

  EXPECT_EQ(remove_stale_temp_files(path), 1u);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(held));
  ::close(lock_fd);
  write_file_atomically(path, "x");  // a save cleans up too
  EXPECT_FALSE(fs::exists(held));
  EXPECT_TRUE(fs::exists(live));
}

TEST(AtomicFile, ConcurrentWritersToOnePathDoNotDisturbEachOther) {
  ScratchDir dir;
  const fs::path path = dir.path() / kName;
  auto writer = [&](char c) {
    for (int i = 0; i < 20; ++i) write_file_atomically(path, std::string(4096, c));
  };
  std::thread a(writer, 'a');
  std::thread b(writer, 'b');
  a.join();
  b.join();
  const std::string bytes = read_file(path);
  EXPECT_TRUE(bytes == std::string(4096, 'a') || bytes == std::string(4096, 'b'));
  EXPECT_EQ(count_files_starting_with(dir.path(), kTempPrefix), 0u);
}

}  // namespace
}  // namespace tandem::io
