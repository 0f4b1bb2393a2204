// Optimizer: the base of tandem's optimizers (SGD, Adam, AdamW), shaped like
// LibTorch's torch::optim::Optimizer: parameter groups, each with its own
// options; per-parameter state; zero_grad; step(closure); and a state_dict
// that round-trips exactly.
//
//   tandem::optim::SGD opt(model->parameters(),
//                          tandem::optim::SGDOptions(0.1).momentum(0.9));
//   opt.zero_grad();
//   loss.backward();
//   opt.step();
//   auto saved = opt.state_dict();   // flat map of named tensors
//   opt.load_state_dict(saved);
//
// state_dict layout (parameters are numbered across groups, in order):
//   "param_groups.<g>.params"  1-D int64: the indices of the group's params
//   "param_groups.<g>.<name>"  0-dim float64: a hyper-parameter (lr, ...)
//   "state.<i>.<name>"         a per-parameter state tensor (momentum_buffer,
//                              exp_avg, ...); step counters are 0-dim int64
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tandem/core/tensor.h"

namespace tandem::optim {

using LossClosure = std::function<Tensor()>;
using StateDict = std::map<std::string, Tensor>;

/// The fields an options or state object saves in a state_dict. Options and
/// states list their fields once, in visit_fields, and the saving and loading
/// code are two visitors, so the two directions cannot drift apart.
class FieldVisitor {
 public:
  virtual ~FieldVisitor() = default;
  virtual void field(const char* name, double& value) = 0;
  virtual void field(const char* name, bool& value) = 0;
  virtual void field(const char* name, int64_t& value) = 0;
  /// An undefined tensor means "not created yet" and is not saved.
  virtual void field(const char* name, Tensor& value) = 0;
};

/// The hyper-parameters of one parameter group (SGDOptions, AdamOptions, ...).
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  /// Throws a tandem::Error naming the optimizer if a value is out of range.
  virtual void validate() const = 0;
  virtual void visit_fields(FieldVisitor& visitor) = 0;
};

/// The state an optimizer keeps for one parameter (momentum buffer, ...).
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
  virtual std::unique_ptr<OptimizerParamState> clone() const = 0;
  virtual void visit_fields(FieldVisitor& visitor) = 0;
};

/// Parameters optimized with the same options. A group made without options
/// takes the optimizer's defaults when it is added.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params);  // implicit, as LibTorch
  OptimizerParamGroup(std::vector<Tensor> params,
                      std::unique_ptr<OptimizerOptions> options);
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options);
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

class Optimizer {
 public:
  using ParamStateMap =
      std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>>;

  Optimizer(std::vector<OptimizerParamGroup> param_groups,
            std::unique_ptr<OptimizerOptions> defaults);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  Optimizer(Optimizer&&) = default;
  Optimizer& operator=(Optimizer&&) = default;

  /// Adds a group; without options it gets a copy of the defaults. A
  /// parameter may belong to one group only.
  void add_param_group(const OptimizerParamGroup& param_group);
  /// Adds parameters to the first group (LibTorch's add_parameters).
  void add_parameters(const std::vector<Tensor>& parameters);

  /// Updates every parameter that has a gradient. With a closure, calls it
  /// first (grad mode on) and returns its loss; otherwise returns an
  /// undefined tensor.
  virtual Tensor step(LossClosure closure = nullptr) = 0;

  /// Clears the gradients: drops them (set_to_none, the default, as in
  /// PyTorch 2) or fills them with zeros.
  void zero_grad(bool set_to_none = true);

  /// Every parameter, group by group.
  std::vector<Tensor> parameters() const;
  /// The number of parameters in all groups.
  size_t size() const;

  OptimizerOptions& defaults() { return *defaults_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
  /// Per-parameter state, keyed by the parameter's TensorImpl; a parameter
  /// has an entry once a step has updated it.
  ParamStateMap& state() { return state_; }
  const ParamStateMap& state() const { return state_; }

  /// A deep copy of the hyper-parameters and state as named tensors (see the
  /// layout at the top of this file).
  StateDict state_dict() const;
  /// Restores what state_dict saved. The group structure and parameter
  /// shapes must match; on a mismatch it throws naming what differs and
  /// leaves the optimizer unchanged. State tensors are copied and converted
  /// to their parameter's dtype and device.
  void load_state_dict(const StateDict& state_dict);

 protected:
  using ParamUpdate = std::function<void(Tensor& param,
                                         const Tensor& grad,
                                         OptimizerOptions& options,
                                         OptimizerParamState& state)>;

  /// The body of step() for optimizers that update each parameter on its
  /// own: runs the closure, then, under NoGradGuard, calls `update` for
  /// every parameter with a defined gradient, making its state first if
  /// needed.
  Tensor step_each_param(const LossClosure& closure, const ParamUpdate& update);

  /// A fresh, empty state for one parameter (for step and loading).
  virtual std::unique_ptr<OptimizerParamState> make_param_state() const = 0;
  /// Name used in error messages ("SGD", "Adam", ...).
  virtual const char* name() const = 0;

 private:
  /// Throws unless every parameter is defined, a leaf, and new to this
  /// optimizer (and appears once in `params`).
  void check_new_params(const char* op, const std::vector<Tensor>& params) const;

  std::vector<OptimizerParamGroup> param_groups_;
  ParamStateMap state_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

}  // namespace tandem::optim
