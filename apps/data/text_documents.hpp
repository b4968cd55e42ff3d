#pragma once
// The documents of meshslice-data: the regular files named on the command line and found in
// the folders named there, each once. Folders are walked in sorted order so a dataset comes out
// the same from the same files on any file system. A file reached a second time (through a
// symbolic or hard link) and a file whose bytes equal an earlier one's are skipped, so a folder
// of links, such as /usr/share/common-licenses, gives each text once.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace meshslice::dataapp {

struct DocumentCounts {
  std::int64_t files = 0;      // regular files found, links and duplicates included
  std::int64_t documents = 0;  // handed to the callback
  std::int64_t same_file = 0;  // the same file again (through a link)
  std::int64_t same_text = 0;  // another file with an earlier one's content
  std::int64_t empty = 0;
  std::int64_t not_followed = 0;  // symbolic links to folders, sockets, devices, ...
};

// Calls `document(path, text)` for each distinct non-empty file, in order. A missing input, an
// input that is neither a file nor a folder, or a file that cannot be read is a UserError.
DocumentCounts for_each_text_document(
    const std::vector<std::string>& inputs,
    const std::function<void(const std::string& path, const std::string& text)>& document);

}  // namespace meshslice::dataapp
