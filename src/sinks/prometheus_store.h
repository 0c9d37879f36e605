// The latest value of every measurement, grouped into metric families, rendered in the Prometheus text exposition
// format 0.0.4. Each collection round of a schema replaces that schema's series, so a series whose entity disappeared
// (an unmounted filesystem, a finished job) disappears too.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/record.h"

namespace gcm {

class PrometheusStore {
 public:
  void begin_round(const Schema& s);
  void end_round(const Schema& s);
  // Adds the record's measurements (the schema's Gauge/Counter fields; for a METRIC schema without declared
  // measurements, every numeric field that is not an identity) labelled with its identity fields, and its info series
  // when the schema declares info_labels.
  void add(const Record& r);
  std::string render() const;
  size_t series_count() const;

  // Freshness of the collector feeding this store, so that Prometheus can tell a collector whose rounds fail (Slurm
  // not answering: the last values stay, unchanged) from one whose values are merely constant. Rendered only once
  // a collector is named: gcm_collector_interval_seconds{collector}, and per schema
  // gcm_collector_last_success_timestamp_seconds, gcm_collector_rounds_total, gcm_collector_failed_rounds_total.
  void set_collector(std::string name, double interval_seconds);
  void round_succeeded(const Schema& s, int64_t round_start_unix);
  void round_failed(const Schema& s);

 private:
  struct Family {
    std::string help;
    std::string type;                                            // "gauge" or "counter"
    std::string owner;                                           // schema name
    std::map<std::string, std::pair<double, uint64_t>> samples;  // rendered labels -> (value, generation)
  };
  void set(const Schema& s, const FieldSpec& f, const std::string& labels, double v);
  void set_sample(const Schema& s, const std::string& name, const char* type, const std::string& help,
                  const std::string& labels, double v);

  struct Rounds {
    int64_t last_success = 0;  // 0: none yet (the series is left out rather than saying 1970)
    uint64_t total = 0, failed = 0;
  };
  void render_collector(std::string& out) const;

  mutable std::mutex mu_;
  std::string collector_;
  double interval_ = 0;
  std::map<std::string, Rounds> rounds_;  // per schema name
  std::map<std::string, Family> families_;
  std::map<std::string, uint64_t> generation_;  // per schema name
};

// Prometheus float formatting: integers without a fraction, NaN, +Inf, -Inf.
std::string prometheus_value(double v);
// Escapes a label value (\\, \", \n).
std::string prometheus_label_escape(std::string_view v);

}  // namespace gcm
