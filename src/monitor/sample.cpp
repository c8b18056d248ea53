// The names of a Sample's enums (monitor/sample.hpp): what --json, recordings and views say.
#include "monitor/sample.hpp"
#include "core/json.hpp"

namespace dltune::monitor {

const char* role_name(Role r) {
  switch (r) {
    case Role::kMain:
      return "main";
    case Role::kWorker:
      return "worker";
    case Role::kChild:
      return "child";
    case Role::kRank:
      return "rank";
    case Role::kOther:
      break;
  }
  return "other";
}

}  // namespace dltune::monitor
