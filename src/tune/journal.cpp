// The journal (owner: journal helper; stub until then).
#include "tune/journal.hpp"

namespace dltune::tune {

const char* tx_state_name(TxState) { return "pending"; }
const char* change_state_name(ChangeState) { return "journaled"; }
Result<std::unique_ptr<Journal>> Journal::open(const std::string& d, int) {
  return fail("journal not implemented:", d);
}
Result<std::unique_ptr<Journal>> Journal::open_read_only(const std::string& d) {
  return fail("journal not implemented:", d);
}

}  // namespace dltune::tune
