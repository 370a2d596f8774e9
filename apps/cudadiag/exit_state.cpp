#include "commands.h"

namespace cudadiag::app {
namespace {
int g_exit_code = 0;
}  // namespace

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

}  // namespace cudadiag::app
