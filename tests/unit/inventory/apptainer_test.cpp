// Apptainer and Singularity containers: found by the variables they set in every container
// (APPTAINER_CONTAINER, APPTAINER_NAME; SINGULARITY_CONTAINER, SINGULARITY_NAME: Apptainer's user
// guide, "Environment and Metadata") and by /.singularity.d, which every image holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "core/json.hpp"
#include "host/root.hpp"
#include "inventory/os.hpp"
#include "support/temp_tree.hpp"

namespace apptainer_test {

using dltune::testing::TempTree;
using namespace dltune::inventory;

namespace {

// A SIF image's squashfs as /, the host's /dev and /dev/shm, the user's home bound in.
const char* kApptainerMounts =
    "700 650 7:1 / / ro,nosuid,nodev,relatime - squashfs /dev/loop1 ro,errors=continue\n"
    "701 700 0:5 / /dev rw,nosuid,relatime - devtmpfs udev rw,size=528165348k,mode=755\n"
    "702 701 0:26 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw,inode64\n"
    "703 700 0:23 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
    "704 700 259:3 /home/alice /home/alice rw,relatime - ext4 /dev/nvme0n1p3 rw\n";

const std::map<std::string, std::string> kApptainerEnv = {
    {"APPTAINER_CONTAINER", "/scratch/images/pytorch_24.01.sif"},
    {"APPTAINER_NAME", "pytorch_24.01.sif"},
    {"SINGULARITY_CONTAINER", "/scratch/images/pytorch_24.01.sif"},
    {"SINGULARITY_NAME", "pytorch_24.01.sif"}};

bool has(const std::vector<std::string>& v, const std::string& part) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

}  // namespace

TEST(Apptainer, ItsVariablesNameTheRuntime) {
  TempTree t;
  t.write("proc/self/mountinfo", kApptainerMounts);
  auto root = t.root();
  Context ctx(root, kApptainerEnv);
  const auto f = collect_os(ctx);
  EXPECT_EQ(f.container, "apptainer");
  EXPECT_TRUE(has(f.container_evidence, "APPTAINER_CONTAINER=/scratch/images/pytorch_24.01.sif"));
  EXPECT_EQ(to_json(f)["container"], "apptainer");
  EXPECT_TRUE(ctx.problems().empty());
}

TEST(Apptainer, SingularitysOwnVariablesAloneNameSingularity) {
  TempTree t;
  t.write("proc/self/mountinfo", kApptainerMounts);
  auto root = t.root();
  Context ctx(root,
              {{"SINGULARITY_CONTAINER", "/opt/images/tf.sif"}, {"SINGULARITY_NAME", "tf.sif"}});
  const auto f = collect_os(ctx);
  EXPECT_EQ(f.container, "singularity");
  EXPECT_TRUE(has(f.container_evidence, "SINGULARITY_NAME=tf.sif"));
}

// Apptainer's session overlay on the image: the nearest runtime is named, not "container".
TEST(Apptainer, WinsOverAnOverlayRoot) {
  TempTree t;
  t.write("proc/self/mountinfo",
          "800 650 0:93 / / ro,nosuid,nodev,relatime - overlay overlay ro,lowerdir=/l:/r\n");
  auto root = t.root();
  Context ctx(root, {{"APPTAINER_NAME", "pytorch.sif"}});
  const auto f = collect_os(ctx);
  EXPECT_EQ(f.container, "apptainer");
  EXPECT_TRUE(has(f.container_evidence, "the root file system is overlay"));
  EXPECT_TRUE(has(f.container_evidence, "APPTAINER_NAME=pytorch.sif"));
}

// The variables of a shell that was in a container, on a machine's own root disk (a Slurm job
// submitted from inside Apptainer gets them): evidence, not a container.
TEST(Apptainer, InheritedVariablesOnAMachinesOwnDiskAreNotAContainer) {
  TempTree t;
  t.write("proc/self/mountinfo", "29 1 259:3 / / rw,relatime - ext4 /dev/nvme0n1p3 rw\n");
  auto root = t.root();
  Context ctx(root, kApptainerEnv);
  const auto f = collect_os(ctx);
  EXPECT_FALSE(f.container);
  ASSERT_EQ(f.container_evidence.size(), 1u);
  EXPECT_NE(f.container_evidence[0].find("but / is ext4 on /dev/nvme0n1p3: not counted"),
            std::string::npos)
      << f.container_evidence[0];
}

TEST(Apptainer, NoVariablesNoImageNoApptainer) {
  TempTree t;
  t.write("proc/self/mountinfo", kApptainerMounts);
  auto root = t.root();
  Context ctx(root, {{"APPTAINER_NAME", ""}});  // set but empty: nothing
  const auto f = collect_os(ctx);
  EXPECT_FALSE(f.container);
  EXPECT_TRUE(f.container_evidence.empty());
}

// /.singularity.d alone (a container started with its variables cleared by hand); host::Root
// reads it (one of Root::known_locations).
TEST(Apptainer, TheImagesDirectoryAloneIsApptainer) {
  ASSERT_TRUE(dltune::host::Root::check_path("/.singularity.d"));
  TempTree t;
  t.write("proc/self/mountinfo", kApptainerMounts)
      .write(".singularity.d/env/90-environment.sh", "#!/bin/sh\n")
      .write(".singularity.d/runscript", "#!/bin/sh\nexec \"$@\"\n");
  auto root = t.root();
  Context ctx(root, {});
  const auto f = collect_os(ctx);
  EXPECT_EQ(f.container, "apptainer");
  EXPECT_TRUE(has(f.container_evidence, "/.singularity.d exists"));
}

// A capture made inside the container keeps the variables (Context::environment_names), so
// `env --root` on it names the runtime too.
TEST(Apptainer, ItsVariablesAreCaptured) {
  const auto& names = Context::environment_names();
  for (const char* n :
       {"APPTAINER_CONTAINER", "APPTAINER_NAME", "SINGULARITY_CONTAINER", "SINGULARITY_NAME"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

}  // namespace apptainer_test
