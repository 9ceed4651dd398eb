#include "core/ir/literal.h"
#include "core/ir/literal_storage.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace hlowb {

namespace {
constexpr std::size_t kHugeThreshold = std::size_t{4} << 20;
constexpr std::size_t kHugePage = std::size_t{2} << 20;

// Freed large buffers kept for reuse. A replay frees and allocates buffers of the same sizes run
// after run; giving them back to the kernel would make every run fault and zero its pages again
// (a 64 MiB result costs about as much to fault in as to compute, and far more on virtual
// machines whose host backs pages lazily). At most CachedBytesLimit() bytes are kept: a quarter
// of the machine's memory, between 1 GiB and 16 GiB, so that a loop body's working set (a
// training step's logits are several 400 MB arrays) is reused from one iteration to the next.
// An allocation takes a kept buffer of exactly its rounded size.
std::size_t CachedBytesLimit() {
  static const std::size_t limit = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    const std::size_t gib = std::size_t{1} << 30;
    if (pages <= 0 || page_size <= 0) return gib;
    const std::size_t quarter = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size) / 4;
    return std::min(std::max(quarter, gib), 16 * gib);
  }();
  return limit;
}

struct LargeBufferCache {
  std::mutex mu;
  std::multimap<std::size_t, void*> free_buffers;  // rounded size -> buffer
  std::size_t cached_bytes = 0;
};

LargeBufferCache& Cache() {
  // Never destroyed: buffers freed by static destructors at exit still find it.
  static LargeBufferCache* cache = new LargeBufferCache();
  return *cache;
}

std::size_t RoundedLarge(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
}  // namespace

namespace {
// Registered external memory (begin -> end), and whether there is any: the common case of
// freeing ordinary storage checks one atomic.
struct ExternalRanges {
  std::mutex mu;
  // begin -> (end, how many scopes registered it: two runs may share a constant).
  std::map<std::uintptr_t, std::pair<std::uintptr_t, int>> ranges;
};
ExternalRanges& External() {
  static ExternalRanges* ranges = new ExternalRanges();
  return *ranges;
}
std::atomic<int> external_count{0};

bool InExternalRange(const void* p) {
  if (external_count.load(std::memory_order_acquire) == 0 || p == nullptr) return false;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  ExternalRanges& ext = External();
  std::lock_guard<std::mutex> lock(ext.mu);
  auto it = ext.ranges.upper_bound(a);
  if (it == ext.ranges.begin()) return false;
  --it;
  return a >= it->first && a < it->second.first;
}

// Slices offered to this thread's next allocations (ScopedStoragePlacement).
thread_local std::vector<ScopedStoragePlacement::Slice>* placement = nullptr;

void* TakePlacement(std::size_t bytes) {
  if (placement == nullptr || bytes == 0) return nullptr;
  for (ScopedStoragePlacement::Slice& s : *placement) {
    if (s.data != nullptr && s.bytes == bytes) {
      void* p = s.data;
      s.data = nullptr;
      return p;
    }
  }
  return nullptr;
}

// The element storage LiteralOver hands to the next allocation on this thread.
thread_local void* over_next = nullptr;
}  // namespace

ScopedExternalStorage::ScopedExternalStorage(void* begin, std::size_t bytes) : begin_(begin) {
  if (begin == nullptr || bytes == 0) {
    begin_ = nullptr;
    return;
  }
  ExternalRanges& ext = External();
  std::lock_guard<std::mutex> lock(ext.mu);
  const auto a = reinterpret_cast<std::uintptr_t>(begin);
  auto& [end, count] = ext.ranges[a];
  end = std::max(end, a + bytes);
  ++count;
  external_count.fetch_add(1, std::memory_order_release);
}

ScopedExternalStorage::~ScopedExternalStorage() {
  if (begin_ == nullptr) return;
  ExternalRanges& ext = External();
  std::lock_guard<std::mutex> lock(ext.mu);
  auto it = ext.ranges.find(reinterpret_cast<std::uintptr_t>(begin_));
  if (it != ext.ranges.end() && --it->second.second == 0) ext.ranges.erase(it);
  external_count.fetch_sub(1, std::memory_order_release);
}

bool IsExternalLiteralStorage(const void* p) { return InExternalRange(p); }

Literal LiteralOver(Shape shape, void* data) {
  over_next = data;
  Literal out = Literal::Uninitialized(std::move(shape));
  over_next = nullptr;
  return out;
}

ScopedStoragePlacement::ScopedStoragePlacement(std::vector<Slice> slices)
    : slices_(std::move(slices)), previous_(placement) {
  placement = &slices_;
}

ScopedStoragePlacement::~ScopedStoragePlacement() { placement = previous_; }

void* AllocateLiteralStorage(std::size_t bytes) {
  if (over_next != nullptr) {
    void* p = over_next;
    over_next = nullptr;
    return p;
  }
  if (void* p = TakePlacement(bytes); p != nullptr) return p;
  if (bytes < kHugeThreshold) return ::operator new(bytes);
  const std::size_t rounded = RoundedLarge(bytes);
  {
    LargeBufferCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.free_buffers.find(rounded);
    if (it != cache.free_buffers.end()) {
      void* p = it->second;
      cache.free_buffers.erase(it);
      cache.cached_bytes -= rounded;
      return p;
    }
  }
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) {
    ReleaseCachedLiteralStorage();  // memory kept for reuse may be what is missing
    p = std::aligned_alloc(kHugePage, rounded);
    if (p == nullptr) throw std::bad_alloc();
  }
  (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure leaves normal pages
  return p;
}

void FreeLiteralStorage(void* p, std::size_t bytes) noexcept {
  if (InExternalRange(p)) return;
  if (bytes < kHugeThreshold) {
    ::operator delete(p);
    return;
  }
  const std::size_t rounded = RoundedLarge(bytes);
  {
    LargeBufferCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    if (cache.cached_bytes + rounded <= CachedBytesLimit()) {
      try {
        cache.free_buffers.emplace(rounded, p);
        cache.cached_bytes += rounded;
        return;
      } catch (...) {  // no memory for the map node: free the buffer instead
      }
    }
  }
  std::free(p);
}

std::size_t CachedLiteralStorageBytes() {
  LargeBufferCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.cached_bytes;
}

void ReleaseCachedLiteralStorage() noexcept {
  LargeBufferCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  for (const auto& [size, p] : cache.free_buffers) std::free(p);
  cache.free_buffers.clear();
  cache.cached_bytes = 0;
}

Literal Literal::Uninitialized(Shape shape) {
  Literal out(std::move(shape), /*allocate=*/false);
  if (out.shape_.IsArray()) {
    out.data_.resize(static_cast<size_t>(out.component_count()) * out.component_bytes_);
  }
  return out;
}

Literal::Literal(Shape shape, bool allocate) : shape_(std::move(shape)) {
  if (shape_.IsTuple()) {
    for (const Shape& s : shape_.tuple_shapes()) tuple_.emplace_back(s, allocate);
    return;
  }
  if (!shape_.IsArray()) return;
  element_count_ = shape_.ElementCount();
  if (element_count_ < 0) element_count_ = 0;
  PrimitiveType t = shape_.element_type();
  component_bytes_ = ByteWidth(ComplexComponentType(t));
  if (allocate) data_.assign(static_cast<size_t>(component_count()) * component_bytes_, 0);
}

int64_t Literal::component_count() const {
  return IsComplex(shape_.element_type()) ? element_count_ * 2 : element_count_;
}

uint64_t Literal::GetBits(int64_t i) const {
  uint64_t v = 0;
  std::memcpy(&v, data_.data() + i * component_bytes_, component_bytes_);
  if (shape_.element_type() != PrimitiveType::kPred && BitWidth(shape_.element_type()) < 8) {
    v &= (uint64_t{1} << BitWidth(shape_.element_type())) - 1;
  }
  return v;
}

void Literal::SetBits(int64_t i, uint64_t bits) {
  PrimitiveType t = shape_.element_type();
  int width = BitWidth(t);
  if (t != PrimitiveType::kPred && width < 8) {
    bits &= (uint64_t{1} << width) - 1;
    if (IsSignedIntegral(t) && (bits >> (width - 1)) & 1) bits |= ~uint64_t{0} << width;
  }
  std::memcpy(data_.data() + i * component_bytes_, &bits, component_bytes_);
}

int64_t Literal::GetInt(int64_t i) const {
  uint64_t bits = 0;
  std::memcpy(&bits, data_.data() + i * component_bytes_, component_bytes_);
  PrimitiveType t = shape_.element_type();
  int width = component_bytes_ * 8;
  if (IsSignedIntegral(t) && width < 64 && ((bits >> (width - 1)) & 1)) {
    bits |= ~uint64_t{0} << width;
  }
  return static_cast<int64_t>(bits);
}

bool Literal::operator==(const Literal& o) const {
  return shape_.Compatible(o.shape_) && elided_ == o.elided_ && data_ == o.data_ &&
         tuple_ == o.tuple_;
}

}  // namespace hlowb
