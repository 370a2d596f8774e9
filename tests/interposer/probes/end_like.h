#pragma once
// A probe that runs a child ends as its child ended: its exit status, or its signal
// (said on stdout first, as "<who>child killed by signal N").
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>

inline int end_like(int status, const char* who = "") {
  if (WIFSIGNALED(status)) {
    std::printf("%schild killed by signal %d\n", who, WTERMSIG(status));
    std::fflush(stdout);
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
