#include "hardware/kv_yaml.hpp"

#include <sstream>

namespace meshslice::hw {

namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
  std::ostringstream os;
  os << source << ":" << line << ": " << what;
  throw MachineError(os.str());
}

}  // namespace

KvMap parse_kv_yaml(const std::string& text, const std::string& source) {
  KvMap out;
  // The open sections as (indent, name); a line belongs to the innermost one indented less.
  std::vector<std::pair<int, std::string>> sections;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  int pending_section_indent = -1;  // indent of a section header still waiting for children
  while (std::getline(in, raw)) {
    ++line_no;
    if (raw.find('\t') != std::string::npos)
      fail(source, line_no, "tab character; indent with spaces");
    const std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty() || line == "---" || line == "...") continue;
    const int indent = static_cast<int>(raw.find_first_not_of(' '));
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0)
      fail(source, line_no, "expected 'key: value' or 'section:', got '" + line + "'");
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (key.find_first_of(" .[]{}") != std::string::npos)
      fail(source, line_no, "key '" + key + "' may not contain spaces, dots or brackets");

    if (pending_section_indent >= 0 && indent <= pending_section_indent)
      fail(source, line_no, "section '" + sections.back().second + "' is empty");
    pending_section_indent = -1;
    while (!sections.empty() && sections.back().first >= indent) sections.pop_back();
    if (sections.empty() && indent != 0)
      fail(source, line_no, "unexpected indentation of '" + key + "'");

    std::string dotted;
    for (const auto& s : sections) dotted += s.second + ".";
    dotted += key;
    if (value.empty()) {
      sections.emplace_back(indent, key);
      pending_section_indent = indent;
      continue;
    }
    if (value.front() == '[' && value.back() != ']')
      fail(source, line_no, "unterminated list for '" + dotted + "'");
    if (!out.emplace(dotted, KvEntry{value, line_no, false}).second)
      fail(source, line_no, "duplicate key '" + dotted + "'");
  }
  if (pending_section_indent >= 0)
    fail(source, line_no, "section '" + sections.back().second + "' is empty");
  return out;
}

std::vector<std::string> split_flow_list(const std::string& value) {
  std::string body = trim(value);
  if (!body.empty() && body.front() == '[') body = trim(body.substr(1, body.size() - 2));
  std::vector<std::string> items;
  if (body.empty()) return items;
  std::istringstream in(body);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(trim(item));
  return items;
}

}  // namespace meshslice::hw
