// check's default data paths: / and /home and every data mount of the mount table (large
// file systems of files that the system does not own), on hand-made mount tables and the
// fixture hosts' (tests/fixtures/roots/*/proc/self/mountinfo).
#include "settings/data_paths.hpp"
#include "support/build_paths.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "inventory/host_facts.hpp"
#include "support/temp_tree.hpp"

namespace data_paths_test {

using dltune::inventory::FileSystem;
using dltune::settings::check_data_paths;
using dltune::settings::data_mounts;
using dltune::settings::data_option;
using dltune::settings::is_data_mount;

namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;

FileSystem fs(std::string mount_point, std::string fstype, std::optional<std::uint64_t> bytes) {
  FileSystem f;
  f.mount_point = std::move(mount_point);
  f.fstype = std::move(fstype);
  f.device = "/dev/sdb1";
  f.total_bytes = bytes;
  return f;
}

dltune::inventory::HostFacts facts_of(const std::string& host) {
  auto root = dltune::host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/" + host);
  EXPECT_TRUE(root.has_value());
  return dltune::inventory::collect(*root, {});
}

}  // namespace

TEST(DataMounts, LargeFileSystemsOfFilesOutsideTheSystemsDirectories) {
  // Data: local and network file systems mounted where data goes.
  EXPECT_TRUE(is_data_mount(fs("/data", "xfs", 7 * 1024 * kGiB)));
  EXPECT_TRUE(is_data_mount(fs("/scratch", "lustre", std::nullopt)));  // size unknown
  EXPECT_TRUE(is_data_mount(fs("/mnt/datasets", "nfs4", 200 * kGiB)));
  EXPECT_TRUE(is_data_mount(fs("/gpfs/projects", "gpfs", 500 * kGiB)));
  EXPECT_TRUE(is_data_mount(fs("/mnt/beegfs", "beegfs", 100 * kGiB)));
  EXPECT_TRUE(is_data_mount(fs("/home/alice", "nfs", 50 * kGiB)));
  EXPECT_TRUE(is_data_mount(fs("/srv/imagenet", "ext4", 10 * kGiB)));  // exactly the minimum
  // Not data: / and /home are the defaults already.
  EXPECT_FALSE(is_data_mount(fs("/", "ext4", 1024 * kGiB)));
  EXPECT_FALSE(is_data_mount(fs("/home", "ext4", 1024 * kGiB)));
  // Small.
  EXPECT_FALSE(is_data_mount(fs("/mnt/usb", "vfat", 8 * kGiB)));
  EXPECT_FALSE(is_data_mount(fs("/data", "xfs", 0)));
  // Pseudo, memory and image file systems, wherever they are.
  for (const char* t : {"proc", "sysfs", "cgroup2", "tmpfs", "ramfs", "devtmpfs", "overlay",
                        "squashfs", "fuse.squashfuse", "fuse.lxcfs", "iso9660", "autofs"})
    EXPECT_FALSE(is_data_mount(fs("/data", t, 100 * kGiB))) << t;
  // The system's directories and what is mounted under them.
  for (const char* mp : {"/boot", "/boot/efi", "/efi", "/run/user/1000", "/snap/core22/1033",
                         "/var", "/var/lib/docker/overlay2/ab12/merged",
                         "/var/lib/kubelet/pods/x/volumes/y", "/usr", "/opt", "/tmp", "/etc/hosts",
                         "/dev/shm", "/proc/driver/nvidia", "/sys/fs/bpf", "/.singularity.d/libs"})
    EXPECT_FALSE(is_data_mount(fs(mp, "ext4", 100 * kGiB))) << mp;
  // A name that only starts like a system directory is not under it.
  EXPECT_TRUE(is_data_mount(fs("/variance", "ext4", 100 * kGiB)));
  EXPECT_TRUE(is_data_mount(fs("/optane", "xfs", 100 * kGiB)));
}

TEST(DataMounts, TheDefaultIsRootHomeAndTheDataMountsAndDataWins) {
  dltune::inventory::HostFacts f;
  f.storage.file_systems = {fs("/", "ext4", 1024 * kGiB), fs("/boot", "ext4", 2 * kGiB),
                            fs("/data", "xfs", 4096 * kGiB), fs("/dev/shm", "tmpfs", 64 * kGiB),
                            fs("/scratch", "lustre", std::nullopt)};
  EXPECT_EQ(data_mounts(f.storage), (std::vector<std::string>{"/data", "/scratch"}));
  EXPECT_EQ(check_data_paths(f, {}), (std::vector<std::string>{"/", "/home", "/data", "/scratch"}));
  EXPECT_EQ(check_data_paths(f, {"/data/imagenet"}), (std::vector<std::string>{"/data/imagenet"}));
  // tune's own default is / and /home: a fix for another data mount names it.
  EXPECT_EQ(data_option({}, "/"), "");
  EXPECT_EQ(data_option({}, "/home"), "");
  EXPECT_EQ(data_option({}, "/scratch"), " --data /scratch");
  EXPECT_EQ(data_option({"/"}, "/"), " --data /");
  EXPECT_EQ(data_option({}, "/mnt/my data"), " --data '/mnt/my data'");
}

// A mount table as /proc/self/mountinfo has it (proc(5)), sizes as a capture records them.
TEST(DataMounts, FromAMountTable) {
  dltune::testing::TempTree t;
  t.write("proc/self/mountinfo",
          "29 1 259:3 / / rw,relatime - ext4 /dev/nvme0n1p3 rw\n"
          "30 29 259:2 / /boot rw,relatime - ext4 /dev/nvme0n1p2 rw\n"
          "31 30 259:1 / /boot/efi rw,relatime - vfat /dev/nvme0n1p1 rw\n"
          "32 29 0:25 / /run rw,nosuid,nodev - tmpfs tmpfs rw,size=10g\n"
          "33 29 7:0 / /snap/core22/1033 ro,nodev,relatime - squashfs /dev/loop0 ro\n"
          "34 29 259:4 / /var/lib/docker rw,relatime - xfs /dev/nvme2n1 rw\n"
          "35 34 0:60 / /var/lib/docker/overlay2/ab12/merged rw,relatime - overlay overlay "
          "rw,lowerdir=/l,upperdir=/u,workdir=/w\n"
          "36 29 259:5 / /data rw,noatime - xfs /dev/nvme1n1 rw\n"
          "37 29 0:61 / /scratch rw,relatime - lustre 10.1.0.5@o2ib:/scratch rw,flock\n"
          "38 29 8:17 / /mnt/usb rw,relatime - vfat /dev/sdb1 rw\n"
          "39 29 0:62 / /mnt/models rw,relatime - nfs4 10.1.0.9:/models rw,vers=4.2\n")
      .write("run/dltune/capture/fs-usage.json",
             "{\"/\": {\"total_bytes\": 1000000000000, \"free_bytes\": 1},"
             " \"/boot\": {\"total_bytes\": 2000000000, \"free_bytes\": 1},"
             " \"/var/lib/docker\": {\"total_bytes\": 2000000000000, \"free_bytes\": 1},"
             " \"/data\": {\"total_bytes\": 7000000000000, \"free_bytes\": 1},"
             " \"/mnt/usb\": {\"total_bytes\": 8000000000, \"free_bytes\": 1},"
             " \"/mnt/models\": {\"total_bytes\": 50000000000, \"free_bytes\": 1}}\n");
  const auto facts = dltune::inventory::collect(t.root(), {});
  EXPECT_EQ(data_mounts(facts.storage),
            (std::vector<std::string>{"/data", "/scratch", "/mnt/models"}));
}

TEST(DataMounts, OnTheFixtureHosts) {
  // /boot, /boot/efi, /dev/shm and /run/user/1000 are not data; /data, /archive and the NFS
  // datasets are.
  EXPECT_EQ(data_mounts(facts_of("gpu8-numa2-cgv2").storage),
            (std::vector<std::string>{"/data", "/archive", "/datasets"}));
  // A container: the project bound at /workspace is data; /etc/hosts and /usr/bin/nvidia-smi,
  // bound from the same disk, are not.
  EXPECT_EQ(data_mounts(facts_of("container-cgv2").storage),
            (std::vector<std::string>{"/workspace"}));
  // A 4 KiB tmpfs under /mnt: not data.
  EXPECT_TRUE(data_mounts(facts_of("this-vm").storage).empty());
}

}  // namespace data_paths_test
