// Where the suites and docs that come with faultline are: beside an installed binary
// (PREFIX/bin/faultline → PREFIX/share/faultline/suites and …/controls, PREFIX/share/doc/faultline/docs), else in the
// source tree this binary was built from. The help, `score`'s catalogue and the man page name them.
#pragma once

#include <filesystem>

namespace faultline::cli {

struct shipped_files {
    std::filesystem::path suites;
    std::filesystem::path docs;
    std::filesystem::path controls;  // `score`'s timing controls for Node.js and Python clients
};

shipped_files find_shipped_files();

// This binary's path (from /proc/self/exe), empty when it cannot be read.
std::filesystem::path this_executable();

}  // namespace faultline::cli
