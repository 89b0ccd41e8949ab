#include "shipped_files.hpp"

#include <system_error>

namespace faultline::cli {

std::filesystem::path this_executable() {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path{} : exe;
}

shipped_files find_shipped_files() {
    std::error_code ec;
    const std::filesystem::path exe = this_executable();
    if (!exe.empty()) {
        const auto prefix = exe.parent_path().parent_path();
        if (std::filesystem::is_directory(prefix / "share/faultline/suites", ec)) {
            return {prefix / "share/faultline/suites", prefix / "share/doc/faultline/docs",
                    prefix / "share/faultline/controls"};
        }
    }
    const std::filesystem::path source{FAULTLINE_SOURCE_DIR};
    return {source / "suites", source / "docs", source / "harness/score/controls"};
}

}  // namespace faultline::cli
