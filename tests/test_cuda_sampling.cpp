// CPU-vs-device agreement of the resampling ops (phasor/nn/sampling.hpp): interpolate in every mode,
// pixel_shuffle / pixel_unshuffle, affine_grid, grid_sample in every mode and padding, and the modules,
// values and gradients (grid_sample's in the grid too). DEVICE_CASEs: cuda:0 with a GPU, cpu:1 everywhere.
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <functional>
#include <optional>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

using namespace phasor;
using namespace cuda_test;
namespace F = phasor::nn::functional;

namespace {

using V = std::vector<Tensor>;

double tol(Dtype dt) { return dt == Dtype::Float32 ? 5e-5 : 1e-11; }

}  // namespace

DEVICE_CASE("cuda sampling: interpolate in every mode agrees with the CPU, values and gradients") {
  manual_seed(41);
  struct Case {
    std::string mode;
    Shape xs;
    std::optional<Shape> size;
    std::optional<std::vector<double>> sf;
    std::optional<bool> align;
  };
  const std::vector<Case> cases = {
      {"nearest", {2, 3, 7}, Shape{12}, std::nullopt, std::nullopt},
      {"nearest", {2, 3, 5, 6}, std::nullopt, std::vector<double>{1.7, 0.6}, std::nullopt},
      {"nearest", {1, 2, 3, 4, 5}, Shape{6, 2, 5}, std::nullopt, std::nullopt},
      {"nearest-exact", {2, 3, 5, 6}, Shape{3, 9}, std::nullopt, std::nullopt},
      {"linear", {2, 3, 7}, Shape{12}, std::nullopt, false},
      {"linear", {2, 3, 9}, Shape{4}, std::nullopt, true},
      {"bilinear", {2, 3, 5, 6}, Shape{8, 3}, std::nullopt, false},
      {"bilinear", {2, 3, 4, 5}, std::nullopt, std::vector<double>{2.5, 0.7}, true},
      {"bicubic", {2, 3, 5, 6}, Shape{9, 4}, std::nullopt, false},
      {"bicubic", {2, 3, 5, 6}, Shape{9, 4}, std::nullopt, true},
      {"trilinear", {1, 2, 3, 4, 5}, Shape{5, 3, 8}, std::nullopt, false},
      {"trilinear", {1, 2, 3, 4, 5}, std::nullopt, std::vector<double>{1.5, 2, 0.5}, true},
      {"area", {2, 3, 10}, Shape{3}, std::nullopt, std::nullopt},
      {"area", {2, 3, 11}, Shape{2}, std::nullopt, std::nullopt},
      {"bilinear", {2, 3, 9, 6}, Shape{10, 11}, std::nullopt, false},
      {"area", {2, 3, 7, 9}, Shape{3, 4}, std::nullopt, std::nullopt},
      {"area", {1, 2, 6, 4, 5}, std::nullopt, std::vector<double>{0.5, 0.75, 1.4}, std::nullopt},
  };
  for (Dtype dt : {float32, float64})
    for (const Case& c : cases) {
      CAPTURE(dt);
      CAPTURE(c.mode);
      CAPTURE(c.xs);
      const auto f = [&](const V& a) { return F::interpolate(a[0], c.size, c.sf, c.mode, c.align); };
      const Tensor x = sample(c.xs, dt);
      agree(dev, c.mode, f, {x}, tol(dt));
      grads_agree(dev, c.mode, f, {x}, tol(dt));
    }
  for (const char* mode : {"bilinear", "bicubic"}) {  // antialiased
    const auto f = [&](const V& a) { return F::interpolate(a[0], Shape{4, 11}, std::nullopt, mode, std::nullopt, std::nullopt, true); };
    agree(dev, mode, f, {sample({2, 3, 10, 9}, float32)}, tol(float32));
    grads_agree(dev, mode, f, {sample({2, 3, 10, 9}, float64)}, tol(float64));
  }
  const auto bic = [](const V& a) { return F::interpolate(a[0], Shape{5, 3}, std::nullopt, "bicubic"); };
  grad2_agree(dev, "bicubic", bic, {sample({1, 2, 3, 4}, float64)}, 1e-10);
  // complex inputs (real weights on interleaved parts; made on the device from real and imaginary parts), and
  // rows of 8 or more elements after the resampled dim
  for (Dtype dt : {float32, float64})
    for (const char* mode : {"bilinear", "bicubic", "area"}) {
      CAPTURE(dt);
      const auto f = [&](const V& a) { return F::interpolate(a[0], Shape{7, 20}, std::nullopt, mode); };
      const auto fc = [&](const V& a) { return F::interpolate(complex(a[0], a[1]), Shape{7, 20}, std::nullopt, mode); };
      const Tensor x = sample({2, 3, 5, 12}, dt), y = sample({2, 3, 5, 12}, dt);
      agree(dev, mode, f, {x}, tol(dt));
      grads_agree(dev, mode, f, {x}, tol(dt));
      agree(dev, mode, fc, {x, y}, tol(dt));
      grads_agree(dev, mode, fc, {x, y}, tol(dt));
    }
  // nearest on an integer input (a gather)
  const auto near = [](const V& a) { return F::interpolate(a[0], Shape{6}); };
  agree(dev, "nearest int64", near, {sample({2, 3, 4}, int64)}, 0);
}

DEVICE_CASE("cuda sampling: pixel_shuffle, pixel_unshuffle and affine_grid agree with the CPU") {
  manual_seed(42);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const std::vector<std::pair<std::string, std::function<Tensor(const V&)>>> ops = {
        {"pixel_shuffle", [](const V& a) { return F::pixel_shuffle(a[0], 2); }},
        {"pixel_unshuffle", [](const V& a) { return F::pixel_unshuffle(a[0], 2); }},
    };
    const Tensor x = sample({2, 3, 8, 4, 6}, dt);
    for (const auto& [name, f] : ops) {
      agree(dev, name, f, {x}, tol(dt));
      grads_agree(dev, name, f, {x}, tol(dt));
    }
    for (bool align : {false, true}) {
      CAPTURE(align);
      const auto g2 = [&](const V& a) { return F::affine_grid(a[0], {2, 3, 5, 4}, align); };
      const auto g3 = [&](const V& a) { return F::affine_grid(a[0], {2, 1, 3, 5, 4}, align); };
      agree(dev, "affine_grid", g2, {sample({2, 2, 3}, dt)}, tol(dt));
      grads_agree(dev, "affine_grid", g2, {sample({2, 2, 3}, dt)}, tol(dt));
      agree(dev, "affine_grid 3-D", g3, {sample({2, 3, 4}, dt)}, tol(dt));
      grads_agree(dev, "affine_grid 3-D", g3, {sample({2, 3, 4}, dt)}, tol(dt));
    }
  }
}

DEVICE_CASE("cuda sampling: grid_sample agrees with the CPU in every mode and padding, gradients in x and grid") {
  manual_seed(43);
  for (Dtype dt : {float32, float64})
    for (bool align : {false, true})
      for (const char* pad : {"zeros", "border", "reflection"})
        for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
          CAPTURE(dt);
          CAPTURE(align);
          CAPTURE(pad);
          CAPTURE(mode);
          const auto f = [&](const V& a) { return F::grid_sample(a[0], a[1], mode, pad, align); };
          const Tensor x = sample({2, 3, 4, 5}, dt);
          const Tensor grid = (rand({2, 6, 7, 2}, float64) * 2.6 - 1.3).to(dt);
          agree(dev, mode, f, {x, grid}, tol(dt));
          if (std::string(mode) == "nearest") {
            const auto fx = [&](const V& a) { return F::grid_sample(a[0], on(a[0].device(), grid), mode, pad, align); };
            grads_agree(dev, mode, fx, {x}, tol(dt));
          } else {
            grads_agree(dev, mode, f, {x, grid}, dt == float32 ? 2e-4 : 1e-10);
          }
          if (std::string(mode) == "bilinear" && dt == float64)  // second derivatives (gather's is scatter_add's)
            grad2_agree(dev, mode, f, {x, grid}, 1e-10);
          if (std::string(mode) == "bicubic") continue;
          const Tensor x3 = sample({2, 2, 3, 4, 5}, dt);
          const Tensor g3 = (rand({2, 2, 3, 4, 3}, float64) * 2.6 - 1.3).to(dt);
          agree(dev, std::string(mode) + " 5-D", f, {x3, g3}, tol(dt));
          if (std::string(mode) == "bilinear") grads_agree(dev, "bilinear 5-D", f, {x3, g3}, dt == float32 ? 2e-4 : 1e-10);
        }
}

DEVICE_CASE("cuda sampling: the modules run on the device") {
  manual_seed(44);
  const Tensor x = sample({1, 8, 3, 4}, float32);
  nn::Upsample up(std::nullopt, std::vector<double>{2}, "bilinear");
  nn::UpsamplingNearest2d un(Shape{5, 7});
  nn::UpsamplingBilinear2d ub(std::nullopt, std::vector<double>{1.5});
  nn::PixelShuffle ps(2);
  nn::PixelUnshuffle pu(2);
  const std::vector<std::pair<std::string, nn::Module*>> mods = {
      {"Upsample", &up}, {"UpsamplingNearest2d", &un}, {"UpsamplingBilinear2d", &ub}, {"PixelShuffle", &ps}};
  for (const auto& [name, m] : mods) agree(dev, name, [m = m](const V& a) { return m->forward(a[0]); }, {x}, tol(float32));
  agree(dev, "PixelUnshuffle", [&](const V& a) { return pu(a[0]); }, {sample({1, 2, 4, 6}, float32)}, tol(float32));
  // on the device itself: the results are finite and of the CPU's largest magnitude
  const Tensor yd = up(x.to(dev)), yc = up(x);
  CHECK(!(yd.isnan() | yd.isinf()).any().item<bool>());
  CHECK(yd.abs().max().item<double>() == doctest::Approx(yc.abs().max().item<double>()).epsilon(1e-6));
  // gradcheck on the device, in x and in the grid; pixel coordinates x = -0.7, 1.3, 2.6, 3.8 and y = 0.3, 1.7, -0.3,
  // 2.3 (W = 4, H = 3): 0.2 or more from the integers and the reflection edges -0.5, W - 0.5, H - 0.5
  const Tensor xs = sample({1, 2, 3, 4}, float64).to(dev).requires_grad_();
  const Tensor gs = from_vector(std::vector<double>{-1.1, -0.4667, -0.1, 0.4667, 0.55, -0.8667, 1.15, 0.8667}, Shape{1, 2, 2, 2})
                        .to(dev)
                        .requires_grad_();
  CHECK(autodiff::gradcheck([](const V& a) { return F::grid_sample(a[0], a[1], "bilinear", "reflection"); }, {xs, gs}));
  // a tensor on the other device is refused by name
  if (dev != Device::cpu())
    CHECK_THROWS_WITH_AS(F::grid_sample(x.to(dev), zeros({1, 2, 2, 2})),
                         doctest::Contains("[grid_sample] expected grid on the input's device"), Error);
}
