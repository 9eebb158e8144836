// phasor/progress.hpp - a small text progress bar for training loops.
//
// Live mode redraws one line ("desc: 45%|#####     | 45/100 [00:12<00:15, 3.61it/s, loss=0.12]")
// with '\r', at most about 10 times a second, and ends it with a newline on close(). Summary mode
// prints nothing per update and one final line on close(). Silent mode prints nothing. By default
// the bar is live when the stream is a terminal and summary-only otherwise (logs stay clean).
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace phasor {

/// Progress reporting for a loop of `total` steps (total <= 0: unknown, no percentage or ETA).
class ProgressBar {
 public:
  /// How the bar prints.
  enum class Mode {
    automatic,  ///< live on a terminal, summary otherwise
    live,       ///< redraw the line in place (even when not a terminal)
    summary,    ///< only a final line on close()
    silent      ///< nothing
  };
  /// A bar over `total` steps writing to `stream` (stderr by default).
  explicit ProgressBar(std::int64_t total, std::string description = "", Mode mode = Mode::automatic,
                       std::FILE* stream = stderr);
  /// Closes the bar (see close()).
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;             ///< not copyable
  ProgressBar& operator=(const ProgressBar&) = delete;  ///< not copyable

  /// Advances by `n` steps (redraws when due).
  void update(std::int64_t n = 1);
  /// Text shown after the rate, e.g. "loss=0.0123".
  void set_postfix(std::string postfix);
  /// Shows "name=value" (4 significant digits) after the rate, e.g. set_postfix("loss", 0.01234).
  void set_postfix(const std::string& name, double value);
  /// Text shown before the percentage.
  void set_description(std::string description);
  /// Draws the final state and ends the line (summary mode: prints the one summary line); idempotent.
  void close();
  /// Steps done so far.
  std::int64_t count() const { return count_; }
  /// The resolved mode (automatic resolved to live or summary).
  Mode mode() const { return mode_; }
  /// Replaces the clock (seconds, monotonic) used for rate, elapsed and ETA; for tests.
  void set_clock(std::function<double()> clock);

  /// The bar's line for the given state (no '\r' or newline); `width` is the terminal width.
  static std::string format(std::int64_t count, std::int64_t total, double elapsed_seconds,
                            const std::string& description, const std::string& postfix, int width = 80);
  /// Duration as "MM:SS", or "H:MM:SS" from one hour; "?" for negative or non-finite values.
  static std::string format_duration(double seconds);
  /// Rate as "12.3it/s" (or "4.56s/it" below 1 step per second); "?it/s" when unknown.
  static std::string format_rate(double steps_per_second);

 private:
  void draw(bool final_line);
  std::int64_t total_, count_ = 0;
  std::string description_, postfix_;
  Mode mode_;
  std::FILE* stream_;
  std::function<double()> clock_;
  double start_ = 0, last_draw_ = -1e300;
  std::size_t last_len_ = 0;
  bool closed_ = false;
};

}  // namespace phasor
