// fno_burgers1d.cpp - the Burgers benchmark of the Fourier neural operator paper (Li et al. 2021):
// learn the map u(., 0) -> u(., 1) of the viscous Burgers equation
//   u_t + (u^2 / 2)_x = nu u_xx,  nu = 0.1,  periodic on [0, 1),
// from initial conditions u0 ~ N(0, 625 (-Laplacian + 25 I)^-2). The data are made here with phasor's
// own pseudo-spectral solver (ETDRK4, 2/3 dealiasing) on a fine grid and subsampled.
//
//   usage: fno_burgers1d [--full] [--epochs N] [--png PATH] [--device cpu[:i]|cuda[:i]] [--cuda-graph]
//
// --device trains and evaluates on that device (the data are made on the CPU and copied once);
// --cuda-graph replays each training step from a CUDA graph there (train.hpp, Options::cuda_graph).
//
// Demo configuration (default, a few minutes on 2 cores): 500 train / 100 test samples at resolution
// 256 (solved at 512), 100 epochs with a cosine learning-rate decay. Full configuration (--full, the paper's): 1000 train / 200 test at
// resolution 1024 (solved at 1024), 500 epochs, step decay of the learning rate by 0.5 every 100 epochs.
// The solver resolution: at nu = 0.1 the solution's spectrum decays below float precision well before
// mode 256, so 512 / 1024 points give the same data as the paper's 8192 (the program measures and
// prints the difference of its data against a twice finer solve on a few samples).
//
// Prints progress, the relative L2 test error, writes a PNG (truth vs prediction, loss curves) and a
// checkpoint, and exits with status 1 if the error is above the configuration's threshold
// (the paper's 1.6% in both configurations).
#include <phasor/phasor.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/device.hpp"
#include "common/plot.hpp"
#include "common/train.hpp"

namespace ph = phasor;
using ph::Tensor;

namespace {

constexpr double kNu = 0.1, kT = 1.0;

struct Config {
  std::int64_t n_train = 500, n_test = 100, res = 256, solve_res = 512;
  int epochs = 100;
  int step_size = 0;  // > 0: the learning rate halves every step_size epochs (the paper's); 0: cosine decay
  double max_error = 0.016;  // the paper's 1.60% (demo and full)
  std::string png = "fno_burgers1d.png";
  ph::Device device = ph::Device::cpu();  // --device: where the model trains
  bool cuda_graph = false;                // --cuda-graph: replay the training steps from a CUDA graph
};

/// Burgers solutions at t = kT of `u0` (batch, n) on the grid of n points, float64.
Tensor burgers(const Tensor& u0) {
  const std::int64_t n = u0.size(-1);
  ph::pde::Grid grid({n});
  ph::pde::Burgers eq(grid, kNu);
  // step: advective CFL 1 on the largest initial speed (Burgers' max |u| never grows), at most 1e-3
  const double umax = u0.abs().max().item<double>();
  const double dt_cfl = grid.spacing(0) / std::max(umax, 1e-12);
  const auto steps = static_cast<std::int64_t>(std::ceil(kT / std::min(dt_cfl, 1e-3)));
  return ph::pde::solve(eq, u0, kT, kT / static_cast<double>(steps), ph::pde::Stepper::etdrk4);
}

/// Every `stride`-th point of the last dim.
Tensor subsample(const Tensor& u, std::int64_t stride) {
  return u.slice(-1, 0, u.size(-1), stride).contiguous();
}

double relative_l2(const Tensor& pred, const Tensor& truth) {
  return ph::nn::functional::relative_lp_loss(pred, truth).item<double>();
}

std::vector<double> values(const Tensor& t) { return ph::to_vector<double>(t.contiguous().to(ph::float64)); }

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--full")) {
      cfg.n_train = 1000, cfg.n_test = 200, cfg.res = 1024, cfg.solve_res = 1024;
      cfg.epochs = 500, cfg.step_size = 100;
    } else if (!std::strcmp(argv[i], "--epochs") && i + 1 < argc) {
      cfg.epochs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--png") && i + 1 < argc) {
      cfg.png = argv[++i];
    } else if (!std::strcmp(argv[i], "--device") && i + 1 < argc) {
      if (!cli::parse_device(argv[++i], cfg.device)) return 2;
    } else if (!std::strcmp(argv[i], "--cuda-graph")) {
      cfg.cuda_graph = true;
    } else {
      std::fprintf(stderr, "usage: %s [--full] [--epochs N >= 1] [--png PATH] [--device cpu[:i]|cuda[:i]] [--cuda-graph]\n", argv[0]);
      return 2;
    }
  }
  if (cfg.epochs < 1) {
    std::fprintf(stderr, "usage: %s [--full] [--epochs N >= 1] [--png PATH] [--device cpu[:i]|cuda[:i]] [--cuda-graph]\n", argv[0]);
    return 2;
  }
  ph::manual_seed(0);
  std::printf("phasor %s: FNO for viscous Burgers (nu=%g, t=%g), %lld train / %lld test samples, resolution %lld "
              "(solved at %lld)\n",
              ph::version(), kNu, kT, (long long)cfg.n_train, (long long)cfg.n_test, (long long)cfg.res,
              (long long)cfg.solve_res);

  // ---- data -----------------------------------------------------------------------------------------------
  const auto t_data = std::chrono::steady_clock::now();
  ph::pde::Grid fine({cfg.solve_res});
  const std::int64_t n_all = cfg.n_train + cfg.n_test;
  Tensor u0 = ph::pde::gaussian_random_field(fine, n_all, /*sigma=*/25.0, /*tau=*/5.0, /*gamma=*/2.0, ph::float64);
  Tensor u1 = burgers(u0);
  // the data's own error: a few samples against a solve on a twice finer grid (Fourier interpolation)
  {
    const std::int64_t k = 4;
    Tensor a = u0.narrow(0, 0, k);
    Tensor a2 = ph::fft::irfft(ph::fft::rfft(a, std::nullopt, -1, ph::fft::Norm::forward), 2 * cfg.solve_res, -1,
                               ph::fft::Norm::forward);
    Tensor b2 = subsample(burgers(a2), 2);
    const double derr = relative_l2(u1.narrow(0, 0, k), b2);
    std::printf("data: %lld solves in %.1f s; relative difference to a %lld-point solve: %.1e\n", (long long)n_all,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t_data).count(),
                (long long)(2 * cfg.solve_res), derr);
  }
  const std::int64_t stride = cfg.solve_res / cfg.res;
  Tensor a_all = subsample(u0, stride).to(ph::float32).unsqueeze(1).to(cfg.device);
  Tensor y_all = subsample(u1, stride).to(ph::float32).unsqueeze(1).to(cfg.device);
  Tensor a_train = a_all.narrow(0, 0, cfg.n_train), u_train = y_all.narrow(0, 0, cfg.n_train);
  Tensor a_test = a_all.narrow(0, cfg.n_train, cfg.n_test), u_test = y_all.narrow(0, cfg.n_train, cfg.n_test);

  // ---- model and training (the paper's: width 64, 16 modes, 4 layers, Adam 1e-3, weight decay 1e-4) -------
  ph::nn::FNOOptions opt;
  opt.in_channels(1).out_channels(1).hidden_channels(64).modes({16}).n_layers(4).projection_channels(128);
  ph::nn::FNO model(opt);
  model.to(cfg.device);
  std::printf("model: %lld parameters, on %s\n", (long long)model.num_parameters(), cfg.device.str().c_str());
  ph::data::TensorDataset train_set({a_train, u_train});
  ph::data::DataLoader loader(train_set, /*batch=*/20, /*shuffle=*/true, /*drop_last=*/false, /*seed=*/1);
  ph::optim::Adam adam(model.parameters(), ph::optim::AdamOptions(1e-3).weight_decay(1e-4).capturable(cfg.cuda_graph));
  std::unique_ptr<ph::optim::LRScheduler> sched;
  if (cfg.step_size > 0) sched = std::make_unique<ph::optim::StepLR>(adam, cfg.step_size, 0.5);
  else sched = std::make_unique<ph::optim::CosineAnnealingLR>(adam, cfg.epochs);

  train::Options topt;
  topt.epochs = cfg.epochs;
  topt.cuda_graph = cfg.cuda_graph;
  const train::History hist = train::fit(
      model, loader, adam, *sched, topt,
      [&](const auto& b) { return ph::nn::functional::relative_lp_loss(model.forward(b[0]), b[1]); },
      [&] { return relative_l2(model.forward(a_test), u_test); });
  const double secs = hist.seconds;

  // ---- evaluation, plot, checkpoint ------------------------------------------------------------------------
  ph::NoGradGuard ng;
  model.eval();
  Tensor pred = model.forward(a_test);
  const double err = relative_l2(pred, u_test);
  std::printf("trained %d epochs in %.1f s (%.2f s/epoch)\n", cfg.epochs, secs, secs / cfg.epochs);
  std::printf("relative L2 test error: %.4e at resolution %lld (threshold %.1e)\n", err, (long long)cfg.res,
              cfg.max_error);

  std::vector<double> x;
  for (std::int64_t i = 0; i < cfg.res; ++i) x.push_back(double(i) / double(cfg.res));
  plot::Panel initial{"test sample 0: input", "x", "u(x,0)", {}};
  initial.series.push_back({x, values(a_test.index({0, 0})), {150, 150, 150}, "u(x,0)", false});
  plot::Panel sample{"output at t = 1", "x", "u(x,1)", {}};  // own axis: diffusion shrinks u a lot
  sample.series.push_back({x, values(u_test.index({0, 0})), {30, 90, 200}, "solver", false});
  sample.series.push_back({x, values(pred.index({0, 0})), {220, 60, 30}, "FNO", true});
  plot::Panel curves{"relative L2 error", "epoch", "error", {}};
  curves.log_y = true;
  curves.series.push_back({hist.epoch, hist.train, {30, 90, 200}, "train", false});
  curves.series.push_back({hist.epoch, hist.test, {220, 60, 30}, "test", false});
  if (plot::save_png(cfg.png, {initial, sample, curves})) std::printf("wrote %s\n", cfg.png.c_str());
  else std::fprintf(stderr, "could not write %s\n", cfg.png.c_str());
  ph::io::save_checkpoint("fno_burgers1d.safetensors", model.state_dict(), adam.state_dict());
  std::printf("wrote fno_burgers1d.safetensors\n");

  const bool ok = err <= cfg.max_error;
  std::printf("%s: test error %.4e %s %.1e\n", ok ? "PASS" : "FAIL", err, ok ? "<=" : ">", cfg.max_error);
  return ok ? 0 : 1;
}
