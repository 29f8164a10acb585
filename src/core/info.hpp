// MPIX_Info and the hint keys: the one table of keys, each with the check its value
// gets on its own. A value is looked up in the info, then in the environment
// (the key in upper case), in that order (API.md, "Hints").
#pragma once
#include <map>
#include <string>
#include <vector>

#include "mpix/mpix.h"

namespace mpix {
// A number no info content had before: (address, generation) names one content of
// one info, also after MPIX_Info_free and an MPIX_Info_init at the same address.
unsigned long long new_info_generation();
}  // namespace mpix

struct MPIX_Info_s {
  std::map<std::string, std::string> values;
  unsigned long long generation = mpix::new_info_generation();  // new with every MPIX_Info_set
};

namespace mpix {

enum class KeyKind {
  algorithm,    // an algorithm name of `op`, or auto
  radix,        // an integer >= 2, or auto
  positive,     // an integer >= 1
  block_count,  // an integer >= 1, or unlimited
  queue,        // an integer >= 2 (a send and a receive)
  non_negative, // an integer >= 0
  seed,         // any integer
  path,         // a non-empty file name
  boolean,      // true or false
  boolean_auto, // true, false or auto
  locality,     // node or region
};

struct KeySpec {
  const char* key;
  KeyKind kind;
  unsigned op;  // for algorithm keys: the operation they choose for
};

const std::vector<KeySpec>& info_keys();
const KeySpec* find_key(const std::string& key);

// The environment variable of a key: its name in upper case.
std::string env_name(const char* key);

// MPIX_ERR_INFO_VALUE with a message naming `source` if `value` is malformed.
int check_value(const KeySpec& spec, const std::string& value, const std::string& source);

// A call's info argument: NULL (no hints) or a live handle (handles.hpp); else
// MPIX_ERR_ARG naming `call`, before anything reads it.
int check_call_info(const MPIX_Info* info, const char* call);

// The value of `key` from `info` or else the environment; `source` names where it
// came from for error messages. False if set in neither.
bool lookup(const MPIX_Info* info, const char* key, std::string* value, std::string* source);

// While one is alive on this thread, lookup() finds environment variables in a list
// of the MPIX_ ones made when it was created: one pass over the environment for a
// call's dozen lookups, where each getenv() scans all of it.
class EnvironmentScope {
 public:
  EnvironmentScope();
  ~EnvironmentScope();
  EnvironmentScope(const EnvironmentScope&) = delete;
  EnvironmentScope& operator=(const EnvironmentScope&) = delete;

 private:
  std::vector<const char*> entries_;  // "MPIX_...=value"
  bool owner_ = false;
};

// A hash of every MPIX_ variable of the environment (names and values): equal
// fingerprints, the same hints from the environment.
unsigned long long environment_fingerprint();

// Whether environment variable `name` is 0, false, no or off (any case).
bool environment_says_off(const char* name);
// true/1/yes/on or false/0/no/off, in any case; false if `text` is neither.
bool parse_boolean(const std::string& text, bool* value);
// A boolean key from `info` or else the environment, checked; `value` is left as it
// is where neither sets it. Ranks compare what it parsed to, so "1" and "true" agree.
// `setting`, if given, gets "source=value" as messages quote it, or "" where unset.
int boolean_hint(const MPIX_Info* info, const char* key, bool* value, std::string* setting = nullptr);
// A true/false/auto key: 1 for true, -1 for false, 0 for auto or unset.
int boolean_auto_hint(const MPIX_Info* info, const char* key, int* value);

// MPIX_VERBOSE: unset, empty, 0, false, no or off: 0 (quiet); 2 or more: 2 (every
// call); any other value: 1 (each distinct decision once per communicator).
int verbose_level();
// Parses a decimal integer filling the whole string.
bool parse_integer(const std::string& text, long long* value);
// The int in environment variable `name`: 0 when unset or empty. Else
// MPIX_ERR_ARG naming the variable, its value and why (not an integer; not an int,
// with the range), *value left 0.
int int_from_environment(const char* name, int* value);
// A seed: any integer from -2^63 to 2^64-1; a negative one is taken modulo 2^64.
bool parse_seed(const std::string& text, unsigned long long* value);

}  // namespace mpix
