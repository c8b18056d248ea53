#pragma once
// This process's environment as a map: what a job it starts inherits unless told otherwise.
#include <map>
#include <string>

namespace dltune {

[[nodiscard]] std::map<std::string, std::string> process_environment();

}  // namespace dltune
