// Checkpoint: what it takes to stop training and resume it exactly (model,
// optimizer, position in the data, random generators), in one safetensors
// file written atomically (the previous checkpoint survives a crash
// mid-save) and checksummed (a corrupted file fails to load).
//
//   tandem::io::Checkpoint ck;
//   ck.model = model->state_dict();
//   ck.optimizer = optimizer.state_dict();
//   ck.epoch = epoch;                  // the epoch in progress
//   ck.batch_in_epoch = batch;         // batches of it already trained
//   ck.step = step;                    // optimizer steps in all
//   ck.rng_states["default"] = tandem::default_generator().get_state();
//   ck.extra["model"] = "cnn";
//   tandem::io::save_checkpoint(ck, "run/checkpoint.safetensors");
//
//   auto ck = tandem::io::load_checkpoint("run/checkpoint.safetensors");
//   model->load_state_dict(ck.model);          // strict
//   optimizer.load_state_dict(ck.optimizer);
//   tandem::default_generator().set_state(ck.rng_states.at("default"));
//
// The file: tensors "model.<key>" and "optimizer.<key>"; metadata
// "checkpoint.version", "checkpoint.epoch", "checkpoint.step",
// "checkpoint.batch_in_epoch", "rng.<name>" and "extra.<key>" (plus the
// checksum). Any safetensors reader can open it. load_checkpoint refuses a
// file without the checksum, of another format version, or with a tensor or
// metadata key outside this scheme, naming the file and what is wrong.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "tandem/core/tensor.h"
#include "tandem/nn/ordered_dict.h"
#include "tandem/optim/optimizer.h"

namespace tandem::io {

/// The layout version save_checkpoint writes and load_checkpoint reads.
inline constexpr int64_t kCheckpointVersion = 1;

struct Checkpoint {
  /// nn::Module::state_dict(). Loaded back sorted by key (load_state_dict
  /// matches by key, so the order does not matter).
  OrderedDict<std::string, Tensor> model;
  /// optim::Optimizer::state_dict().
  optim::StateDict optimizer;
  /// Training position; all non-negative.
  int64_t epoch = 0;
  int64_t step = 0;
  int64_t batch_in_epoch = 0;
  /// Generator states by a name of the caller's choosing
  /// (Generator::get_state(); "default" for default_generator() by
  /// convention).
  std::map<std::string, std::string> rng_states;
  /// Anything else the caller wants back (model name, seeds, world size).
  std::map<std::string, std::string> extra;
};

/// Writes `checkpoint` to `path` atomically.
void save_checkpoint(const Checkpoint& checkpoint, const std::filesystem::path& path);

/// Reads what save_checkpoint wrote; tensors come back on cpu:0.
Checkpoint load_checkpoint(const std::filesystem::path& path);

}  // namespace tandem::io
