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
  // measurements, every numeric field that is not an identity) labelled with its identity fields.
  void add(const Record& r);
  std::string render() const;
  size_t series_count() const;

 private:
  struct Family {
    std::string help;
    std::string type;  // "gauge" or "counter"
    std::string owner;  // schema name
    std::map<std::string, std::pair<double, uint64_t>> samples;  // rendered labels -> (value, generation)
  };
  void set(const Schema& s, const FieldSpec& f, const std::string& labels, double v);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
  std::map<std::string, uint64_t> generation_;  // per schema name
};

// Prometheus float formatting: integers without a fraction, NaN, +Inf, -Inf.
std::string prometheus_value(double v);
// Escapes a label value (\\, \", \n).
std::string prometheus_label_escape(std::string_view v);

}  // namespace gcm
