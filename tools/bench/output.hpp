// mpix-bench's output: an aligned table, or CSV rows as they come.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "bench.hpp"
#include "core/breakdown.hpp"

namespace bench {

std::string csv_field(const std::string& text);

class Output {
 public:
  // Any columns (the SDDE table); the last one of `header` may be "check".
  Output(std::vector<std::string> header, bool csv, bool print) : csv_(csv), print_(print), header_(std::move(header)) {
    if (csv_) {
      header_.push_back("error");
      if (print_) print_csv(header_);
    }
  }
  // Only the rank with `print` set writes anything.
  // `breakdown`: the columns t_PHASE_us of MPIX_BREAKDOWN (core/breakdown.hpp).
  Output(bool csv, bool check, bool print, bool breakdown = false) : csv_(csv), print_(print) {
    header_ = {"op",     "algorithm", "params",   "ranks",   "nodes",    "ppn",      "dist",
               "max_block_bytes", "median_us", "min_us", "max_us", "persistent_us", "rounds", "messages", "payload_bytes",
               "metadata_bytes", "scratch_bytes", "speedup", "fastest", "predicted_us"};
    if (check) header_.push_back("check");
    if (breakdown)
      for (int phase = 0; phase < mpix::kTimePhaseCount; ++phase)
        header_.push_back(std::string("t_") + mpix::time_phase_name(static_cast<mpix::TimePhase>(phase)) + "_us");
    if (csv_) {
      header_.push_back("error");
      if (print_) print_csv(header_);
    }
  }

  // `cells` are the leading columns up to max_block_bytes; `rest` the others, or
  // empty with `error` set.
  void add(std::vector<std::string> cells, const std::vector<std::string>& rest, const std::string& error) {
    if (!print_) return;
    if (csv_) {
      if (error.empty()) {
        cells.insert(cells.end(), rest.begin(), rest.end());
        cells.push_back("");
      } else {
        while (cells.size() < header_.size() - 1) cells.push_back("");
        cells.push_back(error);
      }
      print_csv(cells);
      return;
    }
    if (error.empty()) cells.insert(cells.end(), rest.begin(), rest.end());
    else cells.push_back("error: " + error);
    rows_.push_back(cells);
    errors_.push_back(!error.empty());
  }

  void finish() {
    if (csv_ || !print_) return;
    std::vector<std::size_t> width(header_.size());
    for (std::size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
    for (std::size_t r = 0; r < rows_.size(); ++r)
      for (std::size_t c = 0; c < rows_[r].size(); ++c)
        if (!(errors_[r] && c + 1 == rows_[r].size())) width[c] = std::max(width[c], rows_[r][c].size());
    print_aligned(header_, width, false);
    for (std::size_t r = 0; r < rows_.size(); ++r) print_aligned(rows_[r], width, errors_[r]);
    std::fflush(stdout);
  }

 private:
  static bool left_aligned(const std::string& column) {
    return column == "op" || column == "algorithm" || column == "params" || column == "dist" ||
           column == "check" || column == "pattern";
  }
  void print_aligned(const std::vector<std::string>& cells, const std::vector<std::size_t>& width,
                     bool last_free) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c) line += "  ";
      const std::string& text = cells[c];
      if (last_free && c + 1 == cells.size()) {
        line += text;
        break;
      }
      std::string pad(width[c] > text.size() ? width[c] - text.size() : 0, ' ');
      bool left = left_aligned(header_[c]);
      // The last column needs no trailing padding.
      line += left ? (c + 1 == cells.size() ? text : text + pad) : pad + text;
    }
    std::printf("%s\n", line.c_str());
  }
  void print_csv(const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) line += (c ? "," : "") + csv_field(cells[c]);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  bool csv_, print_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> errors_;
};

}  // namespace bench
