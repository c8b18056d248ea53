// tui::Screen on ncursesw (tui/screen.hpp).
#include "tui/screen.hpp"

#include <curses.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <clocale>
#include <cstdlib>

namespace dltune::tui {

namespace {

// Set by the handlers below; read_key turns it into kKeyQuit so that the caller leaves its loop
// and the destructor restores the terminal (a signal must never leave it in raw mode).
std::atomic<bool> g_stop{false};
struct sigaction g_old[3];
constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

void on_signal(int) {
  g_stop.store(true);
}

short colour_pair(Paint p) {
  switch (p) {
    case Paint::kTitle:
      return 1;
    case Paint::kHeader:
      return 2;
    case Paint::kMain:
      return 3;
    case Paint::kWorker:
      return 4;
    case Paint::kWarn:
      return 5;
    case Paint::kNormal:
    case Paint::kSelected:
      break;
  }
  return 0;
}

// Pairs 6..15: the inks, in Ink's order.
short ink_pair(Ink i) {
  return static_cast<short>(6 + static_cast<int>(i));
}

// NO_COLOR (no-color.org): set and not empty.
bool no_colour() {
  const char* v = ::getenv("NO_COLOR");
  return v != nullptr && *v != '\0';
}

}  // namespace

std::unique_ptr<Screen> Screen::open(std::string& error) {
  if (::isatty(STDOUT_FILENO) == 0 || ::isatty(STDIN_FILENO) == 0) {
    error = "not a terminal (use --once for plain text)";
    return nullptr;
  }
  // The terminal's character set, so that ncursesw writes UTF-8 (sparklines) where it is one.
  ::setlocale(LC_CTYPE, "");
  // newterm rather than initscr: initscr exits the process on a TERM it does not know.
  const char* term = ::getenv("TERM");
  SCREEN* s = newterm(term, stdout, stdin);
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
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);  // Esc closes a prompt at once, not after ncurses' default second
  // No look for typed keys while a frame is written (ncurses polls the keyboard and flushes
  // the frame in pieces for it): one write a frame. A frame is a few hundred bytes at most
  // since only changed lines are written, and the keys are read right after.
  typeahead(-1);
  if (has_colors() && !no_colour()) {
    start_color();
    use_default_colors();
    init_pair(1, COLOR_BLACK, COLOR_CYAN);
    init_pair(2, COLOR_BLACK, COLOR_WHITE);
    init_pair(3, COLOR_GREEN, -1);
    init_pair(4, COLOR_CYAN, -1);
    init_pair(5, COLOR_RED, -1);
    constexpr short kInks[] = {COLOR_GREEN,  COLOR_RED, COLOR_BLUE,  COLOR_MAGENTA, COLOR_GREEN,
                               COLOR_YELLOW, COLOR_RED, COLOR_GREEN, COLOR_YELLOW,  COLOR_RED};
    for (short i = 0; i < 10; ++i) init_pair(static_cast<short>(6 + i), kInks[i], -1);
    screen->colour_ = true;
  }
  return screen;
}

Screen::~Screen() {
  endwin();
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &g_old[i], nullptr);
}

int Screen::width() const {
  return COLS;
}
int Screen::height() const {
  return LINES;
}

void Screen::draw(const std::vector<PaintedLine>& lines) {
  if (LINES != shown_lines_ || COLS != shown_cols_) {  // first draw, or a new size: all of it
    shown_.clear();
    shown_lines_ = LINES;
    shown_cols_ = COLS;
    erase();
  }
  const int rows = std::min(LINES, static_cast<int>(lines.size()));
  for (int row = 0; row < rows; ++row) {
    const auto r = static_cast<std::size_t>(row);
    if (r < shown_.size() && shown_[r] == lines[r]) continue;
    put_line(row, lines[r]);
  }
  // Rows that held a line and hold none now.
  for (int row = rows; row < std::min(LINES, static_cast<int>(shown_.size())); ++row) {
    attrset(A_NORMAL);
    move(row, 0);
    clrtoeol();
  }
  shown_.assign(lines.begin(), lines.begin() + rows);
  attrset(A_NORMAL);
  refresh();
}

void Screen::put_line(int row, const PaintedLine& l) {
  attr_t attr = A_NORMAL;
  if (l.paint == Paint::kTitle || l.paint == Paint::kHeader) attr = colour_ ? A_NORMAL : A_REVERSE;
  if (l.paint == Paint::kSelected) attr = A_REVERSE;
  if (l.paint == Paint::kMain || l.paint == Paint::kWarn) attr |= A_BOLD;
  if (colour_ && colour_pair(l.paint) != 0) attr |= COLOR_PAIR(colour_pair(l.paint));
  attrset(attr);
  move(row, 0);
  // The text in pieces: plain, then each span in its ink (the line's attributes kept).
  int at = 0;
  const int size = static_cast<int>(l.text.size());
  // At most the columns left in the row (a UTF-8 character is one column), so that a line
  // never wraps into the next.
  int col = 0;
  const auto put = [&](int from, int to) {
    int end = from;
    while (end < to && col < COLS) {
      ++end;
      while (end < to &&
             (static_cast<unsigned char>(l.text[static_cast<std::size_t>(end)]) & 0xC0) == 0x80)
        ++end;
      ++col;
    }
    if (end > from) addnstr(l.text.c_str() + from, end - from);
  };
  for (const auto& s : l.spans) {
    if (s.start < at || s.start >= size) continue;
    put(at, s.start);
    const int end = std::min(size, s.start + s.length);
    if (colour_) attrset((attr & ~A_COLOR) | COLOR_PAIR(ink_pair(s.ink)));
    put(s.start, end);
    attrset(attr);
    at = end;
  }
  put(at, size);
  if (l.paint == Paint::kTitle || l.paint == Paint::kHeader ||
      l.paint == Paint::kSelected) {  // a full-width bar
    for (int c = col; c < COLS; ++c) mvaddch(row, c, ' ');
  } else if (col < COLS) {
    attrset(A_NORMAL);
    clrtoeol();  // what the row held before, beyond this line's end
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
  timeout(timeout_ms);
  const int k = getch();
  if (g_stop.load()) return kKeyQuit;
  switch (k) {
    case ERR:
      // A timeout, or a terminal that has gone (a hang-up without SIGHUP reaching us: the
      // keyboard then reads end-of-file at once, and top would spin on it).
      return terminal_gone() ? kKeyQuit : kKeyNone;
    case KEY_RESIZE:
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
