#pragma once
// Where the frame walker reads another process's memory: the live process through
// process_vm_readv(2), or a recorded image (address ranges and their bytes) in tests and fuzzers.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace dltune::pystack {

class Memory {
 public:
  virtual ~Memory() = default;
  // Exactly `size` bytes at `address` into `out`, or an error (the range is not mapped, the
  // process exited, no permission: errno says which).
  [[nodiscard]] virtual Result<void> read(std::uint64_t address, void* out,
                                          std::size_t size) const = 0;
};

// A live process's memory. Reads only; the process is never stopped.
class ProcessMemory : public Memory {
 public:
  explicit ProcessMemory(pid_t pid) : pid_(pid) {}
  [[nodiscard]] Result<void> read(std::uint64_t address, void* out,
                                  std::size_t size) const override;

 private:
  pid_t pid_;
};

// A memory image: each range's first address and its bytes. A read must lie in one range.
class MemoryImage : public Memory {
 public:
  void add(std::uint64_t address, std::string bytes);
  [[nodiscard]] Result<void> read(std::uint64_t address, void* out,
                                  std::size_t size) const override;

 private:
  std::map<std::uint64_t, std::string> ranges_;
};

}  // namespace dltune::pystack
