#include "tandem/core/generator.h"

#include <sstream>

#include "tandem/core/error.h"

namespace tandem {

Generator::Generator(uint64_t seed) : seed_(seed), engine_(seed) {}

void Generator::manual_seed(uint64_t seed) {
  auto guard = lock();
  seed_ = seed;
  engine_.seed(seed);
}

uint64_t Generator::initial_seed() const {
  auto guard = lock();
  return seed_;
}

std::string Generator::get_state() const {
  auto guard = lock();
  std::ostringstream out;
  out << seed_ << ' ' << engine_;
  return out.str();
}

void Generator::set_state(const std::string& state) {
  std::istringstream in(state);
  uint64_t seed = 0;
  std::mt19937_64 engine;
  in >> seed >> engine;
  TANDEM_CHECK(!in.fail(),
               "generator: set_state got a malformed state (",
               state.size(),
               " bytes); it must come from get_state()");
  auto guard = lock();
  seed_ = seed;
  engine_ = engine;
}

namespace {
thread_local Generator* t_scratch = nullptr;
}  // namespace

Generator& default_generator() {
  if (t_scratch != nullptr) return *t_scratch;
  static Generator generator;
  return generator;
}

ScratchDefaultGenerator::ScratchDefaultGenerator() : previous_(t_scratch) {
  t_scratch = &scratch_;
}

ScratchDefaultGenerator::~ScratchDefaultGenerator() { t_scratch = previous_; }

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace tandem
