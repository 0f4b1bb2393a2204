// Progress of a training epoch as the user watches it: on a terminal, one
// bar redrawn in place (at most ten times a second); otherwise (a log file,
// CI) a plain line at every tenth of the epoch. Both show the epoch, the
// step, the running mean loss, samples per second and the time left (and a
// note such as the current shares of the devices).
//
//   EpochProgress progress(std::cout, is_terminal(std::cout), epoch, epochs,
//                          steps, first_step);
//   for (...) progress.step(loss, batch_size);
//   progress.finish();   // clears the bar
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>

namespace tandem::cli {

/// Whether `out` is std::cout or std::cerr writing to a terminal.
bool is_terminal(const std::ostream& out);

/// "1:05", "12.3 s": a duration for people.
std::string format_duration(double seconds);

class EpochProgress {
 public:
  /// `epoch` counts from 1; the epoch has `steps` steps, of which the first
  /// `first_step` were done before (a resumed run), over `earlier_samples`
  /// samples whose losses summed to `earlier_loss_sum`.
  EpochProgress(std::ostream& out,
                bool interactive,
                int64_t epoch,
                int64_t epochs,
                int64_t steps,
                int64_t first_step,
                double earlier_loss_sum = 0,
                int64_t earlier_samples = 0);
  EpochProgress(const EpochProgress&) = delete;
  EpochProgress& operator=(const EpochProgress&) = delete;

  /// One step done, with its mean loss over `samples` samples.
  void step(double loss, int64_t samples);
  /// One step passed over (its loss was not finite): it counts towards
  /// the epoch's steps, not towards the loss or the rate.
  void skip();
  /// Text shown at the end of the line from now on ("shares 0.67/0.33").
  void set_note(std::string note) { note_ = std::move(note); }
  /// Clears the bar (interactive) so the epoch's summary line replaces it.
  void finish();

  /// Mean loss per sample over the epoch's steps so far, earlier ones too.
  double mean_loss() const;
  /// The loss sum and sample count behind mean_loss (for a checkpoint).
  double loss_sum() const { return loss_sum_; }
  int64_t epoch_samples() const { return epoch_samples_; }
  /// Samples and seconds of this run's steps (for rates).
  int64_t samples() const { return samples_; }
  double seconds() const;

 private:
  using Clock = std::chrono::steady_clock;
  void advance();
  void draw();

  std::ostream& out_;
  bool interactive_;
  int64_t epoch_, epochs_, steps_, step_;
  int64_t first_step_;
  int64_t samples_ = 0;
  double loss_sum_;
  int64_t epoch_samples_;
  int64_t next_report_;  // plain mode: the step of the next line
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
  bool drawn_ = false;
  std::string note_;
};

}  // namespace tandem::cli
