// examples/common/train.hpp - the epoch loop the FNO examples share: one optimizer step per batch,
// a scheduler step and a test error per epoch, progress on a bar (or a line every few epochs when
// the output is not a terminal), and the loss curves for the figures.
#pragma once
#include <phasor/phasor.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace train {

/// What fit() shows and how it averages the training loss.
struct Options {
  int epochs = 1;
  int print_every = 10;              ///< epochs between printed lines when the bar is not live
  const char* train_label = "train";  ///< names of the two curves in the progress output
  const char* test_label = "test";
  bool loss_is_sum = false;  ///< batch_loss sums over the batch (else it is the batch mean)
};

/// Per-epoch curves: mean training loss per sample and test error, and the wall time of the loop.
struct History {
  std::vector<double> epoch, train, test;
  double seconds = 0;
};

/// Trains `model` for o.epochs epochs: per batch zero_grad, batch_loss(batch), backward, step; per
/// epoch sched.step() and test_error() (model in eval mode, no gradients recorded). After the first
/// epoch it prints the expected total time to stderr.
template <class Loader, class LossFn, class TestFn>
History fit(phasor::nn::Module& model, Loader& loader, phasor::optim::Optimizer& opt,
            phasor::optim::LRScheduler& sched, const Options& o, LossFn batch_loss, TestFn test_error) {
  History h;
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  phasor::ProgressBar bar(o.epochs, "training");
  for (int ep = 1; ep <= o.epochs; ++ep) {
    model.train();
    double total = 0;
    std::int64_t seen = 0;
    for (auto& b : loader) {
      opt.zero_grad();
      phasor::Tensor loss = batch_loss(b);
      loss.backward();
      opt.step();
      const std::int64_t n = b[0].size(0);
      total += loss.template item<double>() * (o.loss_is_sum ? 1.0 : static_cast<double>(n));
      seen += n;
    }
    sched.step();
    double test_err;
    {
      phasor::NoGradGuard ng;
      model.eval();
      test_err = test_error();
    }
    h.epoch.push_back(ep), h.train.push_back(total / static_cast<double>(seen)), h.test.push_back(test_err);
    char post[96];
    std::snprintf(post, sizeof post, "%s %.3e  %s %.3e", o.train_label, h.train.back(), o.test_label, test_err);
    bar.set_postfix(post);
    bar.update(1);
    if (ep == 1 && o.epochs > 1) {
      const double t1 = seconds();
      std::fprintf(stderr, "\nepoch 1 took %.1f s: about %.0f s (%.1f h) for %d epochs\n", t1, t1 * o.epochs,
                   t1 * o.epochs / 3600.0, o.epochs);
    }
    if (bar.mode() != phasor::ProgressBar::Mode::live && (ep % o.print_every == 0 || ep == 1 || ep == o.epochs))
      std::printf("epoch %3d  %s rel-L2 %.4e  %s rel-L2 %.4e\n", ep, o.train_label, h.train.back(), o.test_label,
                  test_err);
  }
  bar.close();
  h.seconds = seconds();
  return h;
}

}  // namespace train
