// gcm jobstats and gcm usage against the real things: real jobs on the Slurm testbed (their sacct rows), and a real
// Prometheus (Debian's) serving a TSDB that promtool backfilled with those jobs' GPU series, written as the agent
// exports them (gcm_gpu_job_info plus the device series). The HTML page is loaded in headless Chromium (Debian's)
// and its screenshot is read back (libpng) to check that the timeline was drawn with the right colours in the
// right lanes.
#include <png.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/http_client.h"
#include "helpers.h"
#include "jobstats/job_report.h"
#include "jobstats/report_render.h"
#include "process.h"

namespace gcm::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// --- screenshots ---

struct Rgb {
  uint8_t r, g, b;
};

Rgb hex(const char* c) {
  auto v = std::stoul(std::string(c + 1), nullptr, 16);
  return {static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
}

struct Image {
  unsigned width = 0, height = 0;
  std::vector<uint8_t> rgb;
  Rgb at(unsigned x, unsigned y) const {
    size_t i = (static_cast<size_t>(y) * width + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

Image read_png(const std::string& path) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path.c_str())) throw std::runtime_error(path + ": " + img.message);
  img.format = PNG_FORMAT_RGB;
  Image out;
  out.width = img.width;
  out.height = img.height;
  out.rgb.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.rgb.data(), 0, nullptr))
    throw std::runtime_error(path + ": " + img.message);
  return out;
}

// Pixels of one colour (within a small tolerance: font smoothing never touches the filled rectangles, but a
// colour profile might shift a channel by one) and where they lie.
struct ColourArea {
  size_t pixels = 0;
  unsigned min_x = ~0u, max_x = 0, min_y = ~0u, max_y = 0;
  std::vector<unsigned> rows;  // pixels per row
  std::vector<unsigned> row_min_x, row_max_x;
  // The leftmost and rightmost pixel over the given rows (a lane's, not the legend's swatch of the same colour).
  std::pair<unsigned, unsigned> x_extent(const std::vector<unsigned>& ys) const {
    unsigned lo = ~0u, hi = 0;
    for (unsigned y : ys) lo = std::min(lo, row_min_x[y]), hi = std::max(hi, row_max_x[y]);
    return {lo, hi};
  }
};

ColourArea find_colour(const Image& im, Rgb c) {
  ColourArea a;
  a.rows.assign(im.height, 0);
  a.row_min_x.assign(im.height, ~0u);
  a.row_max_x.assign(im.height, 0);
  for (unsigned y = 0; y < im.height; ++y)
    for (unsigned x = 0; x < im.width; ++x) {
      Rgb p = im.at(x, y);
      if (std::abs(p.r - c.r) <= 2 && std::abs(p.g - c.g) <= 2 && std::abs(p.b - c.b) <= 2) {
        ++a.pixels;
        ++a.rows[y];
        a.row_min_x[y] = std::min(a.row_min_x[y], x), a.row_max_x[y] = std::max(a.row_max_x[y], x);
        a.min_x = std::min(a.min_x, x), a.max_x = std::max(a.max_x, x);
        a.min_y = std::min(a.min_y, y), a.max_y = std::max(a.max_y, y);
      }
    }
  return a;
}

// Loads the page in headless Chromium and returns the screenshot.
Image screenshot(const std::string& html, const std::string& dir) {
  std::string chromium = find_executable("chromium");
  if (chromium.empty()) throw std::runtime_error("chromium is not installed (scripts/install-deps.sh)");
  CommandSpec s;
  // --no-sandbox: the tests may run as root, where Chromium refuses its sandbox. A private profile directory, so
  // a Chromium of the user's is not disturbed (and none of its state leaks in).
  s.argv = {chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--user-data-dir=" + dir + "/chromium-profile",
            "--window-size=1000,1400",
            "--screenshot=" + dir + "/page.png",
            "file://" + html};
  s.timeout = 120s;
  auto r = run_command(s);
  if (!r.ok() || !std::filesystem::exists(dir + "/page.png")) throw std::runtime_error(describe_failure(s, r));
  return read_png(dir + "/page.png");
}

// Rows where a lane's colour is a full lane wide (the legend's swatches are 14 px: never this wide).
std::vector<unsigned> lane_rows(const ColourArea& a, unsigned min_width) {
  std::vector<unsigned> rows;
  for (unsigned y = 0; y < a.rows.size(); ++y)
    if (a.rows[y] >= min_width) rows.push_back(y);
  return rows;
}

// The report of two busy GPUs (one throttled and slow for the second half) and one idle, over an hour.
jobstats::JobReport three_gpu_report() {
  jobstats::JobAllocation job;
  job.job_id = job.job_id_display = "77";
  job.user = "alice", job.account = "ml", job.partition = "gpu", job.cluster = "tb", job.state = "COMPLETED";
  job.node_list = "node[1-2]", job.nodes = {"node1", "node2"}, job.gpus = 3;
  int64_t t0 = 1764583200;
  job.start = t0, job.end = t0 + 3600;
  jobstats::JobSeries js;
  auto add = [&](std::vector<jobstats::Series>& v, const std::string& node, const std::string& gpu,
                 const std::function<double(int)>& f) {
    jobstats::Series s;
    s.labels = {{"cluster", "tb"}, {"node", node}, {"gpu", gpu}};
    for (int i = 0; i < 60; ++i) s.points.push_back({t0 + i * 60, f(i)});
    v.push_back(s);
  };
  for (auto [node, gpu, busy, slow] : {std::tuple{"node1", "0", true, false}, std::tuple{"node1", "1", true, true},
                                       std::tuple{"node2", "0", false, false}}) {
    add(js.job_info, node, gpu, [](int) { return 1; });
    add(js.utilization, node, gpu, [busy = busy](int) { return busy ? 100 : 0; });
    add(js.sm_clock, node, gpu, [busy = busy, slow = slow](int i) {
      return !busy ? 2e8 : slow && i >= 30 ? 1.6e9 : 1.98e9;
    });
    add(js.clock_events, node, gpu, [slow = slow](int i) { return slow && i >= 30 ? 8 : 0; });
  }
  return jobstats::build_job_report(job, t0, t0 + 3600, 60, js);
}

TEST(JobstatsHtml, ChromiumDrawsOneLanePerGpuWithItsColours) {
  std::string dir = temp_dir("jobstats-html");
  std::string page = dir + "/job.html";
  std::ofstream(page) << jobstats::render_html(three_gpu_report());
  Image im = screenshot(page, dir);
  ASSERT_GT(im.width, 900u);
  auto busy = find_colour(im, hex(jobstats::kColourBusy));
  auto idle = find_colour(im, hex(jobstats::kColourIdle));
  auto slow = find_colour(im, hex(jobstats::kColourSlow));
  // Lanes are 760 px wide: two busy lanes, one idle lane, and a red bar under the second half of the slow one.
  auto busy_rows = lane_rows(busy, 700), idle_rows = lane_rows(idle, 700), slow_rows = lane_rows(slow, 350);
  ASSERT_GE(busy_rows.size(), 2u * 18) << "busy pixels " << busy.pixels;
  ASSERT_GE(idle_rows.size(), 18u) << "idle pixels " << idle.pixels;
  ASSERT_GE(slow_rows.size(), 3u) << "slow pixels " << slow.pixels;
  // Order of the lanes: node1 GPU 0, node1 GPU 1 (busy), then node2 GPU 0 (idle) below them; the red bar lies
  // between the second busy lane and the idle one.
  EXPECT_LT(busy_rows.back(), idle_rows.front());
  EXPECT_GT(slow_rows.front(), busy_rows.front() + 20);
  EXPECT_LT(slow_rows.back(), idle_rows.front());
  // The red bar covers the second half of the chart only: it starts near the middle of the busy lanes and ends
  // where they end.
  auto [busy_left, busy_right] = busy.x_extent(busy_rows);
  auto [slow_left, slow_right] = slow.x_extent(slow_rows);
  EXPECT_GT(busy_right - busy_left, 700u);
  unsigned mid = (busy_left + busy_right) / 2;
  EXPECT_NEAR(static_cast<double>(slow_left), mid, 4) << slow_left << " vs " << mid;
  EXPECT_NEAR(static_cast<double>(slow_right), busy_right, 3);
  if (!HasFailure())
    std::filesystem::remove_all(dir);
  else
    std::cerr << "kept " << dir << " (page and screenshot)\n";
}

// --- the testbed and a backfilled Prometheus ---

int64_t unix_of(const std::string& sacct_time) {  // the testbed prints UTC (TZ=UTC below)
  std::tm tm{};
  if (!strptime(sacct_time.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) throw std::runtime_error("time " + sacct_time);
  return timegm(&tm);
}

// OpenMetrics of jobs' GPUs, one sample a second: family -> series labels -> sample lines. OpenMetrics wants each
// family once and each series' samples together and in time order, so jobs are added here and written at the end.
struct GpuPlan {
  std::string node, gpu;
  std::function<double(int64_t)> util, clock, events;  // by second since the job started
  std::optional<int64_t> xid_at;                       // an XID 79 from this second on
};
using Families = std::map<std::string, std::map<std::string, std::string>>;

void add_job_series(Families& fam, const std::string& job_id, const std::string& user, const std::string& account,
                    int64_t from, int64_t to, const std::vector<GpuPlan>& gpus) {
  for (const auto& g : gpus) {
    std::string dev =
        fmt::format("{{cluster=\"testbed\",node=\"{}\",gpu=\"{}\",uuid=\"GPU-{}-{}\"", g.node, g.gpu, g.node, g.gpu);
    std::string info =
        dev + fmt::format(",job_id=\"{}\",user=\"{}\",account=\"{}\",partition=\"gpu\"}}", job_id, user, account);
    std::string xid = dev + ",xid=\"79\"}";
    dev += "}";
    double joules = 1e6;
    auto add = [&](const std::string& family, const std::string& name, const std::string& labels, double v, int64_t t) {
      fam[family][name + labels] += fmt::format("{}{} {} {}\n", name, labels, v, t);
    };
    for (int64_t t = from; t <= to; ++t) {
      int64_t s = t - from;
      double util = g.util(s);
      double power = util > 0 ? 300 : 60;
      joules += power;
      add("gcm_gpu_job_info gauge", "gcm_gpu_job_info", info, 1, t);
      add("gcm_gpu_utilization_percent gauge", "gcm_gpu_utilization_percent", dev, util, t);
      add("gcm_gpu_clock_sm_hertz gauge", "gcm_gpu_clock_sm_hertz", dev, g.clock(s), t);
      add("gcm_gpu_clock_event_reasons gauge", "gcm_gpu_clock_event_reasons", dev, g.events(s), t);
      add("gcm_gpu_power_watts gauge", "gcm_gpu_power_watts", dev, power, t);
      add("gcm_gpu_energy_joules counter", "gcm_gpu_energy_joules_total", dev, joules, t);
      add("gcm_gpu_memory_used_bytes gauge", "gcm_gpu_memory_used_bytes", dev, util > 0 ? 40e9 : 5e8, t);
      add("gcm_gpu_memory_total_bytes gauge", "gcm_gpu_memory_total_bytes", dev, 85899345920.0, t);
      if (g.xid_at && s >= *g.xid_at) add("gcm_gpu_xid_errors counter", "gcm_gpu_xid_errors_total", xid, 1, t);
    }
  }
}

void write_openmetrics(const Families& fam, const std::string& path) {
  std::ofstream out(path);
  for (const auto& [family, series] : fam) {
    auto sp = family.find(' ');
    out << "# TYPE " << family.substr(0, sp) << " " << family.substr(sp + 1) << "\n";
    for (const auto& [labels, samples] : series) out << samples;
  }
  out << "# EOF\n";
}

struct TestbedJob {
  std::string id;
  explicit TestbedJob(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"sbatch", "--parsable", "-p", "gpu", "-o", "/dev/null"};
    argv.insert(argv.end(), args.begin(), args.end());
    id = run_ok(argv);
    while (!id.empty() && id.back() == '\n') id.pop_back();
  }
  ~TestbedJob() {
    try {
      run_ok({"scancel", id});
    } catch (...) {
    }
  }
  std::string state() const { return sacct_field(id, "State"); }
};

TEST(JobstatsOnTestbed, FinishedAndRunningJobsFromSacctAndABackfilledPrometheus) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  ASSERT_FALSE(find_executable("prometheus").empty()) << "prometheus is not installed (scripts/install-deps.sh)";
  ::setenv("TZ", "UTC", 1);  // sacct (and gcm) read and print the testbed's times in UTC
  std::string dir = temp_dir("jobstats-tb");
  // A finished job on two nodes, 2 GPUs each, and a running one on one GPU.
  TestbedJob done({"-N2", "--gres=gpu:2", "-J", "jobstats-done", "--wrap", "exec sleep 20"});
  ASSERT_TRUE(eventually([&] { return done.state() == "COMPLETED"; }, 120s)) << done.state();
  // The running job goes to other nodes and starts seconds after the first ended: no GPU series of the two jobs
  // meet in one second (a GPU that ran both would have two samples at the instant of the hand-over).
  std::this_thread::sleep_for(2s);
  TestbedJob running({"-N1", "--gres=gpu:1", "-x", sacct_field(done.id, "NodeList"), "-J", "jobstats-running", "--wrap",
                      "exec sleep 600"});
  ASSERT_TRUE(eventually([&] { return running.state() == "RUNNING"; }, 60s)) << running.state();
  std::this_thread::sleep_for(5s);  // a few seconds of history for the running job
  std::string user = sacct_field(done.id, "User"), account = sacct_field(done.id, "Account");
  auto nodes = run_ok({"scontrol", "show", "hostnames", sacct_field(done.id, "NodeList")});
  std::vector<std::string> node;
  std::istringstream ns(nodes);
  for (std::string n; ns >> n;) node.push_back(n);
  ASSERT_EQ(node.size(), 2u);
  int64_t start = unix_of(sacct_field(done.id, "Start")), end = unix_of(sacct_field(done.id, "End"));
  int64_t elapsed = end - start;
  ASSERT_GE(elapsed, 15);
  // node[0] GPUs 0 and 1 and node[1] GPU 1 busy; node[1] GPU 0 idle; node[1] GPU 1 18 % slow with HW slowdown
  // from the 5th second on; an XID 79 on node[0] GPU 1 at the 8th second.
  auto busy = [](int64_t) { return 100.0; };
  auto fast = [](int64_t) { return 1.98e9; };
  auto none = [](int64_t) { return 0.0; };
  std::vector<GpuPlan> plan = {
      {node[0], "0", busy, fast, none, {}},
      {node[0], "1", busy, fast, none, 8},
      {node[1], "0", [](int64_t) { return 0.0; }, [](int64_t) { return 2.1e8; }, [](int64_t) { return 1.0; }, {}},
      {node[1],
       "1",
       busy,
       [](int64_t s) { return s >= 5 ? 1.62e9 : 1.98e9; },
       [](int64_t s) { return s >= 5 ? 8.0 : 0.0; },
       {}},
  };
  std::string rnode = sacct_field(running.id, "NodeList");
  int64_t rstart = unix_of(sacct_field(running.id, "Start"));
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  Families fam;
  add_job_series(fam, done.id, user, account, start, end, plan);
  add_job_series(fam, running.id, user, account, rstart, now,
                 {{rnode, "0", [](int64_t) { return 50.0; }, fast, none, {}}});
  write_openmetrics(fam, dir + "/series.om");
  run_ok({"promtool", "tsdb", "create-blocks-from", "openmetrics", dir + "/series.om", dir + "/tsdb"});
  int port = free_port();
  std::ofstream(dir + "/prometheus.yml") << "global:\n  scrape_interval: 15s\n";
  BackgroundProcess prom(
      {"prometheus", "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/tsdb",
       "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      dir + "/prometheus.stderr");
  std::string url = "http://127.0.0.1:" + std::to_string(port);
  HttpClient http;
  ASSERT_TRUE(eventually(
      [&] {
        try {
          return http.get(url + "/-/ready", 2s).status == 200;
        } catch (const std::exception&) {
          return false;
        }
      },
      60s))
      << read_text(dir + "/prometheus.stderr");

  // The finished job, as JSON and HTML, at Prometheus's finest resolution.
  auto r = run_gcm({"jobstats", done.id, "--prometheus-url", url, "--step", "1", "--min-slow", "5", "--json", "--html",
                    dir + "/done.html"},
                   120s, {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["job"]["state"], "COMPLETED");
  EXPECT_EQ(j["job"]["gpus"], 4);
  EXPECT_EQ(j["elapsed_seconds"], elapsed);
  ASSERT_EQ(j["gpus"].size(), 4u) << j.dump(1);
  std::map<std::string, json> by;
  for (const auto& g : j["gpus"]) by[g["node"].get<std::string>() + "/" + g["gpu"].get<std::string>()] = g;
  const auto& slow = by[node[1] + "/1"];
  ASSERT_FALSE(slow["slow"].is_null()) << slow.dump(1);
  EXPECT_EQ(slow["slow"]["cause"], "hw_slowdown");
  EXPECT_NEAR(slow["slow"]["mean_deviation_ratio"].get<double>(), 1.62 / 1.98 - 1, 0.005);
  EXPECT_NEAR(slow["slow"]["seconds"].get<double>(), elapsed - 5, 2);
  EXPECT_TRUE(by[node[1] + "/0"]["idle_whole_job"].get<bool>());
  EXPECT_EQ(by[node[0] + "/1"]["xids"]["79"], 1);
  EXPECT_TRUE(by[node[0] + "/0"]["xids"].empty());
  EXPECT_NEAR(by[node[0] + "/0"]["utilization_percent"]["mean"].get<double>(), 100, 1e-9);
  EXPECT_NEAR(by[node[0] + "/0"]["sm_clock_hertz"]["max"].get<double>(), 1.98e9, 1);
  EXPECT_EQ(by[node[0] + "/0"]["energy_source"], "energy counter");
  EXPECT_NEAR(by[node[0] + "/0"]["energy_kwh"].get<double>(), 300.0 * elapsed / 3.6e6, 300.0 * 2 / 3.6e6);
  EXPECT_NEAR(j["totals"]["gpu_hours_allocated"].get<double>(), 4.0 * elapsed / 3600, 1e-9);
  EXPECT_NEAR(j["totals"]["gpu_hours_used"].get<double>(), 3.0 * elapsed / 3600, 3.0 * 2 / 3600);
  std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("1 of 4 GPUs was idle for the whole job (GPU 0 on " + node[1] + ")"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("GPU 1 on " + node[1] + " ran 18 % slower than the job's other GPUs for"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("XID 79 on GPU 1 on " + node[0]), std::string::npos) << notes;
  // The page shows four lanes in Chromium: three busy, one idle, a red bar under the slow GPU's.
  Image im = screenshot(dir + "/done.html", dir);
  EXPECT_GE(lane_rows(find_colour(im, hex(jobstats::kColourBusy)), 700).size(), 3u * 18);
  EXPECT_GE(lane_rows(find_colour(im, hex(jobstats::kColourIdle)), 700).size(), 18u);
  EXPECT_GE(lane_rows(find_colour(im, hex(jobstats::kColourSlow)), 400).size(), 3u);

  // The running job: its figures run up to now, from the same sources.
  r = run_gcm({"jobstats", running.id, "--prometheus-url", url, "--step", "1"}, 120s, {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("State: RUNNING (figures up to now)"), std::string::npos) << r.out;
  r = run_gcm({"jobstats", running.id, "--prometheus-url", url, "--step", "1", "--json"}, 120s, {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_TRUE(j["job"]["running"].get<bool>());
  EXPECT_GE(j["end"].get<int64_t>(), now);  // up to the time of asking
  ASSERT_EQ(j["gpus"].size(), 1u) << j.dump(1);
  EXPECT_EQ(j["gpus"][0]["node"], rnode);
  EXPECT_NEAR(j["gpus"][0]["utilization_percent"]["mean"].get<double>(), 50, 1e-9);

  // Usage over the finished job's span: sacct's allocation, Prometheus's use, under the job's account.
  r = run_gcm({"usage", "--by", "account", "--since", "@" + std::to_string(start), "--until", "@" + std::to_string(end),
               "--prometheus-url", url, "--step", "1", "--json"},
              120s, {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto u = json::parse(r.out);
  ASSERT_EQ(u["rows"].size(), 1u) << u.dump(1);
  EXPECT_EQ(u["rows"][0]["group"], account);
  EXPECT_EQ(u["rows"][0]["jobs"], 1);
  EXPECT_NEAR(u["rows"][0]["gpu_hours_allocated"].get<double>(), 4.0 * elapsed / 3600, 1e-9);
  EXPECT_NEAR(u["rows"][0]["gpu_hours_used"].get<double>(), 3.0 * elapsed / 3600, 3.0 * 2 / 3600);

  // A job id sacct does not know, and a Prometheus that is gone: clear errors, exit 1.
  r = run_gcm({"jobstats", "987654", "--prometheus-url", url}, 60s, {"TZ=UTC"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("job 987654 does not exist"), std::string::npos) << r.err;
  EXPECT_EQ(prom.stop(SIGTERM, 30s), 0);
  r = run_gcm({"jobstats", done.id, "--prometheus-url", url, "--prometheus-timeout", "5"}, 60s, {"TZ=UTC"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Prometheus at " + url + " does not answer"), std::string::npos) << r.err;
  if (!HasFailure())
    std::filesystem::remove_all(dir);
  else
    std::cerr << "kept " << dir << "\n";
}

}  // namespace
}  // namespace gcm::testing
