// gcm storage: statvfs of the mounts whose mount point matches the cluster's pattern (from <procfs>/self/mountinfo),
// and "Pure" storage usage files of JSON lines. Reads the host only under --path.procfs and --path.rootfs.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/option_binder.h"
#include "cli/option_limits.h"
#include "collectors/collector.h"
#include "core/host_roots.h"
#include "core/json_limits.h"
#include "storage/mountinfo.h"
#include "storage/statvfs_timeout.h"

namespace gcm {
namespace {

constinit const LazySchema kStatvfs{[] {
  Schema s;
  s.name = "Statvfs";
  s.description = "statvfs(2) of one mounted filesystem whose mount point matches the cluster's pattern.";
  s.metric_prefix = "statvfs";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Statvfs;
  s.fields = {
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"directory", FieldType::String, FieldRole::Identity, "", "mount point (or its symlink alias in /)"},
      {"file_system", FieldType::String, FieldRole::Identity, "", "mount source, e.g. server:/export"},
      {"f_bsize", FieldType::Int, FieldRole::Gauge, "bytes", "filesystem block size"},
      {"f_frsize", FieldType::Int, FieldRole::Gauge, "bytes", "fragment size (the unit of the block counts)"},
      {"f_blocks", FieldType::Int, FieldRole::Gauge, "", "size of the filesystem in f_frsize units"},
      {"f_bfree", FieldType::Int, FieldRole::Gauge, "", "free blocks"},
      {"f_bavail", FieldType::Int, FieldRole::Gauge, "", "free blocks available to unprivileged users"},
      {"f_files", FieldType::Int, FieldRole::Gauge, "", "inodes"},
      {"f_ffree", FieldType::Int, FieldRole::Gauge, "", "free inodes"},
      {"f_favail", FieldType::Int, FieldRole::Gauge, "", "free inodes available to unprivileged users"},
      {"f_fsid", FieldType::Int, FieldRole::Attribute, "", "filesystem id"},
      {"f_flag", FieldType::Int, FieldRole::Attribute, "", "mount flags (ST_RDONLY=1, ST_NOSUID=2, ...)"},
      {"f_namemax", FieldType::Int, FieldRole::Attribute, "", "maximum filename length"},
  };
  return s;
}};

constinit const LazySchema kPureInfo{[] {
  Schema s;
  s.name = "PureInfo";
  s.description = "Per-user usage of a Pure storage directory, from a JSON-lines usage file.";
  s.metric_prefix = "pure";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Pure;
  s.fields = {
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"user", FieldType::Int, FieldRole::Identity, "", "numeric user id"},
      {"used_bytes", FieldType::Int, FieldRole::Gauge, "bytes", "bytes used by the user in the directory", "pure_used"},
      {"sample_time", FieldType::Int, FieldRole::Attribute, "seconds", "unix time of the sample"},
      {"directory", FieldType::String, FieldRole::Identity, "", "directory (normalised path)"},
      {"username", FieldType::String, FieldRole::Identity, "", "user name, null when the uid is unknown"},
  };
  return s;
}};

// PurePosixPath(p) as a string: no duplicate slashes, no "." components, no trailing slash; ".." kept.
std::string normalise_posix(std::string_view p) {
  if (p.empty()) return ".";
  std::string prefix;
  if (p.size() >= 2 && p[0] == '/' && p[1] == '/' && (p.size() == 2 || p[2] != '/'))
    prefix = "//";
  else if (p[0] == '/')
    prefix = "/";
  std::string out;
  size_t i = 0;
  while (i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    if (!part.empty() && part != ".") {
      if (!out.empty()) out.push_back('/');
      out.append(part);
    }
    i = j + 1;
  }
  if (out.empty()) return prefix.empty() ? "." : prefix;
  return prefix + out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class StorageCollector : public Collector {
 public:
  explicit StorageCollector(OptionBinder& b) {
    b.option("--statvfs-patterns", "statvfs_patterns", patterns_,
             "CLUSTER=REGEX: report the mounts of CLUSTER whose mount point matches REGEX (anchored at the start, "
             "like Python's re.match). Repeat for several clusters.");
    b.option("--statvfs-symlink", "statvfs_symlink", symlink_,
             "If set, a mount point that is the target of a symlink in / is reported under the symlink's path.");
    b.option("--pure-json-file-path", "pure_json_file_path", pure_files_,
             "A Pure usage file: JSON lines {\"user\": UID, \"used\": BYTES, \"sample_time\": UNIX, \"directory\": "
             "PATH}. Repeatable.");
    add_host_root_option(b, kProcfsRoot, procfs_, "Where /proc is mounted (mountinfo is read from here).");
    add_host_root_option(b, kRootfsRoot, rootfs_,
                         "Where the host's / is mounted: statvfs and symlinks are looked up under it.");
    b.option("--statvfs-timeout", "statvfs_timeout", statvfs_timeout_s_,
             "Seconds to wait for one statvfs (a hung NFS mount is skipped and reported).")
        ->capture_default_str()
        ->check(CLI::PositiveNumber)
        ->check(timeout_seconds());
  }

  std::vector<CollectorTask> tasks(const CollectorContext& ctx) override {
    std::vector<CollectorTask> out;
    if (!patterns_.empty()) {
      std::map<std::string, std::string> by_cluster;
      for (const auto& item : patterns_) {
        // Split on the first '=' only, so a regex may contain '=' (the reference splits on every '=').
        size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
          throw UsageError(fmt::format("--statvfs-patterns '{}' is not CLUSTER=REGEX", item));
        by_cluster[item.substr(0, eq)] = item.substr(eq + 1);
      }
      auto it = by_cluster.find(ctx.cluster);
      if (it == by_cluster.end()) {
        std::vector<std::string> names;
        for (const auto& [k, v] : by_cluster) names.push_back(k);
        throw UsageError(fmt::format("--statvfs-patterns has no entry for cluster '{}' (entries: {})", ctx.cluster,
                                     fmt::join(names, ", ")));
      }
      try {
        pattern_ = std::regex(it->second, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw UsageError(fmt::format("--statvfs-patterns regex '{}' is invalid: {}", it->second, e.what()));
      }
      out.push_back(
          {"statvfs", &kStatvfs.get(), [this](const CollectorContext& c, RecordOut& o) { collect_statvfs(c, o); }});
    }
    if (!pure_files_.empty())
      out.push_back(
          {"pure", &kPureInfo.get(), [this](const CollectorContext& c, RecordOut& o) { collect_pure(c, o); }});
    if (out.empty())
      throw UsageError("nothing to collect: give --statvfs-patterns CLUSTER=REGEX and/or --pure-json-file-path FILE");
    return out;
  }

 private:
  std::string under_root(const std::string& path) const {
    if (rootfs_.empty() || rootfs_ == "/") return path;
    return (std::filesystem::path(rootfs_) / std::filesystem::path(path).relative_path()).string();
  }

  // {link target: "/<link name>"} for every symlink directly in /.
  std::map<std::string, std::string> root_symlinks() const {
    std::map<std::string, std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(under_root("/"), ec)) {
      if (!e.is_symlink(ec)) continue;
      std::filesystem::path target = std::filesystem::read_symlink(e.path(), ec);
      if (ec) continue;
      if (target.is_relative()) target = std::filesystem::path("/") / target;
      out[target.lexically_normal().string()] = "/" + e.path().filename().string();
    }
    return out;
  }

  void collect_statvfs(const CollectorContext& ctx, RecordOut& out) {
    std::string source = (std::filesystem::path(procfs_) / "self/mountinfo").string();
    auto mounts = parse_mountinfo(read_file(source), source);
    std::map<std::string, std::string> aliases;
    if (!symlink_.empty()) aliases = root_symlinks();
    Record r(kStatvfs);
    size_t skipped = 0;
    for (const auto& m : mounts) {
      std::string directory = m.mount_point;
      if (auto a = aliases.find(m.mount_point); a != aliases.end()) directory = a->second;
      if (!std::regex_search(directory, pattern_, std::regex_constants::match_continuous)) continue;
      auto res = statvfs_with_timeout(under_root(m.mount_point),
                                      std::chrono::milliseconds(static_cast<int64_t>(statvfs_timeout_s_ * 1000)));
      if (res.status != StatvfsStatus::Ok) {
        ++skipped;
        ctx.log->error("statvfs of {} ({}) {}", m.mount_point, m.mount_source,
                       res.status == StatvfsStatus::TimedOut
                           ? fmt::format("did not answer within {} s; skipped", statvfs_timeout_s_)
                           : fmt::format("failed: {}; skipped", std::strerror(res.error)));
        continue;
      }
      const struct statvfs& st = res.st;
      r[0] = ctx.cluster;
      r[1] = directory;
      r[2] = m.mount_source;
      r[3] = static_cast<int64_t>(st.f_bsize);
      r[4] = static_cast<int64_t>(st.f_frsize);
      r[5] = static_cast<int64_t>(st.f_blocks);
      r[6] = static_cast<int64_t>(st.f_bfree);
      r[7] = static_cast<int64_t>(st.f_bavail);
      r[8] = static_cast<int64_t>(st.f_files);
      r[9] = static_cast<int64_t>(st.f_ffree);
      r[10] = static_cast<int64_t>(st.f_favail);
      r[11] = static_cast<int64_t>(st.f_fsid);
      r[12] = static_cast<int64_t>(st.f_flag);
      r[13] = static_cast<int64_t>(st.f_namemax);
      out.emit(r);
    }
    if (skipped) throw std::runtime_error(fmt::format("{} matching mount(s) could not be measured", skipped));
  }

  void collect_pure(const CollectorContext& ctx, RecordOut& out) {
    Record r(kPureInfo);
    std::vector<std::string> errors;
    for (const auto& path : pure_files_) {
      std::ifstream in(path);
      if (!in) {
        errors.push_back(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
        continue;
      }
      std::string line;
      size_t line_no = 0;
      while (std::getline(in, line)) {
        ++line_no;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        auto j = parse_json_limited(line);
        auto bad = [&](const std::string& what) { errors.push_back(fmt::format("{}:{}: {}", path, line_no, what)); };
        if (j.is_discarded() || !j.is_object()) {
          bad("not a JSON object");
          continue;
        }
        if (!j.contains("user") || !j["user"].is_number_integer() || !j.contains("used") ||
            !j["used"].is_number_integer() || !j.contains("sample_time") || !j["sample_time"].is_number() ||
            !j.contains("directory") || !j["directory"].is_string()) {
          bad("expected {\"user\": int, \"used\": int, \"sample_time\": int, \"directory\": string}");
          continue;
        }
        int64_t uid = j["user"].get<int64_t>();
        r[0] = ctx.cluster;
        r[1] = uid;
        r[2] = j["used"].get<int64_t>();
        r[3] = static_cast<int64_t>(j["sample_time"].get<double>());
        r[4] = normalise_posix(j["directory"].get<std::string>());
        r[5] = username(uid);
        out.emit(r);
      }
    }
    if (!errors.empty()) {
      for (const auto& e : errors) ctx.log->error("pure: {}", e);
      throw std::runtime_error(
          fmt::format("{} bad line(s) or file(s) in the Pure usage files; first: {}", errors.size(), errors.front()));
    }
  }

  Value username(int64_t uid) {
    auto it = users_.find(uid);
    if (it != users_.end()) return it->second;
    struct passwd pw, *res = nullptr;
    char buf[4096];
    Value v;
    if (::getpwuid_r(static_cast<uid_t>(uid), &pw, buf, sizeof buf, &res) == 0 && res) v = Value(pw.pw_name);
    users_[uid] = v;
    return v;
  }

  std::vector<std::string> patterns_;
  std::string symlink_;
  std::vector<std::string> pure_files_;
  std::string procfs_ = "/proc";
  std::string rootfs_ = "/";
  double statvfs_timeout_s_ = 10;
  std::regex pattern_;
  std::map<int64_t, Value> users_;
};

const bool kStorageRegistered = register_collector({
    "storage",
    "Filesystem capacity of matching mounts, and Pure storage usage",
    "Filesystem capacity (statvfs) of the mounts matching a per-cluster pattern, and Pure storage usage files.",
    86400,
    "storage",
    [](OptionBinder& b) { return std::make_unique<StorageCollector>(b); },
});
const bool kStorageSchemasRegistered = register_schema(&kStatvfs) && register_schema(&kPureInfo);

}  // namespace

}  // namespace gcm
