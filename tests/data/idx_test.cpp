// The IDX reader: reliability cases T01-T05 and T07 (spec/reliability.md),
// each for bytes in memory, raw files and gzip files.
#include "tandem/data/idx.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>

#include "data/idx_testing.h"
#include "support/tensor_testing.h"

namespace tandem::data {
namespace {

using data_testing::gzip;
using data_testing::idx_bytes;
using data_testing::TempDir;
using data_testing::write_file;
using tandem::testing::throws_with;

Tensor read_raw(const std::vector<uint8_t>& bytes, const IdxOptions& options = {}) {
  return read_idx(bytes, IdxCompression::kNone, options, "test.idx");
}

Tensor read_gz(const std::vector<uint8_t>& bytes, const IdxOptions& options = {}) {
  return read_idx(gzip(bytes), IdxCompression::kGzip, options, "test.idx.gz");
}

// Reads `bytes` every way (buffer raw and gzip, file raw and .gz) and
// expects each to fail with a message holding `needle`.
void expect_rejected_everywhere(const std::vector<uint8_t>& bytes,
                                const std::string& needle,
                                const IdxOptions& options = {}) {
  EXPECT_TRUE(throws_with([&] { read_raw(bytes, options); }, needle));
  EXPECT_TRUE(throws_with([&] { read_gz(bytes, options); }, needle));
  TempDir dir;
  write_file(dir.path() / "data.idx", bytes);
  write_file(dir.path() / "data.idx.gz", gzip(bytes));
  EXPECT_TRUE(throws_with([&] { read_idx(dir.path() / "data.idx", options); }, needle));
  EXPECT_TRUE(
      throws_with([&] { read_idx(dir.path() / "data.idx.gz", options); }, needle));
  EXPECT_TRUE(
      throws_with([&] { read_idx(dir.path() / "data.idx", options); }, "data.idx"))
      << "the message names the file";
}

// ---- T01: truncated header ----

TEST(IdxTest, T01_FilesOfZeroToThreeBytesAreATruncatedHeader) {
  for (size_t n = 0; n < 4; ++n) {
    const std::vector<uint8_t> bytes(n, 0);
    expect_rejected_everywhere(
        bytes, "truncated IDX header: the data is " + std::to_string(n) + " bytes long");
  }
}

TEST(IdxTest, T01_DimsCutShortAreATruncatedHeader) {
  std::vector<uint8_t> bytes = idx_bytes(0x08, {2, 3}, {});
  bytes.resize(9);  // magic + 1 dim + 1 byte of the second
  expect_rejected_everywhere(bytes, "2 dimensions need 12 header bytes, found 9");
}

// ---- T02: magic ----

TEST(IdxTest, T02_NonZeroPrefixNamesTheBytes) {
  std::vector<uint8_t> bytes = idx_bytes(0x08, {1}, {7});
  bytes[0] = 0x01;
  bytes[1] = 0xAB;
  expect_rejected_everywhere(bytes, "the magic starts with 01 AB, expected 00 00");
}

TEST(IdxTest, T02_GzipDataReadAsRawSaysSo) {
  const std::vector<uint8_t> compressed = gzip(idx_bytes(0x08, {1}, {7}));
  EXPECT_TRUE(throws_with([&] { read_raw(compressed); },
                          "looks gzip-compressed (starts with 1F 8B)"));
  TempDir dir;
  write_file(dir.path() / "train-labels-idx1-ubyte", compressed);
  EXPECT_TRUE(throws_with([&] { read_idx(dir.path() / "train-labels-idx1-ubyte"); },
                          "name the file *.gz"));
}

TEST(IdxTest, T02_RawDataReadAsGzipIsRefused) {
  const std::vector<uint8_t> raw = idx_bytes(0x08, {1}, {7});
  EXPECT_TRUE(
      throws_with([&] { read_idx(raw, IdxCompression::kGzip); }, "corrupt gzip data"));
}

// ---- T03: type code and ndim ----

TEST(IdxTest, T03_UnknownTypeCodeListsTheAllowedOnes) {
  for (uint8_t code : {0x00, 0x07, 0x0A, 0x0F, 0xFF}) {
    expect_rejected_everywhere(idx_bytes(code, {1}, {0}),
                               "allowed: uint8 (0x08), int8 (0x09), "
                               "int16 (0x0B), int32 (0x0C), "
                               "float32 (0x0D), float64 (0x0E)");
  }
  EXPECT_TRUE(
      throws_with([&] { read_raw(idx_bytes(0x07, {1}, {0})); }, "type code 0x07"));
}

TEST(IdxTest, T03_NdimOtherThanRequestedIsRefused) {
  const std::vector<uint8_t> labels = idx_bytes(0x08, {3}, {1, 2, 3});
  expect_rejected_everywhere(
      labels, "expected 3 dimensions, the IDX magic gives 1", IdxOptions().ndim(3));
  expect_rejected_everywhere(idx_bytes(0x08, {}, {}),
                             "0 dimensions, expected at least 1");
}

TEST(IdxTest, T03_TypeOtherThanRequestedIsRefused) {
  const std::vector<uint8_t> ints = idx_bytes(0x0C, {1}, {0, 0, 0, 1});
  expect_rejected_everywhere(ints,
                             "element type is int32 (0x0C), expected uint8 (0x08)",
                             IdxOptions().type(IdxType::kUInt8));
}

// ---- T04: sizes ----

TEST(IdxTest, T04_ByteCountOverflowIsRefusedBeforeAllocating) {
  const uint32_t big = std::numeric_limits<uint32_t>::max();
  expect_rejected_everywhere(idx_bytes(0x0E, {big, big, big}, {}),
                             "overflows a 64-bit byte count");
  expect_rejected_everywhere(idx_bytes(0x08, {big, big, 4}, {}),
                             "overflows a 64-bit byte count");
}

TEST(IdxTest, T04_PayloadOverTheCapIsRefused) {
  expect_rejected_everywhere(idx_bytes(0x08, {60000, 28, 28}, {}),
                             "needs 47040000 bytes, more than the limit of 1000",
                             IdxOptions().max_bytes(1000));
  // The default cap (2 GiB): 4 GiB of uint8.
  expect_rejected_everywhere(idx_bytes(0x08, {65536, 65536}, {}),
                             "more than the limit of");
}

TEST(IdxTest, T04_ZeroDimIsRefused) {
  expect_rejected_everywhere(idx_bytes(0x08, {3, 0}, {}),
                             "dimension 1 of shape [3, 0] is 0");
}

TEST(IdxTest, T04_HugeHeaderOverAShortGzipStreamFailsWithoutTheMemory) {
  // 1.5 GiB promised, 4 bytes there: the stream runs dry long before any
  // big buffer is needed.
  const std::vector<uint8_t> bytes = idx_bytes(0x08, {1536, 1024, 1024}, {1, 2, 3, 4});
  EXPECT_TRUE(throws_with([&] { read_gz(bytes); }, "expected 1610612736 bytes"));
  EXPECT_TRUE(throws_with([&] { read_gz(bytes); }, "found 4"));
}

// ---- T05: payload length ----

TEST(IdxTest, T05_PayloadOneByteShortOrLongIsRefused) {
  const std::string want =
      "expected 6 bytes of data after the 12-byte IDX header (shape [2, 3] of uint8), "
      "found ";
  expect_rejected_everywhere(idx_bytes(0x08, {2, 3}, {1, 2, 3, 4, 5}), want + "5");
  expect_rejected_everywhere(idx_bytes(0x08, {2, 3}, {1, 2, 3, 4, 5, 6, 7}), want + "7");
  expect_rejected_everywhere(idx_bytes(0x0D, {2}, {0, 0, 0, 0, 0, 0, 0}),
                             "expected 8 bytes");
}

TEST(IdxTest, T05_TruncatedGzipStreamIsRefused) {
  std::vector<uint8_t> compressed = gzip(idx_bytes(0x08, {2, 3}, {1, 2, 3, 4, 5, 6}));
  compressed.resize(compressed.size() - 5);  // cuts into the CRC trailer
  EXPECT_TRUE(throws_with([&] { read_idx(compressed, IdxCompression::kGzip); },
                          "gzip data is truncated"));
  EXPECT_TRUE(
      throws_with([&] { read_idx(std::vector<uint8_t>{}, IdxCompression::kGzip); },
                  "empty file, expected gzip data"));
}

TEST(IdxTest, T05_CorruptGzipStreamIsRefused) {
  std::vector<uint8_t> payload(1000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> compressed = gzip(idx_bytes(0x08, {1000}, payload));
  compressed[compressed.size() - 6] ^= 0xFF;  // a byte of the CRC32
  EXPECT_TRUE(throws_with([&] { read_idx(compressed, IdxCompression::kGzip); },
                          "corrupt gzip data (zlib: incorrect data check)"));
}

TEST(IdxTest, T05_GarbageAfterTheGzipStreamIsRefused) {
  std::vector<uint8_t> compressed = gzip(idx_bytes(0x08, {2}, {1, 2}));
  compressed.insert(compressed.end(), {0, 0, 0, 0});
  EXPECT_TRUE(throws_with([&] { read_idx(compressed, IdxCompression::kGzip); },
                          "corrupt gzip data"));
}

TEST(IdxTest, MultiMemberGzipReadsAsOneStream) {
  const std::vector<uint8_t> bytes = idx_bytes(0x08, {4}, {1, 2, 3, 4});
  std::vector<uint8_t> compressed = gzip({bytes.begin(), bytes.begin() + 6});
  const std::vector<uint8_t> second = gzip({bytes.begin() + 6, bytes.end()});
  compressed.insert(compressed.end(), second.begin(), second.end());
  const Tensor t = read_idx(compressed, IdxCompression::kGzip);
  EXPECT_EQ(t.sizes(), IntList({4}));
  EXPECT_EQ(t.data_ptr<uint8_t>()[3], 4);
}

TEST(IdxTest, MissingFileAndFolderAreNamed) {
  TempDir dir;
  EXPECT_TRUE(
      throws_with([&] { read_idx(dir.path() / "nope.gz"); }, "nope.gz: cannot open"));
  EXPECT_TRUE(throws_with([&] { read_idx(dir.path()); }, "not a regular file"));
}

// ---- T07: golden bytes for every element type ----

struct Golden {
  uint8_t code;
  std::vector<uint32_t> dims;
  std::vector<uint8_t> payload;
};

void expect_reads_everywhere(const Golden& golden,
                             const std::function<void(const Tensor&)>& check) {
  const std::vector<uint8_t> bytes = idx_bytes(golden.code, golden.dims, golden.payload);
  check(read_raw(bytes));
  check(read_gz(bytes));
  TempDir dir;
  write_file(dir.path() / "golden.idx", bytes);
  write_file(dir.path() / "golden.idx.gz", gzip(bytes));
  check(read_idx(dir.path() / "golden.idx"));
  check(read_idx(dir.path() / "golden.idx.gz"));
}

TEST(IdxTest, T07_UInt8) {
  expect_reads_everywhere({0x08, {3}, {0x00, 0x7F, 0xFF}}, [](const Tensor& t) {
    ASSERT_EQ(t.dtype(), kUInt8);
    ASSERT_EQ(t.sizes(), IntList({3}));
    EXPECT_EQ(t.data_ptr<uint8_t>()[0], 0);
    EXPECT_EQ(t.data_ptr<uint8_t>()[1], 127);
    EXPECT_EQ(t.data_ptr<uint8_t>()[2], 255);
  });
}

void expect_int64(const Tensor& t,
                  const IntList& sizes,
                  const std::vector<int64_t>& want) {
  ASSERT_EQ(t.dtype(), kInt64);
  ASSERT_EQ(t.sizes(), sizes);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(t.data_ptr<int64_t>()[i], want[i]) << i;
}

TEST(IdxTest, T07_Int8) {
  expect_reads_everywhere({0x09, {3}, {0x80, 0xFF, 0x7F}}, [](const Tensor& t) {
    expect_int64(t, {3}, {-128, -1, 127});
  });
}

TEST(IdxTest, T07_Int16) {
  expect_reads_everywhere({0x0B, {3}, {0x80, 0x00, 0xFF, 0xFE, 0x01, 0x02}},
                          [](const Tensor& t) {
                            expect_int64(t, {3}, {-32768, -2, 258});
                          });
}

TEST(IdxTest, T07_Int32) {
  const std::vector<uint8_t> payload = {0x80,
                                        0x00,
                                        0x00,
                                        0x00,
                                        0xFF,
                                        0xFF,
                                        0xFF,
                                        0xFF,
                                        0x00,
                                        0x01,
                                        0x02,
                                        0x03,
                                        0x7F,
                                        0xFF,
                                        0xFF,
                                        0xFF};
  expect_reads_everywhere({0x0C, {2, 2}, payload}, [](const Tensor& t) {
    expect_int64(t, {2, 2}, {-2147483648LL, -1, 66051, 2147483647});
  });
}

TEST(IdxTest, T07_Float32BitExact) {
  // 1.0f, the float nearest -pi, +inf, the smallest subnormal.
  const std::vector<uint8_t> payload = {0x3F,
                                        0x80,
                                        0x00,
                                        0x00,
                                        0xC0,
                                        0x49,
                                        0x0F,
                                        0xDB,
                                        0x7F,
                                        0x80,
                                        0x00,
                                        0x00,
                                        0x00,
                                        0x00,
                                        0x00,
                                        0x01};
  expect_reads_everywhere({0x0D, {4}, payload}, [](const Tensor& t) {
    ASSERT_EQ(t.dtype(), kFloat32);
    const float* v = t.data_ptr<float>();
    EXPECT_EQ(std::bit_cast<uint32_t>(v[0]), 0x3F800000u);
    EXPECT_EQ(std::bit_cast<uint32_t>(v[1]), 0xC0490FDBu);
    EXPECT_EQ(std::bit_cast<uint32_t>(v[2]), 0x7F800000u);
    EXPECT_EQ(std::bit_cast<uint32_t>(v[3]), 0x00000001u);
    EXPECT_EQ(v[0], 1.0f);
    EXPECT_EQ(v[1], -3.14159274f);
    EXPECT_TRUE(std::isinf(v[2]));
  });
}

TEST(IdxTest, T07_Float64BitExact) {
  // 1.0, -pi, a quiet NaN with payload bits.
  const std::vector<uint8_t> payload = {0x3F, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                        0xC0, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18,
                                        0x7F, 0xF8, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34};
  expect_reads_everywhere({0x0E, {1, 3}, payload}, [](const Tensor& t) {
    ASSERT_EQ(t.dtype(), kFloat64);
    ASSERT_EQ(t.sizes(), IntList({1, 3}));
    const double* v = t.data_ptr<double>();
    EXPECT_EQ(std::bit_cast<uint64_t>(v[0]), 0x3FF0000000000000ull);
    EXPECT_EQ(std::bit_cast<uint64_t>(v[1]), 0xC00921FB54442D18ull);
    EXPECT_EQ(std::bit_cast<uint64_t>(v[2]), 0x7FF8000000001234ull);
    EXPECT_EQ(v[1], -std::numbers::pi);
  });
}

TEST(IdxTest, LargePayloadThroughGzipMatchesRaw) {
  // Several MiB: the growing gzip buffer and the 256 KiB input chunks.
  std::vector<uint8_t> payload(3 * 1024 * 1024 + 17);
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<uint8_t>((i * 31) >> 3);
  const std::vector<uint8_t> bytes =
      idx_bytes(0x08, {static_cast<uint32_t>(payload.size())}, payload);
  const Tensor raw = read_raw(bytes);
  const Tensor unzipped = read_gz(bytes);
  ASSERT_EQ(unzipped.numel(), static_cast<int64_t>(payload.size()));
  EXPECT_EQ(std::memcmp(raw.data_ptr(), payload.data(), payload.size()), 0);
  EXPECT_EQ(std::memcmp(unzipped.data_ptr(), payload.data(), payload.size()), 0);
}

}  // namespace
}  // namespace tandem::data
