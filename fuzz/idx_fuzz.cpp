// libFuzzer target for the IDX reader (reliability case T17): any bytes,
// read as raw IDX and as gzip-compressed IDX, must either decode into a
// tensor that agrees with its header or be refused with tandem::Error.
// Anything else (a crash, a sanitizer report, another exception) is a bug.
//
//   fuzz_idx -max_total_time=600 corpus/   (a copy of fuzz/corpus/idx)
#include <cstddef>
#include <cstdint>
#include <span>

#include "tandem/core/error.h"
#include "tandem/data/idx.h"

namespace {

// Big enough for every seed, small enough that a gzip bomb stays cheap.
constexpr uint64_t kMaxBytes = uint64_t{16} << 20;

void read_one_way(std::span<const uint8_t> bytes,
                  tandem::data::IdxCompression compression) {
  try {
    const tandem::Tensor t = tandem::data::read_idx(
        bytes, compression, tandem::data::IdxOptions().max_bytes(kMaxBytes), "fuzz");
    // A decoded tensor has the header's shape: at least one dim, no zero dim,
    // and (raw) no more elements than the input had bytes.
    if (t.dim() < 1 || t.numel() < 1) __builtin_trap();
    if (compression == tandem::data::IdxCompression::kNone &&
        static_cast<uint64_t>(t.numel()) > bytes.size()) {
      __builtin_trap();
    }
  } catch (const tandem::Error&) {
    // A refusal: the expected outcome for most inputs.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  read_one_way(bytes, tandem::data::IdxCompression::kNone);
  read_one_way(bytes, tandem::data::IdxCompression::kGzip);
  return 0;
}
