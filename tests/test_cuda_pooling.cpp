// CPU-vs-device agreement of pooling, max unpooling and transposed convolutions (forward, gradients, second
// derivatives) and of their modules. DEVICE_CASEs: on cuda:0 with a GPU, on the virtual CPU device cpu:1 everywhere.
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <functional>
#include <phasor/phasor.hpp>
#include <string>
#include <utility>
#include <vector>

using namespace phasor;
using namespace cuda_test;
namespace F = phasor::nn::functional;

namespace {

using V = std::vector<Tensor>;
using Op = std::pair<std::string, std::function<Tensor(const V&)>>;

double tol(Dtype dt) { return dt == float32 ? 2e-6 : 1e-13; }

}  // namespace

DEVICE_CASE("cuda pooling: every pooling and its gradients agree with the CPU") {
  manual_seed(41);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor x1 = sample({2, 3, 11}, dt), x2 = sample({2, 3, 9, 8}, dt), x3 = sample({2, 2, 5, 6, 7}, dt);
    const std::vector<std::pair<Op, Tensor>> ops = {
        {{"max_pool1d", [](const V& a) { return F::max_pool1d(a[0], 3, 2, 1, 2, true); }}, x1},
        {{"max_pool2d", [](const V& a) { return F::max_pool2d(a[0], {3, 2}, {2, 1}, {1, 0}, 1, true); }}, x2},
        {{"max_pool3d", [](const V& a) { return F::max_pool3d(a[0], 2, 1, 1); }}, x3},
        {{"max_pool2d unbatched", [](const V& a) { return F::max_pool2d(a[0].select(0, 0), 2); }}, x2},
        {{"avg_pool1d", [](const V& a) { return F::avg_pool1d(a[0], 4, 3, 2, true, false); }}, x1},
        {{"avg_pool2d", [](const V& a) { return F::avg_pool2d(a[0], 3, 2, 1, true, true); }}, x2},
        {{"avg_pool2d divisor", [](const V& a) { return F::avg_pool2d(a[0], 2, 1, 1, false, true, 3); }}, x2},
        {{"avg_pool3d", [](const V& a) { return F::avg_pool3d(a[0], {2, 3, 2}, 2, 1, false, false); }}, x3},
        {{"adaptive_avg_pool1d", [](const V& a) { return F::adaptive_avg_pool1d(a[0], 4); }}, x1},
        {{"adaptive_avg_pool2d", [](const V& a) { return F::adaptive_avg_pool2d(a[0], {4, 5}); }}, x2},
        {{"adaptive_avg_pool3d", [](const V& a) { return F::adaptive_avg_pool3d(a[0], {2, -1, 3}); }}, x3},
        {{"adaptive_max_pool1d", [](const V& a) { return F::adaptive_max_pool1d(a[0], 5); }}, x1},
        {{"adaptive_max_pool2d", [](const V& a) { return F::adaptive_max_pool2d(a[0], 3); }}, x2},
        {{"adaptive_max_pool3d", [](const V& a) { return F::adaptive_max_pool3d(a[0], {3, 2, 4}); }}, x3},
        {{"lp_pool1d", [](const V& a) { return F::lp_pool1d(a[0].abs() + 0.5, 2.0, 3); }}, x1},
        {{"lp_pool2d", [](const V& a) { return F::lp_pool2d(a[0].abs() + 0.5, 3.0, 2); }}, x2},
        {{"lp_pool3d", [](const V& a) { return F::lp_pool3d(a[0].abs() + 0.5, 1.0, 2, 1); }}, x3},
    };
    for (const auto& [op, x] : ops) {
      agree(dev, op.first, op.second, {x}, tol(dt));
      grads_agree(dev, op.first, op.second, {x}, tol(dt) * 10);
    }
    // the indices
    for (const auto& [name, f] : std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>>{
             {"max_pool1d idx", [](const Tensor& t) { return std::get<1>(F::max_pool1d_with_indices(t, 3, 2, 1)); }},
             {"max_pool2d idx", [](const Tensor& t) { return std::get<1>(F::max_pool2d_with_indices(t, 2)); }},
             {"max_pool3d idx", [](const Tensor& t) { return std::get<1>(F::max_pool3d_with_indices(t, 2, 1, 1, 1, true)); }},
             {"adaptive_max_pool1d idx", [](const Tensor& t) { return std::get<1>(F::adaptive_max_pool1d_with_indices(t, 4)); }},
             {"adaptive_max_pool2d idx", [](const Tensor& t) { return std::get<1>(F::adaptive_max_pool2d_with_indices(t, 4)); }},
             {"adaptive_max_pool3d idx", [](const Tensor& t) { return std::get<1>(F::adaptive_max_pool3d_with_indices(t, 2)); }}}) {
      CAPTURE(name);
      const Tensor x = name[name.find("pool") + 4] == '1' ? x1 : name[name.find("pool") + 4] == '2' ? x2 : x3;
      const Tensor c = f(x), g = f(x.to(dev));
      CHECK(g.device() == dev);
      CHECK(to_vector<std::int64_t>(g.to(Device::cpu())) == to_vector<std::int64_t>(c));
    }
  }
}

DEVICE_CASE("cuda pooling: max unpooling and second derivatives agree with the CPU") {
  manual_seed(42);
  const Tensor x1 = sample({2, 3, 8}, float64), x2 = sample({2, 3, 6, 6}, float64), x3 = sample({1, 2, 4, 4, 4}, float64);
  const Tensor i1 = std::get<1>(F::max_pool1d_with_indices(x1, 2)), i2 = std::get<1>(F::max_pool2d_with_indices(x2, 2)),
               i3 = std::get<1>(F::max_pool3d_with_indices(x3, 2));
  const Tensor y1 = sample(i1.shape(), float64), y2 = sample(i2.shape(), float64), y3 = sample(i3.shape(), float64);
  const std::vector<std::pair<Op, V>> ops = {
      {{"max_unpool1d", [](const V& a) { return F::max_unpool1d(a[0], a[1], 2, {}, 0, Shape{9}); }}, {y1, i1}},
      {{"max_unpool2d", [](const V& a) { return F::max_unpool2d(a[0], a[1], 2); }}, {y2, i2}},
      {{"max_unpool3d", [](const V& a) { return F::max_unpool3d(a[0], a[1], 2); }}, {y3, i3}},
  };
  for (const auto& [op, in] : ops) {
    agree(dev, op.first, op.second, in, 1e-15);
    CAPTURE(op.first);
    const Tensor yc = in[0].detach().requires_grad_(), yg = in[0].to(dev).requires_grad_();
    sum_sq(op.second({yc, in[1]})).backward();
    sum_sq(op.second({yg, in[1].to(dev)})).backward();
    gradients_match(dev, {yg.grad()}, {yc.grad()}, 1e-15);
  }
  grad2_agree(dev, "avg_pool2d", [](const V& a) { return F::avg_pool2d(a[0], 3, 2, 1, true, false); }, {x2}, 1e-12);
  grad2_agree(dev, "max_pool2d", [](const V& a) { return F::max_pool2d(a[0], 2); }, {x2}, 1e-12);
  grad2_agree(dev, "adaptive_avg_pool3d", [](const V& a) { return F::adaptive_avg_pool3d(a[0], 3); }, {x3}, 1e-12);
}

DEVICE_CASE("cuda pooling: transposed convolutions and their gradients agree with the CPU") {
  manual_seed(43);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const std::vector<std::pair<Op, V>> ops = {
        {{"conv_transpose1d", [](const V& a) { return F::conv_transpose1d(a[0], a[1], a[2], 3, 1, 2, 1, 2); }},
         {sample({2, 3, 6}, dt), sample({3, 2, 3}, dt), sample({2}, dt)}},
        {{"conv_transpose2d", [](const V& a) { return F::conv_transpose2d(a[0], a[1], a[2], 2, 1, 1, 2); }},
         {sample({2, 4, 5, 4}, dt), sample({4, 3, 3, 3}, dt), sample({6}, dt)}},
        {{"conv_transpose2d dilated", [](const V& a) { return F::conv_transpose2d(a[0], a[1], Tensor(), 1, 0, 1, 1, 2); }},
         {sample({1, 2, 4, 4}, dt), sample({2, 3, 2, 2}, dt)}},
        {{"conv_transpose3d", [](const V& a) { return F::conv_transpose3d(a[0], a[1], a[2], 2); }},
         {sample({1, 2, 3, 3, 3}, dt), sample({2, 2, 2, 2, 2}, dt), sample({2}, dt)}},
    };
    for (const auto& [op, in] : ops) {
      agree(dev, op.first, op.second, in, tol(dt) * 10);
      grads_agree(dev, op.first, op.second, in, tol(dt) * 10);
    }
  }
  grad2_agree(dev, "conv_transpose2d", [](const V& a) { return F::conv_transpose2d(a[0], a[1], a[2], 2, 1, 1); },
              {sample({1, 2, 3, 3}, float64), sample({2, 3, 3, 3}, float64), sample({3}, float64)}, 1e-12);
}

DEVICE_CASE("cuda pooling: the modules run on the device") {
  manual_seed(44);
  const Tensor x2 = sample({2, 4, 8, 8}, float32), x1 = sample({2, 4, 9}, float32), x3 = sample({1, 4, 4, 4, 4}, float32);
  std::vector<std::pair<std::shared_ptr<nn::Module>, Tensor>> mods = {
      {std::make_shared<nn::MaxPool1d>(2), x1},          {std::make_shared<nn::MaxPool2d>(3, 2, 1), x2},
      {std::make_shared<nn::MaxPool3d>(2), x3},          {std::make_shared<nn::AvgPool1d>(3), x1},
      {std::make_shared<nn::AvgPool2d>(2), x2},          {std::make_shared<nn::AvgPool3d>(2), x3},
      {std::make_shared<nn::AdaptiveAvgPool1d>(4), x1},  {std::make_shared<nn::AdaptiveAvgPool2d>(3), x2},
      {std::make_shared<nn::AdaptiveAvgPool3d>(3), x3},  {std::make_shared<nn::AdaptiveMaxPool1d>(4), x1},
      {std::make_shared<nn::AdaptiveMaxPool2d>(3), x2},  {std::make_shared<nn::AdaptiveMaxPool3d>(3), x3},
      {std::make_shared<nn::LPPool1d>(2.0, 3), x1.abs()}, {std::make_shared<nn::LPPool2d>(2.0, 2), x2.abs()},
      {std::make_shared<nn::LPPool3d>(2.0, 2), x3.abs()},
      {std::make_shared<nn::ConvTranspose1d>(4, 2, 3), x1}, {std::make_shared<nn::ConvTranspose2d>(4, 2, 3), x2},
      {std::make_shared<nn::ConvTranspose3d>(4, 2, 2), x3},
  };
  for (auto& [m, x] : mods) {
    CAPTURE(m->name());
    const Tensor c = m->forward(x);
    m->to(dev);
    const Tensor g = m->forward(x.to(dev));
    CHECK(g.device() == dev);
    CHECK(rel_diff(g, c) <= 1e-5);
  }
  nn::MaxPool2d mp(2);
  nn::MaxUnpool2d mu(2);
  nn::MaxUnpool1d mu1(2);
  nn::MaxUnpool3d mu3(2);
  auto [y, i] = mp.forward_with_indices(x2.to(dev));
  CHECK(rel_diff(mu.forward(y, i), F::max_unpool2d(y.to(Device::cpu()), i.to(Device::cpu()), 2)) <= 0);
  auto [y1, i1] = F::max_pool1d_with_indices(x1.to(dev), 2);
  CHECK(rel_diff(mu1.forward(y1, i1, Shape{9}), F::max_unpool1d(y1.to(Device::cpu()), i1.to(Device::cpu()), 2, {}, 0, Shape{9})) <= 0);
  auto [y3, i3] = F::max_pool3d_with_indices(x3.to(dev), 2);
  CHECK(rel_diff(mu3.forward(y3, i3), F::max_unpool3d(y3.to(Device::cpu()), i3.to(Device::cpu()), 2)) <= 0);
  nn::ConvTranspose2d ct(nn::ConvTranspose2dOptions(4, 2, 3).stride(2));
  const Tensor c = ct.forward(x2, Shape{18, 18});
  ct.to(dev);
  CHECK(rel_diff(ct.forward(x2.to(dev), Shape{18, 18}), c) <= 1e-5);
}
