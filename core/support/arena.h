// Block arena for objects of one type: objects are constructed in place in fixed-size chunks,
// never move, and are destroyed together with the arena. Used for a module's instructions,
// which are numerous, individually small and live exactly as long as their module.
#ifndef HLOWB_CORE_SUPPORT_ARENA_H_
#define HLOWB_CORE_SUPPORT_ARENA_H_

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace hlowb {

template <typename T, size_t kChunk = 256>
class ObjectArena {
 public:
  ObjectArena() = default;
  ObjectArena(const ObjectArena&) = delete;
  ObjectArena& operator=(const ObjectArena&) = delete;
  ~ObjectArena() {
    for (size_t i = 0; i < size_; ++i) At(i)->~T();
  }

  template <typename... Args>
  T* Create(Args&&... args) {
    if (size_ == chunks_.size() * kChunk) {
      chunks_.push_back(std::unique_ptr<Storage[]>(new Storage[kChunk]));
    }
    T* p = new (&chunks_.back()[size_ % kChunk]) T(std::forward<Args>(args)...);
    ++size_;
    return p;
  }

  size_t size() const { return size_; }
  size_t bytes_reserved() const { return chunks_.size() * kChunk * sizeof(Storage); }

 private:
  struct alignas(T) Storage {
    unsigned char bytes[sizeof(T)];
  };
  T* At(size_t i) { return std::launder(reinterpret_cast<T*>(&chunks_[i / kChunk][i % kChunk])); }

  std::vector<std::unique_ptr<Storage[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_SUPPORT_ARENA_H_
