#include "info.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include <unistd.h>  // environ

#include "error.hpp"
#include "handles.hpp"
#include "plan.hpp"
#include "registry.hpp"

namespace mpix {

const std::vector<KeySpec>& info_keys() {
  static const std::vector<KeySpec> keys = {
      {"mpix_alltoall_algorithm", KeyKind::algorithm, kAlltoall},
      {"mpix_alltoallv_algorithm", KeyKind::algorithm, kAlltoallv},
      {"mpix_alltoall_crs_algorithm", KeyKind::algorithm, kAlltoallCrs},
      {"mpix_alltoallv_crs_algorithm", KeyKind::algorithm, kAlltoallvCrs},
      {"mpix_radix", KeyKind::radix, 0},
      {"mpix_block_count", KeyKind::block_count, 0},
      {"mpix_stride", KeyKind::positive, 0},
      {"mpix_max_queue", KeyKind::queue, 0},
      {"mpix_segment_bytes", KeyKind::positive, 0},
      {"mpix_seed", KeyKind::seed, 0},
      {"mpix_ipc_threshold", KeyKind::non_negative, 0},
      {"mpix_memcpy_threshold", KeyKind::non_negative, 0},
      {"mpix_tuning_file", KeyKind::path, 0},
      {"mpix_machine_file", KeyKind::path, 0},
      {"mpix_check_args", KeyKind::boolean, 0},
      {"mpix_plan_reuse", KeyKind::boolean, 0},
      {"mpix_early_start", KeyKind::boolean_auto, 0},
      {"mpix_recv_counts_known", KeyKind::boolean, 0},
      {"mpix_cuda_aware", KeyKind::boolean, 0},
      {"mpix_locality", KeyKind::locality, 0},
      {"mpix_lane_group", KeyKind::positive, 0},
  };
  return keys;
}

const KeySpec* find_key(const std::string& key) {
  for (const KeySpec& spec : info_keys())
    if (key == spec.key) return &spec;
  return nullptr;
}

std::string env_name(const char* key) {
  std::string name(key);
  for (char& c : name) c = (char)std::toupper((unsigned char)c);
  return name;
}

bool parse_integer(const std::string& text, long long* value) {
  if (text.empty() || std::isspace((unsigned char)text[0])) return false;
  errno = 0;
  char* end = nullptr;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *value = parsed;
  return true;
}

bool parse_boolean(const std::string& text, bool* value) {
  std::string word(text);
  for (char& c : word) c = (char)std::tolower((unsigned char)c);
  const bool on = word == "true" || word == "1" || word == "yes" || word == "on";
  const bool off = word == "false" || word == "0" || word == "no" || word == "off";
  if (on || off) *value = on;
  return on || off;
}

bool environment_says_off(const char* name) {
  const char* text = std::getenv(name);
  bool on = true;
  return text && parse_boolean(text, &on) && !on;
}

int boolean_hint(const MPIX_Info* info, const char* key, bool* value, std::string* setting) {
  std::string text, source;
  if (setting) setting->clear();
  if (!lookup(info, key, &text, &source)) return MPIX_SUCCESS;
  MPIX_TRY(check_value(*find_key(key), text, source));
  parse_boolean(text, value);
  if (setting) *setting = source + "=" + text;
  return MPIX_SUCCESS;
}

int boolean_auto_hint(const MPIX_Info* info, const char* key, int* value) {
  std::string text, source;
  *value = 0;
  if (!lookup(info, key, &text, &source)) return MPIX_SUCCESS;
  MPIX_TRY(check_value(*find_key(key), text, source));
  bool on = false;
  if (text != "auto" && parse_boolean(text, &on)) *value = on ? 1 : -1;
  return MPIX_SUCCESS;
}

int verbose_level() {
  const char* text = std::getenv("MPIX_VERBOSE");
  if (!text || !*text || environment_says_off("MPIX_VERBOSE")) return 0;
  std::string value(text);
  long long number = 0;
  if (parse_integer(value, &number) && number >= 2) return 2;
  return 1;
}

int int_from_environment(const char* name, int* value) {
  *value = 0;
  const char* text = std::getenv(name);
  if (!text || !*text) return MPIX_SUCCESS;
  long long parsed = 0;
  if (!parse_integer(text, &parsed)) return fail(MPIX_ERR_ARG, format("%s=%s (environment): not an integer", name, text));
  if (parsed > INT_MAX || parsed < INT_MIN)
    return fail(MPIX_ERR_ARG, format("%s=%s (environment): out of range (an int: %d..%d)", name, text, INT_MIN, INT_MAX));
  *value = (int)parsed;
  return MPIX_SUCCESS;
}

bool parse_seed(const std::string& text, unsigned long long* value) {
  long long signed_value = 0;
  if (parse_integer(text, &signed_value)) {
    *value = (unsigned long long)signed_value;  // a negative seed is taken modulo 2^64
    return true;
  }
  if (text.empty() || !std::isdigit((unsigned char)text[0])) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *value = parsed;
  return true;
}

static int bad_value(const std::string& source, const std::string& value, const char* why) {
  return fail(MPIX_ERR_INFO_VALUE, source + "=" + value + ": " + why);
}

// Digits after an optional minus: refused by parse_integer, they overflowed (a number
// out of range), where "8k", "0x10" or "12 " are no numbers.
static bool digits_only(const std::string& value) {
  const std::size_t first = value.rfind('-', 0) == 0 ? 1 : 0;
  return value.size() > first &&
         std::all_of(value.begin() + first, value.end(), [](char c) { return std::isdigit((unsigned char)c); });
}

int check_value(const KeySpec& spec, const std::string& value, const std::string& source) {
  long long number = 0;
  bool is_number = parse_integer(value, &number);
  const bool out_of_range = !is_number && digits_only(value);
  auto outside = [&](long long lowest) {
    return out_of_range || (is_number && (number < lowest || number > INT32_MAX));
  };
  switch (spec.kind) {
    case KeyKind::algorithm: {
      if (value == "auto" || find_algorithm(value, (Op)spec.op)) return MPIX_SUCCESS;
      std::string known;
      for (const std::string& name : algorithm_names((Op)spec.op)) known += " " + name;
      return fail(MPIX_ERR_INFO_VALUE, source + "=" + value + ": unknown algorithm for " +
                                           op_name((Op)spec.op) + "; known: auto" + known);
    }
    case KeyKind::radix:
      if (value == "auto") return MPIX_SUCCESS;
      if (outside(2)) return bad_value(source, value, "must be 2..P");
      if (!is_number) return bad_value(source, value, "not a number (expected 2..P or auto)");
      return MPIX_SUCCESS;
    case KeyKind::positive:
      if (outside(1)) return bad_value(source, value, "must be 1..2147483647");
      if (!is_number) return bad_value(source, value, "not a number (expected an integer >= 1)");
      return MPIX_SUCCESS;
    case KeyKind::block_count:
      if (value == "unlimited") return MPIX_SUCCESS;
      if (outside(1)) return bad_value(source, value, "must be 1..2147483647 or unlimited");
      if (!is_number) return bad_value(source, value, "not a number (expected >= 1 or unlimited)");
      return MPIX_SUCCESS;
    case KeyKind::queue:
      if (outside(2)) return bad_value(source, value, "must be 2..2147483647 (at least a receive and a send)");
      if (!is_number) return bad_value(source, value, "not a number (expected an integer >= 2)");
      return MPIX_SUCCESS;
    case KeyKind::non_negative:
      if ((is_number && number < 0) || (out_of_range && value[0] == '-'))
        return bad_value(source, value, "must be >= 0");
      if (out_of_range) return bad_value(source, value, "too large (at most 9223372036854775807)");
      if (!is_number) return bad_value(source, value, "not a number (expected an integer >= 0)");
      return MPIX_SUCCESS;
    case KeyKind::seed: {
      unsigned long long seed = 0;
      if (!parse_seed(value, &seed))
        return bad_value(source, value, "not a 64-bit integer (expected -9223372036854775808..18446744073709551615)");
      return MPIX_SUCCESS;
    }
    case KeyKind::path:
      if (value.empty()) return bad_value(source, value, "empty file name");
      return MPIX_SUCCESS;
    case KeyKind::boolean: {
      bool flag = false;
      if (parse_boolean(value, &flag)) return MPIX_SUCCESS;
      return bad_value(source, value, "expected true or false (or 1/0, yes/no, on/off)");
    }
    case KeyKind::boolean_auto: {
      bool flag = false;
      if (value == "auto" || parse_boolean(value, &flag)) return MPIX_SUCCESS;
      return bad_value(source, value, "expected true, false or auto (or 1/0, yes/no, on/off)");
    }
    case KeyKind::locality:
      if (value == "node" || value == "region") return MPIX_SUCCESS;
      return bad_value(source, value, "expected node or region");
  }
  return MPIX_SUCCESS;
}

namespace {

thread_local const std::vector<const char*>* scoped_environment = nullptr;

bool is_mpix_variable(const char* entry) { return entry[0] == 'M' && std::strncmp(entry, "MPIX_", 5) == 0; }

// The value of `key`'s variable in the scope's list, or NULL.
const char* scoped_getenv(const std::vector<const char*>& entries, const char* key) {
  for (const char* entry : entries) {
    const char* k = key;
    const char* e = entry;
    while (*k && *e == (char)std::toupper((unsigned char)*k)) ++k, ++e;
    if (!*k && *e == '=') return e + 1;
  }
  return nullptr;
}

}  // namespace

EnvironmentScope::EnvironmentScope() {
  if (scoped_environment) return;  // an outer scope has the list
  for (char** entry = environ; entry && *entry; ++entry)
    if (is_mpix_variable(*entry)) entries_.push_back(*entry);
  scoped_environment = &entries_;
  owner_ = true;
}

EnvironmentScope::~EnvironmentScope() {
  if (owner_) scoped_environment = nullptr;
}

unsigned long long new_info_generation() {
  static std::atomic<unsigned long long> last{0};
  return ++last;
}

unsigned long long environment_fingerprint() {
  unsigned long long hash = 1469598103934665603ull;  // FNV-1a
  for (char** entry = environ; entry && *entry; ++entry) {
    if (!is_mpix_variable(*entry)) continue;
    for (const char* c = *entry; *c; ++c) hash = (hash ^ (unsigned char)*c) * 1099511628211ull;
    hash = (hash ^ 0xffu) * 1099511628211ull;  // between entries: "A=bc" "D" is not "A=b" "cD"
  }
  return hash;
}

int check_call_info(const MPIX_Info* info, const char* call) {
  return info ? check_handle(info, call, "info") : MPIX_SUCCESS;
}

bool lookup(const MPIX_Info* info, const char* key, std::string* value, std::string* source) {
  if (info) {
    auto it = info->values.find(key);
    if (it != info->values.end()) {
      *value = it->second;
      *source = key;
      return true;
    }
  }
  const char* env = scoped_environment ? scoped_getenv(*scoped_environment, key) : std::getenv(env_name(key).c_str());
  if (!env || !*env) return false;  // set but empty: unset, as for MPIX_PPN
  *value = env;
  *source = env_name(key) + " (environment)";
  return true;
}

}  // namespace mpix

using namespace mpix;

extern "C" int MPIX_Info_init(MPIX_Info** info) {
  if (!info) return fail(MPIX_ERR_ARG, "MPIX_Info_init: info is NULL");
  *info = new (std::nothrow) MPIX_Info_s;
  if (!*info) return fail(MPIX_ERR_NO_MEM, "MPIX_Info_init: out of memory");
  handle_made(*info);
  return MPIX_SUCCESS;
}

extern "C" int MPIX_Info_set(MPIX_Info* info, const char* key, const char* value) {
  MPIX_TRY(check_handle(info, "MPIX_Info_set", "info"));
  if (!key) return fail(MPIX_ERR_ARG, "MPIX_Info_set: key is NULL");
  if (!value) return fail(MPIX_ERR_ARG, format("MPIX_Info_set: value of %s is NULL", key));
  const KeySpec* spec = find_key(key);
  if (!spec) return fail(MPIX_ERR_INFO_KEY, format("MPIX_Info_set: unknown key '%s'", key));
  if (const int rc = check_value(*spec, value, key))
    return fail(rc, std::string("MPIX_Info_set: ") + MPIX_Last_error_message());
  try {
    info->values[key] = value;
    info->generation = new_info_generation();
  } catch (const std::bad_alloc&) {
    return fail(MPIX_ERR_NO_MEM, "MPIX_Info_set: out of memory");
  }
  return MPIX_SUCCESS;
}

extern "C" int MPIX_Info_get(const MPIX_Info* info, const char* key, int valuelen, char* value,
                             int* flag) {
  MPIX_TRY(check_handle(info, "MPIX_Info_get", "info"));
  if (!key) return fail(MPIX_ERR_ARG, "MPIX_Info_get: key is NULL");
  if (!flag) return fail(MPIX_ERR_ARG, "MPIX_Info_get: flag is NULL");
  if (!find_key(key)) return fail(MPIX_ERR_INFO_KEY, format("MPIX_Info_get: unknown key '%s'", key));
  auto it = info->values.find(key);
  *flag = it != info->values.end();
  if (!*flag) return MPIX_SUCCESS;
  if (!value) return fail(MPIX_ERR_ARG, format("MPIX_Info_get: value is NULL but %s is set", key));
  if (valuelen < 1)
    return fail(MPIX_ERR_ARG, format("MPIX_Info_get: valuelen=%d: need a buffer of >= 1 byte", valuelen));
  std::size_t n = std::min<std::size_t>(it->second.size(), (std::size_t)valuelen - 1);
  std::memcpy(value, it->second.data(), n);
  value[n] = '\0';
  return MPIX_SUCCESS;
}

extern "C" int MPIX_Info_free(MPIX_Info** info) {
  if (!info) return fail(MPIX_ERR_ARG, "MPIX_Info_free: info is NULL");
  MPIX_TRY(check_handle(*info, "MPIX_Info_free", "*info"));
  handle_freed(*info);
  delete *info;
  *info = nullptr;
  return MPIX_SUCCESS;
}
