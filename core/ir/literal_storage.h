// Literals over memory their creator owns. A runtime that lays its values out in one arena
// (replay/backends/cpu/cpu_arena.h) shows a slice of it to code that takes literals (library
// calls, the interpreter) as an ordinary Literal whose element storage is that slice: freeing
// such a literal gives nothing back, and copying it copies the elements into new storage.
//
// Usage: register the memory (ScopedExternalStorage) for as long as literals over it live, and
// make each literal with LiteralOver. Storage placement (ScopedStoragePlacement) offers slices
// to the next allocations of exactly their size made on this thread, so that a result lands
// where the runtime wants it instead of being copied there.
#ifndef HLOWB_CORE_IR_LITERAL_STORAGE_H_
#define HLOWB_CORE_IR_LITERAL_STORAGE_H_

#include <cstddef>
#include <vector>

#include "core/ir/literal.h"

namespace hlowb {

// Marks [begin, begin + bytes) as memory literals may view; freeing storage inside it is a
// no-op until the scope ends. Literals over it must be gone by then.
class ScopedExternalStorage {
 public:
  ScopedExternalStorage(void* begin, std::size_t bytes);
  ~ScopedExternalStorage();
  ScopedExternalStorage(const ScopedExternalStorage&) = delete;
  ScopedExternalStorage& operator=(const ScopedExternalStorage&) = delete;

 private:
  void* begin_;
};

// An array literal of `shape` whose elements are the bytes at `data` (inside registered
// memory, and exactly the literal's storage size long; nothing is written).
Literal LiteralOver(Shape shape, void* data);

// While it lives, an allocation of literal storage on this thread whose size equals one of the
// offered slices' takes that slice (each at most once) instead of new memory. The slices must be
// inside registered memory.
class ScopedStoragePlacement {
 public:
  struct Slice {
    void* data = nullptr;
    std::size_t bytes = 0;
  };
  explicit ScopedStoragePlacement(std::vector<Slice> slices);
  ~ScopedStoragePlacement();
  ScopedStoragePlacement(const ScopedStoragePlacement&) = delete;
  ScopedStoragePlacement& operator=(const ScopedStoragePlacement&) = delete;

 private:
  std::vector<Slice> slices_;
  std::vector<Slice>* previous_;
};

// Whether `p` lies in registered memory.
bool IsExternalLiteralStorage(const void* p);

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_LITERAL_STORAGE_H_
