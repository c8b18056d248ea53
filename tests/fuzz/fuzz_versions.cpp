// libFuzzer target: version strings and small files from drivers, the CUDA toolkit and Python
// installs (host/parse/cuda_files.hpp, nvidia_version.hpp, python_files.hpp, proc_modules.hpp,
// pci_device.hpp, pci_ids.hpp), and the job's progress lines that `run` reads
// (launch/progress.hpp), and the strings a libnvidia-ml hands back (gpu/nvml_library.hpp's
// clean_string on a buffer that need not hold a NUL, then what nvml_backend makes of it: a bus
// id, a driver version).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <regex>
#include <vector>

#include "core/json.hpp"
#include "fuzz_input.hpp"
#include "gpu/nvml_library.hpp"
#include "host/parse/cuda_files.hpp"
#include "host/parse/nvidia_version.hpp"
#include "host/parse/pci_device.hpp"
#include "host/parse/pci_ids.hpp"
#include "host/parse/proc_modules.hpp"
#include "host/parse/python_files.hpp"
#include "launch/output_watch.hpp"
#include "launch/progress.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace parse = dltune::host::parse;
  const dltune::fuzz::Input in(data, size);
  const auto t = in.text;
  const auto [first, second] = in.two();
  switch (in.selector % 14) {
    case 0:
      (void)parse::cuda_version_json(t);
      (void)parse::cuda_version_txt(t);
      break;
    case 1:
      (void)parse::cuda_h_version(t);
      (void)parse::cudnn_h_version(t);
      (void)parse::nccl_h_version(t);
      break;
    case 2:
      (void)parse::library_version(first, second);
      (void)parse::openblas_version(t);
      (void)parse::version_precision(t);
      break;
    case 3:
      (void)parse::nvidia_version(t);
      (void)parse::is_driver_version(t);
      break;
    case 4:
      (void)parse::pci_address(t);
      if (const auto s = parse::pcie_link_speed(t)) (void)s;
      (void)parse::pcie_link_width(t);
      (void)parse::pci_hex(t);
      break;
    case 5: {
      const std::vector<parse::PciId> wanted{{0x10de, 0x2330, 0x10de, 0x16c1},
                                             {0x8086, 0x1234, std::nullopt, std::nullopt}};
      (void)parse::pci_ids_lookup(t, wanted);
      break;
    }
    case 6:
      (void)parse::proc_modules(t);
      break;
    case 7:
      (void)parse::pyvenv_cfg(t);
      (void)parse::core_metadata(t);
      break;
    case 8:
      (void)parse::requirement(t);
      (void)parse::normalize_name(t);
      (void)parse::distribution_dir(t);
      break;
    case 9:
      (void)parse::conda_meta_version(first, second);
      (void)parse::py_version_define(t);
      (void)parse::pyenv_versions(t);
      (void)parse::python_program_version(t);
      break;
    case 10:
      (void)dltune::launch::read_rate(t, std::nullopt);
      break;
    case 11: {
      dltune::launch::ProgressMeter meter;
      // Fed in pieces of the sizes the input's own bytes give, as a pipe would.
      std::size_t at = 0;
      while (at < t.size()) {
        const std::size_t n = 1 + static_cast<unsigned char>(t[at]) % 17;
        meter.feed(t.substr(at, n), at % 2);
        at += n;
      }
      meter.finish();
      (void)meter.progress();
      break;
    }
    case 12: {
      // The cap the library is told (NVML's buffers: 16 to 96 bytes), then the buffer as is.
      const std::size_t cap = t.empty() ? 0 : static_cast<unsigned char>(t[0]) % 97;
      const std::string_view rest = t.empty() ? t : t.substr(1);
      const std::string buf(rest.substr(0, cap));  // exactly cap bytes or fewer: no NUL after
      const auto s = dltune::gpu::clean_string(buf.data(), buf.size());
      (void)parse::pci_address(s);
      (void)parse::nvidia_version(s);
      (void)parse::is_driver_version(s);
      break;
    }
    case 13: {
      // A job's output, as `run` reads it for CUDA and NCCL errors, in pieces as from a pipe.
      dltune::launch::OutputWatch watch([] { return std::int64_t{1}; });
      std::size_t at = 0;
      while (at < t.size()) {
        const std::size_t n = 1 + static_cast<unsigned char>(t[at]) % 61;
        watch.feed(t.substr(at, n), at % 3, static_cast<int>(at % 2));
        at += n;
      }
      watch.finish();
      if (watch.events().size() > dltune::launch::OutputWatch::kMaxEvents) __builtin_trap();
      for (const auto& e : watch.events()) {
        if (e.text.size() > 400) __builtin_trap();
        (void)dltune::launch::render_text(e);
        (void)dltune::launch::to_json(e).dump();
      }
      break;
    }
  }
  return 0;
}
