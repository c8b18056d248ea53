#include "pystack/layout.hpp"

#include <cstdio>
#include <initializer_list>

#include <fmt/core.h>

#include <toml++/toml.h>

#include "core/embedded.hpp"

namespace dltune::pystack {

namespace {

// An offset: a whole number in [0, 65536) (PyInterpreterState, the largest structure we read into,
// is some 8 KiB in 3.13).
Result<std::uint64_t> offset(const toml::table& t, std::string_view key, const std::string& row) {
  const auto* n = t[key].as_integer();  // not value<>: a float is converted unchecked (toml++)
  if (n == nullptr || n->get() < 0 || n->get() >= 65536)
    return fail(fmt::format("missing or absurd '{}' (an offset) in", key), row);
  return static_cast<std::uint64_t>(n->get());
}

Result<std::optional<std::uint64_t>> optional_offset(const toml::table& t, std::string_view key,
                                                     const std::string& row) {
  if (!t.contains(key)) return std::optional<std::uint64_t>();
  auto v = offset(t, key, row);
  if (!v) return tl::unexpected(v.error());
  return std::optional<std::uint64_t>(*v);
}

Result<void> offsets(const toml::table& t, const std::string& row,
                     std::initializer_list<std::pair<const char*, std::uint64_t*>> fields) {
  for (const auto& [key, out] : fields) {
    auto v = offset(t, key, row);
    if (!v) return tl::unexpected(v.error());
    *out = *v;
  }
  return {};
}

Result<PythonLayout> read_layout(const toml::table& t, const std::string& row) {
  PythonLayout l;
  const auto version = t["version"].value<std::string>();
  if (!version || std::sscanf(version->c_str(), "%d.%d", &l.major, &l.minor) != 2 || l.major != 3 ||
      l.minor < 0 || l.minor > 99)
    return fail("missing or bad 'version' (\"3.X\") in", row);
  const auto format = t["linetable"].value<std::string>();
  if (format && *format == "3.9") {
    l.linetable = LineTable::lnotab;
  } else if (format && *format == "3.10") {
    l.linetable = LineTable::pep626;
  } else if (format && *format == "3.11") {
    l.linetable = LineTable::locations;
  } else {
    return fail("'linetable' must be \"3.9\", \"3.10\" or \"3.11\" (the formats read) in", row);
  }
  const auto* cstack = t["frame_owner_cstack"].as_integer();
  if (cstack == nullptr || cstack->get() < -1 || cstack->get() > 255)
    return fail("missing or absurd 'frame_owner_cstack' in", row);
  l.frame_owner_cstack = static_cast<int>(cstack->get());

  // What every version has.
  if (auto ok = offsets(t, row,
                        {
                            {"runtime_interpreters_head", &l.runtime_interpreters_head},
                            {"interp_next", &l.interp_next},
                            {"interp_threads_head", &l.interp_threads_head},
                            {"tstate_next", &l.tstate_next},
                            {"tstate_thread_id", &l.tstate_thread_id},
                            {"frame_code", &l.frame_code},
                            {"frame_previous", &l.frame_previous},
                            {"code_filename", &l.code_filename},
                            {"code_name", &l.code_name},
                            {"code_linetable", &l.code_linetable},
                            {"code_firstlineno", &l.code_firstlineno},
                            {"unicode_state", &l.unicode_state},
                            {"unicode_length", &l.unicode_length},
                            {"unicode_ascii_data", &l.unicode_ascii_data},
                            {"unicode_compact_data", &l.unicode_compact_data},
                            {"bytes_size", &l.bytes_size},
                            {"bytes_data", &l.bytes_data},
                        });
      !ok)
    return tl::unexpected(ok.error());
  const struct {
    const char* key;
    unsigned* out;
  } shifts[] = {{"unicode_kind_shift", &l.unicode_kind_shift},
                {"unicode_compact_shift", &l.unicode_compact_shift},
                {"unicode_ascii_shift", &l.unicode_ascii_shift}};
  for (const auto& s : shifts) {
    const auto* n = t[s.key].as_integer();
    if (n == nullptr || n->get() < 0 || n->get() > 29)
      return fail(fmt::format("missing or absurd '{}' (a bit number) in", s.key), row);
    *s.out = static_cast<unsigned>(n->get());
  }
  for (const auto& [key, out] :
       {std::pair{"tstate_cframe", &l.tstate_cframe},
        std::pair{"cframe_current_frame", &l.cframe_current_frame},
        std::pair{"tstate_current_frame", &l.tstate_current_frame},
        std::pair{"tstate_frame", &l.tstate_frame}, std::pair{"pthread_tid", &l.pthread_tid},
        std::pair{"runtime_main_thread", &l.runtime_main_thread}}) {
    auto v = optional_offset(t, key, row);
    if (!v) return tl::unexpected(v.error());
    *out = *v;
  }
  const bool via_cframe = l.tstate_cframe && l.cframe_current_frame;
  const int ways =
      (via_cframe ? 1 : 0) + (l.tstate_current_frame ? 1 : 0) + (l.tstate_frame ? 1 : 0);
  if (ways != 1 || (!via_cframe && (l.tstate_cframe || l.cframe_current_frame)))
    return fail(
        "give one of tstate_cframe and cframe_current_frame, tstate_current_frame, or "
        "tstate_frame in",
        row);

  if (l.frame_objects()) {
    // 3.9 and 3.10: PyFrameObject, f_lasti, co_lnotab or the PEP 626 table, no co_qualname,
    // no native_thread_id.
    for (const char* key : {"frame_instr", "frame_owner", "code_adaptive", "code_qualname",
                            "tstate_native_thread_id"})
      if (t.contains(key))
        return fail(fmt::format("'{}' is not read with tstate_frame (a PyFrameObject) in", key),
                    row);
    if (l.linetable == LineTable::locations || l.frame_owner_cstack != -1)
      return fail(
          "tstate_frame (a PyFrameObject) goes with linetable \"3.9\" or \"3.10\" and "
          "frame_owner_cstack -1 in",
          row);
    if (!l.pthread_tid || !l.runtime_main_thread)
      return fail("missing 'pthread_tid' or 'runtime_main_thread' (needed with tstate_frame) in",
                  row);
    if (auto ok = offsets(t, row, {{"frame_lasti", &l.frame_lasti}}); !ok)
      return tl::unexpected(ok.error());
    const auto* unit = t["frame_lasti_unit"].as_integer();
    if (unit == nullptr || (unit->get() != 1 && unit->get() != 2))
      return fail("missing or bad 'frame_lasti_unit' (1 or 2 bytes) in", row);
    l.frame_lasti_unit = static_cast<unsigned>(unit->get());
    l.code_qualname = l.code_name;  // co_name: there is no co_qualname before 3.11
    return l;
  }
  for (const char* key : {"frame_lasti", "frame_lasti_unit", "pthread_tid", "runtime_main_thread"})
    if (t.contains(key))
      return fail(fmt::format("'{}' is read only with tstate_frame (a PyFrameObject), not in", key),
                  row);
  if (l.linetable != LineTable::locations)
    return fail("an _PyInterpreterFrame layout goes with linetable \"3.11\" in", row);
  if (auto ok = offsets(t, row,
                        {
                            {"tstate_native_thread_id", &l.tstate_native_thread_id},
                            {"frame_instr", &l.frame_instr},
                            {"frame_owner", &l.frame_owner},
                            {"code_qualname", &l.code_qualname},
                            {"code_adaptive", &l.code_adaptive},
                        });
      !ok)
    return tl::unexpected(ok.error());
  return l;
}

}  // namespace

Result<std::vector<PythonLayout>> parse_layouts(std::string_view text, const std::string& where) {
  toml::table doc;
  try {
    doc = toml::parse(text, where);
  } catch (const toml::parse_error& e) {
    return fail(fmt::format("cannot parse ({})", e.description()), where);
  }
  const auto* rows = doc["python"].as_array();
  if (rows == nullptr) return fail("expected an array of tables [[python]] in", where);
  std::vector<PythonLayout> out;
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const auto row = fmt::format("{}: [[python]] #{}", where, i + 1);
    const auto* t = (*rows)[i].as_table();
    if (t == nullptr) return fail("not a table:", row);
    auto l = read_layout(*t, row);
    if (!l) return tl::unexpected(l.error());
    for (const auto& seen : out)
      if (seen.major == l->major && seen.minor == l->minor)
        return fail(fmt::format("Python {}.{} twice, again in", l->major, l->minor), row);
    out.push_back(*l);
  }
  return out;
}

Result<PythonLayout> layout_for(const std::vector<PythonLayout>& layouts, int major, int minor) {
  for (const auto& l : layouts)
    if (l.major == major && l.minor == minor) return l;
  return fail(
      fmt::format("Python {}.{}: no layout known (knowledge/python_layouts.toml)", major, minor));
}

Result<PythonLayout> layout_for(int major, int minor) {
  static const auto layouts =
      load_knowledge<std::vector<PythonLayout>>("python_layouts", parse_layouts);
  if (!layouts) return tl::unexpected(layouts.error());
  return layout_for(*layouts, major, minor);
}

}  // namespace dltune::pystack
