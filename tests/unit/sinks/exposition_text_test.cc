// The strict exposition reader of tests/common/exposition_text.h: what it accepts (the Prometheus sink's own page
// included), and that every malformed line is an error naming its line and what was expected.
#include "exposition_text.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sinks/prometheus_store.h"

namespace gcm::testing {
namespace {

std::string error_of(const std::string& text, const ExpositionLimits& limits = {}) {
  try {
    parse_exposition(text, "t.txt", limits);
  } catch (const ExpositionError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ExpositionText, ReadsFamiliesLabelsValuesAndTimestamps) {
  auto e = parse_exposition(
      "# HELP up Whether it is up\n"
      "# TYPE up gauge\n"
      "up 1\n"
      "\n"
      "# a comment\n"
      "# TYPE rpc counter\n"
      "rpc_total{b=\"x\",a=\"q\\\"\\\\\\n\",} 3.5e2 1700000000000\n"
      "rpc_total{a=\"y\"} +Inf\n"
      "nan_one NaN\n"
      "neg -0.25\n",
      "t.txt");
  EXPECT_FALSE(e.eof);
  EXPECT_EQ(e.types.at("up"), "gauge");
  EXPECT_EQ(e.types.at("rpc"), "counter");
  EXPECT_EQ(e.help.at("up"), "Whether it is up");
  EXPECT_EQ(e.value("up"), 1);
  EXPECT_EQ(e.value("rpc_total", {{"b", "x"}, {"a", "q\"\\\n"}}), 350);
  EXPECT_TRUE(std::isinf(e.value("rpc_total", {{"a", "y"}})));
  EXPECT_TRUE(std::isnan(e.value("nan_one")));
  EXPECT_EQ(e.value("neg"), -0.25);
  ASSERT_EQ(e.all("rpc_total").size(), 2u);
  EXPECT_EQ(e.all("rpc_total")[0]->timestamp_ms, 1700000000000);
  EXPECT_EQ(e.all("rpc_total")[0]->line, 7u);
  EXPECT_FALSE(e.find("rpc_total"));  // labels must match exactly
  EXPECT_THROW(e.value("absent"), ExpositionError);
}

TEST(ExpositionText, OpenMetricsEndsAtEof) {
  auto e = parse_exposition("# TYPE a gauge\na 1\n# EOF\n", "t.txt");
  EXPECT_TRUE(e.eof);
  EXPECT_EQ(error_of("a 1\n# EOF\na 2\n"), "t.txt:3: expected nothing after '# EOF' at column 1, got 'a 2'");
}

TEST(ExpositionText, EveryMalformedLineNamesItsLineAndWhatWasExpected) {
  EXPECT_EQ(error_of("up 1\n9up 1\n"),
            "t.txt:2: expected a metric name, '#' or an empty line at column 1, got '9up 1'");
  EXPECT_EQ(error_of("up\n"), "t.txt:1: expected a blank before the value at column 3, got the end of the line");
  EXPECT_EQ(error_of("up one\n"), "t.txt:1: expected a number, NaN, +Inf or -Inf as the value at column 4, got 'one'");
  EXPECT_EQ(error_of("up 0x10\n"),
            "t.txt:1: expected a number, NaN, +Inf or -Inf as the value at column 4, got '0x10'");
  EXPECT_EQ(error_of("up infinity\n"),
            "t.txt:1: expected a number, NaN, +Inf or -Inf as the value at column 4, got 'infinity'");
  EXPECT_EQ(error_of("up 1 soon\n"),
            "t.txt:1: expected an integer timestamp (milliseconds) or the end of the line at column 6, got 'soon'");
  EXPECT_EQ(error_of("up 1 2 3\n"), "t.txt:1: expected the end of the line after the timestamp at column 8, got '3'");
  EXPECT_EQ(error_of("up{a=\"1\" b=\"2\"} 1\n"),
            "t.txt:1: expected ',' or '}' after the label value at column 10, got 'b=\"2\"} 1'");
  EXPECT_EQ(error_of("up{a=1} 1\n"), "t.txt:1: expected '\"' opening a label value at column 6, got '1} 1'");
  EXPECT_EQ(error_of("up{a=\"1} 1\n"),
            "t.txt:1: expected '\"' closing the label value at column 11, got the end of the line");
  EXPECT_EQ(error_of("up{a=\"\\t\"} 1\n"),
            "t.txt:1: expected an escape \\\\, \\\" or \\n in the label value at column 8, got 't\"} 1'");
  EXPECT_EQ(error_of("up{a:b=\"1\"} 1\n"),
            "t.txt:1: expected '=' after the label name a at column 5, got ':b=\"1\"} 1'");
  EXPECT_EQ(error_of("up{a=\"1\",a=\"2\"} 1\n"),
            "t.txt:1: expected label a once in the series (it is repeated) at column 15, got '} 1'");
  EXPECT_EQ(error_of("# TYPE up gauge\n# TYPE up gauge\n"),
            "t.txt:2: expected one TYPE line for up (it has one already) at column 16, got the end of the line");
  EXPECT_EQ(error_of("# TYPE up meter\n"),
            "t.txt:1: expected a type (counter, gauge, histogram, summary, untyped, ...) for up at column 16, got the "
            "end of the line");
  EXPECT_EQ(error_of("# TYPE up gauge extra\n"),
            "t.txt:1: expected the end of the line after the type at column 17, got 'extra'");
  EXPECT_EQ(error_of("# HELP up a\n# HELP up b\n"),
            "t.txt:2: expected one HELP line for up (it has one already) at column 10, got ' b'");
  EXPECT_EQ(error_of("up 1\n# TYPE up gauge\n"),
            "t.txt:2: expected the TYPE of up before its samples (line 1) at column 16, got the end of the line");
  EXPECT_EQ(error_of("a 1\nb 1\na{x=\"1\"} 2\n"),
            "t.txt:3: expected the samples of a in one group (its group began on line 1) at column 11, got the end of "
            "the line");
  EXPECT_EQ(error_of("a{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 2\n"),
            "t.txt:2: expected a new series (a with these labels is on line 1) at column 17, got the end of the line");
  EXPECT_EQ(error_of("up 1"), "t.txt:1: expected a line feed ending the last line");
}

TEST(ExpositionText, LinesSeriesAndLabelsAreBounded) {
  ExpositionLimits small;
  small.max_line_bytes = 10;
  small.max_series = 2;
  small.max_labels = 1;
  EXPECT_EQ(error_of("a 1\nlong_name_x 1\n", small), "t.txt:2: expected a line of at most 10 bytes, got 13");
  EXPECT_EQ(error_of("a 1\nb 1\nc 1\n", small),
            "t.txt:3: expected at most 2 series at column 4, got the end of the line");
  EXPECT_EQ(error_of("a{x=\"\",y=\"\"} 1\n", ExpositionLimits{100, 10, 1}),
            "t.txt:1: expected at most 1 labels at column 12, got '} 1'");
}

TEST(ExpositionText, ReadsThePrometheusSinksOwnPage) {
  Schema s;
  s.name = "GpuT";
  s.metric_prefix = "gpu";
  s.data_type = DataType::Metric;
  s.fields = {
      {"gpu", FieldType::Int, FieldRole::Identity},
      {"temperature", FieldType::Double, FieldRole::Gauge, "celsius", "GPU temperature"},
      {"xid_errors", FieldType::Int, FieldRole::Counter, "", "XID errors"},
  };
  PrometheusStore store;
  store.begin_round(s);
  for (int g = 0; g < 2; ++g) {
    Record r(s);
    r[0] = g;
    r[1] = 40.5 + g;
    r[2] = 3 * g;
    store.add(r);
  }
  store.end_round(s);
  auto e = parse_exposition(store.render(), "store");
  EXPECT_EQ(e.types.at("gcm_gpu_temperature_celsius"), "gauge");
  EXPECT_EQ(e.value("gcm_gpu_temperature_celsius", {{"gpu", "1"}}), 41.5);
  EXPECT_EQ(e.all("gcm_gpu_temperature_celsius").size(), 2u);
}

}  // namespace
}  // namespace gcm::testing
