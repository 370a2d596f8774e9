#include "apps/interposer/ipc_server.h"

#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "apps/interposer/debug_log.h"
#include "apps/interposer/ipc_export.h"

namespace cudadiag::interposer {
namespace {

// A request or reply that does not come within this long is given up (a peer that hangs
// must not hold the exporter's thread, nor the importer's call, for ever).
constexpr int kIoTimeoutSeconds = 10;

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
pid_t g_server_pid = 0;       // the process whose socket runs (a forked child has none)
std::uint64_t g_nonce = 0;
int g_listen_fd = -1;

std::uint64_t random_nonce() {
  std::uint64_t n = 0;
  if (getrandom(&n, sizeof n, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof n) && n != 0) return n;
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return (static_cast<std::uint64_t>(t.tv_nsec) << 32) ^ static_cast<std::uint64_t>(t.tv_sec) ^
         (static_cast<std::uint64_t>(getpid()) << 16) ^ reinterpret_cast<std::uintptr_t>(&n);
}

socklen_t address_of(std::int32_t pid, std::uint64_t nonce, sockaddr_un& a) {
  std::memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  char name[64];
  const std::size_t n = ipc_socket_name(pid, nonce, name);
  std::memcpy(a.sun_path, name, n);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n);
}

void set_timeouts(int fd) {
  timeval tv{};
  tv.tv_sec = kIoTimeoutSeconds;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool read_all(int fd, void* out, std::size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t sent = send(fd, p, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    p += sent;
    n -= static_cast<std::size_t>(sent);
  }
  return true;
}

// The reply, with `fd` attached when there is one.
bool send_reply(int conn, const IpcReply& reply, int fd) {
  iovec iov{const_cast<IpcReply*>(&reply), sizeof reply};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  for (;;) {
    const ssize_t sent = sendmsg(conn, &msg, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    return sent == static_cast<ssize_t>(sizeof reply);
  }
}

void serve_connection(int conn, std::uint64_t nonce) {
  ucred peer{};
  socklen_t length = sizeof peer;
  // Processes of this user only: the memory of the program's buffers is theirs alone.
  if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.uid != geteuid()) {
    debug_log("CUDA IPC: a request from uid %u refused", static_cast<unsigned>(peer.uid));
    return;
  }
  set_timeouts(conn);
  IpcRequest request{};
  if (!read_all(conn, &request, sizeof request) || request.magic != kIpcMagic) return;
  IpcReply reply;
  int fd = -1;
  if (request.nonce == nonce) {
    fd = answer_ipc_request(request, reply, peer.pid);
  } else {
    reply.status = kIpcUnknownBuffer;
  }
  send_reply(conn, reply, fd);
  if (fd >= 0) close(fd);
}

struct ServerArgs {
  int listen_fd;
  std::uint64_t nonce;
};
ServerArgs g_args;

void* serve(void*) {
  const ServerArgs a = g_args;
  for (;;) {
    const int conn = accept4(a.listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
          errno == ENOMEM) {
        if (errno != EINTR && errno != ECONNABORTED) sleep(1);
        continue;
      }
      debug_log("CUDA IPC: the hand-over socket stopped: accept failed (errno %d)", errno);
      return nullptr;
    }
    serve_connection(conn, a.nonce);
    close(conn);
  }
}

// Caller holds g_lock.
int start_server(pid_t pid) {
  // A socket inherited from the parent across fork() belongs to the parent's thread.
  if (g_listen_fd >= 0) close(g_listen_fd);
  g_listen_fd = -1;
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  const std::uint64_t nonce = random_nonce();
  sockaddr_un a;
  const socklen_t length = address_of(static_cast<std::int32_t>(pid), nonce, a);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&a), length) != 0 || listen(fd, 64) != 0) {
    const int error = errno;
    close(fd);
    return error;
  }
  g_args = ServerArgs{fd, nonce};
  // The thread takes no signal of the program's.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  const int rc = pthread_create(&thread, nullptr, &serve, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    close(fd);
    return rc;
  }
  pthread_detach(thread);
  g_listen_fd = fd;
  g_nonce = nonce;
  g_server_pid = pid;
  debug_log("CUDA IPC: hand-over socket of process %d started", static_cast<int>(pid));
  return 0;
}

}  // namespace

bool ensure_ipc_server(std::uint64_t& nonce, int& error) noexcept {
  const pid_t pid = getpid();
  pthread_once(&g_fork_once, [] {
    pthread_atfork([] { pthread_mutex_lock(&g_lock); }, [] { pthread_mutex_unlock(&g_lock); },
                   [] { pthread_mutex_unlock(&g_lock); });
  });
  pthread_mutex_lock(&g_lock);
  error = g_server_pid == pid ? 0 : start_server(pid);
  nonce = g_nonce;
  pthread_mutex_unlock(&g_lock);
  return error == 0;
}

int request_ipc_memory(const FencedIpcHandle& h, IpcReply& reply, int& error) noexcept {
  error = 0;
  const int conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (conn < 0) {
    error = errno;
    return -1;
  }
  set_timeouts(conn);
  sockaddr_un a;
  const socklen_t length = address_of(h.pid, h.nonce, a);
  int rc;
  do {
    rc = connect(conn, reinterpret_cast<const sockaddr*>(&a), length);
  } while (rc != 0 && errno == EINTR);
  const IpcRequest request{kIpcMagic, h.nonce, h.address, h.seq};
  if (rc != 0 || !write_all(conn, &request, sizeof request)) {
    error = errno ? errno : ECONNRESET;
    close(conn);
    return -1;
  }
  reply = IpcReply{};
  reply.magic = 0;  // set by a whole reply only
  iovec iov{&reply, sizeof reply};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t got;
  do {
    got = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (got < 0 && errno == EINTR);
  const int received_errno = errno;
  close(conn);
  int fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  if (got != static_cast<ssize_t>(sizeof reply) || reply.magic != kIpcMagic) {
    if (fd >= 0) close(fd);
    error = got < 0 ? received_errno : EPROTO;
    return -1;
  }
  if (reply.status != 0 && fd >= 0) {
    close(fd);
    fd = -1;
  }
  if (reply.status == 0 && fd < 0) {
    error = EPROTO;
    return -1;
  }
  return fd;
}

}  // namespace cudadiag::interposer
