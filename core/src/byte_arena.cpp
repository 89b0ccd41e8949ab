#include "faultline/core/byte_arena.hpp"

#include <algorithm>

namespace faultline {

char* byte_arena::allocate(std::size_t size) {
    if (size > left_) {
        const std::size_t block = std::max(size, block_size_);
        blocks_.push_back(std::make_unique_for_overwrite<char[]>(block));
        next_ = blocks_.back().get();
        left_ = block;
        reserved_ += block;
    }
    char* out = next_;
    next_ += size;
    left_ -= size;
    return out;
}

void byte_arena::clear() {
    blocks_.clear();
    next_ = nullptr;
    left_ = 0;
    reserved_ = 0;
}

}  // namespace faultline
