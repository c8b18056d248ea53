#include "cli/cli.hpp"

int main(int argc, char** argv) {
  return dltune::cli::run(argc, argv);
}
