// Typed values of HLO instruction attributes: windows, dimension numbers, shardings, replica
// groups, metadata and the rest of hlo-format.md §3. These are plain value types with
// equality; the text and proto front ends fill them and the verifier checks them.
#ifndef HLOWB_CORE_IR_ATTRIBUTES_H_
#define HLOWB_CORE_IR_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/shape.h"

namespace hlowb {

struct WindowDimension {
  int64_t size = 0;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool window_reversal = false;
  bool operator==(const WindowDimension&) const = default;
};
using Window = std::vector<WindowDimension>;

struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  // ragged-dot only.
  std::vector<int64_t> lhs_ragged_dimensions;
  std::vector<int64_t> rhs_group_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

enum class Precision : uint8_t { kDefault, kHigh, kHighest, kPackedNibble };

// Dot algorithm names as printed ("dot_bf16_bf16_f32"); stored as text because the enum grows
// with every XLA release and an unknown value must still round-trip.
struct PrecisionConfig {
  std::vector<Precision> operand_precision;
  std::string algorithm;  // empty = unset
  bool operator==(const PrecisionConfig&) const = default;
};

struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDimension&) const = default;
};
using PaddingConfig = std::vector<PaddingDimension>;

struct SliceDimension {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDimension&) const = default;
};

// `[G,N]<=[R...]T(P...)`: devices iota(prod R) reshaped to R, transposed by P, reshaped to dims.
struct IotaDeviceList {
  std::vector<int64_t> dims;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> transpose_perm;  // empty = identity
  bool operator==(const IotaDeviceList&) const = default;
  // Expands to the explicit device order (row-major over dims).
  std::vector<int64_t> Expand() const;
};

// One axis of a mesh-axes replica group list: a whole mesh axis, or the sub-axis of `size`
// devices whose stride within the axis is `pre_size` (written `a:(pre_size)size`).
struct MeshAxisRef {
  int64_t axis = 0;      // index into MeshReplicaGroups::axis_names
  int64_t pre_size = 0;  // 0 = the whole axis
  int64_t size = 0;
  bool by_index = false;  // written as the axis number rather than its name
  bool has_sub() const { return pre_size > 0; }
  bool operator==(const MeshAxisRef&) const = default;
};

// XLA's mesh-axes replica groups: a mesh (named axes and a device assignment) and the mesh
// axes each group spans; every other mesh coordinate names one group.
struct MeshReplicaGroups {
  enum class Style : uint8_t {
    kBracket,  // mesh['a'=2,'b'=4], device_ids=(...) {'a'}
    kAngle,    // @mesh<a=2,b=4>(...) {a}
  };
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  // Device assignment, row-major over axis_sizes: an iota (dims = axis_sizes), an explicit
  // list, or, with neither, the devices 0..n-1 in order.
  std::optional<IotaDeviceList> device_iota;
  std::vector<int64_t> device_ids;
  std::vector<MeshAxisRef> axes;
  Style style = Style::kBracket;
  char quote = '\'';  // how axis names are quoted: '\'', '"' or 0 (bare)
  bool operator==(const MeshReplicaGroups&) const = default;
  // Empty when consistent, else what is wrong.
  std::string Validate() const;
  // The device assignment in row-major order; empty when inconsistent.
  std::vector<int64_t> Devices() const;
  // XLA's flattened groups; empty when inconsistent.
  std::vector<std::vector<int64_t>> Expanded() const;
};

struct ReplicaGroups {
  std::optional<IotaDeviceList> iota;     // compact form, when written that way
  std::vector<std::vector<int64_t>> groups;  // explicit form
  std::optional<MeshReplicaGroups> mesh;  // mesh-axes form, when written that way
  bool operator==(const ReplicaGroups&) const = default;
  // Groups in explicit form whichever way they were written.
  std::vector<std::vector<int64_t>> Expanded() const;
};

struct OpMetadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int32_t source_line = 0;
  int32_t source_end_line = 0;
  int32_t source_column = 0;
  int32_t source_end_column = 0;
  std::vector<int64_t> profile_type;
  std::string deduplicated_name;
  std::string scheduling_name;
  int32_t stack_frame_id = 0;
  bool preserve_layout = false;
  bool operator==(const OpMetadata&) const = default;
  bool empty() const { return *this == OpMetadata(); }
};

enum class ShardingType : uint8_t {
  kReplicated,
  kMaximal,
  kTiled,
  kManual,
  kUnknown,
  kUnreduced,
  kTuple,
  kRaw,  // a form this version does not model (e.g. mesh-based shardings), kept verbatim
};

enum class SubgroupType : uint8_t { kReplicated, kManual, kUnreduced, kMaximal };

struct Sharding {
  ShardingType type = ShardingType::kReplicated;
  std::vector<int64_t> tile_dims;           // devices=[...]
  std::vector<int64_t> devices;             // explicit device list (or maximal device)
  std::optional<IotaDeviceList> iota;       // iota device list
  bool last_tile_dim_replicate = false;
  std::vector<SubgroupType> last_tile_dims;
  enum class ShardGroup : uint8_t { kNone, kAs, kLike } shard_group = ShardGroup::kNone;
  int64_t shard_group_id = 0;
  std::vector<OpMetadata> metadata;
  std::vector<Sharding> tuple_elements;
  std::string raw;  // kRaw: the text between the outer braces
  bool operator==(const Sharding&) const = default;
};

// Key/value pairs, kept sorted by key (XLA prints them sorted). Values are raw strings;
// a value that is a JSON dict is flagged so it prints unquoted.
struct FrontendAttributes {
  struct Entry {
    std::string key;
    std::string value;
    bool is_dict = false;
    bool operator==(const Entry&) const = default;
  };
  std::vector<Entry> entries;
  bool operator==(const FrontendAttributes&) const = default;
};

struct OutputOperandAlias {
  ShapeIndex output_index;
  int64_t operand = 0;
  ShapeIndex operand_index;
  bool operator==(const OutputOperandAlias&) const = default;
};

struct Statistic {
  std::string name;
  double value = 0;
  bool operator==(const Statistic&) const = default;
};
struct StatisticsViz {
  int64_t visualizing_index = 0;
  std::vector<Statistic> statistics;
  bool operator==(const StatisticsViz&) const = default;
};

struct ResultAccuracy {
  enum class Mode : uint8_t { kDefault, kHighest, kTolerance } mode = Mode::kDefault;
  double atol = 0;
  double rtol = 0;
  int64_t ulps = 0;
  bool operator==(const ResultAccuracy&) const = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
enum class ComparisonType : uint8_t { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };
enum class RandomDistribution : uint8_t { kInvalid, kUniform, kNormal };
enum class RandomAlgorithm : uint8_t { kDefault, kThreeFry, kPhilox };
enum class TriangularTranspose : uint8_t { kInvalid, kNoTranspose, kTranspose, kAdjoint };
enum class CustomCallSchedule : uint8_t { kNone, kLatest, kEarliest };
enum class CustomCallApiVersion : uint8_t {
  kUnspecified, kOriginal, kStatusReturning, kStatusReturningUnified, kTypedFfi };
enum class PaddingType : uint8_t { kInvalid, kValid, kSame };
enum class ConvolutionKind : uint8_t { kUnset, kFprop, kDgrad, kWgrad };
enum class TriState : uint8_t { kUnspecified, kTrue, kFalse };

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_ATTRIBUTES_H_
