#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace tandem::cli {
namespace {

constexpr int kBarWidth = 24;
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

std::string format_rate(double samples_per_second) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1);
  if (samples_per_second >= 1e3) {
    s << samples_per_second / 1e3 << "k";
  } else {
    s << samples_per_second;
  }
  s << " samples/s";
  return s.str();
}

}  // namespace

bool is_terminal(const std::ostream& out) {
  if (&out == &std::cout) return isatty(STDOUT_FILENO) != 0;
  if (&out == &std::cerr) return isatty(STDERR_FILENO) != 0;
  return false;
}

std::string format_duration(double seconds) {
  std::ostringstream s;
  if (seconds < 60) {
    s << std::fixed << std::setprecision(1) << seconds << " s";
  } else {
    const auto whole = static_cast<int64_t>(std::lround(seconds));
    if (whole >= 3600) s << whole / 3600 << ":" << std::setw(2) << std::setfill('0');
    s << (whole % 3600) / 60 << ":" << std::setw(2) << std::setfill('0') << whole % 60;
  }
  return s.str();
}

EpochProgress::EpochProgress(std::ostream& out,
                             bool interactive,
                             int64_t epoch,
                             int64_t epochs,
                             int64_t steps,
                             int64_t first_step,
                             double earlier_loss_sum,
                             int64_t earlier_samples)
    : out_(out),
      interactive_(interactive),
      epoch_(epoch),
      epochs_(epochs),
      steps_(steps),
      step_(first_step),
      first_step_(first_step),
      loss_sum_(earlier_loss_sum),
      epoch_samples_(earlier_samples),
      next_report_(first_step + std::max<int64_t>(1, steps / 10)) {}

void EpochProgress::step(double loss, int64_t samples) {
  samples_ += samples;
  epoch_samples_ += samples;
  loss_sum_ += loss * static_cast<double>(samples);
  advance();
}

void EpochProgress::skip() { advance(); }

void EpochProgress::advance() {
  ++step_;
  if (interactive_) {
    const Clock::time_point now = Clock::now();
    if (now - last_draw_ >= kRedrawInterval || step_ == steps_) {
      last_draw_ = now;
      draw();
    }
  } else if (step_ >= next_report_ && step_ < steps_) {
    next_report_ = step_ + std::max<int64_t>(1, steps_ / 10);
    draw();
  }
}

void EpochProgress::draw() {
  const double elapsed = seconds();
  const int64_t done = step_ - first_step_;
  const double eta =
      done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(steps_ - step_)
               : 0.0;
  std::ostringstream line;
  line << "epoch " << epoch_ << "/" << epochs_ << " ";
  if (interactive_) {
    const int64_t filled = steps_ > 0 ? kBarWidth * step_ / steps_ : kBarWidth;
    line << "[" << std::string(static_cast<size_t>(filled), '#')
         << std::string(static_cast<size_t>(kBarWidth - filled), '.') << "] ";
  } else {
    line << "step ";
  }
  line << step_ << "/" << steps_ << "  loss " << std::fixed << std::setprecision(4)
       << mean_loss() << "  "
       << format_rate(elapsed > 0 ? static_cast<double>(samples_) / elapsed : 0.0)
       << "  ETA " << format_duration(eta);
  if (!note_.empty()) line << "  " << note_;
  if (interactive_) {
    out_ << "\r\033[K" << line.str() << std::flush;
    drawn_ = true;
  } else {
    out_ << line.str() << "\n" << std::flush;
  }
}

void EpochProgress::finish() {
  if (interactive_ && drawn_) out_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

double EpochProgress::mean_loss() const {
  return epoch_samples_ > 0 ? loss_sum_ / static_cast<double>(epoch_samples_) : 0.0;
}

double EpochProgress::seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

}  // namespace tandem::cli
