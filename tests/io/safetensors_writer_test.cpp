// The safetensors writer: the reference's golden bytes (T15), its layout
// rules, and round trips of every dtype, empty tensors and scalars with
// aligned data (T16).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "io/io_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::io {
namespace {

using tandem::testing::throws_with;
using testing::ScratchDir;

std::string bytes_of(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

// The header text of a serialized file (without the padding).
std::string header_of(const std::string& file) {
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  std::string header = file.substr(8, n);
  return header.substr(0, header.find_last_not_of(' ') + 1);
}

// Same dtype, shape and bytes (NaN payloads and -0.0 included).
::testing::AssertionResult same_bits(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.sizes() != want.sizes()) {
    return ::testing::AssertionFailure()
           << got.dtype() << got.sizes() << " vs " << want.dtype() << want.sizes();
  }
  Tensor a = got.contiguous();
  Tensor b = want.contiguous();
  if (a.nbytes() > 0 && std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) != 0) {
    return ::testing::AssertionFailure() << "bytes differ for shape " << got.sizes();
  }
  return ::testing::AssertionSuccess();
}

Tensor attn_values(const IntList& shape) {
  return tandem::arange(0, 6, kFloat32).view(shape);
}

TEST(SafetensorsWriter, T15_GoldenN64) {
  // From the reference's own test (safetensors/src/tensor.rs).
  std::string want = bytes_of(
      {64, 0,  0,   0,   0,   0,   0,   0,   123, 34,  97,  116, 116, 110, 46,  48,
       34, 58, 123, 34,  100, 116, 121, 112, 101, 34,  58,  34,  70,  51,  50,  34,
       44, 34, 115, 104, 97,  112, 101, 34,  58,  91,  49,  44,  50,  44,  51,  93,
       44, 34, 100, 97,  116, 97,  95,  111, 102, 102, 115, 101, 116, 115, 34,  58,
       91, 48, 44,  50,  52,  93,  125, 125, 0,   0,   0,   0,   0,   0,   128, 63,
       0,  0,  0,   64,  0,   0,   64,  64,  0,   0,   128, 64,  0,   0,   160, 64});
  std::string got =
      serialize({{"attn.0", attn_values({1, 2, 3})}}, {}, /*store_checksum=*/false);
  EXPECT_EQ(got, want);
  EXPECT_TRUE(same_bits(deserialize(got).tensors.at("attn.0"), attn_values({1, 2, 3})));
}

TEST(SafetensorsWriter, T15_GoldenN72PadsWithSevenSpaces) {
  std::string want =
      bytes_of({72,  0,   0,   0,   0,   0,   0,   0,   123, 34, 97, 116, 116, 110, 48,
                34,  58,  123, 34,  100, 116, 121, 112, 101, 34, 58, 34,  70,  51,  50,
                34,  44,  34,  115, 104, 97,  112, 101, 34,  58, 91, 49,  44,  49,  44,
                50,  44,  51,  93,  44,  34,  100, 97,  116, 97, 95, 111, 102, 102, 115,
                101, 116, 115, 34,  58,  91,  48,  44,  50,  52, 93, 125, 125, 32,  32,
                32,  32,  32,  32,  32,  0,   0,   0,   0,   0,  0,  128, 63,  0,   0,
                0,   64,  0,   0,   64,  64,  0,   0,   128, 64, 0,  0,   160, 64});
  std::string got =
      serialize({{"attn0", attn_values({1, 1, 2, 3})}}, {}, /*store_checksum=*/false);
  EXPECT_EQ(got, want);
  auto loaded = deserialize(got).tensors.at("attn0");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(loaded.data_ptr()) % 4, 0u);
}

TEST(SafetensorsWriter, T15_GoldenEmptyAndMetadataOnly) {
  EXPECT_EQ(serialize({}, {}, /*store_checksum=*/false),
            bytes_of({8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32}));
  EXPECT_EQ(serialize({}, {{"framework", "pt"}}, /*store_checksum=*/false),
            bytes_of({40,  0,   0,   0,   0,   0,   0,   0,   123, 34,  95,  95,
                      109, 101, 116, 97,  100, 97,  116, 97,  95,  95,  34,  58,
                      123, 34,  102, 114, 97,  109, 101, 119, 111, 114, 107, 34,
                      58,  34,  112, 116, 34,  125, 125, 32,  32,  32,  32,  32}));
  EXPECT_TRUE(deserialize(serialize({})).tensors.empty());
}

TEST(SafetensorsWriter, T15_SortsByDtypeWidthThenNameAndPadsToEight) {
  TensorMap tensors = {{"b", zeros({1}, kFloat32)},
                       {"a", zeros({2}, kFloat32)},
                       {"k", zeros({3}, kBool)},
                       {"z", zeros({1}, kInt64)},
                       {"m", zeros({1}, kUInt8)},
                       {"d", zeros({1}, kFloat64)}};
  std::string file = serialize(tensors, {{"note", "x"}}, /*store_checksum=*/false);
  EXPECT_EQ(header_of(file),
            "{\"__metadata__\":{\"note\":\"x\"},"
            "\"z\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
            "\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[8,16]},"
            "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]},"
            "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[24,28]},"
            "\"m\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[28,29]},"
            "\"k\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[29,32]}}");
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(file.size(), 8 + n + 32);
}

TEST(SafetensorsWriter, EscapesNamesAndMetadataLikeTheReference) {
  std::string file = serialize({{"a\"b\\c\n\x01\xc3\xa9", zeros({0}, kUInt8)}},
                               {{"k\t", "v/\x7f"}},
                               /*store_checksum=*/false);
  EXPECT_EQ(header_of(file),
            "{\"__metadata__\":{\"k\\t\":\"v/\x7f\"},"
            "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\":{\"dtype\":\"U8\",\"shape\":[0],"
            "\"data_offsets\":[0,0]}}");
  EXPECT_EQ(deserialize(file).tensors.count("a\"b\\c\n\x01\xc3\xa9"), 1u);
}

TEST(SafetensorsWriter, StoresAChecksumTheReaderVerifies) {
  TensorMap tensors = {{"w", tandem::randn({4, 3})}};
  std::string file = serialize(tensors, {{"epoch", "2"}});
  EXPECT_NE(header_of(file).find("\"tandem.crc32\":\""), std::string::npos);
  auto contents = deserialize(file);
  EXPECT_TRUE(contents.checksum_verified);
  EXPECT_EQ(contents.metadata, (Metadata{{"epoch", "2"}}));  // checksum left out
}

TEST(SafetensorsWriter, T16_RoundTripsEveryDtypeBitForBit) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  TensorMap tensors = {
      {"f32",
       tandem::testing::from_values(
           {1.5, -0.0, nan, inf, -inf, 1e-40}, {2, 3}, kFloat32)},
      {"f64",
       tandem::testing::from_values({0.1, -0.0, nan, -inf, 5e-324}, {5}, kFloat64)},
      {"i64", tandem::tensor<int64_t>({-1, INT64_MIN, INT64_MAX, 0})},
      {"u8", tandem::tensor<uint8_t>({0, 1, 127, 128, 255})},
      {"bool", tandem::tensor<bool>({true, false, true})},
      {"scalar", tandem::scalar_tensor(2.5, kFloat64)},
      {"int_scalar", tandem::scalar_tensor(-7, kInt64)},
      {"empty", zeros({0}, kFloat32)},
      {"empty_2d", zeros({3, 0}, kInt64)},
      {"big", tandem::randn({64, 33}, kFloat64)},
  };
  ScratchDir dir;
  auto path = dir.path() / "all.safetensors";
  save_tensors(tensors, path, {{"k", "v"}});
  for (const auto& loaded : {deserialize(serialize(tensors)), load_safetensors(path)}) {
    ASSERT_EQ(loaded.tensors.size(), tensors.size());
    for (const auto& [name, want] : tensors) {
      const Tensor& got = loaded.tensors.at(name);
      EXPECT_TRUE(same_bits(got, want)) << name;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(got.data_ptr()) % got.element_size(), 0u)
          << name;
      EXPECT_TRUE(got.is_cpu());
    }
  }
  EXPECT_EQ(load_safetensors(path).metadata, (Metadata{{"k", "v"}}));
  EXPECT_EQ(testing::read_file(path), serialize(tensors, {{"k", "v"}}));
}

TEST(SafetensorsWriter, T16_NonContiguousTensorsAreWrittenContiguous) {
  Tensor base = tandem::arange(0, 12, kFloat64).view({3, 4});
  Tensor transposed = base.t();
  Tensor strided = base.narrow(1, 1, 2);
  auto loaded = deserialize(serialize({{"t", transposed}, {"s", strided}})).tensors;
  EXPECT_TRUE(same_bits(loaded.at("t"), transposed.contiguous()));
  EXPECT_TRUE(same_bits(loaded.at("s"), strided.contiguous()));
  EXPECT_TRUE(loaded.at("t").is_contiguous());
}

TEST(SafetensorsWriter, WritesTensorsThatRequireGrad) {
  Tensor w = tandem::randn({2, 2}).requires_grad_();
  auto loaded = deserialize(serialize({{"w", w}})).tensors.at("w");
  EXPECT_TRUE(same_bits(loaded, w.detach()));
  EXPECT_FALSE(loaded.requires_grad());
}

TEST(SafetensorsWriter, RejectsWhatTheFormatCannotHold) {
  EXPECT_TRUE(throws_with(
      [] {
        serialize({{"w", Tensor()}});
      },
      "\"w\": it is undefined"));
  EXPECT_TRUE(throws_with(
      [] {
        serialize({{"__metadata__", zeros({1})}});
      },
      "cannot be named \"__metadata__\""));
  EXPECT_TRUE(throws_with(
      [] {
        serialize({{"bad\xff", zeros({1})}});
      },
      "not valid UTF-8"));
  EXPECT_TRUE(throws_with([] { serialize({}, {{"k", "\xc0\x80"}}); }, "not valid UTF-8"));
  EXPECT_TRUE(throws_with([] { serialize({}, {{"tandem.crc32", "0"}}); }, "is reserved"));
}

// Empty tensors share their offsets, so the reader's order (by offset) and
// the writer's (by dtype, then name) can differ: the checksum must not care.
TEST(SafetensorsWriter, EmptyTensorsOfSeveralDtypesPassTheChecksum) {
  const auto loaded = deserialize(serialize(
      {{"a", zeros({0}, kFloat32)}, {"b", zeros({0}, kInt64)}, {"c", zeros({0, 2})}}));
  EXPECT_TRUE(loaded.checksum_verified);
  EXPECT_EQ(loaded.tensors.size(), 3u);
  EXPECT_EQ(loaded.tensors.at("b").dtype(), kInt64);
}

}  // namespace
}  // namespace tandem::io
