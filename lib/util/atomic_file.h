#pragma once
// Where every output of cudadiag goes (-o FILE, or stdout), and how an input file is
// read. cudadiag runs as root on shared nodes, so a path is never trusted to mean what
// it seems: it is resolved by util/safe_path.h (no link followed that its rules refuse,
// the kernel's protected_* rules applied in shared directories whatever the sysctls
// say), and then:
//   "-" or ""              standard output
//   /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N
//                          that descriptor of this process, as the shell opened it
//                          (-o >(jq .) works); written into
//   a new name             created in its directory (openat, O_CREAT|O_EXCL|O_NOFOLLOW,
//                          an unpredictable temporary name, mode 0600 while written),
//                          fsync'd, given mode 0644 under the umask, renamed onto the name
//   a regular file         replaced the same way, atomically; the new file belongs to the
//                          writer (never to the old file's owner) with the old mode bits
//                          within 0644 (a 0600 file stays 0600, a 0666 one becomes 0644)
//   a character device     written into (-o /dev/null; -o /dev/full fails), when it belongs
//                          to root or to the writer and does not sit in a shared directory;
//                          opened with O_NONBLOCK, so an open never waits
//   a FIFO, a socket, a block device, a directory
//                          refused: a FIFO may hang an open or a write and may belong to
//                          anyone; a report never goes into one (-o - and a pipe does that)
//   a symbolic link        followed step by step when its owner is the writer or the owner
//                          of its directory (safe_path.h); the link itself stays
// Readers of a regular file therefore see the old content or the whole new one.
// Every failure (a missing directory, no permission, a full disk, a refused path, a
// closed stdout) throws UsageError naming the path and the reason: exit 2.
#include <string>
#include <string_view>

namespace cudadiag {

// Writes `content` to `path` ("-" or "" is standard output) as described above.
void write_output(const std::string& path, std::string_view content);

// Whether write_output could write `path` now, checked before any work starts so that a
// long run never ends on "cannot write": the path is resolved and judged exactly as
// write_output will (a missing directory, a refused link, a FIFO, another user's file in
// a shared directory), and a new or replaced file's directory must be writable by the
// effective user (a read-only filesystem too). Writes nothing. Throws UsageError naming
// `path` and the reason; "" and "-" (standard output) always pass.
void check_output_path(const std::string& path);

// The file part of write_output: `path` names a file, a link, a device (or something refused).
void write_file_atomically(const std::string& path, std::string_view content);

// A report is never lost: write_output, and when that fails the report is kept in a new
// private file (keep_report) and the UsageError says where:
//   "cannot write /x/r.json: No such file or directory; the report was kept in /tmp/cudadiag-report-k3x9q2ab.json"
// `extension` ("json", "md", "txt") ends the kept file's name.
void write_report(const std::string& path, std::string_view content, std::string_view extension);

// Writes `content` into a new file cudadiag-report-XXXXXXXX.<extension>, mode 0600,
// created with O_EXCL|O_NOFOLLOW in $TMPDIR, else /tmp, else the current directory;
// returns its absolute path. Throws UsageError with the last reason when none works.
std::string keep_report(std::string_view content, std::string_view extension);

// Reads a whole file ("-" reads standard input). Throws UsageError naming the path.
std::string read_file_or_stdin(const std::string& path);
// The same into `text`, reusing its capacity (for reading many files in a row).
void read_file_or_stdin(const std::string& path, std::string& text);

}  // namespace cudadiag
