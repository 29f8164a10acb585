#include "config_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "error.hpp"

namespace mpix {

int read_config_text(const std::string& path, const char* kind, std::string* text) {
  text->clear();
  auto bad = [&](const std::string& why) {
    return fail(MPIX_ERR_TUNING_FILE, format("%s %s: %s", kind, printable(path).c_str(), why.c_str()));
  };
  struct stat status;
  if (::stat(path.c_str(), &status) != 0) return bad(std::string("cannot be opened (") + std::strerror(errno) + ")");
  if (S_ISDIR(status.st_mode)) return bad("is a directory");
  if (S_ISFIFO(status.st_mode) || S_ISSOCK(status.st_mode)) return bad("is a FIFO or a socket, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad(std::string("cannot be opened (") + std::strerror(errno) + ")");
  char chunk[65536];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text->append(chunk, (std::size_t)in.gcount());
    if ((long long)text->size() > kMaxConfigBytes)
      return bad(format("is longer than %lld bytes, the most a %s may hold", kMaxConfigBytes, kind));
  }
  if (in.bad()) return bad("read error");
  return MPIX_SUCCESS;
}

std::vector<std::string> config_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t at = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  while (at < text.size()) {
    std::size_t end = text.find_first_of("\r\n", at);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(at, end - at));
    at = end + (text.compare(end, 2, "\r\n") == 0 ? 2 : 1);
  }
  return lines;
}

std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) out.push_back((char)c);
    else out += format("\\x%02x", c);
  }
  return out;
}

}  // namespace mpix
