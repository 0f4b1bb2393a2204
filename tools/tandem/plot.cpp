// `tandem plot METRICS.jsonl... [--out run.svg|run.html|run.png]`: pictures
// of training runs from the files `tandem train --metrics` writes, several
// runs overlaid (metrics_chart.h says what is drawn); `tandem plot
// TRACE.json` draws the timeline of a trace `--profile` wrote
// (trace_chart.h). The output's extension picks its form: SVG, a
// self-contained HTML page holding the SVG, or PNG through rsvg-convert
// (librsvg) when it is on PATH.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "metrics_chart.h"
#include "metrics_file.h"
#include "svg_chart.h"
#include "tandem/core/error.h"
#include "tandem/io/atomic_file.h"
#include "trace_chart.h"
#include "trace_file.h"
#include "writable_path.h"

extern char** environ;

namespace tandem::cli {
namespace {

enum class Format { kSvg, kHtml, kPng, kUnknown };

Format format_of(const std::string& path) {
  const size_t dot = path.find_last_of("./");
  if (dot == std::string::npos || path[dot] != '.') return Format::kUnknown;
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  if (ext == "svg") return Format::kSvg;
  if (ext == "html" || ext == "htm") return Format::kHtml;
  if (ext == "png") return Format::kPng;
  return Format::kUnknown;
}

CLI::Validator picture_name() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (format_of(value) != Format::kUnknown) return "";
        return "expects a file name ending .svg, .html or .png, got '" + value + "'";
      },
      "FILE.svg|.html|.png");
}

std::string html_page(const std::string& title, const std::string& svg) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
         "charset=\"utf-8\">\n<title>" +
         xml_escaped(title) +
         "</title>\n<style>body{margin:0;padding:12px;background:#ffffff}"
         "svg{display:block;max-width:100%;height:auto}</style>\n</head>\n<body>\n" +
         svg + "</body>\n</html>\n";
}

// The SVG rendered by rsvg-convert, which reads it from stdin and writes the
// PNG to stdout; what it says on failure goes to tandem's stderr.
std::string png_of(const std::string& svg) {
  std::unique_ptr<FILE, int (*)(FILE*)> input(std::tmpfile(), &std::fclose);
  if (!input || std::fwrite(svg.data(), 1, svg.size(), input.get()) != svg.size() ||
      std::fflush(input.get()) != 0) {
    throw Error(std::string("cannot write a temporary file for rsvg-convert: ") +
                std::strerror(errno));
  }
  std::rewind(input.get());
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0)
    throw Error(std::string("cannot make a pipe for rsvg-convert: ") +
                std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ::fileno(input.get()), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  char program[] = "rsvg-convert";
  char format[] = "--format=png";
  char* argv[] = {program, format, nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, program, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    if (spawned == ENOENT) {
      throw Error(
          "writing a PNG needs rsvg-convert, which is not on PATH: install it (Debian: "
          "apt install librsvg2-bin), or write --out FILE.svg or FILE.html");
    }
    throw Error(std::string("cannot start rsvg-convert: ") + std::strerror(spawned));
  }
  std::string png;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    png.append(buffer, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || png.empty()) {
    throw Error("rsvg-convert failed to turn the chart into a PNG (" +
                (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                   : std::string("killed by a signal")) +
                ")");
  }
  return png;
}

struct PlotFlags {
  std::vector<std::string> files;
  std::string out = "run.svg";
};

int run_plot(const PlotFlags& flags) {
  if (flags.files.empty()) {
    throw UsageError(
        "plot: which metrics files? tandem plot METRICS.jsonl... (tandem train "
        "--metrics FILE writes them)");
  }
  try {
    std::string title;
    std::string svg;
    std::string drawn;
    if (looks_like_trace_file(flags.files.front())) {
      if (flags.files.size() > 1)
        throw UsageError("plot: a trace is drawn alone; give one trace file");
      const TraceFile trace = read_trace_file(flags.files.front());
      check_writable(flags.out, "plot");
      svg = trace_svg(trace);
      title = trace.path;
      std::set<std::pair<int64_t, int64_t>> lanes;
      for (const TraceSpan& s : trace.spans) lanes.insert({s.pid, s.tid});
      drawn = std::to_string(trace.spans.size()) + " spans on " +
              std::to_string(lanes.size()) + " threads of " +
              std::to_string(trace.processes.size()) + " devices, " +
              std::to_string(trace.flows.size()) + " arrows\n";
    } else {
      std::vector<MetricsFile> runs;
      for (const std::string& path : flags.files) runs.push_back(read_metrics_file(path));
      const Chart chart = metrics_chart(runs);
      check_writable(flags.out, "plot");
      svg = svg_of(chart);
      title = chart.title;
      std::string panels;
      for (const ChartPanel& panel : chart.panels)
        panels += (panels.empty() ? "" : ", ") + panel.title;
      const size_t points = point_count(chart);
      drawn = panels + " against " + chart.x_label + ", " + std::to_string(runs.size()) +
              (runs.size() == 1 ? " run, " : " runs, ") + std::to_string(points) +
              (points == 1 ? " point\n" : " points\n");
    }
    const Format format = format_of(flags.out);
    const std::string bytes = format == Format::kHtml  ? html_page(title, svg)
                              : format == Format::kPng ? png_of(svg)
                                                       : svg;
    io::AtomicFile file(flags.out);
    file.write(bytes.data(), bytes.size());
    file.commit();
    std::cout << "wrote " << flags.out << ": " << drawn;
    return 0;
  } catch (const Error& e) {
    throw Error(std::string("plot: ") + e.what());
  }
}

}  // namespace

Action plot_command(CLI::App& command) {
  auto flags = std::make_shared<PlotFlags>();
  command
      .add_option("metrics",
                  flags->files,
                  "metrics files written by tandem train --metrics (several: overlaid), "
                  "or one trace written by --profile (its timeline)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)  // not the default TakeLast
      ->type_name("METRICS.jsonl...")
      ->default_str("");
  command
      .add_option("--out",
                  flags->out,
                  "the picture: .svg, .html (a page holding the SVG) or .png "
                  "(needs rsvg-convert)")
      ->check(picture_name());
  return [flags] { return run_plot(*flags); };
}

}  // namespace tandem::cli
