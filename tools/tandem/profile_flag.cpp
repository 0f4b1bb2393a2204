#include "profile_flag.h"

#include "writable_path.h"

namespace tandem::cli {

CLI::Option* add_profile_flag(CLI::App& command, std::string& path) {
  return command.add_option(
      "--profile",
      path,
      "record what every device does and write it as a Chrome trace to this file (opens "
      "in Perfetto or chrome://tracing); the busiest spans are printed at the end");
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

ProfiledRun::ProfiledRun(const std::string& path, int rank)
    : path_(trace_path_of_rank(path, rank)), rank_(rank) {
  if (path.empty()) return;
  check_writable(path_, "profile");
  session_ = std::make_unique<profiler::Session>();
}

void ProfiledRun::finish(std::ostream& out, bool report) {
  if (!session_) return;
  session_->stop();
  const std::vector<profiler::Event> events = session_->events();
  profiler::write_chrome_trace(events, path_, rank_);
  if (!report) return;
  out << "profile: " << events.size() << " spans written to " << path_ << "\n"
      << profiler::table(profiler::key_averages(events), 15);
}

}  // namespace tandem::cli
