// The safetensors header: its model (one record per tensor, the metadata),
// the reference reader's checks on it, and the reference writer's JSON.
// Shared by the reader, the writer and the checksum.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tandem/core/dtype.h"
#include "tandem/core/error.h"
#include "tandem/io/safetensors.h"

namespace tandem::io::detail {

/// A dtype the safetensors format names, whether or not tandem has it.
struct FormatDtype {
  std::string_view name;  // "F32"
  unsigned bits;          // 32 (F4 is 4: sizes are counted in bits)
  /// Position in the reference's Dtype enum; the writer sorts by it,
  /// highest first.
  int rank;
  std::optional<ScalarType> tandem_type;
};

/// nullptr for a name the format does not define.
const FormatDtype* find_format_dtype(std::string_view name);
const FormatDtype& format_dtype_of(ScalarType type);

/// Shapes are capped by the format's schema; ranks by tandem, so that a
/// header cannot make the reader hold huge shape lists.
inline constexpr uint64_t kMaxDimSize = (uint64_t{1} << 48) - 1;
inline constexpr size_t kMaxRank = 64;

struct TensorRecord {
  std::string name;
  const FormatDtype* dtype = nullptr;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;  // byte range in the payload, end exclusive
  uint64_t end = 0;
};

struct Header {
  std::vector<TensorRecord> tensors;  // in payload order
  Metadata metadata;
};

/// Throws "safetensors: <source>: <check>: <details>".
template <typename... Details>
[[noreturn]] void fail_check(std::string_view source,
                             std::string_view check,
                             const Details&... details) {
  throw Error(
      tandem::detail::str("safetensors: ", source, ": ", check, ": ", details...));
}

/// Checks 4 to 8 of the reference reader on the header text of a file
/// whose payload (what follows the header) has `payload_size` bytes:
/// UTF-8, the leading '{', strict JSON of the right shape, offsets that tile
/// the payload in order, sizes that match shape and dtype.
Header parse_header(std::string_view text,
                    uint64_t payload_size,
                    std::string_view source);

/// The header as the reference writer emits it, padded with spaces to a
/// multiple of 8 bytes. `tensors` must be in payload order.
std::string format_header(const Header& header);

}  // namespace tandem::io::detail
