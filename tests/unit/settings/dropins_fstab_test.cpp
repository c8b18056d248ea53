// The options of one /etc/fstab entry (mount changes persist in fstab, with a backup).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/text.hpp"
#include "settings/dropins.hpp"

namespace dropins_fstab_test {

using dltune::settings::fstab_add_option;
using dltune::settings::fstab_options;

namespace {

// As written by the Debian 12 installer (partman): UUID= specs, columns padded with spaces,
// errors=remount-ro on /, a swap partition, the CD-ROM line.
const std::string kDebian =
    "# /etc/fstab: static file system information.\n"
    "#\n"
    "# Use 'blkid' to print the universally unique identifier for a\n"
    "# device; this may be used with UUID= as a more robust way to name devices\n"
    "# that works even if disks are added and removed. See fstab(5).\n"
    "#\n"
    "# systemd generates mount units based on this file, see systemd.mount(5).\n"
    "# Please run 'systemctl daemon-reload' after you make changes here.\n"
    "#\n"
    "# <file system> <mount point>   <type>  <options>       <dump>  <pass>\n"
    "# / was on /dev/sda1 during installation\n"
    "UUID=3b6c8ff0-9e2e-4b4c-8d9b-3f0a8b7c1d2e /               ext4    errors=remount-ro 0       "
    "1\n"
    "# /data was on /dev/nvme0n1p1 during installation\n"
    "UUID=5d7f2a11-0c3e-4f5b-9a8d-1e2f3a4b5c6d /data           xfs     defaults        0       2\n"
    "# swap was on /dev/sda5 during installation\n"
    "UUID=9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4 none            swap    sw              0       0\n"
    "/dev/sr0        /media/cdrom0   udf,iso9660 user,noauto     0       0\n";

// As written by Ubuntu 22.04's server installer (curtin), then edited by an admin: a swap file
// with tabs, tmpfs for /dev/shm, a scratch disk whose mount point has a space (\040), and no
// newline at the end of the file.
const std::string kUbuntu =
    "# /etc/fstab: static file system information.\n"
    "#\n"
    "# <file system> <mount point>   <type>  <options>       <dump>  <pass>\n"
    "# / was on /dev/nvme0n1p2 during curtin installation\n"
    "/dev/disk/by-uuid/0a3407de-014b-458b-b5c1-848e92a327a3 / ext4 defaults 0 1\n"
    "# /boot/efi was on /dev/nvme0n1p1 during curtin installation\n"
    "/dev/disk/by-uuid/1A2B-3C4D /boot/efi vfat defaults 0 1\n"
    "/swap.img\tnone\tswap\tsw\t0\t0\n"
    "tmpfs\t/dev/shm\ttmpfs\tdefaults,size=64g\t0\t0\n"
    "  # an indented comment /mnt/scratch\\040space is not an entry\n"
    "/dev/nvme1n1  /mnt/scratch\\040space\t ext4  relatime,nofail,x-systemd.device-timeout=5s  0  "
    "2";

// Every line but line `n` (1-based) is identical, and so is everything on line `n` outside its
// options field (the 4th field).
void expect_only_options_changed(const std::string& before, const std::string& after, int n) {
  const auto a = dltune::text::lines(before);
  const auto b = dltune::text::lines(after);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (static_cast<int>(i) + 1 == n) continue;
    EXPECT_EQ(a[i], b[i]) << "line " << i + 1;
  }
  EXPECT_EQ(before.back() == '\n', after.back() == '\n');
  const auto fa = dltune::text::fields(a[n - 1]);
  const auto fb = dltune::text::fields(b[n - 1]);
  ASSERT_EQ(fa.size(), fb.size());
  const auto ofs_a = static_cast<std::size_t>(fa[3].data() - a[n - 1].data());
  const auto ofs_b = static_cast<std::size_t>(fb[3].data() - b[n - 1].data());
  EXPECT_EQ(ofs_a, ofs_b);
  EXPECT_EQ(a[n - 1].substr(0, ofs_a), b[n - 1].substr(0, ofs_b));
  EXPECT_EQ(a[n - 1].substr(ofs_a + fa[3].size()), b[n - 1].substr(ofs_b + fb[3].size()));
}

std::string line(const std::string& text, int n) {
  return std::string(dltune::text::lines(text)[static_cast<std::size_t>(n - 1)]);
}

}  // namespace

TEST(FstabOption, DefaultsBecomesDefaultsNoatime) {
  const auto out = fstab_add_option(kDebian, "/data", "noatime");
  ASSERT_TRUE(out) << out.error().message();
  expect_only_options_changed(kDebian, *out, 14);
  // The blanks after the field stay as they were: the columns after it move, nothing else does.
  EXPECT_EQ(line(*out, 14),
            "UUID=5d7f2a11-0c3e-4f5b-9a8d-1e2f3a4b5c6d /data           xfs     defaults,noatime"
            "        0       2");
}

TEST(FstabOption, AddedAfterOtherOptions) {
  const auto out = fstab_add_option(kDebian, "/", "noatime");
  ASSERT_TRUE(out) << out.error().message();
  expect_only_options_changed(kDebian, *out, 12);
  EXPECT_NE(line(*out, 12).find(" errors=remount-ro,noatime 0       1"), std::string::npos);
}

TEST(FstabOption, NoatimeReplacesRelatimeOnAnEscapedMountPoint) {
  const auto out = fstab_add_option(kUbuntu, "/mnt/scratch space", "noatime");
  ASSERT_TRUE(out) << out.error().message();
  expect_only_options_changed(kUbuntu, *out, 11);
  EXPECT_EQ(line(*out, 11),
            "/dev/nvme1n1  /mnt/scratch\\040space\t ext4  "
            "noatime,nofail,x-systemd.device-timeout=5s  0  2");
  EXPECT_NE(out->back(), '\n');  // the file had no final newline, and still has none
}

TEST(FstabOption, TabSeparatedLinesKeepTheirTabs) {
  const auto out = fstab_add_option(kUbuntu, "/dev/shm", "noatime");
  ASSERT_TRUE(out) << out.error().message();
  expect_only_options_changed(kUbuntu, *out, 9);
  EXPECT_EQ(line(*out, 9), "tmpfs\t/dev/shm\ttmpfs\tdefaults,size=64g,noatime\t0\t0");
}

TEST(FstabOption, AlreadyPresentIsTheSameText) {
  const auto once = fstab_add_option(kUbuntu, "/", "noatime");
  ASSERT_TRUE(once);
  const auto twice = fstab_add_option(*once, "/", "noatime");
  ASSERT_TRUE(twice);
  EXPECT_EQ(*twice, *once);
  const auto cd = fstab_add_option(kDebian, "/media/cdrom0", "noauto");
  ASSERT_TRUE(cd);
  EXPECT_EQ(*cd, kDebian);
}

TEST(FstabOption, TheAtimeFamilyLeavesOneMember) {
  const std::string base = "/dev/sdb1 /data ext4 ";
  const auto opts = [&](const std::string& before, const std::string& add) {
    auto out = fstab_add_option(base + before + " 0 2\n", "/data", add);
    EXPECT_TRUE(out) << (out ? "" : out.error().message());
    return out ? *fstab_options(*out, "/data") : std::string();
  };
  EXPECT_EQ(opts("defaults,relatime,user_xattr", "noatime"), "defaults,noatime,user_xattr");
  EXPECT_EQ(opts("strictatime,rw,relatime", "noatime"), "noatime,rw");
  EXPECT_EQ(opts("relatime,noatime", "noatime"), "noatime");  // already there: drop the other
  EXPECT_EQ(opts("noatime", "relatime"), "relatime");
  EXPECT_EQ(opts("atime,norelatime", "noatime"), "noatime");
  // nodiratime is implied by noatime but does not contradict it.
  EXPECT_EQ(opts("noatime", "nodiratime"), "noatime,nodiratime");
  EXPECT_EQ(opts("diratime", "nodiratime"), "nodiratime");
  // The other contradictions: "x"/"nox", ro/rw, one name with another value.
  EXPECT_EQ(opts("defaults,exec", "noexec"), "defaults,noexec");
  EXPECT_EQ(opts("rw,nofail", "ro"), "ro,nofail");
  EXPECT_EQ(opts("data=ordered,commit=5", "commit=60"), "data=ordered,commit=60");
  // Commas inside quotes do not split an option.
  EXPECT_EQ(opts("context=\"system_u:object_r:tmp_t:s0:c127,c456\",relatime", "noatime"),
            "context=\"system_u:object_r:tmp_t:s0:c127,c456\",noatime");
}

TEST(FstabOption, MountPointsMatchWithoutTrailingSlash) {
  const auto out = fstab_add_option(kDebian, "/data/", "noatime");
  ASSERT_TRUE(out);
  expect_only_options_changed(kDebian, *out, 14);
  EXPECT_EQ(*fstab_options("tmpfs /scratch/ tmpfs defaults 0 0\n", "/scratch"), "defaults");
}

TEST(FstabOption, MissingEntryNamesTheMountPoint) {
  const auto out = fstab_add_option(kDebian, "/mnt/datasets", "noatime");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message(), "no /etc/fstab entry mounts /mnt/datasets");
  // The escaped spelling is not the mount point, and a comment is not an entry.
  EXPECT_FALSE(fstab_add_option(kUbuntu, "/mnt/scratch\\040space", "noatime"));
  EXPECT_FALSE(fstab_add_option("# /data here once\n", "/data", "noatime"));
  EXPECT_FALSE(fstab_add_option("", "/data", "noatime"));
}

TEST(FstabOption, TwoEntriesAreAmbiguous) {
  const std::string twice = kDebian + "/dev/sdc1 /data ext4 defaults 0 2\n";
  const auto out = fstab_add_option(twice, "/data", "noatime");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message(), "ambiguous: /etc/fstab lines 14, 18 each mount /data");
  EXPECT_FALSE(fstab_options(twice, "/data"));
}

TEST(FstabOption, RefusesWhatIsNotOneOption) {
  for (const char* bad : {"", "noatime,nodiratime", "no atime", "noatime\n", "#"}) {
    const auto out = fstab_add_option(kDebian, "/data", bad);
    EXPECT_FALSE(out) << bad;
  }
}

TEST(FstabOption, AnEntryWithoutOptionsGetsAField) {
  const auto out = fstab_add_option("proc /proc proc\n/dev/sdb1 /data xfs\n", "/data", "noatime");
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "proc /proc proc\n/dev/sdb1 /data xfs noatime\n");
  EXPECT_EQ(*fstab_options("/dev/sdb1 /data xfs\n", "/data"), "defaults");
  const auto no_type = fstab_add_option("/dev/sdb1 /data\n", "/data", "noatime");
  ASSERT_FALSE(no_type);
  EXPECT_EQ(no_type.error().message(), "/etc/fstab line 1 has no file system type for /data");
}

TEST(FstabOptions, ReadsTheFieldAsWritten) {
  EXPECT_EQ(*fstab_options(kDebian, "/"), "errors=remount-ro");
  EXPECT_EQ(*fstab_options(kUbuntu, "/mnt/scratch space"),
            "relatime,nofail,x-systemd.device-timeout=5s");
  EXPECT_EQ(*fstab_options(kUbuntu, "/dev/shm"), "defaults,size=64g");
  EXPECT_FALSE(fstab_options(kUbuntu, "/home"));
}

}  // namespace dropins_fstab_test
