#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "apps/interposer/exec_env.h"

using namespace cudadiag::interposer;

namespace {

// An environment array over `entries` (kept alive by the caller).
std::vector<char*> env_of(std::vector<std::string>& entries) {
  std::vector<char*> out;
  for (auto& e : entries) out.push_back(e.data());
  out.push_back(nullptr);
  return out;
}

std::vector<std::string> restored(std::vector<std::string> entries, const SavedEnv& saved, Restoration* r_out = nullptr) {
  auto envp = env_of(entries);
  const Restoration r = missing_from(envp.data(), saved);
  if (r_out) *r_out = r;
  if (r.bytes == 0) return entries;
  std::vector<char> buffer(r.bytes);
  char** out = restore_environment(envp.data(), saved, r, buffer.data());
  std::vector<std::string> result;
  for (char** e = out; *e; ++e) result.emplace_back(*e);
  return result;
}

SavedEnv saved_env() {
  SavedEnv s;
  s.preload_path = "/opt/cd/bin/libcudadiag_fence.so";
  s.vars[0] = "CUDADIAG_RING=/tmp/run/fence-0.ring";
  s.vars[1] = "CUDADIAG_FENCE_ALIGN=16";
  s.count = 2;
  return s;
}

}  // namespace

TEST_CASE("exec env: LD_PRELOAD entries are split as ld.so splits them") {
  CHECK(preload_names_interposer("/opt/cd/bin/libcudadiag_fence.so"));
  CHECK(preload_names_interposer("libfoo.so:/x/libcudadiag_fence.so"));
  CHECK(preload_names_interposer("libfoo.so /x/libcudadiag_fence.so libbar.so"));
  CHECK_FALSE(preload_names_interposer("/x/libcudadiag_fence.so.bak"));
  CHECK_FALSE(preload_names_interposer("/x/not_libcudadiag_fence.so"));
  CHECK_FALSE(preload_names_interposer(""));
  CHECK_FALSE(preload_names_interposer(nullptr));
}

TEST_CASE("exec env: an environment that kept everything is passed as it is") {
  Restoration r;
  const std::vector<std::string> env{"PATH=/bin", "LD_PRELOAD=/opt/cd/bin/libcudadiag_fence.so",
                                     "CUDADIAG_RING=/elsewhere", "CUDADIAG_FENCE_ALIGN=256"};
  CHECK(restored(env, saved_env(), &r) == env);
  CHECK(r.bytes == 0);
}

TEST_CASE("exec env: env -i and an empty environment get the interposer and its settings back") {
  Restoration r;
  CHECK(restored({}, saved_env(), &r) ==
        std::vector<std::string>{"LD_PRELOAD=/opt/cd/bin/libcudadiag_fence.so", "CUDADIAG_RING=/tmp/run/fence-0.ring",
                                 "CUDADIAG_FENCE_ALIGN=16"});
  CHECK(r.preload);
  CHECK(r.vars == 2);
  // subprocess.run(env={...}): the program's own variables are kept, its own preload after ours.
  CHECK(restored({"HOME=/root", "LD_PRELOAD=/usr/lib/libjemalloc.so", "CUDADIAG_FENCE_ALIGN=256"}, saved_env()) ==
        std::vector<std::string>{"LD_PRELOAD=/opt/cd/bin/libcudadiag_fence.so:/usr/lib/libjemalloc.so", "HOME=/root",
                                 "CUDADIAG_FENCE_ALIGN=256", "CUDADIAG_RING=/tmp/run/fence-0.ring"});
  // Only a setting missing: the preload is left as it was.
  CHECK(restored({"LD_PRELOAD=/opt/cd/bin/libcudadiag_fence.so"}, saved_env(), &r) ==
        std::vector<std::string>{"LD_PRELOAD=/opt/cd/bin/libcudadiag_fence.so", "CUDADIAG_RING=/tmp/run/fence-0.ring",
                                 "CUDADIAG_FENCE_ALIGN=16"});
  CHECK_FALSE(r.preload);
}

TEST_CASE("exec env: without a known path of its own nothing is restored") {
  SavedEnv none;
  Restoration r;
  CHECK(restored({"A=1"}, none, &r) == std::vector<std::string>{"A=1"});
  CHECK(r.bytes == 0);
}
