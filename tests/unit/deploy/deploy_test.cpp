// deploy/: the manifests parsed (YAML through Python's yaml module: no kubectl), checked against
// each other and against dltune itself, and the real tools' own checks (promtool,
// systemd-analyze). deploy/README.md, "What is checked", lists them.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serve/web_config.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace {

using dltune::testing::run;
using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kDeploy = fs::path(DLTUNE_SOURCE_DIR) / "deploy";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool have(const char* program) {
  return run({"sh", "-c", std::string("command -v ") + program}).exit_code == 0;
}

// Every YAML document of `file`, as JSON.
json yaml_documents(const fs::path& file) {
  const auto r = run({"python3", "-c",
                      "import json, sys, yaml\n"
                      "print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))",
                      file.string()});
  EXPECT_EQ(r.exit_code, 0) << file << ": " << r.err;
  auto j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j.is_discarded() ? json::array() : j;
}

const json* of_kind(const json& docs, const std::string& kind) {
  for (const auto& d : docs)
    if (d.value("kind", "") == kind) return &d;
  return nullptr;
}

class Deploy : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run({"python3", "-c", "import yaml"}).exit_code != 0)
      GTEST_SKIP() << "python3's yaml module (python3-yaml) is not installed";
  }
};

TEST_F(Deploy, TheDaemonSetReadsTheHostReadOnlyAndTakesNoGpu) {
  const auto docs = yaml_documents(kDeploy / "kubernetes/dltune-daemonset.yaml");
  const json* ds = of_kind(docs, "DaemonSet");
  const json* svc = of_kind(docs, "Service");
  const json* sa = of_kind(docs, "ServiceAccount");
  ASSERT_TRUE(ds && svc && sa);
  const auto& pod = (*ds)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["hostPID"], true);
  // The host's network namespace (its NICs and net.* sysctls, not the pod's), bound to the
  // node's own address from the downward API.
  EXPECT_EQ(pod["hostNetwork"], true);
  EXPECT_EQ(pod["dnsPolicy"], "ClusterFirstWithHostNet");
  EXPECT_EQ(pod["serviceAccountName"], (*sa)["metadata"]["name"]);
  // The selector picks the template's own pods, and the Service the same ones.
  const auto& pod_labels = (*ds)["spec"]["template"]["metadata"]["labels"];
  for (const auto& sel : {(*ds)["spec"]["selector"]["matchLabels"], (*svc)["spec"]["selector"]})
    for (const auto& [k, v] : sel.items()) EXPECT_EQ(pod_labels[k], v) << k;
  ASSERT_EQ(pod["containers"].size(), 1u);
  const auto& c = pod["containers"][0];

  // /proc, /sys, /dev and /etc of the host, each mounted read-only under the --root.
  std::map<std::string, std::string> host_path;  // volume name -> host path
  for (const auto& v : pod["volumes"]) host_path[v["name"]] = v["hostPath"]["path"];
  std::set<std::string> mounted;
  for (const auto& m : c["volumeMounts"]) {
    EXPECT_EQ(m["readOnly"], true) << m.dump();
    const std::string host = host_path.at(m["name"].get<std::string>());
    EXPECT_EQ(m["mountPath"].get<std::string>(), "/host" + host) << m.dump();
    mounted.insert(host);
  }
  EXPECT_EQ(mounted, (std::set<std::string>{"/proc", "/sys", "/dev", "/etc"}));

  std::vector<std::string> args;
  for (const auto& a : c["args"]) args.push_back(a);
  ASSERT_FALSE(args.empty());
  EXPECT_EQ(args[0], "serve");
  EXPECT_NE(std::find(args.begin(), args.end(), "--root=/host"), args.end());

  // The NVIDIA device plugin's convention for monitoring: every GPU, no GPU resource taken.
  std::map<std::string, std::string> env;
  for (const auto& e : c["env"])
    if (e.contains("value")) env[e["name"]] = e["value"];
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "all");
  bool node_ip = false;
  for (const auto& e : c["env"])
    node_ip = node_ip || (e["name"] == "NODE_IP" &&
                          e["valueFrom"]["fieldRef"]["fieldPath"] == "status.hostIP");
  EXPECT_TRUE(node_ip) << c["env"].dump();
  // The Hostname label is the node's name in the cluster (serve reads NODE_NAME).
  bool node_name = false;
  for (const auto& e : c["env"])
    node_name = node_name || (e["name"] == "NODE_NAME" &&
                              e["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName");
  EXPECT_TRUE(node_name) << c["env"].dump();
  EXPECT_EQ(env["NVIDIA_DRIVER_CAPABILITIES"], "utility");
  for (const char* kind : {"requests", "limits"})
    EXPECT_FALSE(c["resources"][kind].contains("nvidia.com/gpu")) << kind;
  EXPECT_EQ(c["securityContext"]["readOnlyRootFilesystem"], true);
  EXPECT_EQ(c["securityContext"]["allowPrivilegeEscalation"], false);

  // Probes, the Service and the container agree on the port's name and number.
  ASSERT_EQ(c["ports"].size(), 1u);
  const std::string port_name = c["ports"][0]["name"];
  const int port = c["ports"][0]["containerPort"];
  for (const char* probe : {"readinessProbe", "livenessProbe"}) {
    EXPECT_EQ(c[probe]["httpGet"]["path"], "/healthz") << probe;
    EXPECT_EQ(c[probe]["httpGet"]["port"], port_name) << probe;
  }
  ASSERT_EQ((*svc)["spec"]["ports"].size(), 1u);
  EXPECT_EQ((*svc)["spec"]["ports"][0]["targetPort"], port_name);
  EXPECT_EQ((*svc)["spec"]["ports"][0]["port"], port);
  EXPECT_NE(std::find(args.begin(), args.end(), "--listen=$(NODE_IP):" + std::to_string(port)),
            args.end());
  // Everything in one namespace.
  for (const auto& d : docs) EXPECT_EQ(d["metadata"]["namespace"], "monitoring");

  // serve accepts these arguments: the same words, on this host's root, once.
  std::vector<std::string> argv{DLTUNE_BINARY};
  // (Kubernetes expands $(NODE_IP); here, loopback.)
  for (const auto& a : args)
    argv.push_back(a == "--root=/host"                      ? "--root=/"
                   : a.rfind("--listen=$(NODE_IP)", 0) == 0 ? "--listen=127.0.0.1" + a.substr(19)
                                                            : a);
  for (const char* extra : {"--once", "--no-gpus", "--no-check"}) argv.push_back(extra);
  const auto r = run(argv, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dltune_memory_total_bytes"), std::string::npos);
}

// TLS and basic auth on Kubernetes: the Secret holds a web config that serve parses once its hash
// is filled in (and refuses as shipped), and the patch mounts that Secret read-only where the
// config's files and serve's --web-config point, keeps the DaemonSet's arguments, lets serve's
// group read the files and probes without credentials.
TEST_F(Deploy, TheWebConfigSecretAndPatchFitTheDaemonSet) {
  const auto ds_docs = yaml_documents(kDeploy / "kubernetes/dltune-daemonset.yaml");
  const auto secret_docs = yaml_documents(kDeploy / "kubernetes/dltune-web-config.yaml");
  const auto patch_docs = yaml_documents(kDeploy / "kubernetes/dltune-web-config-patch.yaml");
  const json* ds = of_kind(ds_docs, "DaemonSet");
  const json* secret = of_kind(secret_docs, "Secret");
  ASSERT_TRUE(ds && secret);
  ASSERT_EQ(patch_docs.size(), 1u);
  const auto& patch = patch_docs[0]["spec"]["template"]["spec"];
  const auto& pod = (*ds)["spec"]["template"]["spec"];
  EXPECT_EQ((*secret)["metadata"]["namespace"], (*ds)["metadata"]["namespace"]);

  // The patch's container is the DaemonSet's (merged by name); its args the DaemonSet's own
  // (a list is replaced whole) plus --web-config.
  ASSERT_EQ(patch["containers"].size(), 1u);
  const auto& c = patch["containers"][0];
  EXPECT_EQ(c["name"], pod["containers"][0]["name"]);
  std::vector<std::string> args, ds_args;
  for (const auto& a : c["args"]) args.push_back(a);
  for (const auto& a : pod["containers"][0]["args"]) ds_args.push_back(a);
  std::string web_config;
  std::vector<std::string> rest;
  for (const auto& a : args)
    if (a.rfind("--web-config=", 0) == 0)
      web_config = a.substr(13);
    else
      rest.push_back(a);
  EXPECT_EQ(rest, ds_args);
  ASSERT_FALSE(web_config.empty());

  // The Secret's volume, mounted read-only at the directory of --web-config.
  ASSERT_EQ(patch["volumes"].size(), 1u);
  const auto& vol = patch["volumes"][0];
  EXPECT_EQ(vol["secret"]["secretName"], (*secret)["metadata"]["name"]);
  ASSERT_EQ(c["volumeMounts"].size(), 1u);
  const auto& mount = c["volumeMounts"][0];
  EXPECT_EQ(mount["name"], vol["name"]);
  EXPECT_EQ(mount["readOnly"], true);
  const fs::path dir = mount["mountPath"].get<std::string>();
  EXPECT_EQ(fs::path(web_config).parent_path(), dir);
  // Group-readable files, and serve's group owns them.
  EXPECT_EQ(vol["secret"]["defaultMode"], 0440);
  EXPECT_EQ(patch["securityContext"]["fsGroup"], pod["securityContext"]["runAsGroup"]);

  // Probes without credentials: TCP on the port, the HTTP check removed (null in a strategic
  // merge patch deletes the field).
  for (const char* probe : {"readinessProbe", "livenessProbe"}) {
    EXPECT_EQ(c[probe]["tcpSocket"]["port"], pod["containers"][0]["ports"][0]["name"]) << probe;
    ASSERT_TRUE(c[probe].contains("httpGet")) << probe;
    EXPECT_TRUE(c[probe]["httpGet"].is_null()) << probe;
  }

  // The Secret's keys are the files the mount shows: the config names its certificate and key
  // there.
  const auto& data = (*secret)["stringData"];
  const std::string key = fs::path(web_config).filename();
  ASSERT_TRUE(data.contains(key)) << data.dump();
  const std::string text = data[key];
  auto shipped = dltune::serve::parse_web_config(text, web_config, dir);
  ASSERT_FALSE(shipped) << "the placeholder hash must be refused";
  EXPECT_NE(shipped.error().message().find("bcrypt"), std::string::npos)
      << shipped.error().message();
  std::string filled = text;
  const std::string placeholder = "REPLACE_WITH_A_BCRYPT_HASH";
  const auto at = filled.find(placeholder);
  ASSERT_NE(at, std::string::npos);
  filled.replace(at, placeholder.size(),
                 "$2y$10$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW");
  auto cfg = dltune::serve::parse_web_config(filled, web_config, dir);
  ASSERT_TRUE(cfg) << cfg.error().message();
  ASSERT_TRUE(cfg->tls);
  for (const auto& f : {cfg->tls->cert_file, cfg->tls->key_file}) {
    EXPECT_EQ(fs::path(f).parent_path(), dir) << f;
    EXPECT_TRUE(data.contains(fs::path(f).filename().string())) << f;
  }
  EXPECT_EQ(cfg->basic_auth_users.count("prometheus"), 1u);
}

// The scrape job keeps exactly the Service's endpoints: its namespace, its label, its port name.
TEST_F(Deploy, TheKubernetesScrapeJobFindsTheService) {
  const auto docs = yaml_documents(kDeploy / "kubernetes/dltune-daemonset.yaml");
  const json* svc = of_kind(docs, "Service");
  ASSERT_TRUE(svc);
  const auto scrape = yaml_documents(kDeploy / "kubernetes/prometheus-scrape.yaml");
  ASSERT_EQ(scrape.size(), 1u);
  ASSERT_EQ(scrape[0]["scrape_configs"].size(), 1u);
  const auto& job = scrape[0]["scrape_configs"][0];
  const auto& sd = job["kubernetes_sd_configs"][0];
  EXPECT_EQ(sd["role"], "endpoints");
  EXPECT_EQ(sd["namespaces"]["names"][0], (*svc)["metadata"]["namespace"]);
  std::map<std::string, std::string> keep;
  for (const auto& r : job["relabel_configs"])
    if (r.value("action", "replace") == "keep") keep[r["source_labels"][0]] = r["regex"];
  EXPECT_EQ(keep["__meta_kubernetes_service_label_app_kubernetes_io_name"],
            (*svc)["metadata"]["labels"]["app.kubernetes.io/name"]);
  EXPECT_EQ(keep["__meta_kubernetes_endpoint_port_name"], (*svc)["spec"]["ports"][0]["name"]);
}

// The Prometheus operator's monitors find what the DaemonSet runs: the ServiceMonitor selects the
// Service by its label in its namespace and scrapes its port by name; the PodMonitor selects the
// DaemonSet's pods by their template's labels and scrapes the container's port by name; both
// name the node as the scrape job by hand does.
TEST_F(Deploy, TheOperatorsMonitorsFindTheServiceAndThePods) {
  const auto docs = yaml_documents(kDeploy / "kubernetes/dltune-daemonset.yaml");
  const json* svc = of_kind(docs, "Service");
  const json* ds = of_kind(docs, "DaemonSet");
  ASSERT_TRUE(svc && ds);
  const auto monitors = yaml_documents(kDeploy / "kubernetes/dltune-servicemonitor.yaml");
  const json* sm = of_kind(monitors, "ServiceMonitor");
  const json* pm = of_kind(monitors, "PodMonitor");
  ASSERT_TRUE(sm && pm);
  const auto has_labels = [](const json& labels, const json& selector) {
    for (const auto& [k, v] : selector.items())
      if (!labels.contains(k) || labels[k] != v) return false;
    return !selector.empty();
  };
  const auto names_node = [](const json& relabelings) {
    std::set<std::string> targets;
    for (const auto& r : relabelings)
      if (r["sourceLabels"][0] == "__meta_kubernetes_pod_node_name")
        targets.insert(r["targetLabel"].get<std::string>());
    return targets == std::set<std::string>{"instance", "node"};
  };
  for (const json* m : {sm, pm}) {
    EXPECT_EQ((*m)["apiVersion"], "monitoring.coreos.com/v1");
    EXPECT_EQ((*m)["spec"]["namespaceSelector"]["matchNames"][0], (*svc)["metadata"]["namespace"]);
  }
  EXPECT_TRUE(has_labels((*svc)["metadata"]["labels"], (*sm)["spec"]["selector"]["matchLabels"]));
  EXPECT_EQ((*sm)["spec"]["endpoints"][0]["port"], (*svc)["spec"]["ports"][0]["name"]);
  EXPECT_TRUE(names_node((*sm)["spec"]["endpoints"][0]["relabelings"]));
  const auto& pod = (*ds)["spec"]["template"];
  EXPECT_TRUE(has_labels(pod["metadata"]["labels"], (*pm)["spec"]["selector"]["matchLabels"]));
  bool port = false;
  for (const auto& c : pod["spec"]["containers"])
    for (const auto& p : c.value("ports", json::array()))
      port = port || p["name"] == (*pm)["spec"]["podMetricsEndpoints"][0]["port"];
  EXPECT_TRUE(port) << "no container port named as the PodMonitor's";
  EXPECT_TRUE(names_node((*pm)["spec"]["podMetricsEndpoints"][0]["relabelings"]));
}

TEST_F(Deploy, PromtoolAcceptsTheConfigAndTheRules) {
  if (!have("promtool")) GTEST_SKIP() << "promtool (Debian's prometheus package) is not installed";
  const auto config =
      run({"promtool", "check", "config", (kDeploy / "prometheus/prometheus-scrape.yml").string()});
  EXPECT_EQ(config.exit_code, 0) << config.out << config.err;
  const auto rules =
      run({"promtool", "check", "rules", (kDeploy / "prometheus/dltune-alerts.yml").string()});
  EXPECT_EQ(rules.exit_code, 0) << rules.out << rules.err;
  EXPECT_NE(rules.out.find("SUCCESS: 19 rules found"), std::string::npos) << rules.out;
  const auto compat =
      run({"promtool", "check", "rules", (kDeploy / "prometheus/dltune-dcgm-compat.yml").string()});
  EXPECT_EQ(compat.exit_code, 0) << compat.out << compat.err;
  EXPECT_NE(compat.out.find("SUCCESS: 17 rules found"), std::string::npos) << compat.out;
}

// promtool test rules of the dcgm-exporter names (tests/unit/deploy/dcgm_compat_test.yml): each
// recorded series with DCGM's labels (device from the minor number, hostname, pci_bus_id) and
// units (percent, MiB, MHz, mJ), the last Xid 0 until one comes, the ECC totals by type, no
// series for an AMD GPU, and a query of NVIDIA's stock dashboard over them.
TEST_F(Deploy, TheDcgmCompatRulesGiveDcgmExportersNamesUnitsAndLabels) {
  if (!have("promtool")) GTEST_SKIP() << "promtool (Debian's prometheus package) is not installed";
  const auto r =
      run({"promtool", "test", "rules",
           (fs::path(DLTUNE_SOURCE_DIR) / "tests/unit/deploy/dcgm_compat_test.yml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS"), std::string::npos) << r.out;
}

// promtool test rules of the fleet rules, the ECC alerts and the exporter's liveness on series
// written for each case (tests/unit/deploy/fleet_rules_test.yml): the straggler node of a GPU job
// and of a CPU job, the healthy fleet and an idle job with none, a node whose finding its pool
// does not share, an uncorrected ECC error (and a driver reload, which is none), corrected errors
// rising and some that do not, a serve that stops answering (up == 0, where the stale alert
// cannot fire), no target at all, a GPU that stops answering NVML (and one down for less than
// the alert's 5 minutes), a check id that cannot be judged at critical stakes (and one at warn),
// and Xid events by severity (an application's a warning, a GPU's or an unknown code a page,
// also at a code's first event).
TEST_F(Deploy, TheFleetRulesFindTheStragglerTheDriftedNodeAndADeadExporter) {
  if (!have("promtool")) GTEST_SKIP() << "promtool (Debian's prometheus package) is not installed";
  const auto r =
      run({"promtool", "test", "rules",
           (fs::path(DLTUNE_SOURCE_DIR) / "tests/unit/deploy/fleet_rules_test.yml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS"), std::string::npos) << r.out;
}

// promtool test rules: an OOM kill in a Slurm job's step is one alert, for the job (its step's
// series counts the same kill), and one in a job of `dltune run` is one for its group.
TEST_F(Deploy, AnOomKillIsOneAlertPerJobNotOnePerStep) {
  if (!have("promtool")) GTEST_SKIP() << "promtool (Debian's prometheus package) is not installed";
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("dltune_rules_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string job = R"(cgroup="/slurm/uid_0/job_5",slurm_job_id="5",user="root")";
  std::ofstream(dir / "oom-test.yml")
      << "rule_files:\n  - " << (kDeploy / "prometheus/dltune-alerts.yml").string() << "\n"
      << "evaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n"
      << "      - series: 'dltune_job_oom_kills_total{instance=\"n1\"," << job << "}'\n"
      << "        values: '0 0 1 1 1'\n"
      << "      - series: 'dltune_job_oom_kills_total{instance=\"n1\","
      << R"(cgroup="/slurm/uid_0/job_5/step_0",slurm_job_id="5",user="root",step="0"}')"
      << "\n"
      << "        values: '0 0 1 1 1'\n"
      << "      - series: 'dltune_job_oom_kills_total{instance=\"n1\",cgroup=\"/dltune/run-1\"}'\n"
      << "        values: '0 0 0 1 1'\n"
      << "    alert_rule_test:\n      - eval_time: 4m\n        alertname: DltuneJobOomKilled\n"
      << "        exp_alerts:\n"
      << "          - exp_labels: {severity: warning, instance: n1, cgroup: /slurm/uid_0/job_5, "
         "slurm_job_id: \"5\", user: root}\n"
      << "            exp_annotations: {summary: \"n1: a process of Slurm job 5 (root) was "
         "OOM-killed\"}\n"
      << "          - exp_labels: {severity: warning, instance: n1, cgroup: /dltune/run-1}\n"
      << "            exp_annotations: {summary: \"n1: a process of job /dltune/run-1 was "
         "OOM-killed\"}\n";
  const auto r = run({"promtool", "test", "rules", (dir / "oom-test.yml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  fs::remove_all(dir);
}

// node-problem-detector's custom plugin: the rule's command is `dltune check --npd` (exit 0 OK,
// 1 a problem, 2 unknown, one line of message), run here as NPD would run it, its `--root /host`
// pointed at fixture trees: the 8-GPU tree has critical findings (a problem whose message names
// them and fits the plugin's max_output_length), this VM's tree only warnings (OK at critical, a
// problem at --fail-on warn), a tree that is none is unknown with the reason on stdout.
TEST(DeployUnit, TheNodeProblemDetectorPluginRunsCheckWithItsProtocol) {
  const auto config =
      json::parse(slurp(kDeploy / "kubernetes/node-problem-detector/dltune-plugin.json"));
  EXPECT_EQ(config["plugin"], "custom");
  const std::size_t max_output = config["pluginConfig"]["max_output_length"].get<std::size_t>();
  ASSERT_EQ(config["rules"].size(), 1u);
  const auto& rule = config["rules"][0];
  EXPECT_EQ(rule["type"], "permanent");
  EXPECT_EQ(rule["condition"], config["conditions"][0]["type"]) << "the rule sets the condition";
  EXPECT_EQ(rule["path"], "/usr/bin/dltune");
  // The rule's command with its --root (and, when given, its --fail-on) value replaced.
  auto command = [&](const std::string& root, const std::string& fail_on = "") {
    std::vector<std::string> argv = {DLTUNE_BINARY};
    std::string previous;
    for (const auto& a : rule["args"]) {
      const std::string arg = a.get<std::string>();
      argv.push_back(previous == "--root"                          ? root
                     : previous == "--fail-on" && !fail_on.empty() ? fail_on
                                                                   : arg);
      previous = arg;
    }
    return run(argv);
  };
  const std::string fixtures = DLTUNE_FIXTURES;
  const auto gpu = command(fixtures + "/roots/gpu8-numa2-cgv2");
  EXPECT_EQ(gpu.exit_code, 1) << gpu.out << gpu.err;
  EXPECT_EQ(gpu.out.rfind("dltune: ", 0), 0u) << gpu.out;
  EXPECT_EQ(std::count(gpu.out.begin(), gpu.out.end(), '\n'), 1) << "one line: " << gpu.out;
  EXPECT_LE(gpu.out.size() - 1, max_output) << gpu.out;
  EXPECT_NE(gpu.out.find("; +"), std::string::npos) << "the other critical ids: " << gpu.out;
  const auto vm = command(fixtures + "/roots/this-vm");
  EXPECT_EQ(vm.exit_code, 0) << vm.out << vm.err;
  EXPECT_EQ(vm.out, "dltune: no finding at or above critical (profile training)\n");
  const auto strict = command(fixtures + "/roots/this-vm", "warn");
  EXPECT_EQ(strict.exit_code, 1) << strict.out << strict.err;
  const fs::path empty =
      fs::path(::testing::TempDir()) / ("dltune_npd_" + std::to_string(::getpid()));
  fs::create_directories(empty);
  const auto unknown = command(empty.string());
  fs::remove_all(empty);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out << unknown.err;
  EXPECT_EQ(unknown.out.rfind("dltune: cannot judge the host: ", 0), 0u) << unknown.out;
  // --npd and --json are one output each.
  const auto both =
      run({DLTUNE_BINARY, "check", "--npd", "--json", "--root", fixtures + "/roots/this-vm"});
  EXPECT_EQ(both.exit_code, 2) << both.out << both.err;
}

TEST(DeployUnit, SystemdAnalyzeVerifiesTheUnit) {
  if (!have("systemd-analyze")) GTEST_SKIP() << "systemd-analyze (package systemd) is missing";
  // The unit names /usr/local/bin/dltune; verify needs the program to exist, so the copy names
  // the binary just built.
  std::string unit = slurp(kDeploy / "systemd/dltune-serve.service");
  const std::string installed = "ExecStart=/usr/local/bin/dltune ";
  const auto at = unit.find(installed);
  ASSERT_NE(at, std::string::npos);
  unit.replace(at, installed.size(), std::string("ExecStart=") + DLTUNE_BINARY + " ");
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("dltune_unit_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path copy = dir / "dltune-serve.service";
  std::ofstream(copy) << unit;
  const auto r = run({"systemd-analyze", "verify", "--man=no", copy.string()});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Unknown or misspelt keys are only warnings to systemd: they must not be there either.
  EXPECT_EQ(r.err.find("Unknown"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("ignoring"), std::string::npos) << r.err;
}

}  // namespace

#include "serve/exposition.hpp"
#include "unit/serve/snapshot_fixture.hpp"

namespace deploy_test {

namespace {

// The names of the families that serve's exposition writes (at least one sample each).
class NameSink final : public dltune::serve::MetricSink {
 public:
  void family(std::string_view name, dltune::serve::MetricType, std::string_view) override {
    current_ = name;
  }
  void sample(dltune::serve::Labels, std::uint64_t) override { names.insert(current_); }
  void sample(dltune::serve::Labels, double) override { names.insert(current_); }
  std::set<std::string> names;

 private:
  std::string current_;
};

std::set<std::string> metric_names_in(const std::string& text) {
  static const std::regex name(R"(\bdltune_[a-z0-9_]+)");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator();
       ++it)
    out.insert(it->str());
  return out;
}

// Every metric that the dashboard's panels and variables and the alert rules query is one that
// serve writes when every value is there (the serve tests' full snapshot, rendered by the
// exposition code itself), so that no panel stays empty because of a misspelt name.
TEST(DeployUnit, DashboardAndRulesQueryOnlyMetricsServeExports) {
  const auto fixture = dltune::serve::testing::full_fixture();
  NameSink sink;
  dltune::serve::render(fixture.snapshot(), sink);
  dltune::serve::render_scrapes(1, sink);
  ASSERT_GT(sink.names.size(), 60u);

  const auto dashboard = json::parse(slurp(kDeploy / "grafana/dltune-dashboard.json"));
  std::string queries;
  std::size_t panels_with_queries = 0;
  for (const auto& p : dashboard["panels"]) {
    if (!p.contains("targets")) continue;
    ++panels_with_queries;
    for (const auto& t : p["targets"]) queries += t["expr"].get<std::string>() + "\n";
    EXPECT_EQ(p["datasource"]["uid"], "${datasource}") << p["title"];
  }
  for (const auto& v : dashboard["templating"]["list"])
    if (v.contains("definition")) queries += v["definition"].get<std::string>() + "\n";
  EXPECT_GE(panels_with_queries, 20u);
  const auto used = metric_names_in(queries);
  EXPECT_GE(used.size(), 30u);
  for (const auto& n : used) EXPECT_TRUE(sink.names.contains(n)) << "dashboard queries " << n;

  const auto rules = metric_names_in(slurp(kDeploy / "prometheus/dltune-alerts.yml"));
  EXPECT_GE(rules.size(), 7u);
  for (const auto& n : rules) EXPECT_TRUE(sink.names.contains(n)) << "an alert rule uses " << n;
  const auto compat = metric_names_in(slurp(kDeploy / "prometheus/dltune-dcgm-compat.yml"));
  EXPECT_GE(compat.size(), 17u);
  for (const auto& n : compat)
    EXPECT_TRUE(sink.names.contains(n)) << "a dcgm-exporter name's rule uses " << n;
}

// Several hosts on one dashboard: every target's legend names its host, so that two hosts' GPU 0
// (or eth0, or cgroup) are two legend entries that say which is which, never one name twice.
// Every query of the dashboard parses as PromQL (each, with Grafana's variables given values,
// becomes a recording rule that `promtool check rules` reads); the tables are instant queries
// (one row per finding, what is wrong now); every job panel follows the Slurm job variable; the
// throttling panel is a share of the quota's periods, which cannot pass 100%.
TEST(DeployUnit, DashboardQueriesParseTablesAreInstantAndJobPanelsFollowTheJob) {
  const auto dashboard = json::parse(slurp(kDeploy / "grafana/dltune-dashboard.json"));
  std::vector<std::string> queries;
  bool throttle_panel = false;
  for (const auto& p : dashboard["panels"]) {
    if (!p.contains("targets")) continue;
    for (const auto& t : p["targets"]) {
      const auto expr = t["expr"].get<std::string>();
      queries.push_back(expr);
      if (p["type"] == "table") {
        EXPECT_EQ(t.value("instant", false), true) << p["title"] << ": " << expr;
        EXPECT_EQ(t.value("format", ""), "table") << p["title"];
      }
      if (expr.find("dltune_job_") != std::string::npos)
        EXPECT_NE(expr.find("slurm_job_id=~\"$slurm_job\""), std::string::npos)
            << p["title"] << ": " << expr;
    }
    if (p["title"] == "Job CPU throttled") {
      throttle_panel = true;
      EXPECT_EQ(p["fieldConfig"]["defaults"]["max"], 1) << "a share of periods";
      const auto expr = p["targets"][0]["expr"].get<std::string>();
      EXPECT_NE(expr.find("rate(dltune_job_cpu_throttled_periods_total"), std::string::npos);
      EXPECT_NE(expr.find("/ rate(dltune_job_cpu_periods_total"), std::string::npos);
    }
  }
  EXPECT_TRUE(throttle_panel);
  bool job_variable = false;
  for (const auto& v : dashboard["templating"]["list"]) {
    if (!v.contains("definition")) continue;
    job_variable = job_variable || v["name"] == "slurm_job";
    // label_values(SELECTOR, label): the selector is PromQL.
    const auto d = v["definition"].get<std::string>();
    const std::string open = "label_values(";
    ASSERT_EQ(d.rfind(open, 0), 0u) << d;
    queries.push_back(d.substr(open.size(), d.rfind(',') - open.size()));
  }
  EXPECT_TRUE(job_variable);
  if (!have("promtool")) GTEST_SKIP() << "promtool (Debian's prometheus package) is not installed";
  std::string rules = "groups:\n  - name: dashboard\n    rules:\n";
  int n = 0;
  for (auto q : queries) {
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{"$__rate_interval", "5m"},
                                                          {"$instance", ".*"},
                                                          {"$gpu", ".*"},
                                                          {"$slurm_job", ".*"}}) {
      for (auto at = q.find(from); at != std::string::npos; at = q.find(from, at))
        q.replace(at, from.size(), to);
    }
    // label_replace's "$1" is the regex's group, not a variable (Grafana leaves it alone).
    for (auto at = q.find("\"$1\""); at != std::string::npos; at = q.find("\"$1\"", at))
      q.replace(at, 4, "\"group1\"");
    EXPECT_EQ(q.find('$'), std::string::npos) << "a variable the test does not know: " << q;
    // A query of several lines stays inside the YAML block.
    for (auto at = q.find('\n'); at != std::string::npos; at = q.find('\n', at + 1))
      q.insert(at + 1, "          ");
    rules += "      - record: dashboard_query_" + std::to_string(n++) +
             "\n        expr: |\n          " + q + "\n";
  }
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("dltune_dashboard_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "queries.yml") << rules;
  const auto r = run({"promtool", "check", "rules", (dir / "queries.yml").string()});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << rules;
  EXPECT_NE(r.out.find("SUCCESS: " + std::to_string(n) + " rules found"), std::string::npos)
      << r.out;
}

TEST(DeployUnit, DashboardLegendsNameTheHost) {
  const auto dashboard = json::parse(slurp(kDeploy / "grafana/dltune-dashboard.json"));
  std::size_t targets = 0;
  for (const auto& p : dashboard["panels"]) {
    if (!p.contains("targets")) continue;
    for (const auto& t : p["targets"]) {
      ++targets;
      ASSERT_TRUE(t.contains("legendFormat")) << p["title"] << ": " << t["expr"];
      const auto legend = t["legendFormat"].get<std::string>();
      EXPECT_TRUE(legend.find("{{instance}}") != std::string::npos ||
                  legend.find("{{Hostname}}") != std::string::npos)
          << p["title"] << ": legend \"" << legend << "\" does not name the host";
    }
  }
  EXPECT_GE(targets, 30u);
}

// The arguments the unit and the DaemonSet give serve are ones it accepts: the same words with
// --once (which prints one scrape and exits) and this host's root.
TEST(DeployUnit, ServeAcceptsTheUnitsArguments) {
  const std::string unit = slurp(kDeploy / "systemd/dltune-serve.service");
  const auto at = unit.find("ExecStart=/usr/local/bin/dltune ");
  ASSERT_NE(at, std::string::npos);
  const auto line = unit.substr(at, unit.find('\n', at) - at);
  std::vector<std::string> argv{DLTUNE_BINARY};
  std::istringstream words(line.substr(line.find(' ') + 1));
  for (std::string w; words >> w;) argv.push_back(w);
  ASSERT_EQ(argv[1], "serve");
  for (const char* extra : {"--once", "--no-gpus", "--no-check"}) argv.push_back(extra);
  const auto r = run(argv, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dltune_memory_total_bytes"), std::string::npos);
}

}  // namespace

// deploy/slurm: every program slurm.conf.example names is a file of deploy/slurm that can be
// executed, whose dltune command line parses (`--help` of the same words), or a program dltune
// builds; and the keys are ones Slurm 22.05 knows. The cluster that runs them:
// tests/integration/slurm_live_test.cpp.
TEST(DeployUnit, TheSlurmExamplesProgramsAreHereAndTheirCommandsParse) {
  std::ifstream example(kDeploy / "slurm/slurm.conf.example");
  ASSERT_TRUE(example);
  const std::set<std::string> known = {
      "HealthCheckProgram", "HealthCheckInterval", "HealthCheckNodeState", "Prolog", "Epilog",
      "TaskProlog",         "TaskEpilog",          "PrologFlags"};
  int programs = 0;
  for (std::string line; std::getline(example, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    ASSERT_NE(eq, std::string::npos) << line;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    EXPECT_TRUE(known.count(key)) << key;
    if (value.empty() || value[0] != '/') continue;
    ++programs;
    // Installed under /usr/lib/dltune/slurm/ from deploy/slurm/ (docs/slurm.md).
    EXPECT_EQ(fs::path(value).parent_path(), "/usr/lib/dltune/slurm") << value;
    const fs::path script = kDeploy / "slurm" / fs::path(value).filename();
    if (!fs::exists(script)) {
      // Else a program dltune builds (its binary beside dltune's), which must answer as it
      // would under Slurm: export lines and notes only.
      const fs::path built = fs::path(DLTUNE_BINARY).parent_path() / fs::path(value).filename();
      ASSERT_TRUE(fs::exists(built)) << value << ": neither deploy/slurm/ nor the build has it";
      const auto r = run({built.string()});
      EXPECT_EQ(r.exit_code, 0) << built << ": " << r.err;
      std::istringstream lines(r.out);
      for (std::string l; std::getline(lines, l);)
        EXPECT_TRUE(l.rfind("export ", 0) == 0 || l.rfind("# dltune: ", 0) == 0) << l;
      continue;
    }
    EXPECT_EQ(::access(script.c_str(), X_OK), 0) << script << " is not executable";
    const std::string text = slurp(script);
    EXPECT_EQ(text.rfind("#!/bin/sh\n", 0), 0u) << script;
    EXPECT_EQ(run({"sh", "-n", script.string()}).exit_code, 0) << script;
    // The dltune line: `exec /usr/bin/dltune ...`, or `/usr/bin/dltune ...` where the script
    // exits 0 after it (a Prolog or Epilog that fails would drain the node).
    auto exec = text.find("exec /usr/bin/dltune ");
    std::size_t args = exec + 21;
    if (exec == std::string::npos) {
      exec = text.find("\n/usr/bin/dltune ");
      args = exec + 17;
      EXPECT_NE(text.find("\nexit 0\n", exec), std::string::npos) << script;
    }
    ASSERT_NE(exec, std::string::npos) << script;
    std::istringstream words(text.substr(args, text.find('\n', args) - args));
    std::vector<std::string> argv = {DLTUNE_BINARY};
    for (std::string w; words >> w;) argv.push_back(w);
    argv.push_back("--help");
    const auto help = run(argv);
    EXPECT_EQ(help.exit_code, 0) << script << ": " << help.err;
  }
  EXPECT_GE(programs, 1);
}

}  // namespace deploy_test
