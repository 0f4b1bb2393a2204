// Random number generators. A seeded global generator (manual_seed) makes
// runs reproduce; explicit generators give independent, reproducible
// streams. A generator's state can be saved and restored (checkpoints).
//
//   tandem::manual_seed(42);
//   auto a = tandem::rand({3});
//   tandem::Generator g(7);
//   auto b = tandem::randn({3}, g);
#pragma once

#include <cstdint>
#include <mutex>
#include <random>
#include <string>

namespace tandem {

class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;
  explicit Generator(uint64_t seed = kDefaultSeed);
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const;
  /// The full engine state as text; set_state restores it exactly.
  std::string get_state() const;
  void set_state(const std::string& state);

  /// Kernels hold this lock while they draw, so several threads may share
  /// one generator and each draw stays one contiguous run of the stream.
  std::unique_lock<std::mutex> lock() const {
    return std::unique_lock<std::mutex>(mutex_);
  }
  /// Unsynchronised; call with lock() held.
  std::mt19937_64& engine() { return engine_; }

 private:
  mutable std::mutex mutex_;
  uint64_t seed_;
  std::mt19937_64 engine_;
};

/// The generator of ops not given one: the global one, unless the calling
/// thread holds a ScratchDefaultGenerator.
Generator& default_generator();
/// Seeds the default generator (like torch::manual_seed).
void manual_seed(uint64_t seed);

/// While alive, default_generator() on this thread is a private generator,
/// so work whose random numbers are thrown away (Module::clone
/// re-initialises the copy, then overwrites it) leaves the global stream
/// where it was: a seeded run draws the same numbers whether or not it
/// cloned in between (DataParallel clones on its first forward, a resumed
/// run clones again).
class ScratchDefaultGenerator {
 public:
  ScratchDefaultGenerator();
  ~ScratchDefaultGenerator();
  ScratchDefaultGenerator(const ScratchDefaultGenerator&) = delete;
  ScratchDefaultGenerator& operator=(const ScratchDefaultGenerator&) = delete;

 private:
  Generator scratch_;
  Generator* previous_;
};

}  // namespace tandem
