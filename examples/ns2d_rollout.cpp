// ns2d_rollout.cpp - the 2-D Navier-Stokes benchmark of the Fourier neural operator paper (Li et al.
// 2021) with an autoregressive FNO-2D: the vorticity form on the unit torus
//   w_t + u . grad(w) = nu laplacian(w) + f,  div(u) = 0,  nu = 1e-3,
//   f(x, y) = 0.1 (sin(2 pi (x + y)) + cos(2 pi (x + y))),
// with random initial vorticity w0 ~ N(0, C), C = 2 * 7^3 (-Laplacian + 49 I)^-2.5: phasor's
// gaussian_random_field with sigma = sqrt(2) 7^1.5, tau = 7, gamma = 2.5. That is the covariance of
// the FNO data generator's GaussianRF(2, s, alpha=2.5, tau=7) (sigma = tau^(alpha - 1) = 7^1.5 and an
// extra sqrt(2) in its amplitude, see pde/fields.hpp); the paper's text writes 7^(3/2) (-Laplacian +
// 49 I)^-2.5, a 2 * 7^1.5 ~ 37 times smaller variance, which is not what its data were made with.
// The data are made with phasor's pseudo-spectral solver (pde::NavierStokes2D, ETDRK4, 2/3 dealiasing,
// float64; each time unit split into equal steps for an advective CFL number of about 0.8) on a fine
// grid, recorded every time unit t = 1, 2, ..., T and subsampled. The program also solves two of the
// trajectories on a twice finer grid and prints the relative difference at t = T (the data's own error).
//
//   usage: ns2d_rollout [--full] [--train N] [--test N] [--T T] [--epochs N] [--max-error E]
//                       [--max-baseline-ratio R] [--png PATH] [--data PATH] [--resume PATH] [--device cpu[:i]|cuda[:i]]
//
// --device trains and evaluates on that device (the data are made on the CPU and copied once).
// --data PATH keeps the generated trajectories in PATH and reuses them when it exists (for the same
// sizes); --resume PATH saves the training state every 5 epochs and continues from it (train.hpp).
//
// The model sees the 10 snapshots w(t-9) .. w(t) as 10 input channels (plus the positional embedding)
// and predicts w(t+1) (FNO-2D as the paper's fourier_2d_time script: width 20, 12 x 12 modes, 4 layers,
// projection 128). Unlike the paper's script, which outputs w(t+1) itself from unnormalized inputs, the
// FNO here outputs the increment: w(t+1) = w(t) + s_dw FNO(window / s_w), with s_w and s_dw the standard
// deviations of the training vorticity and of its one-step increments (scalars), which trains much
// faster. It is trained with one-step teacher forcing on every window of the training trajectories
// (relative L2 loss, Adam lr 1e-3, weight decay 1e-4, batch 20), then evaluated on the test
// trajectories by an autoregressive rollout: from w(1) .. w(10) it predicts w(11), feeds it back, and so
// on to w(T). The paper instead trains through the whole rollout; teacher forcing is cheaper, but the
// model never sees its own errors, which then grow along the rollout.
// Reported: the relative L2 error at every predicted time (mean over the test set), its mean over the
// horizon, and the same for the persistence baseline (predict w(10) for all later times).
//
// Demo configuration (default, ~2-2.5 minutes on 2 cores): T = 20 (10 seen, 10 predicted), 100 train /
// 20 test trajectories solved at 64 x 64 and subsampled to 32 x 32, 20 epochs (1000 windows each) with
// a cosine learning-rate decay; the check is a mean rollout error <= 5%. Measured (2 threads on a
// loaded machine): 2 min 20 s in all, data 47 s, training 89 s, mean rollout error 1.39% (1.96% at
// t = 20; persistence: 34% and 56%), the data 1.4e-9 from a 128 x 128 solve.
// Full configuration (--full): the paper's T = 50 (10 seen, 40 predicted), 1000 train / 200 test
// trajectories at the paper's model resolution 64 x 64, solved directly at 64 x 64 (the paper: 256 x 256
// Crank-Nicolson, subsampled to 64; the printed comparison with a 128 x 128 solve measures what that
// changes: 1.3e-8 at t = 50), 50 epochs (40000 windows each) with the learning rate halved every 10;
// the check is a mean rollout error over the 40 predicted steps <= 5% (the paper's FNO-2D, trained
// through the rollout for 500 epochs, reports 1.28%). Expected cost on 2 cores, extrapolated from
// short runs: ~15 min of data, ~7 min per epoch, ~6 h in all; it has not been run to the end.
// --max-baseline-ratio R replaces the check by "mean rollout error <= R times the persistence
// baseline's", used by the quick ctest run.
//
// Prints progress and timings, the errors, writes a PNG (error vs time, vorticity slices of a test
// sample at the last time, loss curve), a second PNG <name>_fields.png with images of that sample at
// t = T (solver, FNO, error) and a checkpoint, and exits with status 1 when the check fails.
#include <phasor/phasor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/cache.hpp"
#include "common/heatmap.hpp"
#include "common/device.hpp"
#include "common/plot.hpp"
#include "common/train.hpp"

namespace ph = phasor;
using ph::Tensor;

namespace {

constexpr double kNu = 1e-3;
constexpr std::int64_t kSeen = 10;  // snapshots the model sees

struct Config {
  std::int64_t n_train = 100, n_test = 20;
  std::int64_t solve_res = 64, stride = 2;  // model resolution solve_res / stride
  std::int64_t T = 20;                      // snapshots at t = 1 .. T
  int epochs = 20;
  int step_size = 0;          // > 0: the learning rate halves every step_size epochs; 0: cosine decay
  double max_error = 0.05;    // mean relative L2 rollout error (demo; --full: 0.05 too)
  double max_baseline_ratio = 0;  // > 0: check err <= ratio * persistence error instead
  std::string png = "ns2d_rollout.png";
  std::string data_path, resume_path;  // --data, --resume
  ph::Device device = ph::Device::cpu();  // --device: where the model trains
  /// What the data depend on (checked when --data loads a file).
  std::string data_key() const {
    return std::to_string(n_train + n_test) + "x" + std::to_string(T) + "@" + std::to_string(solve_res) + "/" +
           std::to_string(stride);
  }
  std::int64_t res() const { return solve_res / stride; }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Vorticity snapshots (n, T, s/stride, s/stride) float32 at t = 1 .. T of the initial vorticities w0
/// (n, s, s), solved on the s x s torus grid in float64 with ETDRK4. Each time unit is covered by equal
/// steps with an advective CFL number of about 0.8 for 1.25 times the speeds at its start; `max_cfl`
/// returns the largest CFL number actually met and `total_steps` the steps taken.
Tensor solve_ns(const Tensor& w0, std::int64_t T, std::int64_t stride, bool progress, double& max_cfl,
                std::int64_t& total_steps) {
  const std::int64_t s = w0.size(-1);
  ph::pde::Grid grid({s, s});
  auto xy = grid.mesh(ph::float64);
  const double two_pi = 2.0 * M_PI;
  Tensor forcing = ((xy[0] + xy[1]) * two_pi).sin() * 0.1 + ((xy[0] + xy[1]) * two_pi).cos() * 0.1;
  ph::pde::NavierStokes2D eq(grid, kNu, forcing);
  Tensor w_hat = ph::pde::to_spectral(grid, w0);
  auto cfl_of = [&](const Tensor& wh, double dt) {
    auto v = eq.max_velocity(wh);
    return dt * (v[0] / grid.spacing(0) + v[1] / grid.spacing(1));
  };
  std::map<std::int64_t, std::unique_ptr<ph::pde::Integrator>> integrators;  // by steps per time unit
  max_cfl = 0, total_steps = 0;
  std::vector<Tensor> snaps;
  ph::ProgressBar bar(T, "solving", progress ? ph::ProgressBar::Mode::automatic : ph::ProgressBar::Mode::silent);
  for (std::int64_t t = 0; t < T; ++t) {
    const auto steps = std::max<std::int64_t>(4, (std::int64_t)std::ceil(1.25 * cfl_of(w_hat, 1.0) / 0.8));
    auto& integ = integrators[steps];
    if (!integ) integ = std::make_unique<ph::pde::Integrator>(eq, 1.0 / double(steps), ph::pde::Stepper::etdrk4);
    for (std::int64_t k = 0; k < steps; ++k) {
      if (k % 4 == 0) max_cfl = std::max(max_cfl, cfl_of(w_hat, 1.0 / double(steps)));
      w_hat = integ->step(w_hat, double(t) + double(k) / double(steps));
    }
    total_steps += steps;
    Tensor w = ph::pde::from_spectral(grid, w_hat);
    snaps.push_back(w.slice(-2, 0, s, stride).slice(-1, 0, s, stride).to(ph::float32));
    bar.update(1);
  }
  bar.close();
  if (!(max_cfl < 1.5)) {
    std::fprintf(stderr, "the time step was too large (CFL %.2f)\n", max_cfl);
    std::exit(1);
  }
  return ph::stack(snaps, 1).contiguous();
}

/// The same field on a grid `factor` times finer per axis (Fourier interpolation).
Tensor refine(const Tensor& w, std::int64_t factor) {
  const std::int64_t s = w.size(-1);
  ph::pde::Grid coarse({s, s}), fine({factor * s, factor * s});
  Tensor wh = ph::pde::to_spectral(coarse, w);  // (n, s, s/2+1)
  // zero-pad the spectrum: rows 0..s/2-1 and -(s/2-1)..-1 keep their place (the Nyquist row is dropped)
  const std::int64_t h = s / 2, S = factor * s;
  Tensor out = ph::zeros({w.size(0), S, S / 2 + 1}, wh.dtype());
  out.narrow(-2, 0, h).narrow(-1, 0, h).copy_(wh.narrow(-2, 0, h).narrow(-1, 0, h));
  out.narrow(-2, S - h + 1, h - 1).narrow(-1, 0, h).copy_(wh.narrow(-2, s - h + 1, h - 1).narrow(-1, 0, h));
  return ph::pde::from_spectral(fine, out * double(factor * factor));
}

/// The training windows of trajectories w (n, T, s, s): sample i = {w[j, t-10 .. t-1], w[j, t .. t]} with
/// j = i / (T - 10), t = 10 + i % (T - 10) (views; the loader stacks them into batches).
class WindowDataset : public ph::data::Dataset {
 public:
  explicit WindowDataset(Tensor w) : w_(std::move(w)), per_(w_.size(1) - kSeen) {}
  std::int64_t size() const override { return w_.size(0) * per_; }
  std::vector<Tensor> get(std::int64_t i) const override {
    Tensor traj = w_.select(0, i / per_);
    const std::int64_t t = kSeen + i % per_;
    return {traj.narrow(0, t - kSeen, kSeen), traj.narrow(0, t, 1)};
  }

 private:
  Tensor w_;
  std::int64_t per_;
};

/// Per-sample relative L2 errors of (n, ...) tensors, averaged over the batch.
double relative_l2(const Tensor& pred, const Tensor& truth) {
  return ph::nn::functional::relative_lp_loss(pred, truth).item<double>();
}

std::vector<double> values(const Tensor& t) { return ph::to_vector<double>(t.contiguous().to(ph::float64)); }

int usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--full] [--train N] [--test N] [--T T > 10] [--epochs N] [--max-error E]\n"
               "          [--max-baseline-ratio R] [--png PATH] [--data PATH] [--resume PATH] [--device cpu[:i]|cuda[:i]]\n",
               prog);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    const bool has_arg = i + 1 < argc;
    if (!std::strcmp(argv[i], "--full")) {
      cfg.n_train = 1000, cfg.n_test = 200, cfg.solve_res = 64, cfg.stride = 1, cfg.T = 50;
      cfg.epochs = 50, cfg.step_size = 10, cfg.max_error = 0.05;
    } else if (!std::strcmp(argv[i], "--train") && has_arg) {
      cfg.n_train = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--test") && has_arg) {
      cfg.n_test = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--T") && has_arg) {
      cfg.T = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--epochs") && has_arg) {
      cfg.epochs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--max-error") && has_arg) {
      cfg.max_error = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--max-baseline-ratio") && has_arg) {
      cfg.max_baseline_ratio = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--png") && has_arg) {
      cfg.png = argv[++i];
    } else if (!std::strcmp(argv[i], "--data") && has_arg) {
      cfg.data_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--resume") && has_arg) {
      cfg.resume_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--device") && has_arg) {
      if (!cli::parse_device(argv[++i], cfg.device)) return usage(argv[0]);
    } else {
      return usage(argv[0]);
    }
  }
  if (cfg.epochs < 1 || cfg.n_train < 1 || cfg.n_test < 1 || cfg.T <= kSeen || !(cfg.max_error > 0) ||
      cfg.max_baseline_ratio < 0)
    return usage(argv[0]);
  const std::int64_t s = cfg.res(), horizon = cfg.T - kSeen;
  ph::manual_seed(0);
  std::printf("phasor %s: autoregressive FNO for 2-D Navier-Stokes (nu=%g), %lld train / %lld test trajectories, "
              "t = 1..%lld (%lld seen, %lld predicted), resolution %lld x %lld (solved at %lld x %lld)\n",
              ph::version(), kNu, (long long)cfg.n_train, (long long)cfg.n_test, (long long)cfg.T, (long long)kSeen,
              (long long)horizon, (long long)s, (long long)s, (long long)cfg.solve_res, (long long)cfg.solve_res);

  // ---- data: (n, T, s, s) -------------------------------------------------------------------------------------
  std::string data_note;  // the data's own error, measured when they are made
  const ph::StateDict data = cache::load_or_make(cfg.data_path, cfg.data_key(), data_note, [&] {
    const auto t_data = std::chrono::steady_clock::now();
    ph::pde::Grid fine({cfg.solve_res, cfg.solve_res});
    Tensor w0 = ph::pde::gaussian_random_field(fine, cfg.n_train + cfg.n_test, std::sqrt(2.0) * std::pow(7.0, 1.5),
                                               7.0, 2.5, ph::float64);
    double max_cfl = 0;
    std::int64_t steps = 0;
    Tensor w = solve_ns(w0, cfg.T, cfg.stride, true, max_cfl, steps);
    std::printf("data: %lld trajectories to t = %lld in %.1f s (%lld ETDRK4 steps, largest advective CFL number %.2f, "
                "|w| up to %.2f)\n",
                (long long)(cfg.n_train + cfg.n_test), (long long)cfg.T, seconds_since(t_data), (long long)steps,
                max_cfl, w.abs().max().item<double>());
    // the data's own error: two trajectories against a solve on a twice finer grid
    const auto t_check = std::chrono::steady_clock::now();
    double cfl2 = 0;
    std::int64_t steps2 = 0;
    Tensor w2 = solve_ns(refine(w0.narrow(0, 0, 2), 2), cfg.T, 2 * cfg.stride, false, cfl2, steps2);
    char note[160];
    std::snprintf(note, sizeof note, "relative L2 difference at t = %lld to a %lld x %lld solve: %.1e",
                  (long long)cfg.T, (long long)(2 * cfg.solve_res), (long long)(2 * cfg.solve_res),
                  relative_l2(w.narrow(0, 0, 2).select(1, cfg.T - 1), w2.select(1, cfg.T - 1)));
    data_note = note;
    std::printf("data: %s (%.1f s)\n", note, seconds_since(t_check));
    return ph::StateDict{{"w", w}};
  });
  if (!cfg.data_path.empty()) std::printf("data: %s\n", data_note.c_str());
  Tensor w_all = data.at("w").to(cfg.device);
  Tensor w_train = w_all.narrow(0, 0, cfg.n_train), w_test = w_all.narrow(0, cfg.n_train, cfg.n_test);
  // every window of the training trajectories: 10 snapshots -> the next one (views, made per batch)
  WindowDataset windows(w_train);
  std::printf("training windows: %lld\n", (long long)windows.size());
  // scalar normalization: inputs by the training vorticity's standard deviation, the predicted increment
  // w(t+1) - w(t) by the training increments' standard deviation
  const double w_scale = w_train.std().item<double>();
  const double dw_scale = (w_train.narrow(1, kSeen, cfg.T - kSeen) - w_train.narrow(1, kSeen - 1, cfg.T - kSeen))
                              .std()
                              .item<double>();
  std::printf("normalization: std(w) = %.4f, std(w(t+1) - w(t)) = %.4f\n", w_scale, dw_scale);

  // ---- model and training -------------------------------------------------------------------------------------
  ph::nn::FNOOptions opt;
  opt.in_channels(kSeen).out_channels(1).hidden_channels(20).modes({12, 12}).n_layers(4).projection_channels(128);
  ph::nn::FNO model(opt);
  model.to(cfg.device);
  std::printf("model: %lld parameters, on %s\n", (long long)model.num_parameters(), cfg.device.str().c_str());
  ph::data::DataLoader loader(windows, /*batch=*/20, /*shuffle=*/true, /*drop_last=*/false, /*seed=*/1);
  ph::optim::Adam adam(model.parameters(), ph::optim::AdamOptions(1e-3).weight_decay(1e-4));
  std::unique_ptr<ph::optim::LRScheduler> sched;
  if (cfg.step_size > 0) sched = std::make_unique<ph::optim::StepLR>(adam, cfg.step_size, 0.5);
  else sched = std::make_unique<ph::optim::CosineAnnealingLR>(adam, cfg.epochs);

  // one step: the last snapshot plus the FNO's (scaled) increment
  auto step = [&](const Tensor& window) {
    return window.narrow(1, kSeen - 1, 1) + model.forward(window * (1.0 / w_scale)) * dw_scale;
  };
  // autoregressive rollout of the test trajectories: (n, horizon, s, s)
  auto rollout = [&](const Tensor& w) {
    ph::NoGradGuard ng;
    model.eval();
    Tensor window = w.narrow(1, 0, kSeen).contiguous();
    std::vector<Tensor> out;
    for (std::int64_t k = 0; k < horizon; ++k) {
      Tensor next = step(window);
      out.push_back(next);
      window = ph::cat({window.narrow(1, 1, kSeen - 1), next}, 1).contiguous();
    }
    return ph::cat(out, 1);
  };
  auto errors_vs_time = [&](const Tensor& pred) {
    std::vector<double> e;
    for (std::int64_t k = 0; k < horizon; ++k)
      e.push_back(relative_l2(pred.select(1, k), w_test.select(1, kSeen + k)));
    return e;
  };
  auto mean_of = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m += x;
    return m / double(v.size());
  };

  train::Options topt;
  topt.epochs = cfg.epochs;
  topt.print_every = 5;
  topt.train_label = "train one-step";
  topt.test_label = "test rollout";
  topt.resume_path = cfg.resume_path;
  const train::History hist = train::fit(
      model, loader, adam, *sched, topt,
      [&](const auto& b) { return ph::nn::functional::relative_lp_loss(step(b[0]), b[1]); },
      [&] { return mean_of(errors_vs_time(rollout(w_test))); });
  const double secs = hist.seconds;

  // ---- evaluation, plot, checkpoint ------------------------------------------------------------------------
  Tensor pred = rollout(w_test);
  const std::vector<double> err_t = errors_vs_time(pred);
  std::vector<double> base_t, times;
  for (std::int64_t k = 0; k < horizon; ++k) {
    base_t.push_back(relative_l2(w_test.select(1, kSeen - 1), w_test.select(1, kSeen + k)));
    times.push_back(double(kSeen + 1 + k));
  }
  const double err = mean_of(err_t), base = mean_of(base_t);
  std::printf("trained %d epochs in %.1f s (%.2f s/epoch)\n", cfg.epochs, secs, secs / cfg.epochs);
  std::printf("relative L2 rollout error (test mean) by time:\n");
  for (std::int64_t k = 0; k < horizon; ++k)
    std::printf("  t = %3.0f   FNO %.4e   persistence %.4e\n", times[k], err_t[k], base_t[k]);
  std::printf("mean over t = %lld..%lld: FNO %.4e, persistence %.4e\n", (long long)(kSeen + 1), (long long)cfg.T, err,
              base);

  std::vector<double> x;
  for (std::int64_t i = 0; i < s; ++i) x.push_back(double(i) / double(s));
  plot::Panel errp{"rollout error vs time", "t", "relative L2 error", {}};
  errp.log_y = true;
  errp.series.push_back({times, err_t, {220, 60, 30}, "FNO rollout", false});
  errp.series.push_back({times, base_t, {150, 150, 150}, "persistence w(10)", true});
  char title[80];
  std::snprintf(title, sizeof title, "test sample 0, w at t = %lld", (long long)cfg.T);
  plot::Panel slices{title, "x (y = 0 and y = 1/2)", "vorticity", {}};
  Tensor wt = w_test.index({0, cfg.T - 1}), wp = pred.index({0, horizon - 1});
  slices.series.push_back({x, values(wt.select(1, 0)), {30, 90, 200}, "solver, y=0", false});
  slices.series.push_back({x, values(wp.select(1, 0)), {30, 90, 200}, "FNO, y=0", true});
  slices.series.push_back({x, values(wt.select(1, s / 2)), {220, 60, 30}, "solver, y=1/2", false});
  slices.series.push_back({x, values(wp.select(1, s / 2)), {220, 60, 30}, "FNO, y=1/2", true});
  plot::Panel curves{"training", "epoch", "relative L2 error", {}};
  curves.log_y = true;
  curves.series.push_back({hist.epoch, hist.train, {30, 90, 200}, "train one-step", false});
  curves.series.push_back({hist.epoch, hist.test, {220, 60, 30}, "test rollout (mean)", false});
  if (plot::save_png(cfg.png, {errp, slices, curves})) std::printf("wrote %s\n", cfg.png.c_str());
  else std::fprintf(stderr, "could not write %s\n", cfg.png.c_str());
  {
    // images of test sample 0 at t = T: w (solver), w (FNO rollout) on a common symmetric scale, and
    // the error on its own
    const std::string path = cfg.png.substr(0, cfg.png.rfind(".png")) + "_fields.png";
    const double wmax = std::max(wt.abs().max().item<double>(), 1e-30);
    Tensor e = wp - wt;
    const double emax = std::max(e.abs().max().item<double>(), 1e-30);
    if (heatmap::save_png(path, {heatmap::field(values(wt), s, s, -wmax, wmax, true),
                                 heatmap::field(values(wp), s, s, -wmax, wmax, true),
                                 heatmap::field(values(e), s, s, -emax, emax, true)}))
      std::printf("wrote %s (test sample 0 at t = %lld: w solver, w FNO on [-%.2f, %.2f], error on [-%.2e, %.2e])\n",
                  path.c_str(), (long long)cfg.T, wmax, wmax, emax, emax);
    else
      std::fprintf(stderr, "could not write %s\n", path.c_str());
  }
  ph::io::save_checkpoint("ns2d_rollout.safetensors", model.state_dict(), adam.state_dict());
  std::printf("wrote ns2d_rollout.safetensors\n");

  const double limit = cfg.max_baseline_ratio > 0 ? cfg.max_baseline_ratio * base : cfg.max_error;
  const bool ok = err <= limit;
  if (cfg.max_baseline_ratio > 0)
    std::printf("%s: mean rollout error %.4e %s %.2f x persistence error %.4e\n", ok ? "PASS" : "FAIL", err,
                ok ? "<=" : ">", cfg.max_baseline_ratio, base);
  else
    std::printf("%s: mean rollout error %.4e %s %.2e\n", ok ? "PASS" : "FAIL", err, ok ? "<=" : ">", cfg.max_error);
  return ok ? 0 : 1;
}
