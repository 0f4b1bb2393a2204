// LibTorch C++'s side of the comparisons: the same steps on the same
// synthetic data, each with the gradients reset to undefined first (as
// zero_grad(set_to_none) does), timed one by one after --warmup untimed
// steps, printed as `tandem bench`'s one-line JSON object plus the BLAS
// library that actually loaded. Models:
//   tiny, mlp, cnn  `tandem bench`'s training steps (forward, loss, backward,
//                   SGD(lr=0.01, no momentum) step): tiny = Linear(5, 2) with
//                   MSE (batch 30); mlp and cnn as in torch_step.py (batch 256)
//   lstm            bench/rnn_bench.cpp's BM_LstmWordLanguageModelStep: the
//                   word language model's LSTM (2 layers, 650 in and hidden,
//                   dropout 0.5), seq 35, batch 20, input requiring grad,
//                   loss sum(out * g), backward
//   dcgan           bench/conv_transpose_bench.cpp's BM_DcganGeneratorStep:
//                   the DCGAN generator (nz 100, ngf 64, batch 64, one 32x32
//                   channel), MSE against a fixed target, backward
//
// bench/vs_pytorch/run and layers_vs_pytorch.py build it on demand when
// libtorch-dev is installed (libtorch_build.py, install-deps.sh) and run it
// under the chosen PyTorch configuration's environment (torch_configs.py).
// By hand:
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
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
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
  std::cerr << "libtorch_step: " << why
            << "\nusage: libtorch_step [--model tiny|mlp|cnn|lstm|dcgan]"
               " [--batch-size N] [--threads N] [--steps N] [--warmup N] [--seed N]"
               " [--config NAME]\n";
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
  const std::map<std::string, int64_t> default_batch = {
      {"tiny", 30}, {"mlp", 256}, {"cnn", 256}, {"lstm", 20}, {"dcgan", 64}};
  const auto model = default_batch.find(args.model);
  if (model == default_batch.end()) usage("unknown model " + args.model);
  if (args.batch == 0) args.batch = model->second;
  if (args.batch <= 0 || args.steps <= 0 || args.warmup < 0 || args.threads <= 0) {
    usage("--batch-size, --steps and --threads must be positive, --warmup >= 0");
  }
  return args;
}

// One step of a model: the tensors whose gradients are reset to undefined
// before it (LibTorch 1.13's zero_grad() zeroes them in place instead), and
// the rest of the step.
struct Step {
  std::vector<torch::Tensor> leaves;
  std::function<void()> run;
};

// mlp or cnn; tiny is a bare Linear(5, 2) (a Sequential around it costs
// LibTorch about 2 us a step, and the reference should run at its best).
torch::nn::Sequential make_classifier(const std::string& name) {
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

// loss(), its backward, then SGD(lr=0.01, no momentum).step().
Step with_sgd(const std::vector<torch::Tensor>& parameters,
              std::function<torch::Tensor()> loss) {
  auto optimizer =
      std::make_shared<torch::optim::SGD>(parameters, torch::optim::SGDOptions(0.01));
  return {parameters, [optimizer, loss = std::move(loss)] {
            loss().backward();
            optimizer->step();
          }};
}

Step training_step(const Args& args) {
  if (args.model == "tiny") {
    torch::nn::Linear linear(5, 2);
    const torch::Tensor input = torch::randn({args.batch, 5});
    const torch::Tensor target = torch::randn({args.batch, 2});
    return with_sgd(linear->parameters(), [=]() mutable {
      return torch::mse_loss(linear->forward(input), target);
    });
  }
  torch::nn::Sequential model = make_classifier(args.model);
  const torch::Tensor input = torch::randn({args.batch, 1, 28, 28});
  const torch::Tensor target = torch::randint(10, {args.batch});
  return with_sgd(model->parameters(), [=]() mutable {
    return torch::nn::functional::cross_entropy(model->forward(input), target);
  });
}

Step lstm_step(const Args& args) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(650, 650).num_layers(2).dropout(0.5));
  const torch::Tensor x = torch::randn({35, args.batch, 650}).requires_grad_();
  const torch::Tensor g = torch::randn({35, args.batch, 650});
  std::vector<torch::Tensor> leaves = lstm->parameters();
  leaves.push_back(x);
  return {leaves,
          [=]() mutable { (std::get<0>(lstm->forward(x)) * g).sum().backward(); }};
}

torch::nn::ConvTranspose2dOptions dcgan_layer(int64_t in,
                                              int64_t out,
                                              int64_t stride,
                                              int64_t padding) {
  return torch::nn::ConvTranspose2dOptions(in, out, 4)
      .stride(stride)
      .padding(padding)
      .bias(false);
}

Step dcgan_step(const Args& args) {
  namespace nn = torch::nn;
  constexpr int64_t kNz = 100, kNgf = 64;
  nn::Sequential gen(nn::ConvTranspose2d(dcgan_layer(kNz, kNgf * 4, 1, 0)),
                     nn::BatchNorm2d(kNgf * 4),
                     nn::ReLU(),
                     nn::ConvTranspose2d(dcgan_layer(kNgf * 4, kNgf * 2, 2, 1)),
                     nn::BatchNorm2d(kNgf * 2),
                     nn::ReLU(),
                     nn::ConvTranspose2d(dcgan_layer(kNgf * 2, kNgf, 2, 1)),
                     nn::BatchNorm2d(kNgf),
                     nn::ReLU(),
                     nn::ConvTranspose2d(dcgan_layer(kNgf, 1, 2, 1)),
                     nn::Tanh());
  const torch::Tensor z = torch::randn({args.batch, kNz, 1, 1});
  const torch::Tensor target = torch::rand({args.batch, 1, 32, 32}) * 2 - 1;
  return {gen->parameters(),
          [=]() mutable { torch::mse_loss(gen->forward(z), target).backward(); }};
}

Step make_step(const Args& args) {
  if (args.model == "lstm") return lstm_step(args);
  if (args.model == "dcgan") return dcgan_step(args);
  return training_step(args);
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
  using NameFn = const char* (*)();
  auto parallel = reinterpret_cast<IntFn>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  auto threads = reinterpret_cast<IntFn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  auto kernels = reinterpret_cast<NameFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (parallel != nullptr && threads != nullptr && kernels != nullptr) {
    const char* kinds[] = {"serial", "pthread", "openmp"};
    const int kind = parallel();
    json << ",\"blas_parallel\":\"" << (kind >= 0 && kind <= 2 ? kinds[kind] : "unknown")
         << "\",\"blas_threads\":" << threads() << ",\"blas_kernels\":\"" << kernels()
         << "\"";
  }
  return json.str();
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  torch::set_num_threads(args.threads);
  torch::manual_seed(args.seed);
  const Step step = make_step(args);

  std::vector<double> millis;
  for (int64_t i = 0; i < args.warmup + args.steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    for (auto leaf : step.leaves) leaf.mutable_grad() = torch::Tensor();
    step.run();
    const std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - start;
    if (i >= args.warmup) millis.push_back(took.count());
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
