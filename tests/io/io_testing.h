// Helpers for the io tests: scratch directories, hand-built safetensors
// bytes, and whole-file reads.
//
//   ScratchDir dir;
//   auto path = dir.path() / "a.safetensors";
//   std::string bytes = safetensors_bytes(R"({"a":{...}})", payload);
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace tandem::io::testing {

/// A fresh directory under the system's temp dir, removed with its contents.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("tandem_io_test." + std::to_string(::getpid()) + "." +
             std::to_string(counter.fetch_add(1)));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// An 8-byte little-endian length (the header's own size unless given),
/// the header, then the payload.
inline std::string safetensors_bytes(std::string_view header,
                                     std::string_view payload = {},
                                     std::optional<uint64_t> length = std::nullopt) {
  uint64_t n = length.value_or(header.size());
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  out.append(header);
  out.append(payload);
  return out;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Files in `dir` whose names start with `prefix`.
inline size_t count_files_starting_with(const std::filesystem::path& dir,
                                        std::string_view prefix) {
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) ++count;
  }
  return count;
}

}  // namespace tandem::io::testing
