// health_checks end to end on a fake host (host_checks_fixture.h): check-storage: every check.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ------------------------------------------------------------------------------------------------ check-storage

TEST(HostChecksStorage, EveryCheck) {
  Host h;
  h.write(h.root + "/etc/fstab",
          "# static file system information\nUUID=abc / ext4 defaults 0 1\nnfs1:/home /home nfs defaults 0 0\n"
          "nfs1:/data /mnt/data nfs defaults 0 0\n");
  h.write(h.proc + "/mounts", "/dev/sda1 / ext4 rw 0 0\nnfs1:/home /home nfs rw 0 0\nproc /proc proc rw 0 0\n");
  h.write(h.root + "/etc/hosts", "127.0.0.1 localhost\n");
  fs::create_directories(h.root + "/scratch");
  // Each check takes the roots of the files it reads.
  auto with = [&](std::vector<std::string> a) {
    const std::string check = a[1];  // a copy: the inserts below may move a's elements
    if (check != "mounted-directory") a.insert(a.end(), {"--path.rootfs", h.root});
    if (check == "mounted-directory" || check == "check-mountpoint") a.insert(a.end(), {"--path.procfs", h.proc});
    return a;
  };
  EXPECT_VERDICT(h.run(with({"check-storage", "check-mountpoint", "c", "app", "--mountpoint", "/home/"})), OK,
                 "fstab and mounts have the same entries");
  EXPECT_VERDICT(h.run(with({"check-storage", "check-mountpoint", "c", "app", "--mountpoint", "nfs"})), CRIT,
                 "the following dirs are not mounted: [/mnt/data]");
  EXPECT_VERDICT(h.run(with({"check-storage", "mounted-directory", "c", "app", "-d", "/home"})), OK, "mounted.");
  EXPECT_VERDICT(h.run(with({"check-storage", "mounted-directory", "c", "app", "-d", "/home", "-d", "/mnt/data"})),
                 CRIT, "Directory /mnt/data: directory is not mounted.");

  EXPECT_VERDICT(h.run(with({"check-storage", "file-exists", "c", "app", "-f", "/etc/hosts"})), OK,
                 "All files are present.");
  EXPECT_VERDICT(h.run(with({"check-storage", "file-exists", "c", "app", "-f", "/etc/hosts", "-f", "/etc/nope"})), CRIT,
                 "File /etc/nope not found.");
  EXPECT_VERDICT(h.run(with({"check-storage", "file-exists", "c", "app", "-f", "/etc/nope", "--should-not-exist"})), OK,
                 "All files are absent.");
  EXPECT_VERDICT(h.run(with({"check-storage", "file-exists", "c", "app", "-f", "/etc/hosts", "--should-not-exist"})),
                 CRIT, "File /etc/hosts exists.");
  EXPECT_VERDICT(h.run(with({"check-storage", "directory-exists", "c", "app", "-d", "/scratch"})), OK,
                 "All directories are present.");
  EXPECT_VERDICT(h.run(with({"check-storage", "directory-exists", "c", "app", "-d", "/scratch", "-d", "/etc/hosts"})),
                 CRIT, "Directory /etc/hosts not found.");

  // Usage and size of the real file system holding the temporary root, against thresholds on either side of it.
  struct statvfs st {};
  ASSERT_EQ(::statvfs(h.root.c_str(), &st), 0);
  double used = static_cast<double>(st.f_blocks - st.f_bfree), avail = static_cast<double>(st.f_bavail);
  int pct = static_cast<int>(std::ceil(used * 100.0 / (used + avail)));
  auto usage = [&](int warn, int crit) {
    return h.run(with({"check-storage", "disk-usage", "c", "app", "-v", "/", "--usage-warning-threshold",
                       std::to_string(warn), "--usage-critical-threshold", std::to_string(crit)}));
  };
  // Thresholds 3 points away from the usage measured here: other processes may write meanwhile.
  ASSERT_GT(pct, 4);
  ASSERT_LT(pct, 96);
  EXPECT_VERDICT(usage(pct + 3, 100), OK, "is within limits.");
  EXPECT_VERDICT(usage(pct - 3, 100), WARN, "is above the warning threshold of " + std::to_string(pct - 3) + "%.");
  EXPECT_VERDICT(usage(0, pct - 3), CRIT, "is above the critical threshold of " + std::to_string(pct - 3) + "%.");
  EXPECT_VERDICT(h.run(with({"check-storage", "disk-usage", "c", "app", "-v", "/nonexistent"})), WARN,
                 "Volume /nonexistent: statvfs /nonexistent failed");
  auto r = h.run(with({"check-storage", "disk-usage", "c", "app", "-v", "/", "--inode-check"}));
  EXPECT_TRUE(r.out.find("Volume /: Inode usage, ") != std::string::npos ||
              r.out.find("Volume /: no inode limit.") != std::string::npos)
      << r.out;

  long long kb =
      static_cast<long long>(std::ceil(static_cast<double>(st.f_blocks) * static_cast<double>(st.f_frsize) / 1024.0));
  EXPECT_VERDICT(h.run(with({"check-storage", "disk-size", "c", "app", "-v", "/", "--operator", "=", "--value",
                             std::to_string(kb)})),
                 OK, "Disk size, " + std::to_string(kb) + "K = " + std::to_string(kb) + "K");
  EXPECT_VERDICT(h.run(with({"check-storage", "disk-size", "c", "app", "-v", "/", "--operator", ">", "--value",
                             std::to_string(kb), "--size-unit", "K"})),
                 CRIT, "is not true.");
  EXPECT_VERDICT(
      h.run(with({"check-storage", "disk-size", "c", "app", "-v", "/nonexistent", "--operator", ">", "--value", "1"})),
      WARN, "statvfs /nonexistent failed");
}

}  // namespace
}  // namespace gcm::testing
