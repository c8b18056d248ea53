// tui::Screen on ncursesw (tui/screen.hpp).
#include "tui/screen.hpp"

#include <curses.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <clocale>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "core/shared_library.hpp"

namespace dltune::tui {

namespace {

// ncursesw's functions and the three variables we read, resolved from libncursesw.so.6 (and
// the libtinfo it needs) when top first opens a terminal (core/shared_library.hpp): only top's
// screen uses them, and linked, ncursesw and libtinfo cost every start of every command.
// getch() and timeout() are macros over stdscr: their functions are named here.
struct CursesLib {
  decltype(&::cbreak) cbreak = nullptr;
  decltype(&::curs_set) curs_set = nullptr;
  decltype(&::endwin) endwin = nullptr;
  decltype(&::has_colors) has_colors = nullptr;
  decltype(&::keypad) keypad = nullptr;
  decltype(&::newterm) newterm = nullptr;
  decltype(&::noecho) noecho = nullptr;
  decltype(&::refresh) refresh = nullptr;
  decltype(&::set_escdelay) set_escdelay = nullptr;
  decltype(&::start_color) start_color = nullptr;
  decltype(&::tigetflag) tigetflag = nullptr;
  decltype(&::tigetstr) tigetstr = nullptr;
  decltype(&::tiparm) tiparm = nullptr;
  decltype(&::typeahead) typeahead = nullptr;
  decltype(&::use_default_colors) use_default_colors = nullptr;
  decltype(&::wgetch) wgetch = nullptr;
  decltype(&::wtimeout) wtimeout = nullptr;
  decltype(&::stdscr) stdscr = nullptr;
  decltype(&::LINES) LINES = nullptr;
  decltype(&::COLS) COLS = nullptr;
};

Result<const CursesLib*> load_curses() {
  static const Result<CursesLib> loaded = SharedLibrary::load_table<CursesLib>(
      "libncursesw.so.6", "`dltune top`'s terminal view", "libncursesw6",
      [](SharedLibrary::Resolver& r, CursesLib& api) {
#define DLTUNE_SYMBOL(f) r(api.f, #f)
        DLTUNE_SYMBOL(cbreak);
        DLTUNE_SYMBOL(curs_set);
        DLTUNE_SYMBOL(endwin);
        DLTUNE_SYMBOL(has_colors);
        DLTUNE_SYMBOL(keypad);
        DLTUNE_SYMBOL(newterm);
        DLTUNE_SYMBOL(noecho);
        DLTUNE_SYMBOL(refresh);
        DLTUNE_SYMBOL(set_escdelay);
        DLTUNE_SYMBOL(start_color);
        DLTUNE_SYMBOL(tigetflag);
        DLTUNE_SYMBOL(tigetstr);
        DLTUNE_SYMBOL(tiparm);
        DLTUNE_SYMBOL(typeahead);
        DLTUNE_SYMBOL(use_default_colors);
        DLTUNE_SYMBOL(wgetch);
        DLTUNE_SYMBOL(wtimeout);
        DLTUNE_SYMBOL(stdscr);
        DLTUNE_SYMBOL(LINES);
        DLTUNE_SYMBOL(COLS);
#undef DLTUNE_SYMBOL
      });
  if (!loaded) return tl::unexpected(loaded.error());
  return &*loaded;
}

// The table, once a screen is open: Screen::open loaded it.
const CursesLib& curses() {
  return **load_curses();
}

// Set by the handlers below; read_key turns it into kKeyQuit so that the caller leaves its loop
// and the destructor restores the terminal (a signal must never leave it in raw mode).
std::atomic<bool> g_stop{false};
struct sigaction g_old[3];
constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

void on_signal(int) {
  g_stop.store(true);
}

// NO_COLOR (no-color.org): set and not empty.
bool no_colour() {
  const char* v = ::getenv("NO_COLOR");
  return v != nullptr && *v != '\0';
}

// A terminfo string capability with its padding ("$<5>") left out (a delay a modern terminal
// never needs; terminfo(5)); empty when the terminal has none.
std::string capability(const char* text) {
  std::string out;
  if (text == nullptr || text == reinterpret_cast<const char*>(-1)) return out;
  for (const char* c = text; *c != '\0'; ++c) {
    if (c[0] == '$' && c[1] == '<') {
      const char* end = std::strchr(c, '>');
      if (end != nullptr) {
        c = end;
        continue;
      }
    }
    out.push_back(*c);
  }
  return out;
}
std::string capability(const char* name, int a) {
  const char* text = curses().tigetstr(name);
  if (text == nullptr || text == reinterpret_cast<const char*>(-1)) return {};
  return capability(curses().tiparm(text, a));
}
// Whether one character of a line (its UTF-8 bytes) is safe to write as it is: no control
// character (C0, DEL, or C1 as U+0080..U+009F, which some terminals obey: U+009B is CSI), and
// well-formed. A process names itself: its name and command line are anyone's bytes.
bool safe_character(std::string_view c) {
  const auto b0 = static_cast<unsigned char>(c[0]);
  if (b0 < 0x80) return c.size() == 1 && b0 >= 0x20 && b0 != 0x7f;
  if (b0 < 0xC2 || b0 > 0xF4) return false;  // a stray continuation byte, or no such lead
  const std::size_t want = b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
  if (c.size() != want) return false;
  return !(b0 == 0xC2 && static_cast<unsigned char>(c[1]) < 0xA0);
}

// How a piece of a line looks: attributes and colours (-1: the terminal's default).
struct Look {
  bool bold = false, reverse = false;
  short fg = -1, bg = -1;
  bool operator==(const Look&) const = default;
};

// The title and header bars black on cyan and on white, the main process green, workers cyan,
// warnings red; without colour the bars and the selected row in reverse video, the main
// process and warnings bold.
Look line_look(Paint p, bool colour) {
  Look l;
  l.reverse = p == Paint::kSelected || (!colour && (p == Paint::kTitle || p == Paint::kHeader));
  l.bold = p == Paint::kMain || p == Paint::kWarn;
  if (!colour) return l;
  switch (p) {
    case Paint::kTitle:
      l.fg = COLOR_BLACK;
      l.bg = COLOR_CYAN;
      break;
    case Paint::kHeader:
      l.fg = COLOR_BLACK;
      l.bg = COLOR_WHITE;
      break;
    case Paint::kMain:
      l.fg = COLOR_GREEN;
      break;
    case Paint::kWorker:
      l.fg = COLOR_CYAN;
      break;
    case Paint::kWarn:
      l.fg = COLOR_RED;
      break;
    case Paint::kNormal:
    case Paint::kSelected:
      break;
  }
  return l;
}

// An ink replaces the line's colours (on the default background) and keeps its attributes.
Look ink_look(Look line, Ink i, bool colour) {
  if (!colour) return line;
  constexpr short kInks[] = {COLOR_GREEN,  COLOR_RED, COLOR_BLUE,  COLOR_MAGENTA, COLOR_GREEN,
                             COLOR_YELLOW, COLOR_RED, COLOR_GREEN, COLOR_YELLOW,  COLOR_RED};
  line.fg = kInks[static_cast<int>(i)];
  line.bg = -1;
  return line;
}

// The terminal's sequences for drawing, read once from terminfo after newterm.
struct Caps {
  std::string sgr0, bold, reverse, clear_eol, clear;
  std::string fg[8], bg[8];
  const char* cup = nullptr;
};
Caps& caps() {
  static Caps c;
  return c;
}

void put_look(std::string& out, const Look& l) {
  const Caps& c = caps();
  out += c.sgr0;
  if (l.bold) out += c.bold;
  if (l.reverse) out += c.reverse;
  if (l.fg >= 0 && l.fg < 8) out += c.fg[l.fg];
  if (l.bg >= 0 && l.bg < 8) out += c.bg[l.bg];
}

void put_move(std::string& out, int row, int col) {
  const char* cup = caps().cup;
  if (cup != nullptr) out += capability(curses().tiparm(cup, row, col));
}

// Set by SIGCONT: the terminal was given back and taken again (ncurses repaints its own, blank,
// screen then), so the next frame is drawn whole.
std::atomic<bool> g_redraw{false};
struct sigaction g_old_cont;
void on_continue(int) {
  g_redraw.store(true);
}

}  // namespace

std::unique_ptr<Screen> Screen::open(std::string& error) {
  if (::isatty(STDOUT_FILENO) == 0 || ::isatty(STDIN_FILENO) == 0) {
    error = "not a terminal (use --once for plain text)";
    return nullptr;
  }
  const auto loaded = load_curses();
  if (!loaded) {
    error = loaded.error().message();
    return nullptr;
  }
  // The terminal's character set: the sparklines are UTF-8 where it is, and ncursesw reads keys
  // in it.
  ::setlocale(LC_CTYPE, "");
  // newterm rather than initscr: initscr exits the process on a TERM it does not know.
  const char* term = ::getenv("TERM");
  SCREEN* s = curses().newterm(term, stdout, stdin);
  if (s == nullptr) {
    error = std::string("TERM=") + (term ? term : "") + " is not a terminal ncurses knows";
    return nullptr;
  }
  std::unique_ptr<Screen> screen(new Screen());
  g_stop.store(false);
  for (int i = 0; i < 3; ++i) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(kSignals[i], &sa, &g_old[i]);
  }
  curses().cbreak();
  curses().noecho();
  curses().keypad(*curses().stdscr, TRUE);
  curses().curs_set(0);
  curses().set_escdelay(25);  // Esc closes a prompt at once, not after ncurses' default second
  curses().typeahead(-1);  // its own updates (the first, after a resize) never wait on the keyboard
  if (curses().has_colors() && !no_colour()) {
    curses().start_color();
    curses().use_default_colors();
    screen->colour_ = true;
  }
  Caps& c = caps();
  c.sgr0 = capability(curses().tigetstr("sgr0"));
  c.bold = capability(curses().tigetstr("bold"));
  c.reverse = capability(curses().tigetstr("rev"));
  c.clear_eol = capability(curses().tigetstr("el"));
  c.clear = capability(curses().tigetstr("clear"));
  const char* cup = curses().tigetstr("cup");
  c.cup = cup == reinterpret_cast<const char*>(-1) ? nullptr : cup;
  for (int i = 0; i < 8 && screen->colour_; ++i) {
    c.fg[i] = capability("setaf", i);
    c.bg[i] = capability("setab", i);
  }
  if (c.cup == nullptr) {
    screen.reset();
    error = std::string("TERM=") + (term ? term : "") + " cannot move the cursor";
    return nullptr;
  }
  screen->last_cell_scrolls_ = curses().tigetflag("am") > 0 && curses().tigetflag("xenl") <= 0;
  // ncurses's first update (the alternate screen, cleared) now; it draws nothing after this.
  curses().refresh();
  g_redraw.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_continue;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGCONT, &sa, &g_old_cont);
  return screen;
}

Screen::~Screen() {
  curses().endwin();
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &g_old[i], nullptr);
  ::sigaction(SIGCONT, &g_old_cont, nullptr);
}

int Screen::width() const {
  return *curses().COLS;
}
int Screen::height() const {
  return *curses().LINES;
}

void Screen::draw(const std::vector<PaintedLine>& lines) {
  out_.clear();
  if (*curses().LINES != shown_lines_ || *curses().COLS != shown_cols_ ||
      g_redraw.exchange(false)) {
    // First draw, a new size, or back from a suspend: all of it, on a cleared screen.
    shown_.clear();
    shown_lines_ = *curses().LINES;
    shown_cols_ = *curses().COLS;
    out_ += caps().sgr0;
    out_ += caps().clear;
  }
  const int rows = std::min(*curses().LINES, static_cast<int>(lines.size()));
  for (int row = 0; row < rows; ++row) {
    const auto r = static_cast<std::size_t>(row);
    const PaintedLine* before = r < shown_.size() ? &shown_[r] : nullptr;
    if (before != nullptr && *before == lines[r]) continue;
    put_line(row, lines[r], before);
    if (before != nullptr) shown_[r] = lines[r];  // its strings' room reused
  }
  // Rows that held a line and hold none now.
  for (int row = rows; row < std::min(*curses().LINES, static_cast<int>(shown_.size())); ++row) {
    put_move(out_, row, 0);
    out_ += caps().sgr0;
    out_ += caps().clear_eol;
  }
  if (shown_.size() > static_cast<std::size_t>(rows)) {
    shown_.resize(static_cast<std::size_t>(rows));
  } else {
    shown_.insert(shown_.end(), lines.begin() + static_cast<std::ptrdiff_t>(shown_.size()),
                  lines.begin() + rows);
  }
  if (out_.empty()) return;
  // Attributes off and the cursor home, where ncurses last left it (endwin moves it from there).
  out_ += caps().sgr0;
  put_move(out_, 0, 0);
  for (std::size_t at = 0; at < out_.size();) {
    const ssize_t n = ::write(STDOUT_FILENO, out_.data() + at, out_.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the terminal has gone: read_key says so
    at += static_cast<std::size_t>(n);
  }
}

void Screen::put_line(int row, const PaintedLine& l, const PaintedLine* before) {
  const Look line = line_look(l.paint, colour_);
  // From the first byte that differs, when the line looks the same (paint and spans); else all.
  std::size_t from = 0;
  if (before != nullptr && before->paint == l.paint && before->spans == l.spans) {
    const auto& a = before->text;
    const auto& b = l.text;
    while (from < a.size() && from < b.size() && a[from] == b[from]) ++from;
    // Back to the start of its character (UTF-8 continuation bytes are 10xxxxxx).
    while (from > 0 && (static_cast<unsigned char>(b[from]) & 0xC0) == 0x80) --from;
  }
  const int size = static_cast<int>(l.text.size());
  const int last_col =
      row == *curses().LINES - 1 && last_cell_scrolls_ ? *curses().COLS - 1 : *curses().COLS;
  int col = 0;  // a UTF-8 character is one column
  bool moved = false;
  Look now;
  bool look_set = false;
  // Bytes [a, b) of the text in `look`, those before `from` only counted.
  const auto put = [&](int a, int b, const Look& look) {
    int at = a;
    while (at < b && col < last_col) {
      // A run of printable ASCII (most of a frame) in one append.
      if (static_cast<std::size_t>(at) >= from && moved && look_set && now == look) {
        int end = at;
        while (end < b && col < last_col) {
          const auto c = static_cast<unsigned char>(l.text[static_cast<std::size_t>(end)]);
          if (c < 0x20 || c >= 0x7f) break;
          ++end;
          ++col;
        }
        out_.append(l.text, static_cast<std::size_t>(at), static_cast<std::size_t>(end - at));
        at = end;
        if (at >= b || col >= last_col) break;
      }
      int end = at + 1;
      while (end < b &&
             (static_cast<unsigned char>(l.text[static_cast<std::size_t>(end)]) & 0xC0) == 0x80)
        ++end;
      if (static_cast<std::size_t>(at) >= from) {
        if (!moved) {
          put_move(out_, row, col);
          moved = true;
        }
        if (!look_set || !(now == look)) {
          put_look(out_, look);
          now = look;
          look_set = true;
        }
        const std::string_view c(l.text.data() + at, static_cast<std::size_t>(end - at));
        if (safe_character(c)) {
          out_ += c;
        } else {
          out_ += '?';
        }
      }
      ++col;
      at = end;
    }
  };
  int at = 0;
  for (const auto& s : l.spans) {
    if (s.start < at || s.start >= size) continue;
    put(at, s.start, line);
    const int end = std::min(size, s.start + s.length);
    put(s.start, end, ink_look(line, s.ink, colour_));
    at = end;
  }
  put(at, size, line);
  const bool bar =
      l.paint == Paint::kTitle || l.paint == Paint::kHeader || l.paint == Paint::kSelected;
  if (bar ? col >= last_col : col >= *curses().COLS) return;  // the text filled the row
  if (!moved) put_move(out_, row, col);
  if (bar) {
    if (!look_set || !(now == line)) put_look(out_, line);
    out_.append(static_cast<std::size_t>(last_col - col), ' ');  // a full-width bar
  } else {
    out_ += caps().sgr0;
    out_ += caps().clear_eol;  // what the row held before, beyond this line's end
  }
}

namespace {

// Whether the terminal has hung up: poll on the keyboard says so at once.
bool terminal_gone() {
  pollfd p{STDIN_FILENO, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace

int Screen::read_key(int timeout_ms) {
  if (g_stop.load()) return kKeyQuit;
  curses().wtimeout(*curses().stdscr, timeout_ms);
  timespec from{}, to{};
  ::clock_gettime(CLOCK_MONOTONIC, &from);
  const int k = curses().wgetch(*curses().stdscr);
  if (g_stop.load()) return kKeyQuit;
  switch (k) {
    case ERR: {
      // A timeout, or a terminal that has gone (a hang-up without SIGHUP reaching us: the
      // keyboard then reads end-of-file at once, and top would spin on it). Only an early
      // return is asked about.
      ::clock_gettime(CLOCK_MONOTONIC, &to);
      const auto waited_ms =
          (to.tv_sec - from.tv_sec) * 1000 + (to.tv_nsec - from.tv_nsec) / 1'000'000;
      return waited_ms + 1 < timeout_ms && terminal_gone() ? kKeyQuit : kKeyNone;
    }
    case KEY_RESIZE:
      // ncurses repaints its own (blank) screen after a resize: let it do so now, before the
      // next frame is drawn whole (the size changed, or shown_ is dropped here).
      curses().refresh();
      shown_.clear();
      return kKeyResize;
    case 12:  // Ctrl-L: the screen drawn again whole (something else wrote on the terminal)
      g_redraw.store(true);
      return kKeyResize;
    case KEY_LEFT:
      return kKeyLeft;
    case KEY_RIGHT:
      return kKeyRight;
    case KEY_HOME:
      return kKeyHome;
    case KEY_END:
      return kKeyEnd;
    case KEY_UP:
      return kKeyUp;
    case KEY_DOWN:
      return kKeyDown;
    case KEY_PPAGE:
      return kKeyPageUp;
    case KEY_NPAGE:
      return kKeyPageDown;
    case KEY_ENTER:
    case '\n':
    case '\r':
      return kKeyEnter;
    case KEY_BACKSPACE:
    case 127:
    case 8:
      return kKeyBackspace;
    case 27:
      return kKeyEscape;
    default:
      return k;
  }
}

}  // namespace dltune::tui
