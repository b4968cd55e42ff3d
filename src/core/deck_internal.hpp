#pragma once
// Helpers shared by deck.cpp, deck_validate.cpp and deck_help.cpp; not part of the public API.
#include <Teuchos_ParameterList.hpp>

#include <string>
#include <vector>

namespace meshslice::deck_detail {

// "mesh" + "rows" -> "mesh.rows"; "" + "rows" -> "rows".
std::string join_key(const std::string& prefix, const std::string& name);

// Key names of a list in alphabetical order (for "valid keys: ..." messages).
std::vector<std::string> sorted_keys(const Teuchos::ParameterList& list);

// "a, b, c"
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

// The value as a user would type it: 4, 0.001, true, abc, [1, 2, 4].
std::string value_text(const Teuchos::ParameterEntry& entry);

// The allowed strings of a choice parameter, or empty when the entry is not one.
std::vector<std::string> choices_of(const Teuchos::ParameterEntry& valid_entry);

}  // namespace meshslice::deck_detail
