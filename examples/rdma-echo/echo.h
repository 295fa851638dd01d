/* What echo_server and echo_client share. */
#pragma once
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Every message is this long (a NUL-terminated text in it). */
enum { kEchoMessage = 64 };

/* Says which call failed and why; returns the exit status 1. */
static inline int fail(const char* what) {
  fprintf(stderr, "%s failed: %s\n", what, strerror(errno));
  return 1;
}
