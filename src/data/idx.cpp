// Note [Reading IDX]
// ~~~~~~~~~~~~~~~~~~
// The reader trusts nothing in the file. It reads the 4-byte magic and the
// dims first and checks them (zero prefix, known type, ndim, no zero dim,
// byte count computed without overflow and under the cap) before it
// allocates anything. When the source knows its length (a raw file, a
// buffer) the payload length is checked against the header right away;
// a gzip stream is decompressed into a buffer that grows with the data
// actually there, so a header promising gigabytes costs nothing unless
// they arrive. The payload must be exactly as long as the header says:
// after it, the source must be at its end (and a gzip stream's CRC is
// checked by reading it to the end). Only then are the big-endian elements
// decoded into a new tensor, so no partly filled tensor ever escapes.
#include "tandem/data/idx.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "data/byte_source.h"
#include "tandem/ops/factory.h"

namespace tandem::data {
namespace {

constexpr size_t kMagicBytes = 4;
// A payload read from a stream grows by at most this much at a time beyond
// what has arrived (see Note [Reading IDX]).
constexpr size_t kMinGrowthBytes = size_t{1} << 20;
// Trailing bytes are counted up to this limit, then reported as "more".
constexpr uint64_t kTrailingCountLimit = uint64_t{1} << 20;

constexpr IdxType kAllTypes[] = {IdxType::kUInt8,
                                 IdxType::kInt8,
                                 IdxType::kInt16,
                                 IdxType::kInt32,
                                 IdxType::kFloat32,
                                 IdxType::kFloat64};

size_t element_bytes(IdxType type) {
  switch (type) {
    case IdxType::kUInt8:
    case IdxType::kInt8:
      return 1;
    case IdxType::kInt16:
      return 2;
    case IdxType::kInt32:
    case IdxType::kFloat32:
      return 4;
    case IdxType::kFloat64:
      return 8;
  }
  TANDEM_INTERNAL_ASSERT(false, "unknown IdxType ", static_cast<int>(type));
}

ScalarType dtype_for(IdxType type) {
  switch (type) {
    case IdxType::kUInt8:
      return kUInt8;
    case IdxType::kFloat32:
      return kFloat32;
    case IdxType::kFloat64:
      return kFloat64;
    default:
      return kInt64;  // the signed integer types widen losslessly
  }
}

std::string hex(uint8_t byte) {
  constexpr char kDigits[] = "0123456789ABCDEF";
  return {kDigits[byte >> 4], kDigits[byte & 0xF]};
}

std::string describe(IdxType type) {
  return tandem::detail::str(
      idx_type_name(type), " (0x", hex(static_cast<uint8_t>(type)), ")");
}

std::string allowed_types() {
  std::string out;
  for (IdxType type : kAllTypes) out += (out.empty() ? "" : ", ") + describe(type);
  return out;
}

// The value stored big-endian at `p` as a T (integer or floating point).
template <typename T>
T load_big_endian(const uint8_t* p) {
  using Bits = std::conditional_t<
      sizeof(T) == 1,
      uint8_t,
      std::conditional_t<sizeof(T) == 2,
                         uint16_t,
                         std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  Bits bits = 0;
  for (size_t i = 0; i < sizeof(T); ++i) bits = static_cast<Bits>((bits << 8) | p[i]);
  return std::bit_cast<T>(bits);
}

template <typename Stored, typename Out>
void decode(const std::vector<uint8_t>& payload, const Tensor& out) {
  Out* dst = out.data_ptr<Out>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = static_cast<Out>(load_big_endian<Stored>(&payload[i * sizeof(Stored)]));
  }
}

struct IdxHeader {
  IdxType type;
  IntList dims;
  size_t header_bytes;
  uint64_t payload_bytes;
};

// Reads one IDX file from a source. See Note [Reading IDX].
class IdxReader {
 public:
  IdxReader(detail::ByteSource& source, std::string_view name, const IdxOptions& options)
      : source_(source), name_(name), options_(options) {}

  Tensor read() {
    const IdxHeader header = read_header();
    const std::vector<uint8_t> payload = read_payload(header);
    expect_end(header);
    return decode_payload(header, payload);
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw Error(tandem::detail::str(name_, ": ", args...));
  }

  IdxHeader read_header() {
    uint8_t magic[kMagicBytes];
    const size_t got = source_.read(magic, kMagicBytes);
    if (got < kMagicBytes) {
      fail(
          "truncated IDX header: the data is ", got, " bytes long, the magic alone is 4");
    }
    if (magic[0] == 0x1F && magic[1] == 0x8B) {
      fail(
          "looks gzip-compressed (starts with 1F 8B) but was read as raw IDX; "
          "decompress it, or name the file *.gz (IdxCompression::kGzip for buffers)");
    }
    if (magic[0] != 0 || magic[1] != 0) {
      fail("not an IDX file: the magic starts with ",
           hex(magic[0]),
           " ",
           hex(magic[1]),
           ", expected 00 00");
    }
    const auto type = static_cast<IdxType>(magic[2]);
    if (std::find(std::begin(kAllTypes), std::end(kAllTypes), type) ==
        std::end(kAllTypes)) {
      fail("unknown IDX element type code 0x",
           hex(magic[2]),
           "; allowed: ",
           allowed_types());
    }
    if (options_.type() && type != *options_.type()) {
      fail("IDX element type is ",
           describe(type),
           ", expected ",
           describe(*options_.type()));
    }
    const int64_t ndim = magic[3];
    if (ndim == 0) fail("the IDX magic gives 0 dimensions, expected at least 1");
    if (options_.ndim() && ndim != *options_.ndim()) {
      fail("expected ", *options_.ndim(), " dimensions, the IDX magic gives ", ndim);
    }
    IntList dims = read_dims(ndim);
    const uint64_t bytes = checked_bytes(type, dims);
    return IdxHeader{type, std::move(dims), kMagicBytes + 4 * ndim, bytes};
  }

  IntList read_dims(int64_t ndim) {
    std::vector<uint8_t> raw(4 * ndim);
    const size_t got = source_.read(raw.data(), raw.size());
    if (got < raw.size()) {
      fail("truncated IDX header: ",
           ndim,
           " dimensions need ",
           kMagicBytes + raw.size(),
           " header bytes, found ",
           kMagicBytes + got);
    }
    IntList dims(ndim);
    for (int64_t i = 0; i < ndim; ++i) dims[i] = load_big_endian<uint32_t>(&raw[4 * i]);
    for (int64_t i = 0; i < ndim; ++i) {
      if (dims[i] == 0) fail("dimension ", i, " of shape ", dims, " is 0");
    }
    return dims;
  }

  // The payload size of `dims`, refused on overflow or over the cap.
  uint64_t checked_bytes(IdxType type, const IntList& dims) const {
    // int64 bounds the element count too (tensor sizes are int64).
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    uint64_t bytes = element_bytes(type);
    for (int64_t d : dims) {
      const auto size = static_cast<uint64_t>(d);
      if (bytes > kMax / size) {
        fail("shape ",
             dims,
             " of ",
             idx_type_name(type),
             " overflows a 64-bit byte count");
      }
      bytes *= size;
    }
    if (bytes > options_.max_bytes()) {
      fail("shape ",
           dims,
           " of ",
           idx_type_name(type),
           " needs ",
           bytes,
           " bytes, more than the limit of ",
           options_.max_bytes(),
           " (IdxOptions::max_bytes)");
    }
    return bytes;
  }

  [[noreturn]] void fail_payload_size(const IdxHeader& header,
                                      const std::string& found) const {
    fail("expected ",
         header.payload_bytes,
         " bytes of data after the ",
         header.header_bytes,
         "-byte IDX header (shape ",
         header.dims,
         " of ",
         idx_type_name(header.type),
         "), found ",
         found);
  }

  std::vector<uint8_t> read_payload(const IdxHeader& header) {
    const uint64_t want = header.payload_bytes;
    if (const auto left = source_.remaining(); left && *left != want) {
      fail_payload_size(header, std::to_string(*left));
    }
    std::vector<uint8_t> payload;
    uint64_t got = 0;
    while (got < want) {
      const uint64_t step =
          std::min<uint64_t>(want - got, std::max<uint64_t>(got, kMinGrowthBytes));
      payload.resize(got + step);
      const size_t n = source_.read(payload.data() + got, step);
      got += n;
      if (n < step) break;
    }
    if (got < want) fail_payload_size(header, std::to_string(got));
    return payload;
  }

  void expect_end(const IdxHeader& header) {
    uint8_t scratch[4096];
    uint64_t extra = 0;
    while (extra <= kTrailingCountLimit) {
      const size_t n = source_.read(scratch, sizeof(scratch));
      if (n == 0) break;
      extra += n;
    }
    if (extra == 0) return;
    const uint64_t found = header.payload_bytes + extra;
    fail_payload_size(header,
                      extra > kTrailingCountLimit ? "more than " + std::to_string(found)
                                                  : std::to_string(found));
  }

  static Tensor decode_payload(const IdxHeader& header,
                               const std::vector<uint8_t>& payload) {
    Tensor out = empty(header.dims, dtype_for(header.type));
    switch (header.type) {
      case IdxType::kUInt8:
        std::memcpy(out.data_ptr(), payload.data(), payload.size());
        break;
      case IdxType::kInt8:
        decode<int8_t, int64_t>(payload, out);
        break;
      case IdxType::kInt16:
        decode<int16_t, int64_t>(payload, out);
        break;
      case IdxType::kInt32:
        decode<int32_t, int64_t>(payload, out);
        break;
      case IdxType::kFloat32:
        decode<float, float>(payload, out);
        break;
      case IdxType::kFloat64:
        decode<double, double>(payload, out);
        break;
    }
    return out;
  }

  detail::ByteSource& source_;
  std::string_view name_;
  const IdxOptions& options_;
};

}  // namespace

std::string_view idx_type_name(IdxType type) {
  switch (type) {
    case IdxType::kUInt8:
      return "uint8";
    case IdxType::kInt8:
      return "int8";
    case IdxType::kInt16:
      return "int16";
    case IdxType::kInt32:
      return "int32";
    case IdxType::kFloat32:
      return "float32";
    case IdxType::kFloat64:
      return "float64";
  }
  return "unknown";
}

Tensor read_idx(const std::filesystem::path& path, const IdxOptions& options) {
  const std::string name = path.string();
  std::unique_ptr<detail::ByteSource> source = detail::file_source(name);
  if (path.extension() == ".gz") source = detail::gzip_source(std::move(source), name);
  return IdxReader(*source, name, options).read();
}

Tensor read_idx(std::span<const uint8_t> bytes,
                IdxCompression compression,
                const IdxOptions& options,
                std::string_view name) {
  std::unique_ptr<detail::ByteSource> source = detail::memory_source(bytes);
  if (compression == IdxCompression::kGzip) {
    source = detail::gzip_source(std::move(source), std::string(name));
  }
  return IdxReader(*source, name, options).read();
}

}  // namespace tandem::data
