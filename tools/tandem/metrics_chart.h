// What a plot of metrics files shows: a loss panel (train, and test where
// recorded), accuracy (test; train where recorded) and samples/s, one
// colour per file. Against epoch, or against step when any file has
// per-step records; end-of-epoch values then stand at the step their epoch
// ended (their "steps" field), and each series is drawn from the finest
// records that carry it.
//
//   const Chart chart = metrics_chart({read_metrics_file("a.jsonl"),
//                                      read_metrics_file("b.jsonl")});
//   std::cout << svg_of(chart);
#pragma once

#include <vector>

#include "metrics_file.h"
#include "svg_chart.h"

namespace tandem::cli {

/// Panels without a value in any file are left out. Throws tandem::Error
/// naming the file when one has no value to plot.
Chart metrics_chart(const std::vector<MetricsFile>& runs);

/// How many points the chart draws (finite values).
size_t point_count(const Chart& chart);

}  // namespace tandem::cli
