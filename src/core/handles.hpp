// The handles the library gave the program (MPIX_Comm, MPIX_Request) and has not
// freed. A handle used after its free (a copy of it: the free sets the program's
// own variable to NULL) is refused with MPIX_ERR_ARG instead of being read as freed
// memory, as MPI refuses a freed MPI_Request. An object made later at the freed
// one's address is taken for it: such a use cannot be told from a valid one.
#pragma once

namespace mpix {

void handle_made(const void* handle);
void handle_freed(const void* handle);
bool handle_live(const void* handle);

// MPIX_SUCCESS where `handle` is live; else MPIX_ERR_ARG with "CALL: WHAT is NULL"
// or "CALL: WHAT is not live (...)".
int check_handle(const void* handle, const char* call, const char* what);

}  // namespace mpix
