#include "compare/digest.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

namespace cudadiag::compare {

std::vector<std::string> unique_labels(const std::vector<std::string>& files,
                                       const std::vector<std::string>& hostnames) {
  std::map<std::string, int> uses;
  bool hostnames_usable = true;
  for (const auto& name : hostnames)
    if (name.empty() || uses[name]++ > 0) hostnames_usable = false;
  std::set<std::string> taken;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string label = hostnames_usable ? hostnames[i] : std::filesystem::path(files[i]).filename().string();
    if (label.empty() || taken.count(label)) label += fmt::format("#{}", i + 1);
    taken.insert(label);
    labels.push_back(std::move(label));
  }
  return labels;
}

void label_digests(std::vector<ReportDigest>& reports) {
  std::vector<std::string> files, hostnames;
  for (const auto& r : reports) {
    files.push_back(r.file);
    hostnames.push_back(r.hostname ? *r.hostname : "");
  }
  const auto labels = unique_labels(files, hostnames);
  for (std::size_t i = 0; i < reports.size(); ++i) reports[i].label = labels[i];
}

}  // namespace cudadiag::compare
