// Parsing a JSON document while keeping only some of its members: the fields a caller names by path, everything
// else skipped as it is read. A pod as the API server returns it is 5-20 KB (managedFields, the whole spec); the
// collectors need a few hundred bytes of it, so a page of 500 pods becomes a few hundred KB of DOM, not tens of MB.
//
// Paths are lists of segments; "*" stands for every element of an array or every member of an object, and a path
// keeps everything under its last segment: {"metadata", "annotations", "slurm.coreweave.com/job-id"} keeps that one
// annotation, {"status", "conditions"} keeps every condition whole.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gcm::kube {

class JsonFilter {
 public:
  JsonFilter() = default;
  // Keeps `path` (and everything under it).
  JsonFilter& keep(const std::vector<std::string>& path);
  // Keeps `inner` under `prefix` (e.g. a list's item filter under {"items", "*"}).
  JsonFilter& keep_under(const std::vector<std::string>& prefix, const JsonFilter& inner);

  // Parses `text` keeping only the filter's paths; nesting deeper than the project's JSON limit, or a syntax error,
  // is an error message. Members that are not kept do not exist in the result.
  std::optional<nlohmann::json> parse(std::string_view text, std::string* error) const;

  struct Node {
    std::map<std::string, Node, std::less<>> children;
    bool all = false;  // keep everything from here down
    const Node* child(std::string_view key) const;
  };
  const Node& root() const { return root_; }

 private:
  Node root_;
};

}  // namespace gcm::kube
