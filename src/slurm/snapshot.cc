#include "slurm/snapshot.h"

#include <fmt/format.h>

#include "core/subprocess.h"
#include "slurm/parse_error.h"

namespace gcm::slurm {

namespace {

thread_local SnapshotRound* t_round = nullptr;

// The whole output, each line ended by '\n'.
std::shared_ptr<const std::string> fetch_text(SlurmClient& client, const SlurmQuery& query) {
  std::string text;
  client.fetch_lines(query, [&](std::string_view line) {
    text.append(line);
    text.push_back('\n');
  });
  return std::make_shared<const std::string>(std::move(text));
}

}  // namespace

void Snapshot::derive(std::string query_name, SlurmQuery source, Render render) {
  std::lock_guard lock(mu_);
  derivations_[std::move(query_name)] = Derivation{std::move(source), std::move(render)};
}

Snapshot::Answer Snapshot::fetch_once(SlurmClient& client, const SlurmQuery& query, int64_t cycle,
                                      SnapshotCounters& counters) {
  // The key holds the argv elements length-prefixed, so no two different argvs write the same key.
  std::string key = client.answerer(query);
  for (const auto& a : query.argv) key += fmt::format("\n{}:{}", a.size(), a);

  std::promise<Answer> promise;
  {
    std::unique_lock lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.cycle == cycle) {
      std::shared_future<Answer> f = it->second.answer;
      lock.unlock();
      ++counters.shared;
      return f.get();  // the first asker's answer, or its SlurmError
    }
    if (it == entries_.end() || it->second.cycle < cycle) {
      entries_[key] = Entry{cycle, promise.get_future().share()};
    } else {
      // A round of an older cycle (it overran) asks after a newer cycle's answer was taken: it asks Slurm itself and
      // leaves the newer answer in place.
      lock.unlock();
      ++counters.run;
      return fetch_text(client, query);
    }
  }
  ++counters.run;
  try {
    Answer a = fetch_text(client, query);
    promise.set_value(a);
    return a;
  } catch (...) {
    promise.set_exception(std::current_exception());
    throw;
  }
}

Snapshot::Answer Snapshot::answer(SlurmClient& client, const SlurmQuery& query, int64_t cycle,
                                  SnapshotCounters& counters) {
  ++counters.asked;
  const Derivation* d = nullptr;
  {
    std::lock_guard lock(mu_);
    auto it = derivations_.find(query.name);
    if (it != derivations_.end()) d = &it->second;  // std::map: the address stays; derivations are set up first
  }
  if (!d) return fetch_once(client, query, cycle, counters);
  ++counters.derived;
  SlurmQuery source = d->source;
  source.timeout = query.timeout;
  Answer text = fetch_once(client, source, cycle, counters);
  try {
    return std::make_shared<const std::string>(d->render(*text));
  } catch (const std::exception& e) {
    throw SlurmError(query.name, describe_query(source), 0,
                     fmt::format("`{}` (read for {}): {}", describe_query(source), query.name, e.what()));
  }
}

size_t Snapshot::held_queries() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

size_t Snapshot::held_bytes() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [key, e] : entries_) {
    if (e.answer.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
    try {
      n += e.answer.get()->size();
    } catch (...) {  // a failed fetch holds no text
    }
  }
  return n;
}

SnapshotRound::SnapshotRound(Snapshot& snapshot, int64_t cycle) : snapshot_(snapshot), cycle_(cycle), outer_(t_round) {
  t_round = this;
}

SnapshotRound::~SnapshotRound() { t_round = outer_; }

SnapshotRound* SnapshotRound::current() { return t_round; }

size_t SnapshotRound::stream_lines(SlurmClient& client, const SlurmQuery& query, const LineHandler& on_line) {
  std::shared_ptr<const std::string> text = snapshot_.answer(client, query, cycle_, counters_);
  return deliver_lines(query, describe_query(query), *text, on_line);  // for_each_line: a final '\n' ends the last line
}

}  // namespace gcm::slurm
