// LibTorch C++'s side of `tandem bench`: the same whole training steps
// (zero_grad with the gradients reset to undefined, forward, loss, backward,
// SGD(lr=0.01, no momentum) step) on the same synthetic data, timed one by
// one after --warmup untimed steps, printed as the same one-line JSON object
// plus the BLAS library that actually loaded. Models: tiny = Linear(5, 2)
// with MSE (batch 30); mlp and cnn as in torch_step.py (batch 256).
//
// bench/vs_pytorch/run builds it on demand when libtorch-dev is installed
// (bench/vs_pytorch/install-deps.sh) and runs it under the chosen PyTorch
// configuration's environment (torch_configs.py). By hand:
//
//   g++ -O2 -std=c++17 -I/usr/include/torch/csrc/api/include
//       bench/vs_pytorch/libtorch_step.cpp -o libtorch_step -ltorch -ltorch_cpu -lc10
//   (one command line)
//   OPENBLAS_NUM_THREADS=1 ./libtorch_step --model tiny --threads 1
#include <dlfcn.h>
#include <sys/resource.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Args {
  std::string model = "mlp";
  int64_t batch = 0;
  int threads = 1;
  int64_t steps = 50;
  int64_t warmup = 5;
  uint64_t seed = 0;
  std::string config = "unspecified";
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr
      << "libtorch_step: " << why
      << "\nusage: libtorch_step [--model tiny|mlp|cnn] [--batch-size N] [--threads N]"
         " [--steps N] [--warmup N] [--seed N] [--config NAME]\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage("missing value for " + flag);
    const std::string value = argv[++i];
    if (flag == "--model") {
      args.model = value;
    } else if (flag == "--batch-size") {
      args.batch = std::stoll(value);
    } else if (flag == "--threads") {
      args.threads = std::stoi(value);
    } else if (flag == "--steps") {
      args.steps = std::stoll(value);
    } else if (flag == "--warmup") {
      args.warmup = std::stoll(value);
    } else if (flag == "--seed") {
      args.seed = std::stoull(value);
    } else if (flag == "--config") {
      args.config = value;
    } else {
      usage("unknown flag " + flag);
    }
  }
  if (args.model != "tiny" && args.model != "mlp" && args.model != "cnn") {
    usage("unknown model " + args.model);
  }
  if (args.batch == 0) args.batch = args.model == "tiny" ? 30 : 256;
  if (args.batch <= 0 || args.steps <= 0 || args.warmup < 0 || args.threads <= 0) {
    usage("--batch-size, --steps and --threads must be positive, --warmup >= 0");
  }
  return args;
}

// mlp or cnn; tiny is a bare Linear(5, 2) (a Sequential around it costs
// LibTorch about 2 us a step, and the reference should run at its best).
torch::nn::Sequential make_model(const std::string& name) {
  namespace nn = torch::nn;
  if (name == "mlp") {
    return nn::Sequential(nn::Flatten(),
                          nn::Linear(784, 1024),
                          nn::ReLU(),
                          nn::Linear(1024, 1024),
                          nn::ReLU(),
                          nn::Linear(1024, 10));
  }
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)),
                        nn::BatchNorm2d(32),
                        nn::ReLU(),
                        nn::MaxPool2d(2),
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)),
                        nn::BatchNorm2d(64),
                        nn::ReLU(),
                        nn::MaxPool2d(2),
                        nn::Flatten(),
                        nn::Linear(64 * 7 * 7, 128),
                        nn::ReLU(),
                        nn::Linear(128, 10));
}

// The directories of the BLAS libraries mapped into this process, e.g.
// "openblas-pthread", and OpenBLAS's own report when it is loaded.
std::string blas_json() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> dirs;
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string file = path.substr(path.rfind('/') + 1);
    if (file.find("blas") == std::string::npos && file.find("blis") == std::string::npos)
      continue;
    const std::string dir = path.substr(0, path.rfind('/'));
    dirs.insert(dir.substr(dir.rfind('/') + 1));
  }
  std::string names;
  for (const auto& dir : dirs) names += (names.empty() ? "" : ",") + dir;
  std::ostringstream json;
  json << "\"blas\":\"" << (names.empty() ? "none" : names) << "\"";
  using IntFn = int (*)();
  auto parallel = reinterpret_cast<IntFn>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  auto threads = reinterpret_cast<IntFn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (parallel != nullptr && threads != nullptr) {
    const char* kinds[] = {"serial", "pthread", "openmp"};
    const int kind = parallel();
    json << ",\"blas_parallel\":\"" << (kind >= 0 && kind <= 2 ? kinds[kind] : "unknown")
         << "\",\"blas_threads\":" << threads();
  }
  return json.str();
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  torch::set_num_threads(args.threads);
  torch::manual_seed(args.seed);
  const bool tiny = args.model == "tiny";
  torch::nn::Linear linear{nullptr};
  torch::nn::Sequential sequential{nullptr};
  if (tiny) {
    linear = torch::nn::Linear(5, 2);
  } else {
    sequential = make_model(args.model);
  }
  auto forward = [&](const torch::Tensor& x) {
    return tiny ? linear->forward(x) : sequential->forward(x);
  };
  const std::vector<torch::Tensor> parameters =
      tiny ? linear->parameters() : sequential->parameters();
  const torch::Tensor input =
      tiny ? torch::randn({args.batch, 5}) : torch::randn({args.batch, 1, 28, 28});
  const torch::Tensor target =
      tiny ? torch::randn({args.batch, 2}) : torch::randint(10, {args.batch});
  torch::optim::SGD optimizer(parameters, torch::optim::SGDOptions(0.01));

  std::vector<double> millis;
  for (int64_t step = 0; step < args.warmup + args.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    // zero_grad(set_to_none): LibTorch 1.13's zero_grad() zeroes in place.
    for (auto p : parameters) p.mutable_grad() = torch::Tensor();
    const torch::Tensor output = forward(input);
    const torch::Tensor loss = tiny
                                   ? torch::mse_loss(output, target)
                                   : torch::nn::functional::cross_entropy(output, target);
    loss.backward();
    optimizer.step();
    const std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - start;
    if (step >= args.warmup) millis.push_back(took.count());
  }
  std::sort(millis.begin(), millis.end());
  const size_t n = millis.size();
  const double median = n % 2 ? millis[n / 2] : (millis[n / 2 - 1] + millis[n / 2]) / 2;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);

  std::printf(
      "{\"model\":\"%s\",\"batch_size\":%lld,\"devices\":\"cpu\",\"threads\":%d,"
      "\"steps\":%lld,\"warmup\":%lld,\"median_ms\":%.6g,\"min_ms\":%.6g,\"max_ms\":%.6g,"
      "\"samples_per_second\":%.1f,\"peak_rss_mib\":%.1f,\"framework\":\"libtorch %s\","
      "\"config\":\"%s\",%s}\n",
      args.model.c_str(),
      static_cast<long long>(args.batch),
      torch::get_num_threads(),
      static_cast<long long>(args.steps),
      static_cast<long long>(args.warmup),
      median,
      millis.front(),
      millis.back(),
      static_cast<double>(args.batch) / median * 1000.0,
      static_cast<double>(usage.ru_maxrss) / 1024.0,
      TORCH_VERSION,
      args.config.c_str(),
      blas_json().c_str());
  return 0;
}
