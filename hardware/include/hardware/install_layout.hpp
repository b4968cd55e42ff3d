#pragma once
// Where an installed meshslice keeps its shipped data (input decks, machine descriptions):
// <prefix>/share/meshslice, found from the running executable (<prefix>/bin/app), so that a
// moved or relocated prefix still works. Every app and the hardware model look here first.
#include <filesystem>

namespace meshslice::hw {

// The installed data folder as seen from this executable; empty where the executable's path is
// unknown (not Linux) or the build does not know its install layout.
std::filesystem::path installed_data_dir();

}  // namespace meshslice::hw
