// tests/test_progress.cpp - ProgressBar formatting with injected times, throttling, modes.
#include <doctest/doctest.h>
#include <phasor/phasor.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

using namespace phasor;

namespace {
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}
std::size_t count_of(const std::string& s, char c) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), c)); }
}  // namespace

TEST_CASE("ProgressBar duration and rate formatting") {
  CHECK(ProgressBar::format_duration(0) == "00:00");
  CHECK(ProgressBar::format_duration(59.99) == "00:59");
  CHECK(ProgressBar::format_duration(61) == "01:01");
  CHECK(ProgressBar::format_duration(3599) == "59:59");
  CHECK(ProgressBar::format_duration(3600) == "1:00:00");
  CHECK(ProgressBar::format_duration(3725) == "1:02:05");
  CHECK(ProgressBar::format_duration(100 * 3600 + 1) == "100:00:01");
  CHECK(ProgressBar::format_duration(-1) == "?");
  CHECK(ProgressBar::format_duration(1.0 / 0.0) == "?");
  CHECK(ProgressBar::format_rate(12.345) == "12.3it/s");
  CHECK(ProgressBar::format_rate(150.4) == "150it/s");
  CHECK(ProgressBar::format_rate(12345.6) == "12346it/s");
  CHECK(ProgressBar::format_rate(3.75) == "3.75it/s");
  CHECK(ProgressBar::format_rate(1.0) == "1.00it/s");
  CHECK(ProgressBar::format_rate(0.5) == "2.00s/it");
  CHECK(ProgressBar::format_rate(0.01) == "100s/it");
  CHECK(ProgressBar::format_rate(0) == "?it/s");
}

TEST_CASE("ProgressBar line layout") {
  // 45 of 100 after 12 s: 3.75 it/s, 55 left -> 14.67 s -> "00:14"
  const std::string line = ProgressBar::format(45, 100, 12.0, "train", "loss=0.1", 80);
  const std::string left = "train:  45%|", right = "| 45/100 [00:12<00:14, 3.75it/s, loss=0.1]";
  CHECK(line.size() == 80);
  CHECK(line.compare(0, left.size(), left) == 0);
  CHECK(line.compare(line.size() - right.size(), right.size(), right) == 0);
  const std::size_t bar = 80 - left.size() - right.size();
  CHECK(count_of(line, '#') == static_cast<std::size_t>(0.45 * static_cast<double>(bar)));
  CHECK(ProgressBar::format(0, 10, 0.0, "", "", 60) == "  0%|" + std::string(32, ' ') + "| 0/10 [00:00<?, ?it/s]");
  CHECK(ProgressBar::format(10, 10, 5.0, "", "", 50) == "100%|" + std::string(14, '#') + "| 10/10 [00:05<00:00, 2.00it/s]");
  // unknown total: count and rate only; too narrow: no bar
  CHECK(ProgressBar::format(7, 0, 2.0, "eval", "", 80) == "eval: 7it [00:02, 3.50it/s]");
  CHECK(ProgressBar::format(1, 4, 1.0, "", "", 10) == " 25% 1/4 [00:01<00:03, 1.00it/s]");
}

TEST_CASE("ProgressBar live mode redraws at most ~10x per second") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  double now = 100.0;
  {
    ProgressBar bar(200, "fit", ProgressBar::Mode::live, f);
    bar.set_clock([&] { return now; });
    for (int i = 0; i < 200; ++i) {
      now += 0.015625;  // exact in binary: 3.125 s in total
      bar.update();
      if (i == 100) bar.set_postfix("loss", 0.012345678);
      if (i == 150) bar.set_postfix("loss=0.5");
    }
    CHECK(bar.count() == 200);
  }  // destructor closes
  const std::string out = contents(f);
  std::fclose(f);
  const std::size_t draws = count_of(out, '\r');
  CHECK(draws >= 25);
  CHECK(draws <= 34);  // 3.125 s at <= 10 redraws/s, plus the final ones
  CHECK(count_of(out, '\n') == 1);
  CHECK(out.back() == '\n');
  CHECK(out.find("200/200 [00:03<00:00, 64.0it/s, loss=0.5]") != std::string::npos);
  CHECK(out.find(", loss=0.01235]") != std::string::npos);
}

TEST_CASE("ProgressBar summary and silent modes; automatic is summary when not a terminal") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  double now = 0;
  {
    ProgressBar bar(3, "epoch", ProgressBar::Mode::automatic, f);  // a file is not a TTY
    CHECK(bar.mode() == ProgressBar::Mode::summary);
    bar.set_clock([&] { return now; });
    for (int i = 0; i < 3; ++i) {
      now += 1;
      bar.update();
    }
    CHECK(contents(f).empty());  // nothing per update
    bar.close();
    bar.close();  // idempotent
  }
  const std::string out = contents(f);
  CHECK(count_of(out, '\n') == 1);
  CHECK(count_of(out, '\r') == 0);
  CHECK(out.find("epoch: 100%|") == 0);
  CHECK(out.find("3/3 [00:03<00:00, 1.00it/s]") != std::string::npos);
  std::fclose(f);
  std::FILE* g = std::tmpfile();
  {
    ProgressBar quiet(10, "x", ProgressBar::Mode::silent, g);
    quiet.update(10);
  }
  CHECK(contents(g).empty());
  std::fclose(g);
}
