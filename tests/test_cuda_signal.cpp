// phasor::signal and optim::LBFGS on CUDA tensors: CPU-vs-GPU agreement (skipped without a GPU), plus
// CPU cases for the device arguments, device errors and the tensor path of LBFGS (Note [L-BFGS on a GPU]).
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <cmath>
#include <functional>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

using namespace phasor;
using namespace cuda_test;
namespace sg = phasor::signal;

namespace phasor::optim::detail {
bool& lbfgs_tensor_path_on_cpu();  // test hook in src/nn/optim/lbfgs.cpp
}

namespace {

double tol(Dtype dt) { return dt == Dtype::Float32 || dt == Dtype::Complex64 ? 5e-5 : 1e-11; }

}  // namespace

// ---- CPU cases (run everywhere) ----------------------------------------------------------------------------

TEST_CASE("cuda signal: windows take their Device argument; a nonexistent CUDA device is named") {
  const Device bad = Device::cuda(7);
  CHECK(rel_diff(sg::hann_window(9, true, float64, Device::cpu()), sg::hann_window(9, true, float64)) == 0);
  CHECK(sg::kaiser_window(5, float32, Device::cpu()).device() == Device::cpu());
  const auto names = [](const char* op) { return doctest::Contains((std::string("[") + op + "] device cuda:7 does not exist").c_str()); };
  CHECK_THROWS_WITH_AS(sg::hann_window(8, true, float64, bad), names("hann_window"), Error);
  CHECK_THROWS_WITH_AS(sg::hamming_window(8, float64, bad), names("hamming_window"), Error);
  CHECK_THROWS_WITH_AS(sg::blackman_window(8, float64, bad), names("blackman_window"), Error);
  CHECK_THROWS_WITH_AS(sg::bartlett_window(8, float64, bad), names("bartlett_window"), Error);
  CHECK_THROWS_WITH_AS(sg::kaiser_window(8, float64, bad), names("kaiser_window"), Error);
  CHECK_THROWS_WITH_AS(sg::gaussian_window(8, 2.0, true, float64, bad), names("gaussian_window"), Error);
  CHECK_THROWS_WITH_AS(sg::tukey_window(8, 0.5, true, float64, bad), names("tukey_window"), Error);
  CHECK_THROWS_WITH_AS(sg::general_cosine_window(8, {0.5, 0.5}, true, float64, bad), names("general_cosine_window"),
                       Error);
  CHECK_THROWS_WITH_AS(sg::get_window("boxcar", 8, true, float64, bad), names("get_window"), Error);
  CHECK_THROWS_WITH_AS(sg::get_window(sg::WindowSpec(ones({8})), 8, true, float64, bad), names("get_window"),
                       Error);
  CHECK_THROWS_WITH_AS(sg::melscale_fbanks(5, 0, 100, 3, 400, sg::MelNorm::none, sg::MelScale::htk, float64, bad),
                       names("melscale_fbanks"), Error);
  CHECK_THROWS_WITH_AS(sg::firwin(9, {0.3}, std::nullopt, "hamming", "true", true, 2.0, float64, bad), names("firwin"),
                       Error);
}

TEST_CASE("cuda signal: LBFGS's tensor flat-vector path matches the host path on the CPU") {
  manual_seed(31);
  const Tensor A = randn({6, 4}, float64), b = randn({6}, float64), c = complex(randn({3}, float64), randn({3}, float64));
  const Tensor x0 = randn({4}, float64), z0 = complex(randn({3}, float64), randn({3}, float64)), w0 = randn({2}, float32);
  for (bool strong : {false, true})
    for (std::int64_t hist : {2, 10}) {
      CAPTURE(strong);
      CAPTURE(hist);
      const auto run = [&](bool tensor_path, StateDict* sd) {
        optim::detail::lbfgs_tensor_path_on_cpu() = tensor_path;
        std::vector<Tensor> p{x0.clone().requires_grad_(), z0.clone().requires_grad_(), w0.clone().requires_grad_()};
        optim::LBFGSOptions o(0.5);
        o.max_iter(4).history_size(hist);
        if (strong) o.line_search_fn("strong_wolfe");
        optim::LBFGS opt(p, o);
        const auto closure = [&] {
          opt.zero_grad();
          const Tensor r = matmul(A, p[0]) - b;
          const Tensor dz = p[1] - c;
          Tensor l = (r * r).sum() + 0.05 * (p[0] * p[0] * p[0] * p[0]).sum() +
                     (real(dz) * real(dz) + imag(dz) * imag(dz)).sum() + (p[2] * p[2]).sum().to(float64) * 0.3;
          l.backward();
          return l;
        };
        for (int s = 0; s < 3; ++s) opt.step(closure);
        if (sd) *sd = opt.state_dict();
        optim::detail::lbfgs_tensor_path_on_cpu() = false;
        return p;
      };
      StateDict sh, st;
      const auto ph = run(false, &sh), pt = run(true, &st);
      for (std::size_t i = 0; i < ph.size(); ++i) {
        CAPTURE(i);
        CHECK(rel_diff(pt[i], ph[i]) <= (i == 2 ? 1e-6 : 1e-10));
      }
      REQUIRE(sh.size() == st.size());
      for (const auto& [k, v] : sh) {
        CAPTURE(k);
        REQUIRE(st.count(k));
        CHECK(rel_diff(st.at(k), v) <= 1e-6);
      }
    }
  optim::detail::lbfgs_tensor_path_on_cpu() = false;
}

TEST_CASE("cuda signal: LBFGS's tensor path continues from a loaded state_dict like the host path") {
  manual_seed(32);
  const Tensor A = randn({5, 5}, float64), b = randn({5}, float64), x0 = randn({5}, float64);
  const auto make = [&](std::vector<Tensor>& p) {
    return optim::LBFGS(p, optim::LBFGSOptions(1.0).max_iter(3).history_size(4).line_search_fn("strong_wolfe"));
  };
  const auto closure_for = [&](optim::LBFGS& opt, std::vector<Tensor>& p) {
    return [&] {
      opt.zero_grad();
      const Tensor r = matmul(A, p[0]) - b;
      Tensor l = (r * r).sum() + 0.1 * (p[0] * p[0] * p[0] * p[0]).sum();
      l.backward();
      return l;
    };
  };
  // host run: 2 steps, checkpoint, 2 more steps
  std::vector<Tensor> ph{x0.clone().requires_grad_()};
  optim::LBFGS oh = make(ph);
  oh.step(closure_for(oh, ph));
  oh.step(closure_for(oh, ph));
  const StateDict sd = oh.state_dict();
  const Tensor mid = ph[0].detach().clone();
  oh.step(closure_for(oh, ph));
  oh.step(closure_for(oh, ph));
  // tensor path resumed from the checkpoint
  optim::detail::lbfgs_tensor_path_on_cpu() = true;
  std::vector<Tensor> pt{mid.clone().requires_grad_()};
  optim::LBFGS ot = make(pt);
  ot.load_state_dict(sd);
  ot.step(closure_for(ot, pt));
  ot.step(closure_for(ot, pt));
  const StateDict st = ot.state_dict();
  optim::detail::lbfgs_tensor_path_on_cpu() = false;
  CHECK(ot.state(pt[0]).count("lbfgs.d") == 1);  // the tensor path ran and keeps its vectors as tensors
  CHECK(oh.state(ph[0]).empty());
  CHECK(rel_diff(pt[0], ph[0]) <= 1e-10);
  CHECK(ot.n_iter() == oh.n_iter());
  CHECK(ot.func_evals() == oh.func_evals());
  const StateDict sh = oh.state_dict();
  REQUIRE(sh.size() == st.size());
  for (const auto& [k, v] : sh) {
    CAPTURE(k);
    CHECK(rel_diff(st.at(k), v) <= 1e-9);
  }
}

// ---- GPU agreement (skipped without a GPU) ----------------------------------------------------------------

DEVICE_CASE("cuda signal: windows are made on the GPU and match the CPU") {
  for (Dtype dt : {float32, float64})
    for (bool periodic : {true, false}) {
      CAPTURE(dt);
      CAPTURE(periodic);
      const std::vector<std::pair<std::string, std::function<Tensor(Device)>>> ws = {
          {"hann", [&](Device d) { return sg::hann_window(17, periodic, dt, d); }},
          {"hamming", [&](Device d) { return sg::hamming_window(17, periodic, 0.54, 0.46, dt, d); }},
          {"blackman", [&](Device d) { return sg::blackman_window(17, periodic, dt, d); }},
          {"bartlett", [&](Device d) { return sg::bartlett_window(17, periodic, dt, d); }},
          {"kaiser", [&](Device d) { return sg::kaiser_window(17, periodic, 8.0, dt, d); }},
          {"gaussian", [&](Device d) { return sg::gaussian_window(17, 3.0, periodic, dt, d); }},
          {"tukey", [&](Device d) { return sg::tukey_window(17, 0.4, periodic, dt, d); }},
          {"general_cosine", [&](Device d) { return sg::general_cosine_window(17, {0.4, 0.5, 0.1}, periodic, dt, d); }},
          {"get_window kaiser", [&](Device d) { return sg::get_window(sg::WindowSpec("kaiser", 5.0), 17, periodic, dt, d); }},
          {"get_window boxcar", [&](Device d) { return sg::get_window("boxcar", 17, periodic, dt, d); }},
      };
      for (const auto& [name, f] : ws) {
        CAPTURE(name);
        const Tensor g = f(dev);
        CHECK(g.device() == dev);
        CHECK(g.dtype() == dt);
        CHECK(rel_diff(g, f(Device::cpu())) == 0);
      }
    }
  const Tensor v = randn({6}, float64).to(dev);
  CHECK(rel_diff(sg::get_window(sg::WindowSpec(v), 6, true, float32, dev), v.to(float32)) == 0);
  CHECK(sg::melscale_fbanks(33, 0, 4000, 10, 8000, sg::MelNorm::slaney, sg::MelScale::slaney, float64, dev).device() ==
        dev);
  CHECK(rel_diff(sg::firwin(31, {0.2, 0.5}, std::nullopt, "hamming", "bandpass", true, 2.0, float64, dev),
                 sg::firwin(31, {0.2, 0.5}, std::nullopt, "hamming", "bandpass", true, 2.0, float64)) == 0);
}

DEVICE_CASE("cuda signal: frame, overlap_add, stft, istft and spectrograms agree with the CPU") {
  manual_seed(5);
  using V = std::vector<Tensor>;
  for (Dtype dt : {float32, float64, complex128}) {
    CAPTURE(dt);
    const Tensor x = sample({3, 200}, dt), x1 = sample({150}, dt);
    const Dtype rdt = is_complex(dt) ? float64 : dt;
    const Tensor w = sg::hann_window(32, true, rdt), w24 = sg::hamming_window(24, rdt);
    agree(dev, "frame", [](const V& a) { return sg::frame(a[0], 16, 5, -1); }, {x}, tol(dt));
    agree(dev, "overlap_add", [](const V& a) { return sg::overlap_add(a[0], 7); }, {sample({2, 9, 16}, dt)}, tol(dt));
    for (PadMode pm : {PadMode::reflect, PadMode::constant, PadMode::replicate, PadMode::circular}) {
      agree(dev, "stft", [pm](const V& a) { return sg::stft(a[0], sg::STFTOptions(32).hop(8).with_window(a[1]).pad(pm)); },
            {x, w}, tol(dt));
      agree(dev, "stft 1-D", [pm](const V& a) { return sg::stft(a[0], sg::STFTOptions(32).hop(8).pad(pm)); }, {x1}, tol(dt));
    }
    agree(dev, "stft win_length", [](const V& a) { return sg::stft(a[0], sg::STFTOptions(32).hop(6).with_window(a[1])); },
          {x, w24}, tol(dt));
    agree(dev, "stft real view", [](const V& a) {
      return sg::stft(a[0], sg::STFTOptions(32).hop(8).centered(false).normalize(true).complex_output(false));
    }, {x}, tol(dt));
    const bool cplx = is_complex(dt);
    const Tensor X = sg::stft(x, sg::STFTOptions(32).hop(8).with_window(w).one_sided(!cplx));
    agree(dev, "istft", [cplx](const V& a) {
      return sg::istft(a[0], sg::STFTOptions(32).hop(8).with_window(a[1]).one_sided(!cplx).complex_output(cplx)
                                 .output_length(200));
    }, {X, w}, tol(dt));
    agree(dev, "istft default window, longer", [cplx](const V& a) {
      return sg::istft(a[0], sg::STFTOptions(32).hop(8).one_sided(!cplx).complex_output(cplx).output_length(230));
    }, {X}, tol(dt));
    if (!cplx) {
      agree(dev, "spectrogram", [](const V& a) { return sg::spectrogram(a[0], sg::STFTOptions(32).hop(8).with_window(a[1])); },
            {x, w}, tol(dt));
      agree(dev, "spectrogram power 1 normalized", [](const V& a) {
        return sg::spectrogram(a[0], sg::STFTOptions(32).hop(8).normalize(true), 1.0);
      }, {x}, tol(dt));
      agree(dev, "spectrogram power 0.5", [](const V& a) { return sg::spectrogram(a[0], sg::STFTOptions(32), 0.5); }, {x},
            tol(dt));
      agree(dev, "spectrogram complex", [](const V& a) { return sg::spectrogram(a[0], sg::STFTOptions(32), std::nullopt); },
            {x}, tol(dt));
      agree(dev, "mel_spectrogram", [](const V& a) {
        return sg::mel_spectrogram(a[0], sg::MelSpectrogramOptions().rate(8000).fft_size(64).mels(12));
      }, {x}, tol(dt));
      agree(dev, "mel_spectrogram slaney", [](const V& a) {
        return sg::mel_spectrogram(a[0], sg::MelSpectrogramOptions().rate(8000).fft_size(64).win(48).mels(10).scale(
                                             sg::MelNorm::slaney, sg::MelScale::slaney));
      }, {x}, tol(dt));
    }
  }
  // NOLA violated on the GPU: same message as on the CPU, and the input is untouched
  const Tensor X = sg::stft(randn({100}, float64), sg::STFTOptions(16).hop(16).centered(false)).to(dev);
  const Tensor wz = sg::hann_window(16, false, float64, dev);
  CHECK_THROWS_WITH_AS(sg::istft(X, sg::STFTOptions(16).hop(16).centered(false).with_window(wz)),
                       doctest::Contains("[istft] the squared window's overlap-add is 0 at output sample 0 (NOLA"), Error);
  // a window on the other device is named
  CHECK_THROWS_WITH_AS(sg::stft(randn({64}).to(dev), sg::STFTOptions(16).with_window(sg::hann_window(16))),
                       doctest::Contains(("[stft] window is on cpu but the input is on " + dev.str()).c_str()), Error);
}

DEVICE_CASE("cuda signal: convolutions, correlate, hilbert and resample agree with the CPU") {
  manual_seed(6);
  using V = std::vector<Tensor>;
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dt);
    const Tensor a = sample({2, 300}, dt), b = sample({21}, dt), c = sample({2, 40}, dt);
    for (const char* mode : {"full", "same", "valid"}) {
      CAPTURE(mode);
      const std::string m = mode;
      agree(dev, "fftconvolve", [m](const V& t) { return sg::fftconvolve(t[0], t[1], m); }, {a, b}, tol(dt));
      agree(dev, "fftconvolve swapped", [m](const V& t) { return sg::fftconvolve(t[1], t[0], m); }, {c, b}, tol(dt));
      agree(dev, "oaconvolve", [m](const V& t) { return sg::oaconvolve(t[0], t[1], m); }, {a, b}, tol(dt));
      agree(dev, "correlate", [m](const V& t) { return sg::correlate(t[0], t[1], m); }, {a, c}, tol(dt));
    }
    agree(dev, "fftconvolve dim 0", [](const V& t) { return sg::fftconvolve(t[0], t[1], "same", 0); },
          {sample({50, 3}, dt), sample({7, 3}, dt)}, tol(dt));
    for (std::int64_t num : {120, 300, 301, 457}) {
      CAPTURE(num);
      agree(dev, "resample", [num](const V& t) { return sg::resample(t[0], num); }, {a}, tol(dt));
    }
    agree(dev, "resample window", [](const V& t) { return sg::resample(t[0], 150, -1, t[1]); },
          {a, sg::hann_window(300, float64).to(is_complex(dt) ? float64 : dt)}, tol(dt));
    if (!is_complex(dt)) {
      agree(dev, "hilbert", [](const V& t) { return sg::hilbert(t[0]); }, {a}, tol(dt));
      agree(dev, "hilbert n, dim 0", [](const V& t) { return sg::hilbert(t[0], 51, 0); }, {sample({40, 2}, dt)}, tol(dt));
    }
  }
  CHECK_THROWS_WITH_AS(sg::fftconvolve(randn({8}).to(dev), randn({3})),
                       doctest::Contains(("[fftconvolve] in2 is on cpu but in1 is on " + dev.str()).c_str()), Error);
}

DEVICE_CASE("cuda signal: welch, periodogram, firwin and freqz agree with the CPU") {
  manual_seed(7);
  for (Dtype dt : {float32, float64, complex128}) {
    CAPTURE(dt);
    const Tensor x = sample({2, 700}, dt);
    for (const char* detrend : {"constant", "linear", "none"})
      for (const char* scaling : {"density", "spectrum"}) {
        CAPTURE(detrend);
        CAPTURE(scaling);
        const sg::WelchOptions o = sg::WelchOptions().sampling_rate(100).segment(128).detrend_type(detrend).scale(scaling);
        const auto [fc, pc] = sg::welch(x, o);
        const auto [fg, pg] = sg::welch(x.to(dev), o);
        CHECK(fg.device() == dev);
        CHECK(pg.device() == dev);
        CHECK(rel_diff(fg, fc) <= tol(dt));
        CHECK(rel_diff(pg, pc) <= tol(dt));
      }
    const auto [fc, pc] = sg::periodogram(x, sg::periodogram_options().fft_length(900));
    const auto [fg, pg] = sg::periodogram(x.to(dev), sg::periodogram_options().fft_length(900));
    CHECK(rel_diff(fg, fc) <= tol(dt));
    CHECK(rel_diff(pg, pc) <= tol(dt));
    const Tensor win = sg::kaiser_window(100, true, 6.0, float64);
    const auto [fw, pw] = sg::welch(x, sg::WelchOptions().with_window(win));
    const auto [fwg, pwg] = sg::welch(x.to(dev), sg::WelchOptions().with_window(win.to(dev)));
    CHECK(rel_diff(fwg, fw) <= tol(dt));
    CHECK(rel_diff(pwg, pw) <= tol(dt));
  }
  const Tensor b = sg::firwin(41, {0.3}, std::nullopt, "hamming", "true", true, 2.0, float64);
  const Tensor a = from_vector(std::vector<double>{1.0, -0.5, 0.1});
  const auto [wc, hc] = sg::freqz(b, a, 300, true, 1000.0);
  const auto [wg, hg] = sg::freqz(b.to(dev), a.to(dev), 300, true, 1000.0);
  CHECK(wg.device() == dev);
  CHECK(rel_diff(wg, wc) <= 1e-12);
  CHECK(rel_diff(hg, hc) <= 1e-11);
  const Tensor w = linspace(0.0, 3.0, 50, float64);
  CHECK(rel_diff(sg::freqz_at(b.to(dev), Tensor(), w.to(dev)), sg::freqz_at(b, Tensor(), w)) <= 1e-11);
  CHECK_THROWS_WITH_AS(sg::freqz_at(b.to(dev), Tensor(), w), doctest::Contains(("[freqz] w is on cpu but b is on " + dev.str()).c_str()),
                       Error);
}

DEVICE_CASE("cuda signal: gradients through stft, istft and fftconvolve agree with the CPU") {
  manual_seed(8);
  using V = std::vector<Tensor>;
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dt);
    const bool cplx = is_complex(dt);
    const Tensor x = sample({2, 90}, dt), w = sg::hann_window(16, true, float64) + 0.1;
    grads_agree(dev, "stft", [cplx](const V& t) { return sg::stft(t[0], sg::STFTOptions(16).hop(4).with_window(t[1]).one_sided(!cplx)); },
                {x, w}, 1e-11);
    const Tensor X = sg::stft(x, sg::STFTOptions(16).hop(4).with_window(w).one_sided(!cplx));
    grads_agree(dev, "istft", [cplx](const V& t) {
      return sg::istft(t[0], sg::STFTOptions(16).hop(4).with_window(t[1]).one_sided(!cplx).complex_output(cplx));
    }, {X, w}, 1e-11);
    grads_agree(dev, "fftconvolve", [](const V& t) { return sg::fftconvolve(t[0], t[1], "same"); }, {x, sample({9}, dt)},
                1e-11);
    grads_agree(dev, "oaconvolve", [](const V& t) { return sg::oaconvolve(t[0], t[1], "valid"); }, {sample({2, 400}, dt), sample({9}, dt)},
                1e-11);
  }
}

DEVICE_CASE("cuda signal: LBFGS with parameters on the GPU follows the CPU run") {
  manual_seed(9);
  const Tensor A = randn({8, 5}, float64), b = randn({8}, float64);
  const Tensor c = complex(randn({3}, float64), randn({3}, float64));
  const Tensor x0 = randn({5}, float64), z0 = complex(randn({3}, float64), randn({3}, float64));
  for (bool strong : {false, true}) {
    CAPTURE(strong);
    const auto run = [&](Device dev, StateDict* sd) {
      const Tensor Ad = A.to(dev), bd = b.to(dev), cd = c.to(dev);
      // fresh leaves: to() returns x0 itself on x0's device, and the steps update p in place
      std::vector<Tensor> p{x0.clone().to(dev).requires_grad_(), z0.clone().to(dev).requires_grad_()};
      optim::LBFGSOptions o(0.7);
      o.max_iter(5).history_size(3);
      if (strong) o.line_search_fn("strong_wolfe");
      optim::LBFGS opt(p, o);
      const auto closure = [&] {
        opt.zero_grad();
        const Tensor r = matmul(Ad, p[0]) - bd;
        const Tensor dz = p[1] - cd;
        Tensor l = (r * r).sum() + 0.05 * (p[0] * p[0] * p[0] * p[0]).sum() + (real(dz) * real(dz) + imag(dz) * imag(dz)).sum();
        l.backward();
        return l;
      };
      for (int s = 0; s < 3; ++s) opt.step(closure);
      if (sd) *sd = opt.state_dict();
      return p;
    };
    StateDict sc, sg_;
    const auto pc = run(Device::cpu(), &sc), pg = run(dev, &sg_);
    for (std::size_t i = 0; i < pc.size(); ++i) {
      CHECK(pg[i].device() == dev);
      CHECK(rel_diff(pg[i], pc[i]) <= 1e-10);
    }
    REQUIRE(sc.size() == sg_.size());
    for (const auto& [k, v] : sc) {
      CAPTURE(k);
      CHECK(rel_diff(sg_.at(k), v) <= 1e-9);
    }
  }
  std::vector<Tensor> mixed{randn({3}).requires_grad_(), randn({3}).to(dev).requires_grad_()};
  CHECK_THROWS_WITH_AS(optim::LBFGS(mixed, optim::LBFGSOptions()),
                       doctest::Contains(("[optim.LBFGS] all parameters must live on one device, got cpu and " + dev.str()).c_str()), Error);
}
