// tests/test_cuda_attention.cpp - the attention ops of phasor/nn/attention.hpp on a device agree with the CPU:
// scaled_dot_product_attention (masks, causal, scale, grouped-query heads, broadcast batch dims, dropout),
// MultiheadAttention (masks, kdim/vdim, bias_kv, zero attention, weights; gradients of inputs and parameters),
// the encoder and decoder layers and stacks and Transformer, values and gradients. DEVICE_CASEs: on cuda:0 with a
// GPU, on the virtual CPU device everywhere.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <phasor/phasor.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;
namespace F = phasor::nn::functional;

namespace {

using V = std::vector<Tensor>;

double tol(Dtype dt) { return dt == float32 ? 2e-5 : 1e-12; }

/// A mask on the device of `like` (the CPU copy or the device copy).
Tensor pick(const Tensor& like, const Tensor& cpu, const Tensor& dev) { return like.device() == cpu.device() ? cpu : dev; }

}  // namespace

DEVICE_CASE("cuda attention: scaled_dot_product_attention values and gradients agree with the CPU") {
  manual_seed(21);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor q = sample({2, 4, 3, 5}, dt), k = sample({2, 4, 6, 5}, dt), v = sample({2, 4, 6, 3}, dt);
    const Tensor keep_c = logical_or(sample({3, 6}, float64) > -0.3, arange(0, 6).unsqueeze(0) == 0);
    const Tensor keep_d = keep_c.to(dev);
    const Tensor bias = sample({2, 1, 3, 6}, dt);
    agree(dev, "sdpa", [](const V& a) { return F::scaled_dot_product_attention(a[0], a[1], a[2]); }, {q, k, v}, tol(dt));
    grads_agree(dev, "sdpa", [](const V& a) { return F::scaled_dot_product_attention(a[0], a[1], a[2]); }, {q, k, v},
                tol(dt));
    const auto with_bool = [&](const V& a) {
      return F::scaled_dot_product_attention(a[0], a[1], a[2], pick(a[0], keep_c, keep_d));
    };
    agree(dev, "sdpa bool mask", with_bool, {q, k, v}, tol(dt));
    grads_agree(dev, "sdpa bool mask", with_bool, {q, k, v}, tol(dt));
    const auto with_float = [](const V& a) {
      return F::scaled_dot_product_attention(a[0], a[1], a[2], a[3], 0.0, false, 0.4);
    };
    agree(dev, "sdpa float mask", with_float, {q, k, v, bias}, tol(dt));
    grads_agree(dev, "sdpa float mask", with_float, {q, k, v, bias}, tol(dt));
    const auto causal = [](const V& a) { return F::scaled_dot_product_attention(a[0], a[1], a[2], Tensor(), 0.0, true); };
    agree(dev, "sdpa causal", causal, {q, k, v}, tol(dt));
    grads_agree(dev, "sdpa causal", causal, {q, k, v}, tol(dt));
    const Tensor kg = sample({2, 2, 6, 5}, dt), vg = sample({2, 1, 6, 3}, dt);
    const auto gqa = [](const V& a) {
      return F::scaled_dot_product_attention(a[0], a[1], a[2], Tensor(), 0.0, false, std::nullopt, true);
    };
    agree(dev, "sdpa gqa", gqa, {q, kg, vg}, tol(dt));
    grads_agree(dev, "sdpa gqa", gqa, {q, kg, vg}, tol(dt));
    const Tensor kb = sample({4, 6, 5}, dt), vb = sample({1, 6, 3}, dt);  // broadcast batch dims
    agree(dev, "sdpa broadcast", [](const V& a) { return F::scaled_dot_product_attention(a[0], a[1], a[2]); },
          {q, kb, vb}, tol(dt));
    grads_agree(dev, "sdpa broadcast", [](const V& a) { return F::scaled_dot_product_attention(a[0], a[1], a[2]); },
                {q, kb, vb}, tol(dt));
  }
  // second derivatives (float mask included)
  grad2_agree(dev, "sdpa second derivatives",
              [](const V& a) { return F::scaled_dot_product_attention(a[0], a[1], a[2], a[3]); },
              {sample({2, 3, 4}, float64), sample({2, 5, 4}, float64), sample({2, 5, 3}, float64), sample({3, 5}, float64)},
              1e-11);
  // dropout on the device: weights dropped or scaled by 1 / (1 - p); v = 1, q = k = 0 -> kept / (S (1 - p))
  const Tensor q0 = zeros({64, 1, 2}, float64, dev), k0 = zeros({64, 10, 2}, float64, dev);
  const Tensor v1 = ones({64, 10, 1}, float64, dev);
  const Tensor y = F::scaled_dot_product_attention(q0, k0, v1, Tensor(), 0.5);
  CHECK(y.device() == dev);
  const Tensor kept = (y * 5.0).to(Device::cpu());
  CHECK(rel_diff(kept, kept.round()) < 1e-12);
  CHECK(std::abs(y.mean().item<double>() - 1.0) < 0.15);
  // a mask made on the host CPU is refused with a device input
  if (dev != Device::cpu())
    CHECK_THROWS_AS(F::scaled_dot_product_attention(q0, k0, v1, ones({1, 10}, Dtype::Bool)), Error);
}

DEVICE_CASE("cuda attention: MultiheadAttention outputs, weights and gradients (inputs and parameters) agree") {
  manual_seed(22);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const std::int64_t E = 4, L = 3, N = 2, S = 5;
    auto m = std::make_shared<nn::MultiheadAttention>(
        nn::MultiheadAttentionOptions(E, 2).kdim(3).add_bias_kv(true).add_zero_attn(true).dtype(dt));
    const nn::MultiheadAttention& cm = *m;
    const V params{cm.q_proj_weight, cm.k_proj_weight, cm.v_proj_weight, cm.in_proj_bias, cm.bias_k, cm.bias_v,
                   cm.out_proj->weight, cm.out_proj->bias};
    const Tensor kpm_c = arange(0, S).unsqueeze(0).expand({N, S}) == 3, kpm_d = kpm_c.to(dev);
    const Tensor am_c = sample({L, S}, dt), am_d = am_c.to(dev);
    // in = {q, k, v, parameters...}: the module's members are swapped for the inputs
    const auto run = [m, kpm_c, kpm_d, am_c, am_d](const V& a, bool weights) {
      m->q_proj_weight = a[3], m->k_proj_weight = a[4], m->v_proj_weight = a[5], m->in_proj_bias = a[6];
      m->bias_k = a[7], m->bias_v = a[8], m->out_proj->weight = a[9], m->out_proj->bias = a[10];
      const auto r = m->forward(a[0], a[1], a[2], pick(a[0], kpm_c, kpm_d), weights, pick(a[0], am_c, am_d), false);
      return weights ? r.weights : r.output;
    };
    V in{sample({L, N, E}, dt), sample({S, N, 3}, dt), sample({S, N, E}, dt)};
    in.insert(in.end(), params.begin(), params.end());
    agree(dev, "multi_head_attention", [&](const V& a) { return run(a, false); }, in, tol(dt));
    agree(dev, "multi_head_attention weights", [&](const V& a) { return run(a, true); }, in, tol(dt));
    grads_agree(dev, "multi_head_attention", [&](const V& a) { return run(a, false); }, in, tol(dt));
    // a float key padding mask as an input too (padded for bias_k and the zero attention: its gradient)
    const auto run_fk = [m](const V& a) {
      m->q_proj_weight = a[3], m->k_proj_weight = a[4], m->v_proj_weight = a[5], m->in_proj_bias = a[6];
      m->bias_k = a[7], m->bias_v = a[8], m->out_proj->weight = a[9], m->out_proj->bias = a[10];
      return m->forward(a[0], a[1], a[2], a[11], false).output;
    };
    V in_fk = in;
    in_fk.push_back(sample({N, S}, dt));
    agree(dev, "multi_head_attention float key padding", run_fk, in_fk, tol(dt));
    grads_agree(dev, "multi_head_attention float key padding", run_fk, in_fk, tol(dt));
    // packed projection, self-attention, unbatched, batch_first, float key padding
    auto cpu = std::make_shared<nn::MultiheadAttention>(nn::MultiheadAttentionOptions(E, 2).batch_first(true).dtype(dt));
    auto on_dev = std::make_shared<nn::MultiheadAttention>(nn::MultiheadAttentionOptions(E, 2).batch_first(true).dtype(dt));
    on_dev->load_state_dict(cpu->state_dict());
    on_dev->to(dev);
    const auto self = [cpu, on_dev](const V& a) {
      auto& mod = a[0].device() == Device::cpu() ? *cpu : *on_dev;
      return mod.forward(a[0], a[0], a[0], a[1]).output + mod.forward(a[0]);
    };
    agree(dev, "multi_head_attention self", self, {sample({N, L, E}, dt), sample({N, L}, dt)}, tol(dt));
    grads_agree(dev, "multi_head_attention self", self, {sample({N, L, E}, dt), sample({N, L}, dt)}, tol(dt));
    if (dt == float64)  // second derivatives through the packed projection's chunks
      grad2_agree(dev, "multi_head_attention self second derivatives", self, {sample({N, L, E}, dt), sample({N, L}, dt)},
                  1e-10);
    const auto unbatched = [cpu, on_dev](const V& a) {
      auto& mod = a[0].device() == Device::cpu() ? *cpu : *on_dev;
      return mod.forward(a[0], a[1], a[1]).weights;
    };
    agree(dev, "multi_head_attention unbatched", unbatched, {sample({L, E}, dt), sample({S, E}, dt)}, tol(dt));
  }
}

DEVICE_CASE("cuda attention: encoder and decoder layers, stacks and Transformer agree with the CPU") {
  manual_seed(23);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    for (bool norm_first : {false, true}) {
      CAPTURE(norm_first);
      const auto lo = nn::TransformerLayerOptions(4, 2).dim_feedforward(6).norm_first(norm_first)
                          .activation(norm_first ? nn::Activation::gelu : nn::Activation::relu).dtype(dt);
      auto enc = std::make_shared<nn::TransformerEncoder>(lo, 2);
      auto enc_d = std::make_shared<nn::TransformerEncoder>(lo, 2);
      enc->eval();
      enc_d->eval();
      enc_d->load_state_dict(enc->state_dict());
      enc_d->to(dev);
      const Tensor mask_c = nn::Transformer::generate_square_subsequent_mask(3, dt);
      const Tensor mask_d = nn::Transformer::generate_square_subsequent_mask(3, dt, dev);
      CHECK(rel_diff(mask_d, mask_c) == 0);
      const auto fe = [enc, enc_d, mask_c, mask_d](const V& a) {
        auto& mod = a[0].device() == Device::cpu() ? *enc : *enc_d;
        return mod.forward(a[0], pick(a[0], mask_c, mask_d), a[1], true);
      };
      const V ein{sample({3, 2, 4}, dt), sample({2, 3}, dt)};
      agree(dev, "transformer_encoder_layer", fe, ein, tol(dt) * 10);
      grads_agree(dev, "transformer_encoder_layer", fe, ein, tol(dt) * 10);

      auto dec = std::make_shared<nn::TransformerDecoder>(lo, 1);
      auto dec_d = std::make_shared<nn::TransformerDecoder>(lo, 1);
      dec->eval();
      dec_d->eval();
      dec_d->load_state_dict(dec->state_dict());
      dec_d->to(dev);
      const auto fd = [dec, dec_d, mask_c, mask_d](const V& a) {
        auto& mod = a[0].device() == Device::cpu() ? *dec : *dec_d;
        return mod.forward(a[0], a[1], pick(a[0], mask_c, mask_d), Tensor(), Tensor(), a[2]);
      };
      const V din{sample({3, 2, 4}, dt), sample({5, 2, 4}, dt), sample({2, 5}, dt)};
      agree(dev, "transformer_decoder_layer", fd, din, tol(dt) * 10);
      grads_agree(dev, "transformer_decoder_layer", fd, din, tol(dt) * 10);
    }
    auto tr = std::make_shared<nn::Transformer>(nn::TransformerOptions().d_model(4).nhead(2).num_encoder_layers(1)
                                                    .num_decoder_layers(1).dim_feedforward(6).batch_first(true).dtype(dt));
    auto tr_d = std::make_shared<nn::Transformer>(nn::TransformerOptions().d_model(4).nhead(2).num_encoder_layers(1)
                                                      .num_decoder_layers(1).dim_feedforward(6).batch_first(true).dtype(dt));
    tr->eval();
    tr_d->eval();
    tr_d->load_state_dict(tr->state_dict());
    tr_d->to(dev);
    const auto ft = [tr, tr_d](const V& a) { return (a[0].device() == Device::cpu() ? *tr : *tr_d).forward(a[0], a[1]); };
    agree(dev, "transformer", ft, {sample({2, 5, 4}, dt), sample({2, 3, 4}, dt)}, tol(dt) * 10);
    grads_agree(dev, "transformer", ft, {sample({2, 5, 4}, dt), sample({2, 3, 4}, dt)}, tol(dt) * 10);
  }
}

// The helper ops these tests use on the host to build masks and compare (tests/main.cpp's coverage counts every op
// the files run): the same ops on masks and attention outputs on the device.
DEVICE_CASE("cuda attention: mask building and comparison ops on attention outputs agree with the CPU") {
  manual_seed(24);
  const Tensor q = sample({2, 3, 4}, float64), k = sample({2, 5, 4}, float64), v = sample({2, 5, 3}, float64);
  const auto sdpa = [](const V& a) { return F::scaled_dot_product_attention(a[0], a[1], a[2]); };
  const std::vector<std::pair<std::string, std::function<Tensor(const V&)>>> ops = {
      {"abs+max", [&](const V& a) { return sdpa(a).abs().max(); }},
      {"neg+round", [&](const V& a) { return (-sdpa(a) * 4.0).round(); }},
      {"select", [&](const V& a) { return sdpa(a).select(1, 2); }},
      {"isnan+all", [&](const V& a) { return sdpa(a).isnan().logical_not().all(); }},
      {"masks", [](const V& a) {
         const Tensor near = logical_and(a[0] > 0.0, a[1].select(1, 0).unsqueeze(1) < 1.0);
         const Tensor keep = logical_or(near, a[0] == a[0].select(0, 0));
         return keep;
       }},
      {"add_+copy_", [&](const V& a) {
         Tensor y = sdpa(a).detach().clone();
         y.add_(a[0].select(2, 0).unsqueeze(-1).detach());
         Tensor z = zeros_like(y);
         z.copy_(y);
         return z;
       }},
  };
  for (const auto& [name, f] : ops) agree(dev, name, f, {q, k, v}, 1e-12);
  // differentiated: abs, max, sub and a dtype conversion on the device
  const auto g = [&](const V& a) { return (sdpa(a).abs().max() - sdpa(a).to(float32).to(float64).sum()) * 1.0; };
  grads_agree(dev, "abs+max+sub+to", g, {q, k, v}, 1e-6);
}
