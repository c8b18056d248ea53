#include "tune/drivers.hpp"

#include "settings/catalog.hpp"

namespace dltune::tune {

namespace {

Result<const settings::ChangeKind*> kind_of(const std::string& kind) {
  const auto* k = settings::change_kind(kind);
  if (k == nullptr) return fail("unknown kind of change in the journal:", kind);
  return k;
}

}  // namespace

Result<std::optional<std::string>> Drivers::read(const std::string& kind,
                                                 const std::string& target) const {
  auto k = kind_of(kind);
  if (!k) return tl::unexpected(k.error());
  return (*k)->read(root_, target);
}

Result<std::string> Drivers::write(const std::string& kind, const std::string& target,
                                   const std::string& value) const {
  auto k = kind_of(kind);
  if (!k) return tl::unexpected(k.error());
  return (*k)->write(root_, target, value);
}

Result<void> Drivers::remove(const std::string& kind, const std::string& target) const {
  const auto* k = settings::change_kind(kind);
  if (k == nullptr || !k->whole_file) return fail("only a file can be removed, not a", kind);
  return root_.remove_file(target);
}

bool Drivers::same_value(const std::string& kind, const std::string& a, const std::string& b) {
  const auto* k = settings::change_kind(kind);
  if (k != nullptr && k->whole_file) return a == b;
  return effective_value(a) == effective_value(b);
}

}  // namespace dltune::tune
