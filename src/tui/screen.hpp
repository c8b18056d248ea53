#pragma once
// The terminal for `top` (ncurses): draws lines the render layer made, reads keys, and gives the
// terminal back as it found it, on exit and on SIGINT/SIGTERM/SIGHUP.
//
// Built as its own library (dltune_tui) so that ncursesw's compile flags (-D_XOPEN_SOURCE=600,
// which change what system headers declare) reach only this file. It knows nothing of dltune's
// types beyond a line.
#include <memory>
#include <string>
#include <vector>

namespace dltune::tui {

// Matches monitor::Style's order (kept independent so that this library needs no other).
enum class Paint { kNormal, kTitle, kHeader, kMain, kWorker, kWarn, kSelected };
// Matches monitor::Tint's order: what a part of a line means, coloured by it.
enum class Ink { kUser, kSystem, kIowait, kSteal, kUsed, kCache, kSwap, kGood, kFair, kBad };

struct InkSpan {
  int start = 0;  // byte offset in the text
  int length = 0;
  Ink ink = Ink::kGood;
  bool operator==(const InkSpan&) const = default;
};

struct PaintedLine {
  std::string text;  // UTF-8 (sparklines); spans count bytes
  Paint paint = Paint::kNormal;
  std::vector<InkSpan> spans;
  bool operator==(const PaintedLine&) const = default;
};

// Keys beyond plain characters.
inline constexpr int kKeyNone = -1;    // the timeout passed
inline constexpr int kKeyResize = -2;  // the terminal changed size
inline constexpr int kKeyLeft = -3, kKeyRight = -4, kKeyHome = -5, kKeyEnd = -6;
inline constexpr int kKeyQuit = -7;  // a signal asked to stop (SIGINT, SIGTERM, SIGHUP)
inline constexpr int kKeyUp = -8, kKeyDown = -9, kKeyPageUp = -10, kKeyPageDown = -11;
inline constexpr int kKeyEnter = -12, kKeyBackspace = -13, kKeyEscape = -14;

class Screen {
 public:
  // Takes over the terminal (initscr, no echo, cbreak, hidden cursor). Fails, with the reason,
  // when stdout is not a terminal or TERM names no terminal ncurses knows. Colour only where the
  // terminal has it and NO_COLOR is unset or empty (no-color.org); without it, the title, header
  // and selected row in reverse video and the main process in bold.
  [[nodiscard]] static std::unique_ptr<Screen> open(std::string& error);
  ~Screen();  // endwin; restores the signal handlers it set
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

  [[nodiscard]] int width() const;
  [[nodiscard]] int height() const;
  [[nodiscard]] bool colour() const { return colour_; }
  // Only the lines that differ from the last draw are written, each from its first changed
  // character, in one write a frame: at 10 Hz most of a screen is what it was. (ncurses is used
  // for the terminal's modes, its capabilities and the keys, not to draw: its update writes a
  // frame in one write per cursor move, each waking the terminal.)
  void draw(const std::vector<PaintedLine>& lines);
  // The next key, or kKeyNone after `timeout_ms`; kKeyQuit once a signal asked to stop;
  // kKeyResize after a resize and for Ctrl-L (the next draw is whole).
  [[nodiscard]] int read_key(int timeout_ms);

 private:
  Screen() = default;
  // Row `row` as `l`, from its first byte that differs from `before` (nullptr: all of it).
  void put_line(int row, const PaintedLine& l, const PaintedLine* before);
  bool colour_ = false;
  bool last_cell_scrolls_ = false;  // auto margins without the newline glitch: never write it
  std::string out_;                 // the frame's bytes
  std::vector<PaintedLine> shown_;  // what each row holds now; cleared when the size changes
  int shown_lines_ = 0, shown_cols_ = 0;
};

}  // namespace dltune::tui
