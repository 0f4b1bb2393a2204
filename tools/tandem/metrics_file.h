// The records of a metrics file: JSON Lines, one flat object per line, as
// `tandem train --metrics FILE` writes them. Each record keeps its line
// number, so that whatever is drawn from it can say where it came from,
// and a malformed line is an error naming the file, line and column.
//
//   const MetricsFile run = read_metrics_file("run.jsonl");
//   for (const MetricsRecord& record : run.records)
//     if (auto loss = record.number("train_loss")) ...;
//
// Only numbers are kept: strings, booleans, arrays and objects are checked
// against the JSON grammar and skipped, so fields a later tandem adds cost
// nothing here. A null (what train writes for a loss that was not finite)
// is kept as NaN: the field is there, its value is not a number.
//
// Two kinds of record: an end-of-epoch record ("epoch", with the test
// evaluation "test_loss" and "test_accuracy", and "steps", the steps taken
// so far) and a per-step record ("step", without evaluation fields).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tandem::cli {

struct MetricsRecord {
  /// 1-based, in the file.
  int64_t line = 0;
  /// The numeric fields; NaN for a null.
  std::map<std::string, double> numbers;

  bool has(const std::string& field) const { return numbers.count(field) > 0; }
  /// The field's value; nullopt when the record does not have it.
  std::optional<double> number(const std::string& field) const;
  /// A per-step point: a "step" field and no end-of-epoch evaluation.
  bool is_step() const;
  /// An end-of-epoch point: an "epoch" field and not a per-step point.
  bool is_epoch() const;
};

struct MetricsFile {
  /// As given on the command line (it names the run in messages and legends).
  std::string path;
  /// In file order; blank lines hold none.
  std::vector<MetricsRecord> records;
};

/// Throws tandem::Error naming `path` when it cannot be read, holds no
/// record, or a line is not one JSON object (the message names the line
/// and column and says what was expected there).
MetricsFile read_metrics_file(const std::string& path);

}  // namespace tandem::cli
