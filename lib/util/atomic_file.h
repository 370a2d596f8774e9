#pragma once
// Where every output of cudadiag goes (-o FILE, or stdout), and how an input file is
// read. Writing follows what the user meant by the path:
//   "-" or ""              standard output
//   a FIFO or a device     written through: opened, written, closed; never replaced
//                          (-o /dev/null stays the device node, -o /dev/full fails)
//   a symbolic link        its final target is replaced atomically; the link stays
//   a regular file         replaced atomically (temp file in the same directory, fsync,
//                          rename) keeping its permission bits (and owner, when allowed)
//   a new name             created the same way, with 0666 masked by the umask
// Readers of a regular file therefore see the old content or the whole new one.
// Every failure (a missing directory, no permission, a full disk, a directory in the
// way, a closed stdout) throws UsageError naming the path and the system's reason:
// exit 2, an input the user must fix, as README's exit-code table says.
#include <string>
#include <string_view>

namespace cudadiag {

// Writes `content` to `path` ("-" or "" is standard output) as described above.
void write_output(const std::string& path, std::string_view content);

// The file part of write_output: `path` names a file, a symlink, a FIFO or a device.
void write_file_atomically(const std::string& path, std::string_view content);

// Reads a whole file ("-" reads standard input). Throws UsageError naming the path.
std::string read_file_or_stdin(const std::string& path);
// The same into `text`, reusing its capacity (for reading many files in a row).
void read_file_or_stdin(const std::string& path, std::string& text);

}  // namespace cudadiag
