// The HTML form of a job report: one self-contained page. The timeline is inline SVG drawn here (one lane per GPU,
// coloured by utilisation, a red bar under the instants it was slow or throttled); the styles are inline; there is
// no script at all, so the page shows the same in any browser, offline, and cannot run anything.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "jobstats/report_render.h"

namespace gcm::jobstats {

namespace {

std::string esc(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

const char* colour_of(double util) {
  if (!std::isfinite(util) || util < 1) return kColourIdle;
  return util >= 50 ? kColourBusy : kColourPartial;
}

constexpr int kLabelWidth = 170, kChartWidth = 760, kLane = 22, kMark = 5, kGap = 9, kTop = 10;

// Where instant t falls on a chart of the job: its span over the chart's width, clamped to it.
struct TimeAxis {
  int64_t start;
  double span;
  double operator()(int64_t t) const {
    double f = std::clamp(static_cast<double>(t - start) / span, 0.0, 1.0);
    return kLabelWidth + f * kChartWidth;
  }
};

TimeAxis time_axis(const JobReport& r) { return {r.start, static_cast<double>(std::max<int64_t>(r.end - r.start, 1))}; }

// The opening tag of one chart of the page, as wide as every chart.
std::string svg_open(const char* id, int height, const char* label) {
  int width = kLabelWidth + kChartWidth + 10;
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{}\">\n",
      id, width, height, width, height, label);
}

std::string timeline_svg(const JobReport& r) {
  int lanes = static_cast<int>(r.gpus.size());
  int height = kTop + lanes * (kLane + kMark + kGap) + 30;
  TimeAxis x_of = time_axis(r);
  std::string s = svg_open("timeline", height, "GPU utilisation over the job");
  for (int i = 0; i < lanes; ++i) {
    const auto& g = r.gpus[static_cast<size_t>(i)];
    int y = kTop + i * (kLane + kMark + kGap);
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n", kLabelWidth - 8,
                     y + kLane - 6, esc(g.node + " GPU " + g.gpu));
    // Lane background: no data (the GPU was not the job's, or no sample) stays white with a thin frame.
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" stroke=\"#999999\" "
        "stroke-width=\"0.5\"/>\n",
        kLabelWidth, y, kChartWidth, kLane);
    // Neighbouring samples of one colour are one rectangle: a week-long job stays a small page.
    const auto& pts = g.utilization;
    for (size_t a = 0; a < pts.size();) {
      const char* c = colour_of(pts[a].v);
      size_t b = a + 1;
      while (b < pts.size() && colour_of(pts[b].v) == c && pts[b].t - pts[b - 1].t <= r.step_seconds) ++b;
      double x0 = x_of(pts[a].t), x1 = x_of(pts[b - 1].t + r.step_seconds);
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {:.0f} % "
          "from {}</title></rect>\n",
          x0, y, std::max(x1 - x0, 0.5), kLane, c, esc(g.name()), pts[a].v, format_time_utc(pts[a].t));
      a = b;
    }
    std::vector<int64_t> marks(g.marked.begin(), g.marked.end());
    for (size_t a = 0; a < marks.size();) {
      size_t b = a + 1;
      while (b < marks.size() && marks[b] - marks[b - 1] <= r.step_seconds) ++b;
      double x0 = x_of(marks[a]), x1 = x_of(marks[b - 1] + r.step_seconds);
      s += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>\n", x0, y + kLane + 1,
                       std::max(x1 - x0, 1.0), kMark, kColourSlow);
      a = b;
    }
  }
  int axis_y = kTop + lanes * (kLane + kMark + kGap) + 4;
  for (int k = 0; k <= 4; ++k) {
    int64_t t = r.start + static_cast<int64_t>(x_of.span * k / 4);
    double x = x_of(t);
    // HH:MM, with seconds for a job shorter than an hour (its ticks would otherwise read the same).
    std::string label = format_time_utc(t).substr(11, x_of.span < 3600 ? 8 : 5);
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#666666\"/>\n", x, axis_y - 4, x,
                     axis_y);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", x, axis_y + 12,
                     label);
  }
  return s + "</svg>\n";
}

// The step-time lane: one lane per node, the step time over the job's usual pace as a line (the lane's middle is
// its usual pace, the top 20 % slower), and a red tick at each slowdown the node agent confirmed.
std::string step_time_svg(const JobReport& r) {
  int lanes = static_cast<int>(r.steps.nodes.size());
  int height = kTop + lanes * (kLane + kGap) + 30;
  TimeAxis x_of = time_axis(r);
  std::string s = svg_open("steptime", height, "The job's step time over its usual pace, per node");
  for (int i = 0; i < lanes; ++i) {
    const auto& n = r.steps.nodes[static_cast<size_t>(i)];
    int y = kTop + i * (kLane + kGap);
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n", kLabelWidth - 8,
                     y + kLane - 6, esc(n.node + " step time"));
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" stroke=\"#999999\" "
        "stroke-width=\"0.5\"/>\n",
        kLabelWidth, y, kChartWidth, kLane);
    std::string points;
    for (const auto& p : n.ratio) {
      double up = std::clamp((p.v - 1) / 0.2, -1.0, 1.0);  // -1..1 over 20 % faster..20 % slower
      points += fmt::format("{:.1f},{:.1f} ", x_of(p.t), y + kLane / 2.0 - up * kLane / 2.0);
    }
    if (!points.empty())
      s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>\n", points,
                       kColourBusy);
    for (const auto& d : r.steps.slowdowns)
      if (d.node == n.node && d.cluster == n.cluster)
        s += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"3\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
                         x_of(d.change_time) - 1.5, y, kLane, kColourSlow, esc(d.sentence));
  }
  return s + "</svg>\n";
}

std::string cell(const Summary& s, double scale, int decimals) {
  if (!s.has()) return "<td>-</td><td>-</td>";
  return fmt::format("<td>{:.{}f}</td><td>{:.{}f}</td>", s.mean * scale, decimals, s.max * scale, decimals);
}

}  // namespace

std::string render_html(const JobReport& r) {
  const auto& j = r.job;
  std::string id = j.job_id_display.empty() ? j.job_id : j.job_id_display;
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<title>gcm jobstats " + esc(id) + "</title>\n";
  h += "<style>body{font-family:sans-serif;margin:20px;color:#222}table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f0f0f0}"
       "td.l,th.l{text-align:left}.legend span{display:inline-block;width:14px;height:14px;margin:0 4px 0 14px;"
       "vertical-align:middle}</style>\n</head><body>\n";
  h += "<h1>Job " + esc(id) + (j.job_name.empty() ? "" : " (" + esc(j.job_name) + ")") + "</h1>\n";
  double used_pct = r.gpu_hours_allocated > 0 ? r.gpu_hours_used / r.gpu_hours_allocated * 100 : 0;
  h += "<table id=\"summary\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    h += "<tr><th class=\"l\">" + esc(k) + "</th><td class=\"l\">" + esc(v) + "</td></tr>\n";
  };
  row("User / account", j.user + " / " + j.account);
  row("Partition (cluster)", j.partition + " (" + j.cluster + ")");
  row("State", j.state + (j.running() ? " (figures up to now)" : ""));
  row("Nodes", j.node_list + " (" + std::to_string(j.nodes.size()) + ")");
  row("GPUs", std::to_string(j.gpus));
  row("Elapsed",
      format_duration(r.elapsed()) + " (" + format_time_utc(r.start) + " to " + format_time_utc(r.end) + ")");
  row("GPU-hours",
      fmt::format("{:.2f} allocated, {:.2f} used ({:.0f} %)", r.gpu_hours_allocated, r.gpu_hours_used, used_pct));
  row("GPU energy", fmt::format("{:.3f} kWh", r.energy_kwh));
  h += "</table>\n<h2>Notes</h2>\n<ul id=\"notes\">\n";
  if (r.notes.empty()) h += "<li>Nothing unusual: every GPU was busy and kept pace with the others.</li>\n";
  for (const auto& n : r.notes) h += "<li>" + esc(n) + "</li>\n";
  h += "</ul>\n<h2>GPU utilisation over time</h2>\n<p class=\"legend\">";
  h += fmt::format(
      "<span style=\"background:{}\"></span>busy (&ge; 50 %)<span style=\"background:{}\"></span>"
      "partly busy<span style=\"background:{}\"></span>idle<span style=\"background:{}\"></span>"
      "slower than its peers or throttled</p>\n",
      kColourBusy, kColourPartial, kColourIdle, kColourSlow);
  h += timeline_svg(r);
  if (!r.steps.empty()) {
    h += "<h2>Step time over the job's usual pace</h2>\n<p class=\"legend\">The line: each node's step time (the "
         "middle of the lane is its usual pace, the top 20 % slower); a red mark: a slowdown the node agent "
         "confirmed (its explanation is in the notes).</p>\n";
    h += step_time_svg(r);
  }
  h += "<h2>Per GPU</h2>\n<table id=\"gpus\">\n<tr><th class=\"l\">node</th><th>GPU</th><th>util % mean</th>"
       "<th>max</th><th>memory GiB mean</th><th>max</th><th>of</th><th>SM MHz mean</th><th>max</th>"
       "<th>power W mean</th><th>max</th><th>energy kWh</th><th>throttled</th><th class=\"l\">XIDs</th>"
       "<th class=\"l\">health</th></tr>\n";
  for (const auto& g : r.gpus) {
    std::string xids, health;
    for (const auto& [x, n] : g.xids) xids += (xids.empty() ? "" : ", ") + x + " &times;" + std::to_string(n);
    for (const auto& [reason, secs] : g.health_reason_seconds)
      health += (health.empty() ? "" : ", ") + esc(plain_reason(reason)) + " " + format_duration(secs);
    h += "<tr><td class=\"l\">" + esc(g.node) + "</td><td>" + esc(g.gpu) + "</td>" + cell(g.utilization_percent, 1, 0) +
         cell(g.memory_used_bytes, 1.0 / (1 << 30), 1) +
         fmt::format("<td>{:.0f}</td>", g.memory_total_bytes / (1 << 30)) + cell(g.sm_clock_hertz, 1e-6, 0) +
         cell(g.power_watts, 1, 0) +
         fmt::format("<td>{:.3f}</td><td>{}</td>", g.energy_kwh, format_duration(g.throttled_seconds)) +
         "<td class=\"l\">" + (xids.empty() ? "-" : xids) + "</td><td class=\"l\">" + (health.empty() ? "ok" : health) +
         "</td></tr>\n";
  }
  h += "</table>\n<p>From sacct and " + esc(r.prometheus_url) + ", one sample every " + std::to_string(r.step_seconds) +
       " s.</p>\n</body></html>\n";
  return h;
}

}  // namespace gcm::jobstats
