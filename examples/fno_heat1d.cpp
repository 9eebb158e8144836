// fno_heat1d.cpp - learns the solution operator u(., 0) -> u(., T) of the 1-D heat equation
//   u_t = nu u_xx  on the periodic domain [0, 1)
// with a Fourier neural operator. The data are exact: initial conditions are Gaussian random fields
// drawn in Fourier space, and each mode evolves as u_k(T) = u_k(0) exp(-nu (2 pi k)^2 T).
//
//   usage: fno_heat1d [epochs] [output.png]      (defaults: 30, fno_heat1d.png)
//
// It trains with Adam and a cosine schedule on the relative L2 loss, shows progress, reports the
// relative L2 test error (on the training resolution and, zero-shot, on a twice finer grid), writes a
// PNG with truth vs prediction for a test sample and the loss curves, saves a checkpoint, and exits
// with status 1 if the test error is above kMaxRelError.
#include <phasor/phasor.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/plot.hpp"
#include "common/train.hpp"

namespace ph = phasor;
using ph::Tensor;

namespace {

constexpr double kMaxRelError = 0.02;  // pass/fail threshold on the relative L2 test error
constexpr double kNu = 0.002, kT = 1.0;  // diffusivity and final time

// Spectra (batch, n/2 + 1) of Gaussian random fields on [0, 1): coefficient k has a variance proportional
// to (4 pi^2 k^2 + tau^2)^(-alpha), the mean (k = 0) is zero, and the pointwise standard deviation is one
// (fields are evaluated with Norm::forward, u(x) = sum_k u_k e^{2 pi i k x}).
Tensor grf_spectrum(std::int64_t batch, std::int64_t n, double tau = 5.0, double alpha = 2.0) {
  const std::int64_t m = n / 2 + 1;
  Tensor k = ph::arange(0, m, 1, ph::float64);
  Tensor amp = ((k * k) * (4 * M_PI * M_PI) + tau * tau).pow(-alpha / 2);
  amp = amp * (k > 0.0).to(ph::float64);                       // zero mean
  amp = amp / (amp.square().sum() * 2.0).sqrt();              // unit pointwise variance
  Tensor xi = ph::complex(ph::randn({batch, m}, ph::float64), ph::randn({batch, m}, ph::float64)) * M_SQRT1_2;
  return xi * amp;
}

// Evaluates the fields with spectrum `spec` on an n-point grid, at t = 0 and at t = T (exact solution).
std::pair<Tensor, Tensor> heat_pair(const Tensor& spec, std::int64_t n) {
  const std::int64_t m = spec.size(-1);
  Tensor k = ph::arange(0, m, 1, ph::float64);
  Tensor decay = (k * k * (-kNu * 4 * M_PI * M_PI * kT)).exp();
  Tensor u0 = ph::fft::irfft(spec, n, -1, ph::fft::Norm::forward);
  Tensor uT = ph::fft::irfft(spec * decay, n, -1, ph::fft::Norm::forward);
  return {u0.to(ph::float32).unsqueeze(1), uT.to(ph::float32).unsqueeze(1)};  // (batch, 1, n)
}

// Spectra generated at the finest resolution used, restricted to what a coarser grid represents.
Tensor restrict_spectrum(const Tensor& spec, std::int64_t n) { return spec.narrow(-1, 0, n / 2 + 1); }

double relative_l2(const Tensor& pred, const Tensor& truth) {
  return ph::nn::functional::relative_lp_loss(pred, truth).item<double>();
}

std::vector<double> column(const Tensor& t) { return ph::to_vector<double>(t.contiguous()); }

}  // namespace

int main(int argc, char** argv) {
  const int epochs = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::string png = argc > 2 ? argv[2] : "fno_heat1d.png";
  if (epochs < 1) {
    std::fprintf(stderr, "usage: %s [epochs >= 1] [output.png]\n", argv[0]);
    return 2;
  }
  const std::int64_t n = 256, n_fine = 512, n_train = 1000, n_test = 200, batch = 20;
  ph::manual_seed(0);

  // ---- data -----------------------------------------------------------------------------------------
  Tensor spec_train = grf_spectrum(n_train, n_fine), spec_test = grf_spectrum(n_test, n_fine);
  auto [a_train, u_train] = heat_pair(restrict_spectrum(spec_train, n), n);
  auto [a_test, u_test] = heat_pair(restrict_spectrum(spec_test, n), n);
  auto [a_fine, u_fine] = heat_pair(spec_test, n_fine);

  // ---- model and training ---------------------------------------------------------------------------
  ph::nn::FNOOptions opt;
  opt.in_channels(1).out_channels(1).hidden_channels(32).modes({16}).n_layers(4);
  ph::nn::FNO model(opt);
  std::printf("phasor %s: FNO for the 1-D heat equation (nu=%g, T=%g), %lld train / %lld test samples, n=%lld\n",
              ph::version(), kNu, kT, (long long)n_train, (long long)n_test, (long long)n);
  std::printf("model: %lld parameters\n", (long long)model.num_parameters());

  ph::data::TensorDataset train_set({a_train, u_train});
  ph::data::DataLoader loader(train_set, batch, /*shuffle=*/true, /*drop_last=*/false, /*seed=*/1);
  const double lr = 3e-3;
  ph::optim::Adam adam(model.parameters(), ph::optim::AdamOptions(lr).weight_decay(1e-4));
  ph::optim::CosineAnnealingLR sched(adam, /*T_max=*/epochs);

  train::Options topt;
  topt.epochs = epochs;
  const train::History hist = train::fit(
      model, loader, adam, sched, topt,
      [&](const auto& b) { return ph::nn::functional::relative_lp_loss(model.forward(b[0]), b[1]); },
      [&] { return relative_l2(model.forward(a_test), u_test); });
  const double secs = hist.seconds;

  // ---- evaluation, plot, checkpoint --------------------------------------------------------------------
  ph::NoGradGuard ng;
  model.eval();
  Tensor pred = model.forward(a_test), pred_fine = model.forward(a_fine);
  const double err = relative_l2(pred, u_test), err_fine = relative_l2(pred_fine, u_fine);
  std::printf("trained %d epochs in %.1f s\n", epochs, secs);
  std::printf("relative L2 test error: %.4e at n=%lld, %.4e zero-shot at n=%lld (threshold %.0e)\n", err,
              (long long)n, err_fine, (long long)n_fine, kMaxRelError);

  std::vector<double> x;
  for (std::int64_t i = 0; i < n; ++i) x.push_back(double(i) / double(n));
  plot::Panel sample{"test sample 0", "x", "u", {}};
  sample.series.push_back({x, column(a_test.index({0, 0})), {150, 150, 150}, "u(x,0)", false});
  sample.series.push_back({x, column(u_test.index({0, 0})), {30, 90, 200}, "truth u(x,T)", false});
  sample.series.push_back({x, column(pred.index({0, 0})), {220, 60, 30}, "FNO", true});
  plot::Panel curves{"relative L2 error", "epoch", "error", {}};
  curves.log_y = true;
  curves.series.push_back({hist.epoch, hist.train, {30, 90, 200}, "train", false});
  curves.series.push_back({hist.epoch, hist.test, {220, 60, 30}, "test", false});
  if (plot::save_png(png, {sample, curves})) std::printf("wrote %s\n", png.c_str());
  else std::fprintf(stderr, "could not write %s\n", png.c_str());

  ph::io::save_checkpoint("fno_heat1d.safetensors", model.state_dict(), adam.state_dict());
  std::printf("wrote fno_heat1d.safetensors\n");

  const bool ok = err < kMaxRelError;
  std::printf("%s: test error %.4e %s %.0e\n", ok ? "PASS" : "FAIL", err, ok ? "<" : ">=", kMaxRelError);
  return ok ? 0 : 1;
}
