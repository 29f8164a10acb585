#pragma once

#include <string>
#include <vector>

namespace mpix {

// The text files the library reads to configure itself (tuning and machine files),
// read whole before they are parsed. `kind` ("tuning file") starts each message.
//
// Refuses a directory, and a FIFO or socket before opening it (open would block).
// Stops reading past kMaxConfigBytes, which every rank of a job would hold in
// memory: a tuning file is kilobytes, so more is a data file named by mistake, or a
// device such as /dev/zero that never ends (/dev/null reads as an empty file).
constexpr long long kMaxConfigBytes = 16LL << 20;
int read_config_text(const std::string& path, const char* kind, std::string* contents);

// The lines of a file's text. Drops a UTF-8 byte-order mark, which would otherwise
// join the first word unseen, and ends lines at \n, \r\n or a lone \r, so that an
// old Mac editor's file is not one comment line.
std::vector<std::string> config_lines(const std::string& contents);

// Text from a file as a message may quote it: bytes outside printable ASCII as \xNN,
// so that a no-break space or a stray byte shows where it is.
std::string printable(const std::string& text);

}  // namespace mpix
