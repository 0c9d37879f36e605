#include "processor/wire_job_puts.h"

#include <tuple>

#include "common.pb.h"

namespace gcm::processor::wire {

namespace {

namespace pbc = opentelemetry::proto::common::v1;

void append_len_field(std::string& out, uint32_t number, std::string_view content) {
  char buf[16];
  char* p = write_varint(buf, len_tag(number));
  p = write_varint(p, content.size());
  out.append(buf, static_cast<size_t>(p - buf));
  out.append(content);
}

std::string string_value(std::string_view s) {
  std::string v;
  append_len_field(v, pbc::AnyValue::kStringValueFieldNumber, s);
  return v;
}

std::string list_value(const std::vector<std::string_view>& values) {
  std::string array;
  for (const auto& s : values) append_len_field(array, pbc::ArrayValue::kValuesFieldNumber, string_value(s));
  std::string v;
  append_len_field(v, pbc::AnyValue::kArrayValueFieldNumber, array);  // present even when empty: an empty list
  return v;
}

// Encodes the attribute fields one after the other, then points the puts into the finished bytes.
void encode(EncodedPuts& e, uint32_t attr_no, const std::vector<std::pair<std::string_view, std::string>>& kvs,
            Put::Mode mode) {
  std::array<std::pair<size_t, size_t>, std::tuple_size_v<decltype(e.puts)>> field{}, value{};
  for (size_t i = 0; i < kvs.size(); ++i) {
    size_t begin = e.bytes.size();
    append_attribute(e.bytes, attr_no, kvs[i].first, kvs[i].second);
    field[i] = {begin, e.bytes.size() - begin};
    value[i] = {e.bytes.size() - kvs[i].second.size(), kvs[i].second.size()};
  }
  e.count = kvs.size();
  for (size_t i = 0; i < kvs.size(); ++i) {
    std::string_view b = e.bytes;
    e.puts[i] = {kvs[i].first, b.substr(value[i].first, value[i].second), b.substr(field[i].first, field[i].second),
                 mode};
  }
}

}  // namespace

template <typename Encode>
const EncodedPuts& JobPuts::find_or_encode(const void* source, const void* pod, Kind kind, uint32_t attr_no,
                                           Encode encode_puts) {
  for (const auto& e : entries_)
    if (e->source == source && e->pod == pod && e->kind == kind && e->attr_no == attr_no) return e->puts;
  auto& e = entries_.emplace_back(std::make_unique<Entry>(Entry{source, pod, kind, attr_no, {}}));
  encode_puts(e->puts);
  return e->puts;
}

const EncodedPuts& JobPuts::strings(const JobFields* fields, const PodValues* pod, uint32_t attr_no) {
  return find_or_encode(fields, pod, Kind::Strings, attr_no, [&](EncodedPuts& e) {
    std::vector<std::pair<std::string_view, std::string>> kvs;
    if (fields) {
      for (size_t k = 0; k < kJobKeys.size(); ++k) kvs.emplace_back(kJobKeys[k], string_value((*fields)[k]));
      e.key_bits |= kJobKeyBits;
    }
    for (size_t k = 0; pod && k < kPodKeys.size(); ++k) {
      if ((*pod)[k].empty()) continue;  // as nvml_monitor leaves an unknown label out
      kvs.emplace_back(kPodKeys[k], string_value((*pod)[k]));
      e.key_bits |= static_cast<uint16_t>(kPodKeyBit0 << k);
    }
    encode(e, attr_no, kvs, Put::Mode::Set);
  });
}

const EncodedPuts& JobPuts::lists(const NodeJobs& jobs, uint32_t attr_no) {
  return find_or_encode(&jobs, nullptr, Kind::Lists, attr_no, [&](EncodedPuts& e) {
    e.key_bits = kJobKeyBits;
    std::vector<std::pair<std::string_view, std::string>> kvs;
    for (size_t k = 0; k < kJobKeys.size(); ++k) kvs.emplace_back(kJobKeys[k], list_value(jobs.values(k)));
    encode(e, attr_no, kvs, Put::Mode::SetList);
  });
}

const EncodedPuts& JobPuts::job_ids(const NodeJobs& jobs, uint32_t attr_no) {
  return find_or_encode(&jobs, nullptr, Kind::JobIds, attr_no, [&](EncodedPuts& e) {
    encode(e, attr_no, {{"job_id", string_value(jobs.job_ids_joined())}}, Put::Mode::Set);
  });
}

}  // namespace gcm::processor::wire
