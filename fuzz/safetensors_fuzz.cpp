// libFuzzer target for the safetensors reader (reliability spec T17), as the
// reference fuzzes SafeTensors::deserialize: any input must either load or
// fail with a tandem::Error, never crash, leak or read out of bounds.
// When it loads, every tensor's bytes and every metadata string are read
// (so ASan sees a bad view), and the contents must survive a round trip
// through the writer.
//
// Seeds in fuzz/corpus/safetensors/: the reference's golden files (N=64,
// N=72 padded, empty, metadata only), a file of every tandem dtype with
// metadata and tandem's checksum, and a valid file of a dtype tandem lacks.
//
//   cp -r fuzz/corpus/safetensors /tmp/corpus
//   build-fuzz/fuzz/fuzz_safetensors /tmp/corpus -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "tandem/core/error.h"
#include "tandem/io/safetensors.h"

namespace {

uint8_t touch(std::string_view bytes) {
  uint8_t sum = 0;
  for (char c : bytes) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(c));
  return sum;
}

uint8_t touch(const tandem::Tensor& tensor) {
  return touch(
      std::string_view(static_cast<const char*>(tensor.data_ptr()), tensor.nbytes()));
}

bool same_contents(const tandem::io::SafetensorsContents& a,
                   const tandem::io::SafetensorsContents& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (const auto& [name, tensor] : a.tensors) {
    auto other = b.tensors.find(name);
    if (other == b.tensors.end()) return false;
    const tandem::Tensor& t = other->second;
    if (t.dtype() != tensor.dtype() || t.sizes() != tensor.sizes()) return false;
    if (t.nbytes() > 0 && std::memcmp(t.data_ptr(), tensor.data_ptr(), t.nbytes()) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tandem::io::SafetensorsContents contents;
  try {
    contents = tandem::io::deserialize(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
  } catch (const tandem::Error&) {
    return 0;
  }
  volatile uint8_t sink = 0;
  for (const auto& [name, tensor] : contents.tensors) {
    sink = sink + touch(name) + touch(tensor);
  }
  for (const auto& [key, value] : contents.metadata) {
    sink = sink + touch(key) + touch(value);
  }
  // What loaded must write and load back the same (with a checksum now).
  auto again =
      tandem::io::deserialize(tandem::io::serialize(contents.tensors, contents.metadata));
  if (!again.checksum_verified || !same_contents(contents, again)) __builtin_trap();
  return 0;
}
