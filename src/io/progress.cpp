// src/io/progress.cpp - ProgressBar: line formatting, rate/ETA, throttled redraws on a terminal.
#include "phasor/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

namespace phasor {

namespace {
double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Three significant digits, as tqdm prints rates.
std::string sig3(double v) {
  if (v >= 99.95) return fmt("%.0f", v);
  if (v >= 9.995) return fmt("%.1f", v);
  return fmt("%.2f", v);
}

int terminal_width(std::FILE* f) {
  winsize ws{};
  if (f && ::ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}
}  // namespace

ProgressBar::ProgressBar(std::int64_t total, std::string description, Mode mode, std::FILE* stream)
    : total_(total), description_(std::move(description)), mode_(mode), stream_(stream), clock_(steady_seconds) {
  if (!stream_) mode_ = Mode::silent;
  if (mode_ == Mode::automatic) mode_ = ::isatty(fileno(stream_)) ? Mode::live : Mode::summary;
  start_ = clock_();
}

ProgressBar::~ProgressBar() {
  try {
    close();
  } catch (...) {
  }
}

void ProgressBar::set_clock(std::function<double()> clock) {
  clock_ = clock ? std::move(clock) : std::function<double()>(steady_seconds);
  start_ = clock_();
  last_draw_ = -1e300;
}

void ProgressBar::update(std::int64_t n) {
  count_ += n;
  if (mode_ != Mode::live || closed_) return;
  const double now = clock_();
  if (now - last_draw_ >= 0.1 || (total_ > 0 && count_ >= total_)) {
    last_draw_ = now;
    draw(false);
  }
}

void ProgressBar::set_postfix(std::string postfix) { postfix_ = std::move(postfix); }
void ProgressBar::set_postfix(const std::string& name, double value) { postfix_ = name + "=" + fmt("%.4g", value); }
void ProgressBar::set_description(std::string description) { description_ = std::move(description); }

void ProgressBar::close() {
  if (closed_) return;
  closed_ = true;
  if (mode_ == Mode::live || mode_ == Mode::summary) draw(true);
}

void ProgressBar::draw(bool final_line) {
  const int width = mode_ == Mode::live ? terminal_width(stream_) : 1 << 20;
  std::string line = format(count_, total_, clock_() - start_, description_, postfix_, mode_ == Mode::live ? width - 1 : 80);
  if (mode_ == Mode::live) {
    std::string out = "\r" + line;
    if (line.size() < last_len_) out.append(last_len_ - line.size(), ' ');
    last_len_ = line.size();
    if (final_line) out += "\n";
    std::fputs(out.c_str(), stream_);
  } else {
    line += "\n";
    std::fputs(line.c_str(), stream_);
  }
  std::fflush(stream_);
}

std::string ProgressBar::format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(seconds);
  const long long h = s / 3600, m = (s / 60) % 60, sec = s % 60;
  char buf[48];
  if (h > 0) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", h, m, sec);
  else std::snprintf(buf, sizeof buf, "%02lld:%02lld", m, sec);
  return buf;
}

std::string ProgressBar::format_rate(double r) {
  if (!std::isfinite(r) || r <= 0) return "?it/s";
  if (r >= 1) return sig3(r) + "it/s";
  return sig3(1.0 / r) + "s/it";
}

std::string ProgressBar::format(std::int64_t count, std::int64_t total, double elapsed, const std::string& description,
                                const std::string& postfix, int width) {
  const double rate = (elapsed > 0 && count > 0) ? static_cast<double>(count) / elapsed : 0.0;
  const std::string desc = description.empty() ? std::string() : description + ": ";
  std::string stats = " [";
  stats += format_duration(elapsed);
  if (total > 0) {
    stats += '<';
    stats += rate > 0 ? format_duration(static_cast<double>(total - count) / rate) : std::string("?");
  }
  stats += ", ";
  stats += format_rate(rate);
  if (!postfix.empty()) {
    stats += ", ";
    stats += postfix;
  }
  stats += ']';
  if (total <= 0) return desc + std::to_string(count) + "it" + stats;
  const double frac = std::min(1.0, std::max(0.0, static_cast<double>(count) / static_cast<double>(total)));
  const std::string left = desc + fmt("%3.0f", std::floor(frac * 100)) + "%";
  std::string right = " ";
  right += std::to_string(count);
  right += '/';
  right += std::to_string(total);
  right += stats;
  const int bar = width - static_cast<int>(left.size() + right.size()) - 2;
  if (bar < 5) return left + right;
  const int filled = static_cast<int>(std::floor(frac * bar));
  return left + "|" + std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(bar - filled), ' ') + "|" + right;
}

}  // namespace phasor
