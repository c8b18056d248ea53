#include "host/parse/fstab.hpp"

#include <gtest/gtest.h>

namespace fstab_test {

using namespace dltune::host::parse;

TEST(Fstab, EntriesFieldsAndOffsets) {
  const std::string text =
      "# <file system> <mount point>   <type>  <options>       <dump>  <pass>\n"
      "UUID=3b6c8ff0-9e2e-4b4c-8d9b-3f0a8b7c1d2e /               ext4    errors=remount-ro 0 1\n"
      "\n"
      "   # indented comment\n"
      "/swap.img\tnone\tswap\tsw\t0\t0\r\n"
      "//nas/share\\040one /mnt/nas\\040share cifs credentials=/root/.smb,uid=1000 0 0\n"
      "lonely\n"
      "/dev/sdb1 /data xfs";
  const auto e = fstab(text);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].line, 2);
  EXPECT_EQ(e[0].spec, "UUID=3b6c8ff0-9e2e-4b4c-8d9b-3f0a8b7c1d2e");
  EXPECT_EQ(e[0].file, "/");
  EXPECT_EQ(e[0].vfstype, "ext4");
  EXPECT_EQ(e[0].mntops, "errors=remount-ro");
  EXPECT_EQ(e[1].file, "none");
  EXPECT_EQ(e[1].vfstype, "swap");
  EXPECT_EQ(e[1].mntops, "sw");
  EXPECT_EQ(e[2].spec, "//nas/share one");
  EXPECT_EQ(e[2].file, "/mnt/nas share");
  EXPECT_EQ(e[2].line, 6);
  EXPECT_EQ(e[3].file, "/data");
  EXPECT_FALSE(e[3].has_mntops);
  EXPECT_EQ(e[3].mntops_begin, text.size());
  for (const auto& x : e) {
    if (x.has_mntops) {
      EXPECT_EQ(text.substr(x.mntops_begin, x.mntops_end - x.mntops_begin), x.mntops);
    }
  }
}

TEST(Fstab, Unescape) {
  EXPECT_EQ(fstab_unescape("/mnt/my\\040data"), "/mnt/my data");
  EXPECT_EQ(fstab_unescape("a\\011b\\134c"), "a\tb\\c");
  EXPECT_EQ(fstab_unescape("\\04"), "\\04");      // too short: kept
  EXPECT_EQ(fstab_unescape("\\400x"), "\\400x");  // more than one byte: kept
  EXPECT_EQ(fstab_unescape("\\09x"), "\\09x");    // not octal
  EXPECT_EQ(fstab_unescape("trailing\\"), "trailing\\");
}

}  // namespace fstab_test
