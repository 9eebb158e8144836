#include <doctest/doctest.h>
#include <phasor/phasor.hpp>
using namespace phasor;
TEST_CASE("smoke") {
  Tensor x = from_vector(std::vector<double>{1, 2, 3, 4}, Shape{2, 2}).requires_grad_();
  Tensor y = (x * x.sin() + 2.0).sum();
  y.backward();
  auto g = to_vector<double>(x.grad());
  CHECK(g[0] == doctest::Approx(std::sin(1.0) + std::cos(1.0)));
  CHECK(g[3] == doctest::Approx(std::sin(4.0) + 4 * std::cos(4.0)));
}
TEST_CASE("gradcheck smoke") {
  manual_seed(0);
  Tensor x = randn({3}, float64).requires_grad_();
  Tensor y = randn({2, 3}, float64).requires_grad_();
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return (in[0] * in[1].tanh()).exp().sum({0}); }, {x, y}));
  CHECK(autodiff::gradgradcheck([](const std::vector<Tensor>& in) { return (in[0] * in[1].sin()) / in[1].cos(); }, {x, y}));
  Tensor z = randn({2, 2}, complex128).requires_grad_();
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return (in[0] * in[0].conj().exp()).sin() / (in[0] + 3.0); }, {z}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return (in[0].real() * in[0].imag()).sum({1}); }, {z}));
  CHECK(autodiff::gradgradcheck([](const std::vector<Tensor>& in) { return in[0].index({Slice(), 1}) * in[0].t().tanh(); }, {z}));
}
