#pragma once
// /etc/fstab (fstab(5), util-linux): one file system a line, fields separated by spaces or tabs,
//
//   UUID=0a3407de-014b-458b-b5c1-848e92a327a3 /     ext4 errors=remount-ro 0 1
//   /dev/sdb1                                 /mnt/my\040data xfs defaults 0 2
//
// '#' lines and blank lines ignored, and spaces, tabs and backslashes inside the first two fields
// written as octal escapes (\040, \011, \134), which libmount decodes ("unmangle").
// The entries keep the byte offsets of their options field so that a caller can change that field
// and nothing else.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dltune::host::parse {

struct FstabEntry {
  int line = 0;         // 1-based line number in the text
  std::string spec;     // fs_spec, escapes decoded ("UUID=...", "/dev/sda1", "tmpfs")
  std::string file;     // fs_file, the mount point, escapes decoded ("none" for swap)
  std::string vfstype;  // fs_vfstype; "" when the line has only two fields
  std::string mntops;   // fs_mntops as written ("defaults", "errors=remount-ro"); "" when absent
  bool has_mntops = false;
  // Byte range of fs_mntops in the text; when absent, both are where it would start (the end of
  // fs_vfstype).
  std::size_t mntops_begin = 0;
  std::size_t mntops_end = 0;
};

// Lines with fewer than two fields are skipped (libmount rejects them; dltune only reads fstab to
// find one entry and change its options).
[[nodiscard]] std::vector<FstabEntry> fstab(std::string_view text);

// Decodes \ooo octal escapes ("/mnt/my\040data" -> "/mnt/my data"); other backslashes are kept.
[[nodiscard]] std::string fstab_unescape(std::string_view field);

}  // namespace dltune::host::parse
