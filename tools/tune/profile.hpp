// mpix-tune --profile (tools/tune/profile.cpp).
#pragma once
#include <string>

#include "mpix/mpix.h"

// Measures the machine's constants on `comm` (collective) and writes them to
// `out_path` from rank 0: 0 on success, 1 where the file cannot be written.
int profile_main(const std::string& out_path, MPIX_Comm* comm);
