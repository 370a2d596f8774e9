#include "report/redact_token.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/errors.h"
#include "util/sha256.h"
#include "util/unique_fd.h"

namespace cudadiag::report {
namespace {

constexpr size_t kMaximumKeyBytes = 4096;

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
  return out;
}

// A key as given: one trailing newline (echo, an editor) is not part of it.
std::string checked_key(std::string key, const std::string& where) {
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  if (key.empty()) throw UsageError(where + ": the redaction key is empty");
  if (key.size() < kMinimumKeyBytes)
    throw UsageError(where + ": the redaction key has " + std::to_string(key.size()) + " bytes, fewer than " +
                     std::to_string(kMinimumKeyBytes) + " (make one with: head -c 32 /dev/urandom | base64 > FILE)");
  return key;
}

std::string read_key_file(const std::string& path, const std::string& named_by) {
  const std::string where = named_by + " '" + path + "'";
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) throw UsageError(where + ": cannot read the redaction key: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw UsageError(where + ": cannot read the redaction key: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw UsageError(where + ": the redaction key must be a regular file");
  if ((st.st_mode & S_IROTH) != 0)
    throw UsageError(where + ": the redaction key is readable by every user (chmod o-r, e.g. chmod 600)");
  if (st.st_size > static_cast<off_t>(kMaximumKeyBytes))
    throw UsageError(where + ": the redaction key is larger than " + std::to_string(kMaximumKeyBytes) + " bytes");
  std::string key(kMaximumKeyBytes + 1, '\0');
  size_t got = 0;
  while (got < key.size()) {
    const ssize_t n = ::read(fd.get(), key.data() + got, key.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw UsageError(where + ": cannot read the redaction key: " + std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  key.resize(got);
  return checked_key(std::move(key), where);
}

}  // namespace

RedactionTokens::RedactionTokens(std::string key, bool keyed) : key_(std::move(key)), keyed_(keyed) {
  if (keyed_) key_id_ = to_hex(hmac_sha256(key_, "cudadiag-key-id"), kTokenHexDigits / 2);
}

RedactionTokens RedactionTokens::keyed(std::string key) { return RedactionTokens(std::move(key), true); }

RedactionTokens RedactionTokens::per_report() { return RedactionTokens(random_bytes(32), false); }

std::string RedactionTokens::token(std::string_view value) const {
  return kTokenPrefix + to_hex(hmac_sha256(key_, value), kTokenHexDigits / 2);
}

std::shared_ptr<const RedactionTokens> redaction_tokens(const std::string& key_file,
                                                        const std::function<const char*(const char*)>& lookup) {
  if (!key_file.empty())
    return std::make_shared<const RedactionTokens>(RedactionTokens::keyed(read_key_file(key_file, "--redact-key")));
  if (const char* file = lookup(kRedactKeyFileEnv); file && *file)
    return std::make_shared<const RedactionTokens>(RedactionTokens::keyed(read_key_file(file, kRedactKeyFileEnv)));
  if (const char* key = lookup(kRedactKeyEnv))
    return std::make_shared<const RedactionTokens>(RedactionTokens::keyed(checked_key(key, kRedactKeyEnv)));
  return std::make_shared<const RedactionTokens>(RedactionTokens::per_report());
}

}  // namespace cudadiag::report
