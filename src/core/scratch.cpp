#include "scratch.hpp"

#include <algorithm>

namespace mpix {

ScratchBuffer::ScratchBuffer(ScratchPool* pool, std::size_t bytes)
    : pool_(pool), data_(bytes ? new char[bytes] : nullptr), bytes_(bytes) {
  pool_->in_use_ += bytes_;
  pool_->high_water_ = std::max(pool_->high_water_, pool_->in_use_);
}

ScratchBuffer& ScratchBuffer::operator=(ScratchBuffer&& other) noexcept {
  if (this != &other) {
    release();
    pool_ = other.pool_;
    data_ = std::move(other.data_);
    bytes_ = other.bytes_;
    other.pool_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void ScratchBuffer::release() {
  if (pool_) pool_->in_use_ -= bytes_;
  pool_ = nullptr;
  data_.reset();
  bytes_ = 0;
}

}  // namespace mpix
