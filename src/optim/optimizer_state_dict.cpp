// Optimizer::state_dict and load_state_dict: the hyper-parameters and state
// as a flat map of named tensors (layout in tandem/optim/optimizer.h), so a
// checkpoint can store them next to the model's tensors.
#include <set>
#include <string>

#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"
#include "tandem/optim/optimizer.h"

namespace tandem::optim {
namespace {

std::string group_prefix(size_t group) {
  return "param_groups." + std::to_string(group) + ".";
}

std::string state_prefix(size_t param) { return "state." + std::to_string(param) + "."; }

Tensor int64_scalar(int64_t value) {
  // Built from an int64 vector, not a double Scalar, so large counts stay exact.
  return tensor(std::vector<int64_t>{value}).view({});
}

class FieldSaver : public FieldVisitor {
 public:
  FieldSaver(StateDict& out, std::string prefix)
      : out_(out), prefix_(std::move(prefix)) {}

  void field(const char* name, double& value) override {
    out_[prefix_ + name] = scalar_tensor(value, kFloat64);
  }
  void field(const char* name, bool& value) override {
    out_[prefix_ + name] = scalar_tensor(value ? 1.0 : 0.0, kFloat64);
  }
  void field(const char* name, int64_t& value) override {
    out_[prefix_ + name] = int64_scalar(value);
  }
  void field(const char* name, Tensor& value) override {
    if (value.defined()) out_[prefix_ + name] = value.detach().clone();
  }

 private:
  StateDict& out_;
  std::string prefix_;
};

// Reads fields back, recording which keys it used. For a parameter's state,
// `param` is that parameter: state tensors must have its shape and are
// converted to its dtype and device.
class FieldLoader : public FieldVisitor {
 public:
  FieldLoader(const StateDict& in,
              std::string prefix,
              std::set<std::string>& used,
              const Tensor* param = nullptr,
              size_t param_index = 0)
      : in_(in),
        prefix_(std::move(prefix)),
        used_(used),
        param_(param),
        param_index_(param_index) {}

  void field(const char* name, double& value) override {
    value = scalar(name).item<double>();
  }
  void field(const char* name, bool& value) override {
    value = scalar(name).item<double>() != 0;
  }
  void field(const char* name, int64_t& value) override {
    value = scalar(name).item<int64_t>();
  }
  void field(const char* name, Tensor& value) override {
    auto it = in_.find(prefix_ + name);
    if (it == in_.end()) {
      value = Tensor();
      return;
    }
    used_.insert(it->first);
    const Tensor& t = it->second;
    TANDEM_CHECK(t.defined(), "load_state_dict: ", it->first, " is undefined");
    TANDEM_CHECK(param_ != nullptr, "load_state_dict: unexpected tensor ", it->first);
    TANDEM_CHECK(t.sizes() == param_->sizes(),
                 "load_state_dict: ",
                 it->first,
                 " has shape ",
                 t.sizes(),
                 " but parameter ",
                 param_index_,
                 " has shape ",
                 param_->sizes());
    value = t.to(param_->device(),
                 param_->dtype(),
                 /*non_blocking=*/false,
                 /*copy=*/true)
                .contiguous();
  }

 private:
  const Tensor& scalar(const char* name) {
    std::string key = prefix_ + name;
    auto it = in_.find(key);
    TANDEM_CHECK(it != in_.end(), "load_state_dict: missing key ", key);
    TANDEM_CHECK(it->second.defined() && it->second.numel() == 1,
                 "load_state_dict: ",
                 key,
                 " must hold one number");
    used_.insert(key);
    return it->second;
  }

  const StateDict& in_;
  std::string prefix_;
  std::set<std::string>& used_;
  const Tensor* param_;
  size_t param_index_;
};

bool has_prefix(const StateDict& dict, const std::string& prefix) {
  auto it = dict.lower_bound(prefix);
  return it != dict.end() && it->first.starts_with(prefix);
}

// Checks "param_groups.<g>.params" against the optimizer's group `g`, whose
// parameters are numbered from `first`.
void check_group_params(const StateDict& dict,
                        size_t g,
                        size_t first,
                        size_t count,
                        std::set<std::string>& used) {
  std::string key = group_prefix(g) + "params";
  auto it = dict.find(key);
  TANDEM_CHECK(it != dict.end(), "load_state_dict: missing key ", key);
  used.insert(key);
  const Tensor& ids = it->second;
  TANDEM_CHECK(ids.defined() && ids.dim() == 1 && ids.dtype() == kInt64,
               "load_state_dict: ",
               key,
               " must be a 1-D int64 tensor");
  TANDEM_CHECK(static_cast<size_t>(ids.numel()) == count,
               "load_state_dict: parameter ",
               "group ",
               g,
               " has ",
               ids.numel(),
               " parameters in the state dict but ",
               count,
               " in the optimizer");
  Tensor c = ids.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  for (size_t k = 0; k < count; ++k) {
    TANDEM_CHECK(p[k] == static_cast<int64_t>(first + k),
                 "load_state_dict: ",
                 key,
                 " lists parameter ",
                 p[k],
                 " at position ",
                 k,
                 "; expected ",
                 first + k);
  }
}

}  // namespace

StateDict Optimizer::state_dict() const {
  NoGradGuard no_grad;
  StateDict out;
  size_t index = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& group = param_groups_[g];
    std::vector<int64_t> ids;
    for (const auto& p : group.params()) {
      auto it = state_.find(p.unsafe_impl());
      if (it != state_.end()) {
        FieldSaver saver(out, state_prefix(index));
        it->second->visit_fields(saver);
      }
      ids.push_back(static_cast<int64_t>(index++));
    }
    out[group_prefix(g) + "params"] = tensor(ids, kInt64);
    FieldSaver saver(out, group_prefix(g));
    // visit_fields only reads when saving; a clone keeps this method const.
    group.options().clone()->visit_fields(saver);
  }
  return out;
}

void Optimizer::load_state_dict(const StateDict& state_dict) {
  NoGradGuard no_grad;
  size_t dict_groups = 0;
  while (state_dict.count(group_prefix(dict_groups) + "params") > 0) ++dict_groups;
  TANDEM_CHECK(dict_groups == param_groups_.size(),
               "load_state_dict: the state dict ",
               "has ",
               dict_groups,
               " parameter groups but the optimizer has ",
               param_groups_.size());

  // Everything is read into new objects first, so a bad dict changes nothing.
  std::set<std::string> used;
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  ParamStateMap state;
  size_t index = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& group = param_groups_[g];
    check_group_params(state_dict, g, index, group.params().size(), used);
    options.push_back(group.options().clone());
    FieldLoader loader(state_dict, group_prefix(g), used);
    options.back()->visit_fields(loader);
    options.back()->validate();
    for (const auto& p : group.params()) {
      std::string prefix = state_prefix(index);
      if (has_prefix(state_dict, prefix)) {
        auto s = make_param_state();
        FieldLoader param_loader(state_dict, prefix, used, &p, index);
        s->visit_fields(param_loader);
        state[p.unsafe_impl()] = std::move(s);
      }
      ++index;
    }
  }
  std::string unexpected;
  for (const auto& [key, value] : state_dict) {
    if (used.count(key) == 0) unexpected += (unexpected.empty() ? "" : ", ") + key;
  }
  TANDEM_CHECK(unexpected.empty(),
               "load_state_dict: unexpected keys in the state ",
               "dict of ",
               name(),
               ": ",
               unexpected);

  for (size_t g = 0; g < param_groups_.size(); ++g) {
    param_groups_[g].set_options(std::move(options[g]));
  }
  state_ = std::move(state);
}

}  // namespace tandem::optim
