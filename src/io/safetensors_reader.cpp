// Reading safetensors: from memory (deserialize) and from a file
// (load_safetensors) through one path, so both run the same checks in the
// same order. Nothing past the 8-byte length is read before the length is
// checked, and no tensor is allocated before the whole header is.
#include "tandem/io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "core/file_descriptor.h"
#include "io/checksum.h"
#include "io/safetensors_header.h"
#include "tandem/ops/factory.h"

namespace tandem::io {

namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; tandem reads it as is");

using detail::fail_check;

// Where the bytes come from.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  /// Copies bytes [offset, offset + count); the range is within size().
  virtual void read(uint64_t offset, void* out, size_t count) const = 0;
  virtual std::string_view name() const = 0;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string_view bytes, std::string_view name)
      : bytes_(bytes), name_(name) {}
  uint64_t size() const override { return bytes_.size(); }
  void read(uint64_t offset, void* out, size_t count) const override {
    if (count > 0) std::memcpy(out, bytes_.data() + offset, count);
  }
  std::string_view name() const override { return name_; }

 private:
  std::string_view bytes_;
  std::string_view name_;
};

class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::filesystem::path& path)
      : name_(tandem::detail::str("'", path.string(), "'")),
        fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_.get() < 0) fail("cannot open it", errno);
    struct stat info {};
    if (::fstat(fd_.get(), &info) != 0) fail("cannot stat it", errno);
    if (!S_ISREG(info.st_mode)) {
      throw Error(tandem::detail::str("safetensors: ", name_, ": not a regular file"));
    }
    size_ = static_cast<uint64_t>(info.st_size);
  }

  uint64_t size() const override { return size_; }
  void read(uint64_t offset, void* out, size_t count) const override {
    char* bytes = static_cast<char*>(out);
    while (count > 0) {
      ssize_t got = ::pread(fd_.get(), bytes, count, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("reading it failed", errno);
      if (got == 0) {
        throw Error(tandem::detail::str(
            "safetensors: ", name_, ": the file shrank while it was being read"));
      }
      bytes += got;
      offset += static_cast<uint64_t>(got);
      count -= static_cast<size_t>(got);
    }
  }
  std::string_view name() const override { return name_; }

 private:
  [[noreturn]] void fail(std::string_view what, int error) const {
    throw Error(tandem::detail::str(
        "safetensors: ", name_, ": ", what, ": ", tandem::detail::errno_text(error)));
  }

  std::string name_;
  tandem::detail::FileDescriptor fd_;
  uint64_t size_ = 0;
};

// Bool elements must be 0 or 1: any other byte would be undefined
// behaviour for every kernel that reads it as a C++ bool.
void check_bools(const detail::TensorRecord& record,
                 const uint8_t* data,
                 size_t count,
                 std::string_view source) {
  for (size_t i = 0; i < count; ++i) {
    if (data[i] > 1) {
      fail_check(source,
                 "InvalidBool",
                 "tensor \"",
                 record.name,
                 "\" element ",
                 i,
                 " is byte ",
                 static_cast<unsigned>(data[i]),
                 ", not 0 or 1");
    }
  }
}

// A valid file may still hold what a tandem tensor cannot.
void check_tandem_can_hold(const detail::TensorRecord& record, std::string_view source) {
  if (!record.dtype->tandem_type) {
    fail_check(source,
               "UnsupportedDtype",
               "tensor \"",
               record.name,
               "\" has dtype ",
               record.dtype->name,
               " but tandem has no dtype ",
               record.dtype->name,
               " (it has BOOL, U8, I64, F32 and F64)");
  }
  // Row-major strides multiply the sizes, zeros counted as ones: an empty
  // tensor of shape [0, 2^40, 2^40] is valid in the format but its strides
  // would not fit tandem's int64.
  int64_t stride = 1;
  for (uint64_t dim : record.shape) {
    auto size = static_cast<int64_t>(std::max<uint64_t>(dim, 1));
    if (stride > INT64_MAX / size) {
      fail_check(source,
                 "UnsupportedShape",
                 "tensor \"",
                 record.name,
                 "\" is too large for tandem: its strides do not fit 64 bits");
    }
    stride *= size;
  }
}

SafetensorsContents read_contents(const ByteSource& source) {
  const std::string_view name = source.name();
  const uint64_t size = source.size();
  if (size < 8) {
    fail_check(name,
               "HeaderTooSmall",
               "the file has ",
               size,
               " bytes, fewer than the 8 of the header length");
  }
  uint8_t length_bytes[8];
  source.read(0, length_bytes, 8);
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | length_bytes[i];
  if (header_size > kMaxHeaderSize) {
    fail_check(name,
               "HeaderTooLarge",
               "the header length is ",
               header_size,
               " bytes, more than the limit of ",
               kMaxHeaderSize);
  }
  if (header_size > size - 8) {
    fail_check(name,
               "InvalidHeaderLength",
               "the header length is ",
               header_size,
               " bytes but only ",
               size - 8,
               " bytes follow it");
  }
  std::string text(header_size, '\0');
  source.read(8, text.data(), text.size());
  const uint64_t payload_start = 8 + header_size;
  detail::Header header = detail::parse_header(text, size - payload_start, name);

  for (const auto& record : header.tensors) check_tandem_can_hold(record, name);
  std::optional<uint32_t> stored_checksum;
  if (auto it = header.metadata.find(std::string(kChecksumKey));
      it != header.metadata.end()) {
    stored_checksum = detail::parse_checksum(it->second);
    if (!stored_checksum) {
      fail_check(name,
                 "ChecksumMismatch",
                 "metadata ",
                 kChecksumKey,
                 " is \"",
                 it->second,
                 "\", not 8 lowercase hex digits");
    }
  }
  auto checksum = detail::FileChecksum::of_header(header);

  SafetensorsContents contents;
  for (const auto& record : header.tensors) {
    IntList shape(record.shape.begin(), record.shape.end());
    Tensor tensor = empty(shape, *record.dtype->tandem_type);
    const size_t nbytes = record.end - record.begin;
    auto* data = static_cast<uint8_t*>(tensor.data_ptr());
    source.read(payload_start + record.begin, data, nbytes);
    checksum.update(data, nbytes);
    if (tensor.dtype() == kBool) check_bools(record, data, nbytes, name);
    contents.tensors.emplace(record.name, std::move(tensor));
  }
  if (stored_checksum && *stored_checksum != checksum.value()) {
    fail_check(name,
               "ChecksumMismatch",
               "the contents' CRC-32 is ",
               detail::format_checksum(checksum.value()),
               " but the file records ",
               detail::format_checksum(*stored_checksum),
               ": the file is corrupt");
  }
  contents.checksum_verified = stored_checksum.has_value();
  header.metadata.erase(std::string(kChecksumKey));
  contents.metadata = std::move(header.metadata);
  return contents;
}

}  // namespace

SafetensorsContents deserialize(std::string_view bytes, std::string_view source) {
  return read_contents(MemorySource(bytes, source));
}

SafetensorsContents load_safetensors(const std::filesystem::path& path) {
  return read_contents(FileSource(path));
}

TensorMap load_tensors(const std::filesystem::path& path) {
  return load_safetensors(path).tensors;
}

}  // namespace tandem::io
