#include "data/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <vector>

#include "core/file_descriptor.h"
#include "tandem/core/error.h"

namespace tandem::data::detail {
namespace {

using tandem::detail::errno_text;
using tandem::detail::FileDescriptor;

class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::string& path)
      : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    TANDEM_CHECK(fd_.get() >= 0, path, ": cannot open: ", errno_text(errno));
    struct stat info {};
    TANDEM_CHECK(
        ::fstat(fd_.get(), &info) == 0, path, ": cannot stat: ", errno_text(errno));
    TANDEM_CHECK(S_ISREG(info.st_mode), path, ": not a regular file");
    remaining_ = static_cast<uint64_t>(info.st_size);
  }

  size_t read(uint8_t* out, size_t n) override {
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::read(fd_.get(), out + done, n - done);
      if (got == 0) break;
      if (got < 0 && errno == EINTR) continue;
      TANDEM_CHECK(got > 0, path_, ": read failed: ", errno_text(errno));
      done += static_cast<size_t>(got);
    }
    remaining_ -= std::min<uint64_t>(remaining_, done);
    return done;
  }

  std::optional<uint64_t> remaining() const override { return remaining_; }

 private:
  std::string path_;
  FileDescriptor fd_;
  uint64_t remaining_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  size_t read(uint8_t* out, size_t n) override {
    const size_t count = std::min(n, bytes_.size());
    std::copy_n(bytes_.begin(), count, out);
    bytes_ = bytes_.subspan(count);
    return count;
  }

  std::optional<uint64_t> remaining() const override { return bytes_.size(); }

 private:
  std::span<const uint8_t> bytes_;
};

class GzipSource final : public ByteSource {
 public:
  GzipSource(std::unique_ptr<ByteSource> compressed, std::string name)
      : compressed_(std::move(compressed)),
        name_(std::move(name)),
        buffer_(std::clamp<uint64_t>(
            compressed_->remaining().value_or(kBufferBytes), 1, kBufferBytes)) {
    // 16 + MAX_WBITS: accept the gzip wrapper only (not raw zlib streams).
    const int rc = inflateInit2(&stream_, 16 + MAX_WBITS);
    TANDEM_CHECK(
        rc == Z_OK, name_, ": cannot start gzip decompression (zlib error ", rc, ")");
  }
  ~GzipSource() override { inflateEnd(&stream_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  size_t read(uint8_t* out, size_t n) override {
    size_t produced = 0;
    while (produced < n && !ended_) {
      if (stream_.avail_in == 0 && !refill()) {
        TANDEM_CHECK(between_members_,
                     name_,
                     compressed_bytes_ == 0
                         ? ": empty file, expected gzip data"
                         : ": gzip data is truncated (it ends inside the compressed "
                           "stream)");
        ended_ = true;
        break;
      }
      if (between_members_) {  // more input after a member: the next member
        inflateReset(&stream_);
        between_members_ = false;
      }
      const size_t chunk =
          std::min<size_t>(n - produced, std::numeric_limits<uInt>::max());
      const uInt input_before = stream_.avail_in;
      stream_.next_out = out + produced;
      stream_.avail_out = static_cast<uInt>(chunk);
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      const size_t made = chunk - stream_.avail_out;
      produced += made;
      if (rc == Z_STREAM_END) {
        between_members_ = true;
        continue;
      }
      const bool stuck =
          made == 0 && stream_.avail_in == input_before && input_before > 0;
      TANDEM_CHECK((rc == Z_OK || rc == Z_BUF_ERROR) && !stuck,
                   name_,
                   ": corrupt gzip data (zlib: ",
                   stream_.msg != nullptr ? stream_.msg : zError(rc),
                   ")");
    }
    return produced;
  }

  std::optional<uint64_t> remaining() const override { return std::nullopt; }

 private:
  // Compressed input is read this much at a time (less for a small input).
  static constexpr size_t kBufferBytes = size_t{256} << 10;

  bool refill() {
    const size_t got = compressed_->read(buffer_.data(), buffer_.size());
    compressed_bytes_ += got;
    stream_.next_in = buffer_.data();
    stream_.avail_in = static_cast<uInt>(got);
    return got > 0;
  }

  std::unique_ptr<ByteSource> compressed_;
  std::string name_;
  std::vector<uint8_t> buffer_;
  z_stream stream_{};
  uint64_t compressed_bytes_ = 0;
  bool between_members_ = false;  // a member just ended
  bool ended_ = false;
};

}  // namespace

std::unique_ptr<ByteSource> file_source(const std::string& path) {
  return std::make_unique<FileSource>(path);
}

std::unique_ptr<ByteSource> memory_source(std::span<const uint8_t> bytes) {
  return std::make_unique<MemorySource>(bytes);
}

std::unique_ptr<ByteSource> gzip_source(std::unique_ptr<ByteSource> compressed,
                                        std::string name) {
  return std::make_unique<GzipSource>(std::move(compressed), std::move(name));
}

}  // namespace tandem::data::detail
