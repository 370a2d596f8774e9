#pragma once
// Exit codes shared by every subcommand (see README "Exit codes").

namespace cudadiag {

enum ExitCode : int {
  kExitOk = 0,           // done; healthy or as expected
  kExitFindings = 1,     // done; findings (suspect verdict, unexpected outcome, differences)
  kExitUsage = 2,        // usage or input error: bad flag, malformed file
  kExitEnvironment = 3,  // the GPU part could not run (no driver, no device); host part reported
  kExitInternal = 4,     // internal error
};

}  // namespace cudadiag
