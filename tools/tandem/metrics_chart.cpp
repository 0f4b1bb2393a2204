#include "metrics_chart.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "tandem/core/error.h"

namespace tandem::cli {
namespace {

struct SeriesSpec {
  const char* field;
  const char* label;
  bool dashed;
};

struct PanelSpec {
  const char* title;
  std::vector<SeriesSpec> series;
};

// Train series solid, test series dashed, in every panel.
const std::vector<PanelSpec>& panel_specs() {
  static const std::vector<PanelSpec> specs = {
      {"loss", {{"train_loss", "train", false}, {"test_loss", "test", true}}},
      {"accuracy", {{"train_accuracy", "train", false}, {"test_accuracy", "test", true}}},
      {"samples/s", {{"samples_per_second", "train", false}}},
  };
  return specs;
}

std::string field_list() {
  std::string out;
  for (const PanelSpec& panel : panel_specs())
    for (const SeriesSpec& s : panel.series)
      out += (out.empty() ? "" : ", ") + std::string(s.field);
  return out;
}

bool any_step_records(const MetricsFile& run) {
  return std::any_of(run.records.begin(), run.records.end(), [](const MetricsRecord& r) {
    return r.is_step();
  });
}

// Where a record stands on the x axis; nullopt when it has no place there.
std::optional<double> x_of(const MetricsRecord& record, bool by_step) {
  if (!by_step) return record.is_epoch() ? record.number("epoch") : std::nullopt;
  if (record.is_step()) return record.number("step");
  if (!record.is_epoch()) return std::nullopt;
  if (auto step = record.number("step")) return step;
  return record.number("steps");
}

// The field's points in one file: from its per-step records when those
// carry it (plotting by step), else from its end-of-epoch records.
ChartSeries series_of(const MetricsFile& run,
                      size_t index,
                      const SeriesSpec& spec,
                      bool by_step) {
  ChartSeries series{index, spec.field, spec.label, spec.dashed, {}};
  const bool from_steps =
      by_step && std::any_of(run.records.begin(), run.records.end(), [&](const auto& r) {
        return r.is_step() && r.has(spec.field);
      });
  for (const MetricsRecord& record : run.records) {
    if (from_steps != record.is_step()) continue;
    const std::optional<double> x = x_of(record, by_step);
    const std::optional<double> y = record.number(spec.field);
    if (x && std::isfinite(*x) && y) series.points.push_back({*x, *y, record.line});
  }
  return series;
}

bool has_finite(const ChartSeries& series) {
  return std::any_of(series.points.begin(), series.points.end(), [](const ChartPoint& p) {
    return std::isfinite(p.y);
  });
}

}  // namespace

Chart metrics_chart(const std::vector<MetricsFile>& runs) {
  const bool by_step = std::any_of(runs.begin(), runs.end(), any_step_records);
  Chart chart;
  chart.x_label = by_step ? "step" : "epoch";
  chart.title =
      "Training metrics: " +
      (runs.size() == 1 ? runs.front().path : std::to_string(runs.size()) + " runs") +
      " (against " + chart.x_label + ")";
  for (const MetricsFile& run : runs) chart.runs.push_back(run.path);

  std::vector<bool> drawn(runs.size(), false);
  for (const PanelSpec& spec : panel_specs()) {
    ChartPanel panel{spec.title, {}};
    for (size_t i = 0; i < runs.size(); ++i) {
      for (const SeriesSpec& s : spec.series) {
        ChartSeries series = series_of(runs[i], i, s, by_step);
        if (!has_finite(series)) continue;
        drawn[i] = true;
        panel.series.push_back(std::move(series));
      }
    }
    if (!panel.series.empty()) chart.panels.push_back(std::move(panel));
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (drawn[i]) continue;
    const std::string records =
        by_step ? "no per-step record (\"step\"), nor end-of-epoch record with \"steps\","
                : "no record with \"epoch\"";
    throw Error("the metrics file '" + runs[i].path + "' has nothing to plot: " +
                records + " has a number in any of " + field_list());
  }
  return chart;
}

size_t point_count(const Chart& chart) {
  size_t count = 0;
  for (const ChartPanel& panel : chart.panels)
    for (const ChartSeries& s : panel.series)
      count += static_cast<size_t>(
          std::count_if(s.points.begin(), s.points.end(), [](const ChartPoint& p) {
            return std::isfinite(p.y);
          }));
  return count;
}

}  // namespace tandem::cli
