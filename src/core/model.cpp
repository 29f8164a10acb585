#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "config_file.hpp"
#include "error.hpp"

namespace mpix {

namespace {

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return format(bytes == std::floor(bytes) ? "%.0f%s" : "%.1f%s", bytes, units[unit]);
}

}  // namespace

std::string ExchangeFacts::describe() const {
  std::string layout = equal_nodes() ? format("%dx%d", nodes, max_ppn)
                                     : format("%d of %d..%d ranks", nodes, min_ppn, max_ppn);
  return format("P=%d nodes=%s %s max_block=%s min_block=%s mean_block=%s total_bytes=%s max_rank_send=%s "
                "max_rank_recv=%s nonempty=%.2f intra_node=%.2f%s%s%s%s",
                ranks, layout.c_str(), uniform ? "alltoall" : "alltoallv", bytes_text((double)max_block).c_str(),
                bytes_text((double)min_block).c_str(), bytes_text(mean_block()).c_str(),
                bytes_text((double)total_bytes).c_str(), bytes_text((double)max_rank_send).c_str(),
                bytes_text((double)max_rank_recv).c_str(), nonempty_fraction(), intra_fraction(),
                contiguous ? "" : " non-contiguous", in_place ? " in-place" : "", persistent ? " persistent" : "",
                direct_copy ? " direct-copy" : "");
}

// ---------------------------------------------------------------- machine profile

namespace {

struct ProfileKey {
  const char* name;
  double MachineProfile::*field;
  const char* unit;
  // Past any machine: a larger value is a typo or a unit slip (ns written as s),
  // and would turn every prediction into inf or noise, so auto's choice would be
  // arbitrary.
  double most;
};

const ProfileKey kProfileKeys[] = {
    {"inter_latency", &MachineProfile::inter_latency, "s", 1},
    {"intra_latency", &MachineProfile::intra_latency, "s", 1},
    {"inter_send_overhead", &MachineProfile::inter_send_overhead, "s", 1},
    {"inter_recv_overhead", &MachineProfile::inter_recv_overhead, "s", 1},
    {"intra_send_overhead", &MachineProfile::intra_send_overhead, "s", 1},
    {"intra_recv_overhead", &MachineProfile::intra_recv_overhead, "s", 1},
    {"inter_bandwidth", &MachineProfile::inter_bandwidth, "bytes/s", 1e18},
    {"inter_message_bytes", &MachineProfile::inter_message_bytes, "bytes", 65536},
    {"intra_bandwidth", &MachineProfile::intra_bandwidth, "bytes/s", 1e18},
    {"copy_bandwidth", &MachineProfile::copy_bandwidth, "bytes/s", 1e18},
    {"intra_copies", &MachineProfile::intra_copies, "copies", 8},
    {"collective_overhead", &MachineProfile::collective_overhead, "s", 1},
    {"bisection_bandwidth", &MachineProfile::bisection_bandwidth, "bytes/s", 1e18},
    {"alltoall_bandwidth", &MachineProfile::alltoall_bandwidth, "bytes/s", 1e18},
    {"match_cost", &MachineProfile::match_cost, "s", 1},
    {"eager_bytes", &MachineProfile::eager_bytes, "bytes", 1 << 30},
};

}  // namespace

int load_machine_profile(const std::string& path, MachineProfile* profile) {
  std::string contents;
  MPIX_TRY(read_config_text(path, "machine file", &contents));
  MachineProfile loaded;
  loaded.source = path;
  std::map<std::string, int> line_of_key;
  int number = 0;
  for (const std::string& line : config_lines(contents)) {
    ++number;
    auto bad = [&](const std::string& why) {
      return fail(MPIX_ERR_TUNING_FILE,
                  format("machine file %s:%d: %s", printable(path).c_str(), number, printable(why).c_str()));
    };
    if (line.find('\0') != std::string::npos) return bad("holds a NUL byte (not a text file?)");
    std::string text = line.substr(0, line.find('#'));
    std::size_t equals = text.find('=');
    std::istringstream words(text);
    std::string first;
    if (!(words >> first)) continue;
    if (equals == std::string::npos) return bad("expected key = value, got '" + first + "'");
    std::istringstream key_words(text.substr(0, equals)), value_words(text.substr(equals + 1));
    std::string key, value, extra;
    key_words >> key;
    if (key_words >> extra) return bad("a key is one word: '" + text.substr(0, equals) + "'");
    if (!(value_words >> value)) return bad("no value for " + key);
    if (value_words >> extra) return bad("one value per key: " + key);
    const ProfileKey* spec = nullptr;
    for (const ProfileKey& candidate : kProfileKeys)
      if (key == candidate.name) spec = &candidate;
    if (!spec) {
      std::string known;
      for (const ProfileKey& candidate : kProfileKeys) known += std::string(" ") + candidate.name;
      return bad("unknown key '" + key + "'; known:" + known);
    }
    // Two values for one key is a merge gone wrong: which one was meant is unknown.
    if (!line_of_key.emplace(key, number).second)
      return bad(format("%s given twice (first on line %d)", key.c_str(), line_of_key[key]));
    char* end = nullptr;
    double number_value = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0' || !std::isfinite(number_value))
      return bad(key + "=" + value + ": not a number");
    const bool bandwidth = std::string(spec->unit) == "bytes/s";
    const bool zero_is_no_limit =
        spec->field == &MachineProfile::bisection_bandwidth || spec->field == &MachineProfile::alltoall_bandwidth;
    if (number_value < 0 || (bandwidth && number_value == 0 && !zero_is_no_limit))
      return bad(key + "=" + value +
                 (zero_is_no_limit ? ": must be >= 0 bytes/s (0: no limit)"
                  : bandwidth      ? ": must be > 0 bytes/s"
                                   : ": must be >= 0 " + std::string(spec->unit)));
    if (number_value > spec->most)
      return bad(format("%s=%s: more than %g %s, past any machine%s", key.c_str(), value.c_str(), spec->most,
                        spec->unit, std::string(spec->unit) == "s" ? " (the unit is seconds)" : ""));
    if (bandwidth && number_value > 0 && number_value < 1e3)
      return bad(format("%s=%s: under 1000 bytes/s, past any machine (is the unit bytes/s?)", key.c_str(),
                        value.c_str()));
    loaded.*(spec->field) = number_value;
  }
  *profile = loaded;
  return MPIX_SUCCESS;
}

std::string machine_profile_text(const MachineProfile& profile) {
  std::string text;
  for (const ProfileKey& key : kProfileKeys)
    text += format("%-20s = %.6g  # %s\n", key.name, profile.*(key.field), key.unit);
  return text;
}

// ---------------------------------------------------------------- costs

namespace {

template <class F>
double sum(const std::vector<RoundCost>& rounds, F f) {
  double total = 0;
  for (const RoundCost& round : rounds) total += round.rounds * f(round);
  return total;
}

}  // namespace

double Cost::messages() const { return sum(rounds, [](const RoundCost& r) { return r.inter.messages + r.intra.messages; }); }
double Cost::bytes() const { return sum(rounds, [](const RoundCost& r) { return r.inter.bytes + r.intra.bytes; }); }
double Cost::round_count() const { return sum(rounds, [](const RoundCost&) { return 1.0; }); }
double Cost::init_messages() const {
  return sum(init_rounds, [](const RoundCost& r) { return r.inter.messages + r.intra.messages; });
}
double Cost::init_bytes() const { return sum(init_rounds, [](const RoundCost& r) { return r.inter.bytes + r.intra.bytes; }); }

// One round: the latency of its slowest level, the CPU overhead of every message
// sent and received (the LogGP o, paid one after another) overlapped with the time
// to move its bytes: between nodes at the node's injection bandwidth shared by the
// ranks sending at once (or the bisection, or the busiest link of the routes, if
// that is the tighter), inside the node at the intra-node bandwidth.
double rounds_seconds(const std::vector<RoundCost>& rounds, const MachineProfile& m) {
  return sum(rounds, [&m](const RoundCost& r) {
    if (r.inter.messages <= 0 && r.intra.messages <= 0) return 0.0;
    double latency = std::max(r.inter.messages > 0 ? m.inter_latency : 0.0, r.intra.messages > 0 ? m.intra_latency : 0.0);
    double overhead = r.busiest_messages * (r.inter.messages * (m.inter_send_overhead + m.inter_recv_overhead) +
                                            r.intra.messages * (m.intra_send_overhead + m.intra_recv_overhead));
    const double headers = r.inter.messages * m.inter_message_bytes;
    const double wire_bytes = r.inter.bytes + headers;
    double inter = (r.inter.bytes * std::max({1.0, r.nic_sharers, r.busiest_bytes}) +
                    headers * std::max({1.0, r.nic_sharers, r.busiest_messages})) /
                   m.inter_bandwidth;
    // Of an exchange's bytes between nodes, those between the two halves of the
    // nodes cross the bisection: in each direction floor(N/2) ceil(N/2) of the
    // N (N - 1) ordered node pairs, a half at 2 nodes, near a quarter at many.
    if (m.bisection_bandwidth > 0 && r.nodes > 1) {
      const double halves = std::floor(r.nodes / 2) * std::ceil(r.nodes / 2), pairs = r.nodes * (r.nodes - 1);
      inter = std::max(inter, wire_bytes * r.ranks * halves / pairs / m.bisection_bandwidth);
    }
    // All the round's inter-node bytes against the busiest link's share of them.
    if (m.alltoall_bandwidth > 0 && r.nodes > 1) inter = std::max(inter, wire_bytes * r.ranks / m.alltoall_bandwidth);
    // LogGP: the CPU posts messages while the network carries the earlier ones, so
    // the longer of the two counts, plus one message's share of the shorter (the
    // first message's overhead, or the last one's transfer).
    const double intra_rate = std::min(m.intra_bandwidth, m.intra_copies > 0 ? m.copy_bandwidth / m.intra_copies : m.intra_bandwidth);
    const double transfer = inter + r.busiest_bytes * r.intra.bytes / intra_rate;
    const double messages = std::max(1.0, r.busiest_messages * (r.inter.messages + r.intra.messages));
    const double matching = messages * messages / 2 * m.match_cost;
    return latency + std::max(overhead + matching, transfer) + std::min(overhead, transfer) / messages;
  });
}

std::vector<RoundCost> allreduce_rounds(int ranks, int ppn, double bytes) {
  std::vector<RoundCost> rounds;
  if (ranks <= 1) return rounds;
  const double all = std::ceil(std::log2((double)ranks));
  const double intra = ppn < ranks ? std::floor(std::log2((double)std::max(1, ppn))) : all;
  RoundCost inside, between;
  inside.rounds = intra;
  inside.intra = LevelCounts{1, bytes};
  between.rounds = all - intra;
  between.inter = LevelCounts{1, bytes};
  for (const RoundCost& r : {inside, between})
    if (r.rounds > 0) rounds.push_back(r);
  return rounds;
}

double predict_seconds(const Cost& cost, const MachineProfile& profile, bool persistent) {
  double seconds = rounds_seconds(cost.rounds, profile) + rounds_seconds(cost.sync_rounds, profile) +
                   cost.copy_bytes / profile.copy_bandwidth;
  if (!persistent)
    seconds += rounds_seconds(cost.init_rounds, profile) + rounds_seconds(cost.init_sync_rounds, profile) +
               cost.init_collectives * profile.collective_overhead + cost.init_copy_bytes / profile.copy_bandwidth;
  return seconds;
}

double inter_node_fraction(int distance, int ppn, int ranks) {
  if (ppn >= ranks) return 0.0;
  distance = ((distance % ranks) + ranks) % ranks;
  double same = std::max(0, ppn - distance) + std::max(0, ppn - (ranks - distance));
  return 1.0 - std::min(1.0, same / ppn);
}

double busiest_bytes_factor(const ExchangeFacts& facts, double blocks) {
  if (facts.total_bytes <= 0 || facts.ranks < 2 || blocks <= 0) return 1.0;
  const double mean_rank = (double)facts.total_bytes / facts.ranks;
  const double spread = std::max(0.0, facts.max_rank_send / mean_rank - 1.0);
  const double largest = facts.max_block / std::max(facts.mean_block(), 1e-9);
  return std::max(1.0, std::min(largest, 1.0 + spread * std::sqrt((facts.ranks - 1) / blocks)));
}

RoundCost linear_round(const ExchangeFacts& facts, double messages, double bytes_per_message) {
  RoundCost round;
  const double peers = std::max(1, facts.ranks - 1);
  // Peers on the own node, for the average node.
  const double local_peers = std::max(0.0, (double)facts.ranks / facts.nodes - 1);
  const double intra_share = facts.nodes > 1 ? local_peers / peers : 1.0;
  const double byte_share = facts.total_bytes > 0 ? facts.intra_fraction() : intra_share;
  round.intra.messages = messages * intra_share;
  round.inter.messages = messages - round.intra.messages;
  round.intra.bytes = messages * bytes_per_message * byte_share;
  round.inter.bytes = messages * bytes_per_message - round.intra.bytes;
  round.nic_sharers = facts.max_ppn;
  round.ranks = facts.ranks;
  round.nodes = facts.nodes;
  const double mean_messages = (double)facts.nonempty_blocks / facts.ranks;
  const double mean_bytes = (double)facts.total_bytes / facts.ranks;
  if (mean_messages > 0) round.busiest_messages = std::max(1.0, facts.max_rank_messages / mean_messages);
  if (mean_bytes > 0) round.busiest_bytes = std::max(1.0, facts.max_rank_send / mean_bytes);
  return round;
}

std::string microseconds(double seconds) { return format("%.1f us", seconds * 1e6); }

}  // namespace mpix
