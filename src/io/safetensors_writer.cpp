// Writing safetensors exactly as the reference writer lays files out, to
// memory (serialize) or atomically to a file (save_tensors).
#include "tandem/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <tuple>

#include "io/checksum.h"
#include "io/json_reader.h"
#include "io/safetensors_header.h"
#include "tandem/io/atomic_file.h"

namespace tandem::io {

namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; tandem writes it as is");

// A file ready to emit: its header and, in payload order, the tensors as
// contiguous host data.
struct PreparedFile {
  std::string header;
  std::vector<Tensor> data;
};

Tensor host_contiguous(const Tensor& tensor) {
  Tensor host = tensor.detach();
  if (!host.is_cpu()) host = host.to(Device(kCPU));
  return host.contiguous();
}

void check_utf8(std::string_view text, std::string_view what) {
  TANDEM_CHECK(detail::find_invalid_utf8(text) == std::string_view::npos,
               "safetensors: cannot write ",
               what,
               ": it is not valid UTF-8");
}

PreparedFile prepare(const TensorMap& tensors,
                     const Metadata& metadata,
                     bool store_checksum) {
  TANDEM_CHECK(metadata.count(std::string(kChecksumKey)) == 0,
               "safetensors: the metadata key \"",
               kChecksumKey,
               "\" is reserved for the checksum tandem stores");
  for (const auto& [key, value] : metadata) {
    check_utf8(key, "a metadata key");
    check_utf8(value, "the value of metadata key \"" + key + "\"");
  }
  std::vector<std::pair<detail::TensorRecord, Tensor>> entries;
  entries.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    TANDEM_CHECK(tensor.defined(),
                 "safetensors: cannot write tensor \"",
                 name,
                 "\": it is undefined");
    TANDEM_CHECK(name != "__metadata__",
                 "safetensors: a tensor cannot be named \"__metadata__\" (the format's "
                 "metadata key)");
    check_utf8(name, "a tensor name");
    Tensor host = host_contiguous(tensor);
    detail::TensorRecord record;
    record.name = name;
    record.dtype = &detail::format_dtype_of(host.dtype());
    record.shape.assign(host.sizes().begin(), host.sizes().end());
    entries.emplace_back(std::move(record), std::move(host));
  }
  // The reference order: widest dtype first (so every tensor's data stays
  // aligned to its element size), then by name.
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(-a.first.dtype->rank, std::cref(a.first.name)) <
           std::make_tuple(-b.first.dtype->rank, std::cref(b.first.name));
  });
  detail::Header header;
  header.metadata = metadata;
  PreparedFile file;
  uint64_t offset = 0;
  for (auto& [record, host] : entries) {
    record.begin = offset;
    offset += host.nbytes();
    record.end = offset;
    header.tensors.push_back(std::move(record));
    file.data.push_back(std::move(host));
  }
  if (store_checksum) {
    auto checksum = detail::FileChecksum::of_header(header);
    for (const Tensor& host : file.data) checksum.update(host.data_ptr(), host.nbytes());
    header.metadata.emplace(kChecksumKey, detail::format_checksum(checksum.value()));
  }
  file.header = detail::format_header(header);
  return file;
}

// Hands the file's bytes, in order, to `sink`.
void emit(const PreparedFile& file,
          const std::function<void(const void*, size_t)>& sink) {
  uint8_t length[8];
  uint64_t n = file.header.size();
  for (uint8_t& byte : length) {
    byte = static_cast<uint8_t>(n & 0xff);
    n >>= 8;
  }
  sink(length, sizeof(length));
  sink(file.header.data(), file.header.size());
  for (const Tensor& host : file.data) {
    if (host.nbytes() > 0) sink(host.data_ptr(), host.nbytes());
  }
}

}  // namespace

std::string serialize(const TensorMap& tensors,
                      const Metadata& metadata,
                      bool store_checksum) {
  PreparedFile file = prepare(tensors, metadata, store_checksum);
  std::string out;
  emit(file, [&](const void* data, size_t size) {
    out.append(static_cast<const char*>(data), size);
  });
  return out;
}

void save_tensors(const TensorMap& tensors,
                  const std::filesystem::path& path,
                  const Metadata& metadata) {
  PreparedFile file = prepare(tensors, metadata, /*store_checksum=*/true);
  AtomicFile out(path);
  emit(file, [&](const void* data, size_t size) { out.write(data, size); });
  out.commit();
}

}  // namespace tandem::io
