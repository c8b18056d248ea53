#include "pystack/memory.hpp"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include <fmt/core.h>

namespace dltune::pystack {

Result<void> ProcessMemory::read(std::uint64_t address, void* out, std::size_t size) const {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), size};
  const auto n = ::process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (n < 0) return fail("cannot read memory at", fmt::format("{:#x}", address), errno);
  if (static_cast<std::size_t>(n) != size)
    return fail("short read of memory at", fmt::format("{:#x}", address), EFAULT);
  return {};
}

void MemoryImage::add(std::uint64_t address, std::string bytes) {
  ranges_[address] = std::move(bytes);
}

Result<void> MemoryImage::read(std::uint64_t address, void* out, std::size_t size) const {
  auto it = ranges_.upper_bound(address);
  if (it != ranges_.begin()) {
    --it;
    const auto offset = address - it->first;
    if (offset <= it->second.size() && it->second.size() - offset >= size) {
      if (size != 0) std::memcpy(out, it->second.data() + offset, size);
      return {};
    }
  }
  return fail("cannot read memory at", fmt::format("{:#x}", address), EFAULT);
}

}  // namespace dltune::pystack
