#include "kubernetes/json_filter.h"

#include <algorithm>

#include "core/json_limits.h"

namespace gcm::kube {

namespace {

void merge_filter_node(JsonFilter::Node& into, const JsonFilter::Node& from) {
  into.all = into.all || from.all;
  for (const auto& [k, v] : from.children) merge_filter_node(into.children[k], v);
}

}  // namespace

const JsonFilter::Node* JsonFilter::Node::child(std::string_view key) const {
  if (all) return this;
  if (auto it = children.find(key); it != children.end()) return &it->second;
  if (auto it = children.find("*"); it != children.end()) return &it->second;
  return nullptr;
}

JsonFilter& JsonFilter::keep(const std::vector<std::string>& path) {
  Node* n = &root_;
  for (const auto& seg : path) n = &n->children[seg];
  n->all = true;
  return *this;
}

JsonFilter& JsonFilter::keep_under(const std::vector<std::string>& prefix, const JsonFilter& inner) {
  Node* n = &root_;
  for (const auto& seg : prefix) n = &n->children[seg];
  merge_filter_node(*n, inner.root_);
  return *this;
}

std::optional<nlohmann::json> JsonFilter::parse(std::string_view text, std::string* error) const {
  if (auto deep = json_depth_error(text)) {
    if (error) *error = *deep;
    return std::nullopt;
  }
  // The filter keeps its own stack: the filter node of each open container (null: being discarded) and whether it
  // is an array. nlohmann does not call back for everything inside a discarded container (no value events, no
  // end events), so the stack is cut to the parser's depth at every event rather than popped at ends.
  struct Open {
    const Node* node;
    bool array;
  };
  std::vector<Open> stack;
  const Node* pending = &root_;  // the node of the next value: set by a key, or by the enclosing array
  auto element_node = [&]() -> const Node* {
    if (stack.empty()) return pending;
    const Open& top = stack.back();
    if (!top.array) return pending;
    return top.node ? top.node->child("*") : nullptr;
  };
  using E = nlohmann::json::parse_event_t;
  auto cb = [&](int depth, E event, nlohmann::json& parsed) -> bool {
    // Start, key and value events give the number of containers open; end events the number outside the one
    // that ends.
    bool end = event == E::object_end || event == E::array_end;
    size_t open = static_cast<size_t>(std::max(depth, 0)) + (end ? 1 : 0);
    if (open < stack.size()) stack.resize(open);
    switch (event) {
      case E::object_start:
      case E::array_start: {
        const Node* n = element_node();
        stack.push_back({n, event == E::array_start});
        return n != nullptr;
      }
      case E::key: {
        const Node* parent = stack.empty() ? nullptr : stack.back().node;
        pending = parent && parsed.is_string() ? parent->child(parsed.get_ref<const std::string&>()) : nullptr;
        return pending != nullptr;
      }
      case E::value:
        return element_node() != nullptr;
      case E::object_end:
      case E::array_end: {
        const Node* n = stack.empty() ? nullptr : stack.back().node;
        if (!stack.empty()) stack.pop_back();
        return n != nullptr;
      }
    }
    return true;
  };
  nlohmann::json out = nlohmann::json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/false);
  if (out.is_discarded()) {
    if (error) *error = "not valid JSON";
    return std::nullopt;
  }
  return out;
}

}  // namespace gcm::kube
