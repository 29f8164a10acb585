// Scratch memory of a communicator's plans. Every algorithm takes its temporary
// buffers from here, so the memory of all of them is measured the same way: the
// pool knows what is in use now and its high-water mark.
#pragma once
#include <cstddef>
#include <memory>

namespace mpix {

class ScratchPool;

// Bytes borrowed from a pool; returned when destroyed.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ScratchBuffer(ScratchPool* pool, std::size_t bytes);
  ScratchBuffer(ScratchBuffer&& other) noexcept { *this = std::move(other); }
  ScratchBuffer& operator=(ScratchBuffer&& other) noexcept;
  ~ScratchBuffer() { release(); }

  char* data() const { return data_.get(); }
  std::size_t size() const { return bytes_; }

 private:
  void release();
  ScratchPool* pool_ = nullptr;
  std::unique_ptr<char[]> data_;
  std::size_t bytes_ = 0;
};

class ScratchPool {
 public:
  // Throws std::bad_alloc like new; the API boundary turns it into MPIX_ERR_NO_MEM.
  ScratchBuffer acquire(std::size_t bytes) { return ScratchBuffer(this, bytes); }
  std::size_t in_use() const { return in_use_; }
  std::size_t high_water() const { return high_water_; }
  void reset_high_water() { high_water_ = in_use_; }

 private:
  friend class ScratchBuffer;
  std::size_t in_use_ = 0, high_water_ = 0;
};

}  // namespace mpix
