#include "profile_flag.h"

#include <charconv>
#include <optional>
#include <string_view>

#include "commands.h"
#include "tandem/distributed/trace.h"
#include "writable_path.h"

namespace tandem::cli {

namespace {

// A whole number >= 1 filling `text`, or nothing.
std::optional<int64_t> step_number(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1) return {};
  return value;
}

// What is wrong with `text` as a step range ("" when nothing), and the range.
std::pair<std::string, StepRange> read_step_range(const std::string& text) {
  if (text.empty()) return {"", {}};
  const size_t dash = text.find('-');
  const auto first = step_number(std::string_view(text).substr(0, dash));
  const auto last = dash == std::string::npos
                        ? first
                        : step_number(std::string_view(text).substr(dash + 1));
  if (!first || !last || *last < *first) {
    return {
        "expected A-B with 1 <= A <= B (steps from 1), or one step A; got '" + text + "'",
        {}};
  }
  return {"", {*first, *last}};
}

}  // namespace

StepRange parse_step_range(const std::string& text) {
  auto [problem, range] = read_step_range(text);
  if (!problem.empty()) throw UsageError("--profile-steps: " + problem);
  return range;
}

void add_profile_flags(CLI::App& command, ProfileFlags& flags) {
  CLI::Option* profile = command.add_option(
      "--profile",
      flags.path,
      "record what every device does and write it as a Chrome trace to this file (opens "
      "in Perfetto or chrome://tracing; tandem plot draws it); the busiest spans are "
      "printed at the end");
  command
      .add_option("--profile-steps",
                  flags.steps,
                  "record only steps A to B (from 1) with --profile, e.g. 10-12")
      ->type_name("A-B")
      ->needs(profile)
      ->check(CLI::Validator(
          [](std::string& value) { return read_step_range(value).first; }, "A-B"));
  command
      .add_flag("--profile-shapes",
                flags.shapes,
                "with --profile, record each op's input shapes and dtypes, and sum the "
                "table per op and shapes")
      ->needs(profile);
}

std::string trace_path_of_rank(const std::string& path, int rank) {
  if (rank < 0) return path;
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const bool has_extension =
      dot != std::string::npos && (slash == std::string::npos || dot > slash);
  const std::string tag = ".rank" + std::to_string(rank);
  return has_extension ? path.substr(0, dot) + tag + path.substr(dot) : path + tag;
}

ProfiledRun::ProfiledRun(const ProfileFlags& flags,
                         distributed::ProcessGroup* group,
                         StepRange steps)
    : path_(flags.path), shapes_(flags.shapes), group_(group), steps_(steps) {
  if (path_.empty()) return;
  // Each rank may have to write its own file: check that one.
  check_writable(trace_path_of_rank(path_, group_ ? group_->rank() : -1), "profile");
  if (group_ && group_->rank() == 0) check_writable(path_, "profile");
  if (steps_.every_step()) start();
}

void ProfiledRun::start() {
  session_ = std::make_unique<profiler::Session>(
      profiler::SessionOptions{.record_shapes = shapes_});
}

void ProfiledRun::before_step(int64_t step) {
  if (path_.empty() || steps_.every_step()) return;
  if (step == steps_.first && !session_) start();
  if (step == steps_.last + 1 && session_) session_->stop();
}

std::vector<profiler::Event> ProfiledRun::stop_and_take() {
  if (!session_) return {};  // the run ended before the first step asked for
  session_->stop();
  return session_->events();
}

void ProfiledRun::finish(std::ostream& out, bool together) {
  if (path_.empty()) return;
  const int rank = group_ ? group_->rank() : -1;
  std::vector<profiler::Event> events = stop_and_take();
  std::string path = path_;
  if (group_ && together) {
    events = distributed::gather_trace(*group_, events);
    if (rank != 0) return;
  } else {
    path = trace_path_of_rank(path_, rank);
  }
  profiler::write_chrome_trace(events, path, rank);
  if (rank > 0) return;
  out << "profile: " << events.size() << " spans written to " << path << "\n"
      << profiler::table(
             profiler::key_averages(
                 events,
                 profiler::SortBy::kSelfTime,
                 shapes_ ? profiler::GroupBy::kNameAndShapes : profiler::GroupBy::kName),
             15);
}

void ProfiledRun::finish_alone() {
  if (path_.empty()) return;
  const int rank = group_ ? group_->rank() : -1;
  profiler::write_chrome_trace(stop_and_take(), trace_path_of_rank(path_, rank), rank);
}

}  // namespace tandem::cli
