#include "io/safetensors_header.h"

#include <algorithm>
#include <array>
#include <set>
#include <tuple>

#include "io/json_reader.h"

namespace tandem::io::detail {

namespace {

// Every dtype of the reference's Dtype enum, in its order (the rank).
constexpr std::array<FormatDtype, 22> kFormatDtypes = {{
    {"BOOL", 8, 0, kBool},
    {"F4", 4, 1, std::nullopt},
    {"F6_E2M3", 6, 2, std::nullopt},
    {"F6_E3M2", 6, 3, std::nullopt},
    {"U8", 8, 4, kUInt8},
    {"I8", 8, 5, std::nullopt},
    {"F8_E5M2", 8, 6, std::nullopt},
    {"F8_E4M3", 8, 7, std::nullopt},
    {"F8_E8M0", 8, 8, std::nullopt},
    {"F8_E4M3FNUZ", 8, 9, std::nullopt},
    {"F8_E5M2FNUZ", 8, 10, std::nullopt},
    {"I16", 16, 11, std::nullopt},
    {"U16", 16, 12, std::nullopt},
    {"F16", 16, 13, std::nullopt},
    {"BF16", 16, 14, std::nullopt},
    {"I32", 32, 15, std::nullopt},
    {"U32", 32, 16, std::nullopt},
    {"F32", 32, 17, kFloat32},
    {"C64", 64, 18, std::nullopt},
    {"F64", 64, 19, kFloat64},
    {"I64", 64, 20, kInt64},
    {"U64", 64, 21, std::nullopt},
}};

constexpr std::string_view kMetadataKey = "__metadata__";

// Reads the header's JSON into a Header, rejecting anything the format does
// not allow. Syntax errors surface as JsonSyntaxError; structure errors are
// thrown here, naming the tensor.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view source)
      : json_(text), source_(source) {}

  Header parse() {
    Header header;
    json_.begin_object();
    std::set<std::string> keys;
    std::string key;
    while (json_.next_key(key)) {
      if (!keys.insert(key).second) bad("duplicate key \"", key, "\"");
      if (key == kMetadataKey) {
        header.metadata = read_metadata();
      } else {
        header.tensors.push_back(read_tensor(std::move(key)));
      }
    }
    json_.end();
    return header;
  }

 private:
  template <typename... Details>
  [[noreturn]] void bad(const Details&... details) const {
    fail_check(source_, "InvalidHeaderDeserialization", details...);
  }

  void expect_kind(JsonKind want, const std::string& what) {
    JsonKind got = json_.peek();
    if (got != want) bad(what, " must be ", describe(want), ", got ", describe(got));
  }

  Metadata read_metadata() {
    expect_kind(JsonKind::kObject, "__metadata__");
    json_.begin_object();
    Metadata metadata;
    std::string key;
    while (json_.next_key(key)) {
      if (metadata.count(key) != 0) bad("duplicate __metadata__ key \"", key, "\"");
      expect_kind(JsonKind::kString, "__metadata__ value \"" + key + "\"");
      metadata.emplace(std::move(key), json_.read_string());
    }
    return metadata;
  }

  // A number token that must be a non-negative integer no larger than `max`.
  uint64_t read_unsigned(const std::string& what, uint64_t max) {
    expect_kind(JsonKind::kNumber, what);
    std::string_view token = json_.read_number();
    bool integer = token.find_first_not_of("0123456789") == std::string_view::npos;
    if (!integer) bad(what, " is ", token, ", not a non-negative integer");
    uint64_t value = 0;
    for (char digit : token) {
      uint64_t d = digit - '0';
      if (value > (max - d) / 10) bad(what, " is ", token, ", more than ", max);
      value = value * 10 + d;
    }
    return value;
  }

  TensorRecord read_tensor(std::string name) {
    const std::string subject = "tensor \"" + name + "\"";
    expect_kind(JsonKind::kObject, subject);
    json_.begin_object();
    TensorRecord record;
    record.name = std::move(name);
    bool has_shape = false;
    bool has_offsets = false;
    std::string field;
    while (json_.next_key(field)) {
      if (field == "dtype") {
        if (record.dtype != nullptr) bad(subject, " has two \"dtype\" fields");
        expect_kind(JsonKind::kString, subject + " dtype");
        std::string dtype = json_.read_string();
        record.dtype = find_format_dtype(dtype);
        if (record.dtype == nullptr) bad(subject, " has unknown dtype \"", dtype, "\"");
      } else if (field == "shape") {
        if (has_shape) bad(subject, " has two \"shape\" fields");
        has_shape = true;
        expect_kind(JsonKind::kArray, subject + " shape");
        json_.begin_array();
        while (json_.next_element()) {
          if (record.shape.size() == kMaxRank) {
            bad(subject, " has more than ", kMaxRank, " dimensions (tandem's limit)");
          }
          record.shape.push_back(read_unsigned(
              tandem::detail::str(subject, " shape entry ", record.shape.size()),
              kMaxDimSize));
        }
      } else if (field == "data_offsets") {
        if (has_offsets) bad(subject, " has two \"data_offsets\" fields");
        has_offsets = true;
        read_offsets(subject, record);
      } else {
        bad(subject,
            " has an unknown field \"",
            field,
            "\" (expected dtype, shape and data_offsets)");
      }
    }
    if (record.dtype == nullptr) bad(subject, " lacks \"dtype\"");
    if (!has_shape) bad(subject, " lacks \"shape\"");
    if (!has_offsets) bad(subject, " lacks \"data_offsets\"");
    return record;
  }

  void read_offsets(const std::string& subject, TensorRecord& record) {
    const std::string what = subject + " data_offsets";
    expect_kind(JsonKind::kArray, what);
    json_.begin_array();
    uint64_t* targets[] = {&record.begin, &record.end};
    size_t count = 0;
    while (json_.next_element()) {
      if (count == 2) bad(what, " has more than two entries (expected [BEGIN, END])");
      *targets[count] =
          read_unsigned(tandem::detail::str(what, " entry ", count), UINT64_MAX);
      ++count;
    }
    if (count != 2) bad(what, " has ", count, " entries (expected [BEGIN, END])");
  }

  JsonReader json_;
  std::string_view source_;
};

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

// Checks 6 and 7 for one tensor: it starts where the previous one ended,
// and its byte range matches its shape and dtype.
void check_tensor_range(const TensorRecord& t, uint64_t start, std::string_view source) {
  const std::string subject = "tensor \"" + t.name + "\"";
  if (t.begin != start) {
    fail_check(source,
               "InvalidOffset",
               subject,
               " begins at byte ",
               t.begin,
               " of the data but ",
               start == 0 ? std::string("the first tensor must begin at 0")
                          : tandem::detail::str("the previous tensor ends at ", start),
               t.begin > start ? " (a gap)" : " (an overlap)");
  }
  if (t.end < t.begin) {
    fail_check(source,
               "InvalidOffset",
               subject,
               " ends (",
               t.end,
               ") before it begins (",
               t.begin,
               ")");
  }
  uint64_t elements = 1;
  for (uint64_t dim : t.shape) {
    if (dim != 0 && elements > UINT64_MAX / dim) {
      fail_check(source,
                 "ValidationOverflow",
                 subject,
                 " shape ",
                 shape_text(t.shape),
                 " has 2^64 or more elements");
    }
    elements *= dim;
  }
  if (elements > UINT64_MAX / t.dtype->bits) {
    fail_check(source,
               "ValidationOverflow",
               subject,
               " shape ",
               shape_text(t.shape),
               " of ",
               t.dtype->name,
               " has 2^64 or more bits");
  }
  uint64_t bits = elements * t.dtype->bits;
  if (bits % 8 != 0) {
    fail_check(source,
               "MisalignedSlice",
               subject,
               " holds ",
               elements,
               " ",
               t.dtype->name,
               " elements, ",
               bits,
               " bits, which is not a whole number of bytes");
  }
  if (t.end - t.begin != bits / 8) {
    fail_check(source,
               "TensorInvalidInfo",
               subject,
               " shape ",
               shape_text(t.shape),
               " of ",
               t.dtype->name,
               " needs ",
               bits / 8,
               " bytes but data_offsets [",
               t.begin,
               ", ",
               t.end,
               "] span ",
               t.end - t.begin);
  }
}

}  // namespace

const FormatDtype* find_format_dtype(std::string_view name) {
  for (const FormatDtype& dtype : kFormatDtypes) {
    if (dtype.name == name) return &dtype;
  }
  return nullptr;
}

const FormatDtype& format_dtype_of(ScalarType type) {
  const auto* found =
      std::find_if(kFormatDtypes.begin(), kFormatDtypes.end(), [&](const FormatDtype& d) {
        return d.tandem_type == type;
      });
  TANDEM_INTERNAL_ASSERT(
      found != kFormatDtypes.end(), "safetensors: no format dtype for ", type);
  return *found;
}

Header parse_header(std::string_view text,
                    uint64_t payload_size,
                    std::string_view source) {
  size_t bad_byte = find_invalid_utf8(text);
  if (bad_byte != std::string_view::npos) {
    fail_check(source,
               "InvalidHeader",
               "the header is not valid UTF-8 (at byte ",
               bad_byte,
               " of the header)");
  }
  if (text.empty() || text.front() != '{') {
    fail_check(source,
               "InvalidHeaderStart",
               "the header must be a JSON object starting with '{'",
               text.empty() ? std::string(", but it is empty")
                            : tandem::detail::str(", not '", text.substr(0, 1), "'"));
  }
  Header header;
  try {
    header = HeaderParser(text, source).parse();
  } catch (const JsonSyntaxError& e) {
    fail_check(source, "InvalidHeaderDeserialization", e.what(), " of the header");
  }
  // The reference sorts by offsets only (ties in any order); the name makes
  // the order, and so the first error reported, deterministic.
  std::sort(
      header.tensors.begin(), header.tensors.end(), [](const auto& a, const auto& b) {
        return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
      });
  uint64_t start = 0;
  for (const TensorRecord& tensor : header.tensors) {
    check_tensor_range(tensor, start, source);
    start = tensor.end;
  }
  if (start != payload_size) {
    fail_check(source,
               "MetadataIncompleteBuffer",
               "the tensors cover ",
               start,
               " bytes but ",
               payload_size,
               " bytes follow the header");
  }
  return header;
}

std::string format_header(const Header& header) {
  std::string out = "{";
  if (!header.metadata.empty()) {
    out += "\"__metadata__\":{";
    for (auto it = header.metadata.begin(); it != header.metadata.end(); ++it) {
      if (it != header.metadata.begin()) out += ',';
      append_json_string(out, it->first);
      out += ':';
      append_json_string(out, it->second);
    }
    out += '}';
  }
  for (const TensorRecord& t : header.tensors) {
    if (out.size() > 1) out += ',';
    append_json_string(out, t.name);
    out += ":{\"dtype\":\"";
    out += t.dtype->name;
    out += "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i > 0) out += ',';
      out += std::to_string(t.shape[i]);
    }
    out += "],\"data_offsets\":[" + std::to_string(t.begin) + ',' +
           std::to_string(t.end) + "]}";
  }
  out += '}';
  out.append((8 - out.size() % 8) % 8, ' ');
  return out;
}

}  // namespace tandem::io::detail
