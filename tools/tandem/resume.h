// How `tandem train --resume PATH` reads its flags. The checkpoint records
// the run's settings (run_settings(): model, dtype, optimizer, lr,
// schedule, epochs, batch size, seed, --on-nonfinite) and places
// (run_places(): --data, --devices), which stand in for the flags not
// given, so `--resume PATH` alone continues the run exactly. A given flag
// that would change the run is refused, except two meant to change it:
// --epochs (to extend or shorten the run; the cosine schedule is re-planned
// over the new length) and --on-nonfinite; each says what it changes.
// Flags that leave the numbers alone (--workers, --max-steps, --checkpoint,
// --metrics) are free.
//
//   fill_flags_from_checkpoint(command, checkpoint, path, distributed);
//   TrainConfig config = ...;  // from the flags
//   for (auto& change : check_same_run(config, checkpoint, path)) print(change);
#pragma once

#include <string>
#include <vector>

#include "tandem/io/checkpoint.h"
#include "trainer.h"

namespace CLI {
class App;
}  // namespace CLI

namespace tandem::cli {

/// Gives each flag of `command` not on the command line the checkpoint's
/// value, as if given (so it is validated alike); in a distributed run each
/// process keeps its own default device. A setting an older checkpoint
/// lacks takes the value older runs had (dtype float32, on_nonfinite
/// stop), or else must be given (--epochs): a UsageError says so.
void fill_flags_from_checkpoint(CLI::App& command,
                                const io::Checkpoint& checkpoint,
                                const std::string& path,
                                bool distributed);

/// Refuses (UsageError, naming each flag, the checkpoint's value and the
/// given one) a setting of `config` that differs from the checkpoint's,
/// except --epochs and --on-nonfinite, whose changes it returns in words,
/// one line each. An --epochs that ends before the checkpoint's position
/// is refused too.
std::vector<std::string> check_same_run(const TrainConfig& config,
                                        const io::Checkpoint& checkpoint,
                                        const std::string& path);

}  // namespace tandem::cli
