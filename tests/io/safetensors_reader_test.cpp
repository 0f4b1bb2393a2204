// The safetensors reader on hand-built bad files (reliability spec T08-T14):
// every reference check, in the reference order, with an error that names
// the check and the tensor.
#include <cstdint>
#include <string>
#include <vector>

#include "io/io_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::io {
namespace {

using tandem::testing::throws_with;
using testing::safetensors_bytes;
using testing::ScratchDir;

// `"name":{"dtype":...,"shape":...,"data_offsets":[begin,end]}`
std::string entry(const std::string& name,
                  const std::string& dtype,
                  const std::string& shape,
                  uint64_t begin,
                  uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
}

// Passes when deserializing `bytes` fails with a message holding every needle.
::testing::AssertionResult rejects(const std::string& bytes,
                                   const std::vector<std::string>& needles) {
  for (const std::string& needle : needles) {
    auto result = throws_with([&] { deserialize(bytes, "test.safetensors"); }, needle);
    if (!result) return result;
  }
  return ::testing::AssertionSuccess();
}

TEST(SafetensorsReader, AcceptsAMinimalFile) {
  auto contents = deserialize(safetensors_bytes("{" + entry("a", "U8", "[2]", 0, 2) + "}",
                                                std::string("\x07\x09", 2)));
  ASSERT_EQ(contents.tensors.size(), 1u);
  const Tensor& a = contents.tensors.at("a");
  EXPECT_EQ(a.dtype(), kUInt8);
  EXPECT_EQ(a.sizes(), (IntList{2}));
  EXPECT_EQ(a.data_ptr<uint8_t>()[1], 9);
  EXPECT_FALSE(contents.checksum_verified);
}

TEST(SafetensorsReader, T08_TooSmallAndTooLarge) {
  EXPECT_TRUE(rejects("", {"test.safetensors", "HeaderTooSmall", "0 bytes"}));
  EXPECT_TRUE(rejects(std::string(7, '\0'), {"HeaderTooSmall", "7 bytes"}));
  // Over the cap: rejected on the length alone, before the missing bytes
  // would make it an InvalidHeaderLength.
  EXPECT_TRUE(rejects(safetensors_bytes("{}", "", 100'000'001),
                      {"HeaderTooLarge", "100000001", "100000000"}));
  // The cap itself is allowed; this file is simply too short for it.
  EXPECT_TRUE(rejects(safetensors_bytes("{}", "", 100'000'000), {"InvalidHeaderLength"}));
}

TEST(SafetensorsReader, T08_HugeLengthInAFileIsRejectedBeforeReading) {
  ScratchDir dir;
  auto path = dir.path() / "huge.safetensors";
  testing::write_file(path, safetensors_bytes("{}", "", 1ULL << 40));
  EXPECT_TRUE(throws_with([&] { load_tensors(path); }, "HeaderTooLarge"));
  EXPECT_TRUE(throws_with([&] { load_tensors(path); }, path.string()));
}

TEST(SafetensorsReader, T09_LengthsThatWouldWrap) {
  EXPECT_TRUE(rejects(safetensors_bytes("{}", "", UINT64_MAX), {"HeaderTooLarge"}));
  EXPECT_TRUE(rejects(safetensors_bytes("{}", "", UINT64_MAX - 7), {"HeaderTooLarge"}));
  // One byte more than the file holds.
  EXPECT_TRUE(rejects(safetensors_bytes("{}  ", "", 5),
                      {"InvalidHeaderLength", "header length is 5", "only 4"}));
}

TEST(SafetensorsReader, T10_FourDistinctHeaderErrors) {
  EXPECT_TRUE(rejects(safetensors_bytes("{\"a\xff\":1}"), {"InvalidHeader:", "UTF-8"}));
  EXPECT_TRUE(rejects(safetensors_bytes("{\"a\""),
                      {"InvalidHeaderDeserialization", "invalid JSON"}));
  EXPECT_TRUE(rejects(safetensors_bytes(" {}"), {"InvalidHeaderStart", "'{'"}));
  EXPECT_TRUE(rejects(safetensors_bytes("[{}]"), {"InvalidHeaderStart"}));
  EXPECT_TRUE(rejects(safetensors_bytes(""), {"InvalidHeaderStart", "empty"}));
  EXPECT_TRUE(
      rejects(safetensors_bytes("{\"a\":[1]}"),
              {"InvalidHeaderDeserialization", "tensor \"a\" must be an object"}));
}

TEST(SafetensorsReader, T10_StrictUtf8) {
  for (std::string bad : {"\xc0\xaf",          // overlong '/'
                          "\xed\xa0\x80",      // a UTF-16 surrogate
                          "\xf4\x90\x80\x80",  // past U+10FFFF
                          "\xe2\x82",          // truncated sequence
                          "\x80"}) {           // stray continuation byte
    EXPECT_TRUE(rejects(safetensors_bytes("{\"" + bad + "\":1}"), {"InvalidHeader:"}))
        << "bytes of length " << bad.size();
  }
  // Valid multi-byte names load (é, €, 𝄞).
  std::string name = "w\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e";
  auto contents = deserialize(
      safetensors_bytes("{" + entry(name, "U8", "[]", 0, 1) + "}", std::string(1, '\0')));
  EXPECT_EQ(contents.tensors.count(name), 1u);
}

TEST(SafetensorsReader, T10_StrictJsonSyntax) {
  const std::string a = entry("a", "U8", "[1]", 0, 1);
  for (const std::string& header : std::vector<std::string>{
           "{" + a + ",}",    // trailing comma
           "{" + a + "}x",    // trailing garbage
           "{" + a + "} {}",  // two values
           "{," + a + "}",    // leading comma
           "{\"a\":{\"dtype\":\"U8\",\"shape\":[01],\"data_offsets\":[0,1]}}",
           "{\"a\" {}}",         // missing colon
           "{'a':{}}",           // single quotes
           "{\"a\\q\":{}}",      // bad escape
           "{\"a\\ud800\":{}}",  // lone high surrogate
           "{\"a\\udc00\":{}}",  // lone low surrogate
           "{\"a\tb\":{}}",      // raw control character
           "{\"a\":{\"dtype\":\"U8\",\"shape\":[-],\"data_offsets\":[0,1]}}",
           "{/*c*/}"}) {
    EXPECT_TRUE(rejects(safetensors_bytes(header, std::string(1, '\0')),
                        {"InvalidHeaderDeserialization", "invalid JSON at byte"}))
        << header;
  }
  // Whitespace (the writer pads with spaces) and escapes are fine.
  auto contents = deserialize(safetensors_bytes(
      "{ \"a\\u00e9\\ud834\\udd1e\\n\" : {\"dtype\":\"U8\",\"shape\":[ 1 ],"
      "\"data_offsets\":[0,1]}\t\r\n}   ",
      std::string(1, '\0')));
  EXPECT_EQ(contents.tensors.count("a\xc3\xa9\xf0\x9d\x84\x9e\n"), 1u);
}

TEST(SafetensorsReader, DeepNestingFailsWithoutRecursing) {
  std::string header = "{\"a\":" + std::string(100000, '[') + "}";
  EXPECT_TRUE(rejects(safetensors_bytes(header), {"tensor \"a\" must be an object"}));
  header = "{\"__metadata__\":{\"k\":" + std::string(100000, '{') + "}";
  EXPECT_TRUE(
      rejects(safetensors_bytes(header), {"__metadata__ value \"k\" must be a string"}));
}

TEST(SafetensorsReader, T11_BadTensorEntriesNameTheTensor) {
  auto with = [](const std::string& body) {
    return safetensors_bytes("{\"fc.weight\":{" + body + "}}", std::string(4, '\0'));
  };
  const std::string offsets = "\"data_offsets\":[0,4]";
  EXPECT_TRUE(rejects(with("\"dtype\":\"F33\",\"shape\":[1]," + offsets),
                      {"\"fc.weight\"", "unknown dtype \"F33\""}));
  EXPECT_TRUE(rejects(with("\"dtype\":32,\"shape\":[1]," + offsets),
                      {"\"fc.weight\" dtype must be a string, got a number"}));
  EXPECT_TRUE(
      rejects(with("\"shape\":[1]," + offsets), {"\"fc.weight\" lacks \"dtype\""}));
  EXPECT_TRUE(
      rejects(with("\"dtype\":\"F32\"," + offsets), {"\"fc.weight\" lacks \"shape\""}));
  EXPECT_TRUE(rejects(with("\"dtype\":\"F32\",\"shape\":[1]"),
                      {"\"fc.weight\" lacks \"data_offsets\""}));
  EXPECT_TRUE(rejects(with("\"dtype\":\"F32\",\"shape\":[1]," + offsets + ",\"x\":1"),
                      {"\"fc.weight\" has an unknown field \"x\""}));
  for (std::string dim :
       {"-1", "1.5", "1e3", "-0", "281474976710656", "99999999999999999999"}) {
    EXPECT_TRUE(rejects(with("\"dtype\":\"F32\",\"shape\":[" + dim + "]," + offsets),
                        {"\"fc.weight\" shape entry 0 is " + dim}))
        << dim;
  }
  EXPECT_TRUE(rejects(with("\"dtype\":\"F32\",\"shape\":[\"1\"]," + offsets),
                      {"shape entry 0 must be a number, got a string"}));
  EXPECT_TRUE(rejects(with("\"dtype\":\"F32\",\"shape\":{}," + offsets),
                      {"shape must be an array, got an object"}));
  // 2^48-1 itself is a legal dimension (the size check then fails).
  EXPECT_TRUE(rejects(with("\"dtype\":\"U8\",\"shape\":[281474976710655]," + offsets),
                      {"TensorInvalidInfo"}));
  std::string rank65 = "[1";
  for (int i = 0; i < 64; ++i) rank65 += ",1";
  EXPECT_TRUE(rejects(with("\"dtype\":\"F32\",\"shape\":" + rank65 + "]," + offsets),
                      {"more than 64 dimensions"}));
}

TEST(SafetensorsReader, T12_OffsetsMustTileTheBuffer) {
  auto two = [](uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1, size_t payload) {
    return safetensors_bytes(
        "{" + entry("a", "U8", "[" + std::to_string(a1 - a0) + "]", a0, a1) + "," +
            entry("b", "U8", "[" + std::to_string(b1 > b0 ? b1 - b0 : 0) + "]", b0, b1) +
            "}",
        std::string(payload, '\0'));
  };
  EXPECT_TRUE(rejects(
      safetensors_bytes("{" + entry("a", "U8", "[2]", 1, 3) + "}", std::string(3, '\0')),
      {"InvalidOffset", "tensor \"a\" begins at byte 1", "must begin at 0"}));
  EXPECT_TRUE(rejects(two(0, 2, 3, 5, 5), {"InvalidOffset", "\"b\"", "gap"}));
  EXPECT_TRUE(rejects(two(0, 4, 2, 6, 6), {"InvalidOffset", "\"b\"", "overlap"}));
  EXPECT_TRUE(rejects(two(0, 2, 2, 1, 2), {"InvalidOffset", "\"b\" ends (1) before"}));
  // Both tensors alias the same bytes (the memory-DoS case).
  EXPECT_TRUE(rejects(two(0, 4, 0, 4, 4), {"InvalidOffset", "overlap"}));
  EXPECT_TRUE(rejects(
      safetensors_bytes("{" + entry("a", "U8", "[2]", 0, 2) + "}", std::string(3, '\0')),
      {"MetadataIncompleteBuffer", "cover 2 bytes but 3"}));
  EXPECT_TRUE(rejects(
      safetensors_bytes("{" + entry("a", "U8", "[4]", 0, 4) + "}", std::string(2, '\0')),
      {"MetadataIncompleteBuffer", "cover 4 bytes but 2"}));
  EXPECT_TRUE(rejects(safetensors_bytes("{}", "x"), {"MetadataIncompleteBuffer"}));
  for (std::string offsets : {"[0]", "[0,1,1]", "[]", "[0,-1]", "[0,1.0]", "0"}) {
    EXPECT_TRUE(rejects(safetensors_bytes("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],"
                                          "\"data_offsets\":" +
                                              offsets + "}}",
                                          std::string(1, '\0')),
                        {"InvalidHeaderDeserialization", "\"a\" data_offsets"}))
        << offsets;
  }
}

TEST(SafetensorsReader, T13_SizesAreCheckedWithoutOverflowOrAllocation) {
  EXPECT_TRUE(rejects(
      safetensors_bytes("{" + entry("w", "F32", "[2]", 0, 4) + "}", std::string(4, '\0')),
      {"TensorInvalidInfo", "\"w\"", "needs 8 bytes", "span 4"}));
  EXPECT_TRUE(rejects(
      safetensors_bytes(
          "{" + entry("w", "F32", "[4294967296,4294967296,4294967296]", 0, 4) + "}",
          std::string(4, '\0')),
      {"ValidationOverflow", "\"w\"", "2^64 or more elements"}));
  EXPECT_TRUE(rejects(
      safetensors_bytes("{" + entry("w", "F64", "[1099511627776,1048576]", 0, 4) + "}",
                        std::string(4, '\0')),
      {"ValidationOverflow", "2^64 or more bits"}));
  // A shape whose byte count is huge but consistent with the offsets
  // claims more data than the file has.
  EXPECT_TRUE(rejects(
      safetensors_bytes(
          "{" + entry("w", "U8", "[281474976710655]", 0, 281474976710655ULL) + "}",
          std::string(4, '\0')),
      {"MetadataIncompleteBuffer"}));
  EXPECT_TRUE(rejects(
      safetensors_bytes("{" + entry("q", "F4", "[3]", 0, 2) + "}", std::string(2, '\0')),
      {"MisalignedSlice", "\"q\"", "12 bits"}));
  // A dimension of 0 makes any other dimension harmless.
  auto empty = deserialize(
      safetensors_bytes("{" + entry("e", "F64", "[0,281474976710655]", 0, 0) + "}"));
  EXPECT_EQ(empty.tensors.at("e").numel(), 0);
  // ... but tandem's strides must still fit in 64 bits.
  EXPECT_TRUE(rejects(
      safetensors_bytes("{" + entry("e", "F64", "[0,4294967296,4294967296]", 0, 0) + "}"),
      {"UnsupportedShape", "\"e\""}));
}

TEST(SafetensorsReader, T14_DuplicatesAndMetadata) {
  const std::string a = entry("a", "U8", "[1]", 0, 1);
  const std::string one(1, '\0');
  EXPECT_TRUE(rejects(safetensors_bytes("{" + a + "," + a + "}", one),
                      {"InvalidHeaderDeserialization", "duplicate key \"a\""}));
  EXPECT_TRUE(rejects(
      safetensors_bytes("{\"__metadata__\":{},\"__metadata__\":{}," + a + "}", one),
      {"duplicate key \"__metadata__\""}));
  EXPECT_TRUE(
      rejects(safetensors_bytes("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],"
                                "\"data_offsets\":[0,1]}}",
                                one),
              {"\"a\" has two \"dtype\" fields"}));
  EXPECT_TRUE(rejects(
      safetensors_bytes("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}," + a + "}", one),
      {"duplicate __metadata__ key \"k\""}));
  for (std::string value : {"1", "null", "true", "[\"x\"]", "{}"}) {
    EXPECT_TRUE(rejects(
        safetensors_bytes("{\"__metadata__\":{\"k\":" + value + "}," + a + "}", one),
        {"__metadata__ value \"k\" must be a string"}))
        << value;
  }
  EXPECT_TRUE(rejects(safetensors_bytes("{\"__metadata__\":null," + a + "}", one),
                      {"__metadata__ must be an object"}));
  auto contents = deserialize(safetensors_bytes(
      "{\"__metadata__\":{\"format\":\"pt\",\"\":\"\\\"x\\\"\"}," + a + "}", one));
  EXPECT_EQ(contents.metadata, (Metadata{{"format", "pt"}, {"", "\"x\""}}));
}

TEST(SafetensorsReader, ValidFileOfADtypeTandemLacks) {
  EXPECT_TRUE(rejects(safetensors_bytes("{" + entry("h", "BF16", "[2]", 0, 4) + "}",
                                        std::string(4, '\0')),
                      {"UnsupportedDtype", "\"h\"", "tandem has no dtype BF16"}));
  EXPECT_TRUE(rejects(
      safetensors_bytes("{" + entry("q", "F4", "[2]", 0, 1) + "}", std::string(1, '\0')),
      {"tandem has no dtype F4"}));
}

TEST(SafetensorsReader, BoolBytesMustBeZeroOrOne) {
  EXPECT_TRUE(rejects(safetensors_bytes("{" + entry("m", "BOOL", "[3]", 0, 3) + "}",
                                        std::string("\x01\x00\x02", 3)),
                      {"InvalidBool", "\"m\" element 2 is byte 2"}));
}

TEST(SafetensorsReader, FileErrorsNameThePath) {
  ScratchDir dir;
  EXPECT_TRUE(
      throws_with([&] { load_tensors(dir.path() / "missing.safetensors"); },
                  "missing.safetensors': cannot open it: No such file or directory"));
  EXPECT_TRUE(throws_with([&] { load_tensors(dir.path()); }, "not a regular file"));
}

}  // namespace
}  // namespace tandem::io
