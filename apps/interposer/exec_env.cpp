#include "apps/interposer/exec_env.h"

#include <cstring>

namespace cudadiag::interposer {
namespace {

constexpr char kPreloadPrefix[] = "LD_PRELOAD=";
constexpr std::size_t kPreloadPrefixLength = sizeof kPreloadPrefix - 1;

bool is_preload(const char* entry) { return std::strncmp(entry, kPreloadPrefix, kPreloadPrefixLength) == 0; }

// The length of "NAME=" in "NAME=value" (0 when there is no '=').
std::size_t name_length(const char* entry) {
  const char* eq = std::strchr(entry, '=');
  return eq ? static_cast<std::size_t>(eq - entry) + 1 : 0;
}

bool has_variable(char* const envp[], const char* var) {
  const std::size_t n = name_length(var);
  if (n == 0 || !envp) return false;
  for (char* const* e = envp; *e; ++e)
    if (std::strncmp(*e, var, n) == 0) return true;
  return false;
}

const char* preload_value(char* const envp[]) {
  if (!envp) return nullptr;
  const char* found = nullptr;
  for (char* const* e = envp; *e; ++e)
    if (is_preload(*e)) found = *e + kPreloadPrefixLength;  // the last one wins, as with getenv's callers
  return found;
}

std::size_t count_entries(char* const envp[]) {
  std::size_t n = 0;
  if (envp)
    while (envp[n]) ++n;
  return n;
}

char* append(char* out, const char* text) {
  const std::size_t n = std::strlen(text);
  std::memcpy(out, text, n);
  return out + n;
}

}  // namespace

bool preload_names_interposer(const char* value) noexcept {
  if (!value) return false;
  const std::size_t name = std::strlen(kInterposerName);
  const char* p = value;
  while (*p) {
    const std::size_t length = std::strcspn(p, " :");
    // The entry's last path component.
    const char* base = p;
    for (const char* q = p; q < p + length; ++q)
      if (*q == '/') base = q + 1;
    if (static_cast<std::size_t>(p + length - base) == name && std::strncmp(base, kInterposerName, name) == 0)
      return true;
    p += length;
    if (*p) ++p;
  }
  return false;
}

Restoration missing_from(char* const envp[], const SavedEnv& saved) noexcept {
  Restoration r;
  if (!saved.preload_path) return r;
  r.preload = !preload_names_interposer(preload_value(envp));
  std::size_t strings = 0;
  for (int i = 0; i < saved.count; ++i) {
    if (has_variable(envp, saved.vars[i])) continue;
    ++r.vars;
    strings += std::strlen(saved.vars[i]) + 1;
  }
  if (!r.preload && r.vars == 0) return r;
  if (r.preload) {
    const char* old = preload_value(envp);
    strings += kPreloadPrefixLength + std::strlen(saved.preload_path) + 1 + (old ? std::strlen(old) + 1 : 0);
  }
  // The new array: every old entry, one LD_PRELOAD, the variables, the terminating null.
  const std::size_t slots = count_entries(envp) + 1 + static_cast<std::size_t>(r.vars) + 1;
  r.bytes = slots * sizeof(char*) + strings;
  return r;
}

char** restore_environment(char* const envp[], const SavedEnv& saved, const Restoration& r, void* buffer) noexcept {
  const std::size_t slots = count_entries(envp) + 1 + static_cast<std::size_t>(r.vars) + 1;
  char** out = static_cast<char**>(buffer);
  char* text = reinterpret_cast<char*>(out + slots);
  std::size_t n = 0;
  if (r.preload) {
    // Ours first, then whatever the program's environment preloaded.
    out[n++] = text;
    text = append(text, kPreloadPrefix);
    text = append(text, saved.preload_path);
    if (const char* old = preload_value(envp); old && *old) {
      *text++ = ':';
      text = append(text, old);
    }
    *text++ = '\0';
  }
  if (envp)
    for (char* const* e = envp; *e; ++e)
      if (!(r.preload && is_preload(*e))) out[n++] = *e;
  for (int i = 0; i < saved.count; ++i) {
    if (has_variable(envp, saved.vars[i])) continue;
    out[n++] = text;
    text = append(text, saved.vars[i]);
    *text++ = '\0';
  }
  out[n] = nullptr;
  return out;
}

}  // namespace cudadiag::interposer
