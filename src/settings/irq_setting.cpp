// irq.affinity: the CPUs that take the interrupts of the GPUs and of the NICs that carry
// training traffic (/proc/irq/N/smp_affinity_list, Documentation/core-api/irq/irq-affinity.rst).
// "auto": each device's own NUMA node (its local_cpulist), less the CPUs the kernel isolates
// (isolcpus=, nohz_full=); a CPU list: those CPUs for every such device. An IRQ meets it when
// every CPU it may be delivered to is one of them. Written live through procfs, journaled and
// rolled back; never kept for boot (IRQ numbers change between boots).
//
// irqbalance rewrites the affinity of every IRQ it has not been told to leave alone
// (irqbalance(1): --banirq "allowing them to be specified manually"): while it runs, tune sets
// only IRQs it bans, and check's fix says how to ban the others.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/text.hpp"
#include "host/irqbalance.hpp"
#include "host/parse/interrupts.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::settings {

namespace {

using Cpus = std::vector<int>;  // sorted, distinct

bool subset(const Cpus& a, const Cpus& of) {
  return std::includes(of.begin(), of.end(), a.begin(), a.end());
}

Cpus minus(const Cpus& a, const Cpus& b) {
  Cpus out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

Cpus intersect(const Cpus& a, const Cpus& b) {
  Cpus out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::optional<Cpus> read_cpus(const host::Root& root, const std::string& path) {
  const auto v = read_trimmed(root, path);
  if (!v || v->empty()) return std::nullopt;
  return text::parse_cpu_list(*v);
}

// One IRQ of a device.
struct Irq {
  int number = 0;
  std::string file;               // /proc/irq/N/smp_affinity_list
  std::string affinity_text;      // its text
  Cpus affinity;                  // where it may be delivered
  std::optional<Cpus> effective;  // where the kernel delivers it now, when it says
  std::string name;               // /proc/interrupts's handler names
  std::uint64_t outside = 0;      // interrupts handled on CPUs outside the wanted ones
};

// A GPU or training NIC with the CPUs its IRQs belong on.
struct Device {
  std::string label;  // "GPU 0 (0000:17:00.0)", "NIC eth0 (0000:1a:00.0)"
  std::string pci;
  Cpus wanted;
  std::string wanted_why;  // "NUMA node 1", "the profile's"
  std::vector<Irq> irqs;
};

// What the devices share: the host's CPUs and /proc/interrupts.
struct Host {
  Cpus online;
  Cpus isolated;  // isolcpus= and nohz_full= (Documentation/ABI/testing/sysfs-devices-system-cpu)
  host::parse::InterruptTable table;
};

// `counts`: /proc/interrupts too, for check's evidence (a plan has no use for it).
Host read_host(const host::Root& root, const inventory::HostFacts& facts, bool counts) {
  Host h;
  h.online = facts.cpu.online;
  if (h.online.empty())
    h.online = read_cpus(root, "/sys/devices/system/cpu/online").value_or(Cpus{});
  h.isolated = host::isolated_cpus(root);
  if (!counts) return h;
  if (auto raw = root.read("/proc/interrupts", host::parse::kInterruptsMaxBytes); raw && *raw)
    h.table = host::parse::interrupts(**raw);
  return h;
}

// The IRQs of a PCI function: its MSI/MSI-X vectors (Documentation/ABI/testing/sysfs-bus-pci,
// msi_irqs/), else its legacy line (irq, 0 for none).
std::vector<int> device_irqs(const host::Root& root, const std::string& pci) {
  const std::string dir = "/sys/bus/pci/devices/" + pci;
  std::vector<int> out;
  if (auto names = root.list(dir + "/msi_irqs"); names && *names)
    for (const auto& n : **names)
      if (const auto v = text::to_int(n); v && *v > 0 && *v < text::kMaxListId)
        out.push_back(static_cast<int>(*v));
  if (out.empty())
    if (const auto v = read_trimmed(root, dir + "/irq"))
      if (const auto n = text::to_int(*v); n && *n > 0 && *n < text::kMaxListId)
        out.push_back(static_cast<int>(*n));
  std::sort(out.begin(), out.end());
  return out;
}

// The CPUs the profile's value asks for on a device whose own are `local` (empty: unknown).
// nullopt with `why` set when the value names no CPU this host has online.
std::optional<Cpus> wanted_cpus(const ProfileEntry& e, const Host& h, const Cpus& local,
                                std::optional<int> node, std::string& why) {
  const std::string value = e.expected.values.empty() ? "auto" : e.expected.values.front();
  if (value != "auto") {
    const auto list = text::parse_cpu_list(value);
    Cpus cpus = list ? intersect(*list, h.online) : Cpus{};
    if (cpus.empty()) {
      why = fmt::format("{} = {} names no online CPU (online: {})", e.key, value,
                        text::format_cpu_list(h.online));
      return std::nullopt;
    }
    why = "the profile's CPUs";
    return cpus;
  }
  Cpus near = intersect(local, h.online);
  if (local.empty() || near.empty()) {
    near = h.online;
    why = "its NUMA node is unknown: any CPU";
  } else if (near == h.online) {
    why = "every CPU is near it: one NUMA node";
  } else {
    why = node ? fmt::format("its NUMA node {}", *node) : std::string("its local CPUs");
  }
  const Cpus kept = minus(near, h.isolated);
  if (!kept.empty() && kept.size() != near.size()) {
    why += fmt::format(", less the isolated CPUs {}", text::format_cpu_list(h.isolated));
    return kept;
  }
  return near;
}

// The GPUs and training NICs, each with its IRQs as they are now. `error`: the value names no
// online CPU (the same for every device).
std::vector<Device> devices(const host::Root& root, const inventory::HostFacts& facts,
                            const ProfileEntry& e, const Host& h, std::string& error) {
  struct Candidate {
    std::string label, pci;
    Cpus local;
    std::optional<int> node;
  };
  std::vector<Candidate> found;
  for (const auto& d : facts.gpu.devices) {
    if (!d.compute) continue;
    Candidate c{gpu_judge::label(facts.gpu, d), d.address, {}, d.numa_node};
    if (d.local_cpus) c.local = text::parse_cpu_list(*d.local_cpus).value_or(Cpus{});
    found.push_back(std::move(c));
  }
  for (const auto& n : facts.network.nics) {
    std::string name = n.rdma_device.value_or("");
    for (const auto& dev : n.netdevs) name += (name.empty() ? "" : " ") + dev;
    Candidate c{fmt::format("NIC {}({})", name.empty() ? "" : name + " ", n.pci_address),
                n.pci_address,
                read_cpus(root, "/sys/bus/pci/devices/" + n.pci_address + "/local_cpulist")
                    .value_or(Cpus{}),
                n.numa_node};
    found.push_back(std::move(c));
  }
  std::vector<Device> out;
  std::set<int> seen;  // a legacy line two devices share is the first one's
  for (auto& c : found) {
    Device d;
    d.label = c.label;
    d.pci = c.pci;
    const auto wanted = wanted_cpus(e, h, c.local, c.node, d.wanted_why);
    if (!wanted) {
      error = d.wanted_why;
      return {};
    }
    d.wanted = *wanted;
    for (const int n : device_irqs(root, c.pci)) {
      if (!seen.insert(n).second) continue;
      Irq q;
      q.number = n;
      q.file = fmt::format("/proc/irq/{}/smp_affinity_list", n);
      const auto text = read_trimmed(root, q.file);
      const auto cpus = text ? text::parse_cpu_list(*text) : std::nullopt;
      if (!cpus) continue;  // gone, or not this kernel's format: nothing to judge
      q.affinity_text = *text;
      q.affinity = *cpus;
      q.effective = read_cpus(root, fmt::format("/proc/irq/{}/effective_affinity_list", n));
      for (const auto& l : h.table.lines) {
        if (l.irq != n) continue;
        q.name = l.name;
        for (std::size_t i = 0; i < l.counts.size() && i < h.table.cpus.size(); ++i)
          if (!std::binary_search(d.wanted.begin(), d.wanted.end(), h.table.cpus[i]))
            q.outside += l.counts[i];
      }
      d.irqs.push_back(std::move(q));
    }
    if (!d.irqs.empty()) out.push_back(std::move(d));
  }
  return out;
}

bool met(const Irq& q, const Device& d) {
  return subset(q.affinity, d.wanted);
}

std::string banirq_args(const std::vector<int>& irqs) {
  std::string out;
  for (const int n : irqs) out += fmt::format("{}--banirq={}", out.empty() ? "" : " ", n);
  return out;
}

constexpr const char* kArea = "cpu";
constexpr const char* kNone =
    "no GPU or training NIC with IRQs (/sys/bus/pci/devices/*/msi_irqs, irq)";

Result<std::optional<std::string>> read_affinity(const host::Root& root,
                                                 const std::string& target) {
  return root.read(target);
}

// The kernel refuses (EIO) an affinity for an IRQ whose affinity it manages itself
// (kernel/irq/manage.c, irq_set_affinity of a managed IRQ; a multi-queue driver's per-CPU
// vectors) and EINVAL for one that leaves no online CPU: said in the error.
Result<std::string> write_affinity(const host::Root& root, const std::string& target,
                                   const std::string& value) {
  auto r = root.write_virtual(target, value);
  if (r || r.error().errno_ != EIO) return r;
  auto e = r.error();
  e.what += " (the kernel manages this IRQ's affinity: its driver spreads its vectors itself)";
  return tl::unexpected(e);
}

}  // namespace

const ChangeKind kIrqChange = {"irq", read_affinity, write_affinity, false};

Result<void> plan_irq_affinity(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  const Host h = read_host(context.root, context.facts, false);
  std::string error;
  const auto devs = devices(context.root, context.facts, e, h, error);
  if (!error.empty()) return fail(error);
  if (devs.empty()) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = kNone;
    return {};
  }
  const auto balancer = host::find_irqbalance(context.root);
  std::vector<int> not_banned;
  std::size_t ok = 0, changed_devices = 0;
  for (const auto& d : devs) {
    bool changed = false;
    for (const auto& q : d.irqs) {
      if (met(q, d)) {
        ++ok;
        continue;
      }
      if (balancer && !balancer->banned_irqs.count(q.number)) {
        not_banned.push_back(q.number);
        continue;
      }
      changed = true;
      item.changes.push_back(
          {e.key, "irq", q.file, q.affinity_text, text::format_cpu_list(d.wanted), false});
    }
    if (changed) {
      ++changed_devices;
      item.notes.push_back(fmt::format("{}: IRQs -> CPUs {} ({})", d.label,
                                       text::format_cpu_list(d.wanted), d.wanted_why));
    }
  }
  if (!not_banned.empty()) {
    item.notes.push_back(fmt::format(
        "left alone: IRQs {} (irqbalance, pid {}, moves them itself and would undo it: add {} "
        "to its options (IRQBALANCE_ARGS in /etc/default/irqbalance or "
        "/etc/sysconfig/irqbalance) and restart it, or stop it; then tune again)",
        text::format_cpu_list(not_banned), balancer->pid, banirq_args(not_banned)));
  }
  if (!item.changes.empty()) {
    item.status = PlanItem::Status::kChange;
    item.summary = fmt::format("{} IRQ(s) of {} device(s) -> the CPUs near their device",
                               item.changes.size(), changed_devices);
    if (e.expected.values.size() == 1 && e.expected.values.front() != "auto")
      item.summary = fmt::format("{} IRQ(s) of {} device(s) -> CPUs {}", item.changes.size(),
                                 changed_devices, e.expected.values.front());
    if (context.persist)
      item.notes.push_back(
          "not kept for boot: IRQ numbers change between boots; run `dltune tune apply --only "
          "irq.affinity` from the host's boot script after the drivers have loaded");
  } else if (!not_banned.empty()) {
    item.status = PlanItem::Status::kNotTunable;
    item.summary = fmt::format("irqbalance (pid {}) places {} of these IRQs", balancer->pid,
                               not_banned.size());
  } else {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary =
        fmt::format("all {} IRQs of {} device(s) on their CPUs already", ok, devs.size());
  }
  return {};
}

std::vector<Finding> check_irq_affinity(const CheckInput& in, const ProfileEntry& entry) {
  const Host h = read_host(in.root, in.facts, true);
  std::string error;
  const auto devs = devices(in.root, in.facts, entry, h, error);
  if (!error.empty()) {
    Finding f = judge(entry, kArea, "", {});
    f.severity = Severity::kInfo;
    f.summary = error;
    f.fix = Fix{"name online CPUs (or auto) for irq.affinity in the profile", false};
    return {f};
  }
  if (devs.empty()) return {not_applicable(entry, kArea, kNone)};
  const auto balancer = host::find_irqbalance(in.root);
  std::vector<Finding> out;
  for (const auto& d : devs) {
    std::vector<const Irq*> off;
    std::uint64_t outside = 0;
    for (const auto& q : d.irqs) {
      if (met(q, d)) continue;
      off.push_back(&q);
      outside += q.outside;
    }
    Finding f = judge(entry, kArea, "", {});
    const std::string wanted = text::format_cpu_list(d.wanted);
    f.expected = fmt::format("IRQs on CPUs {} ({})", wanted, d.wanted_why);
    // Evidence: the IRQs that are off (or the first ones), at most 8.
    std::vector<const Irq*> listed = off;
    if (listed.empty())
      for (const auto& q : d.irqs) listed.push_back(&q);
    for (std::size_t i = 0; i < listed.size() && i < 8; ++i) {
      const Irq& q = *listed[i];
      std::string v = q.affinity_text;
      if (q.effective) v += fmt::format(" (delivered to {})", text::format_cpu_list(*q.effective));
      if (!q.name.empty()) v += " " + q.name;
      f.evidence.push_back({q.file, v});
    }
    if (listed.size() > 8)
      f.evidence.push_back({"/proc/irq", fmt::format("and {} more", listed.size() - 8)});
    if (off.empty()) {
      f.severity = Severity::kOk;
      f.actual = wanted;
      f.summary = fmt::format(
          "{}: {} on CPUs {} ({})", d.label,
          d.irqs.size() == 1 ? std::string("its IRQ") : fmt::format("all {} IRQs", d.irqs.size()),
          wanted, d.wanted_why);
      out.push_back(std::move(f));
      continue;
    }
    std::set<std::string> affinities;
    for (const auto* q : off) affinities.insert(q->affinity_text);
    f.actual = fmt::format("{}", fmt::join(affinities, "; "));
    f.severity = gpu_judge::not_met(entry);
    f.summary = fmt::format("{}: {} of {} IRQs may be handled outside CPUs {} ({}): {}", d.label,
                            off.size(), d.irqs.size(), wanted, d.wanted_why, f.actual);
    if (outside > 0)
      f.notes.push_back(fmt::format(
          "{} of their interrupts since boot were handled outside CPUs {} (/proc/interrupts)",
          outside, wanted));
    std::vector<int> not_banned;
    if (balancer)
      for (const auto* q : off)
        if (!balancer->banned_irqs.count(q->number)) not_banned.push_back(q->number);
    if (!not_banned.empty()) {
      f.notes.push_back(fmt::format(
          "irqbalance (pid {}) sets these IRQs' affinity itself and would undo a change",
          balancer->pid));
      f.fix = Fix{fmt::format("add \"{}\" to IRQBALANCE_ARGS (/etc/default/irqbalance) and "
                              "restart irqbalance, or stop it; then dltune tune apply --only {}",
                              banirq_args(not_banned), entry.key),
                  false};
    } else {
      f.fix = tune_fix(entry.key);
    }
    container_advice(in, f, "");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace dltune::settings
