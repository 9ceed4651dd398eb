// Multi-device replay: group formation (XLA's CollectiveOpGroupMode, iota groups), every
// collective with 1, 2, 4 and 8 devices and several group layouts, async forms, replica-id /
// partition-id, deadlock and timeout detection, error and cancel propagation, argument modes,
// and the ReplaySession path. Expected values are worked out from the op definitions with
// inputs whose values name the device and element, so a wrong rank order, group or slice
// shows up as a wrong number.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/support/strings.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "replay/multi_device/collective_groups.h"
#include "replay/multi_device/device_arguments.h"
#include "replay/multi_device/multi_device_runner.h"
#include "replay/session.h"
#include "plugins/api/custom_call_registry.h"
#include "plugins/spmd/spmd_plugin.h"
#include "multi_device_test_util.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::DevicesRun;
using testing::DeviceVector;
using testing::Floats;
using testing::Parse;
using testing::RunOnDevices;

constexpr char kAddComputation[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
)";

std::string HloText(const std::string& body, int64_t replicas, int64_t partitions = 1,
                   const std::string& extra = kAddComputation) {
  return StrCat("HloModule m, replica_count=", replicas, ", num_partitions=", partitions, "\n",
                extra, "\n", body);
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ------------------------------------------------------------------------------------------
// Groups

// The entry computation's instruction `name`.
const Instruction* Find(const hlowb::Module& m, const std::string& name) {
  for (const Instruction* i : m.entry()->instructions()) {
    if (i->name() == name) return i;
  }
  ADD_FAILURE() << "no instruction " << name;
  return m.entry()->root();
}

TEST(CollectiveGroups, ModeFollowsChannelAndGlobalIdsPerOpcode) {
  auto m = Parse(HloText(R"(
ENTRY e {
  p = f32[4] parameter(0)
  a0 = f32[4] all-reduce(p), replica_groups={}, to_apply=add
  a1 = f32[4] all-reduce(p), channel_id=1, replica_groups={}, to_apply=add
  a2 = f32[4] all-reduce(p), channel_id=2, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
  t0 = f32[4] all-to-all(p), replica_groups={}, dimensions={0}
  t1 = f32[4] all-to-all(p), channel_id=3, replica_groups={}, dimensions={0}
  c1 = f32[4] collective-permute(p), channel_id=4, source_target_pairs={{0,1}}
  ROOT bc = f32[4] collective-broadcast(p), channel_id=5, replica_groups={}
}
)", 2, 2));
  ASSERT_NE(m, nullptr);
  auto mode = [&](const char* name) { return *GetCollectiveGroupMode(*Find(*m, name)); };
  EXPECT_EQ(mode("a0"), CollectiveGroupMode::kCrossReplica);
  // all-reduce's use_global_device_ids is a plain bool in XLA: channel_id alone means
  // cross-replica-and-partition, not cross-partition.
  EXPECT_EQ(mode("a1"), CollectiveGroupMode::kCrossReplicaAndPartition);
  EXPECT_EQ(mode("a2"), CollectiveGroupMode::kFlattenedId);
  EXPECT_EQ(mode("t0"), CollectiveGroupMode::kCrossReplica);
  EXPECT_EQ(mode("t1"), CollectiveGroupMode::kCrossPartition);
  EXPECT_EQ(mode("c1"), CollectiveGroupMode::kCrossPartition);
  EXPECT_EQ(mode("bc"), CollectiveGroupMode::kCrossPartition);
}

TEST(CollectiveGroups, IotaListsExpandAsReshapeTransposeReshape) {
  auto expand = [](IotaDeviceList l) {
    auto r = ExpandIotaDeviceList(l);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : std::vector<int64_t>{};
  };
  EXPECT_EQ(expand({{2, 4}, {4, 2}, {1, 0}}), (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(expand({{1, 8}, {8}, {}}), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(expand({{4, 2}, {2, 2, 2}, {2, 0, 1}}),
            (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_FALSE(ExpandIotaDeviceList({{2, 4}, {4, 3}, {}}).ok());
  EXPECT_FALSE(ExpandIotaDeviceList({{2, 4}, {4, 2}, {0, 0}}).ok());
  ReplicaGroups g;
  g.iota = IotaDeviceList{{2, 4}, {4, 2}, {1, 0}};
  auto groups = ExpandReplicaGroups(g);
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ(*groups, (std::vector<std::vector<int64_t>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
}

TEST(CollectiveGroups, DeviceGroupsPerMode) {
  // 2 replicas x 2 partitions: device = replica * 2 + partition.
  auto m = Parse(HloText(R"(
ENTRY e {
  p = f32[4] parameter(0)
  cr = f32[4] all-reduce(p), replica_groups={{1,0}}, to_apply=add
  crp = f32[4] all-reduce(p), channel_id=1, replica_groups={{0},{1}}, to_apply=add
  fl = f32[4] all-reduce(p), channel_id=2, replica_groups={{3,0},{1,2}}, use_global_device_ids=true, to_apply=add
  ROOT cp = f32[4] all-to-all(p), channel_id=3, replica_groups={}, dimensions={0}
}
)", 2, 2));
  ASSERT_NE(m, nullptr);
  DeviceGrid grid{2, 2};
  using Groups = std::vector<std::vector<int64_t>>;
  auto groups = [&](const char* name) { return *CollectiveDeviceGroups(*Find(*m, name), grid); };
  EXPECT_EQ(groups("cr"), (Groups{{2, 0}, {3, 1}}));      // replicas {1,0} in each partition
  EXPECT_EQ(groups("crp"), (Groups{{0, 1}, {2, 3}}));     // each replica, every partition
  EXPECT_EQ(groups("fl"), (Groups{{3, 0}, {1, 2}}));      // flattened ids as written
  EXPECT_EQ(groups("cp"), (Groups{{0, 1}, {2, 3}}));      // all partitions, per replica
  EXPECT_EQ(grid.XlaDeviceId(1), 2);                      // replica 0, partition 1
  EXPECT_EQ(grid.Describe(3), "device 3 (replica 1, partition 1)");
}

TEST(CollectiveGroups, BadIdsAreErrors) {
  auto m = Parse(HloText(R"(
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] all-reduce(p), replica_groups={{0,5}}, to_apply=add
  ROOT c = f32[4] collective-permute(p), source_target_pairs={{0,1},{1,7}}
}
)", 2));
  ASSERT_NE(m, nullptr);
  auto g = CollectiveDeviceGroups(*Find(*m, "a"), DeviceGrid{2, 1});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(Contains(std::string(g.status().message()), "replica id 5")) << g.status();
  auto p = PermuteDevicePairs(*Find(*m, "c"), DeviceGrid{2, 1});
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(Contains(std::string(p.status().message()), "{1,7}")) << p.status();
}

// ------------------------------------------------------------------------------------------
// all-reduce

TEST(MultiDevice, AllReduceSumsEveryDeviceWith1To8Devices) {
  for (int64_t n : {1, 2, 4, 8}) {
    DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[3] parameter(0)
  ROOT r = f32[3] all-reduce(p), replica_groups={}, to_apply=add
}
)", n), n, 1, 3);
    ASSERT_TRUE(r.status.ok()) << n << ": " << r.status;
    // sum over d of (100 d + i) = 100 n (n - 1) / 2 + n i
    std::vector<float> want;
    for (int i = 0; i < 3; ++i) want.push_back(static_cast<float>(50 * n * (n - 1) + n * i));
    for (int64_t d = 0; d < n; ++d) EXPECT_EQ(Floats(r.results[d]), want) << n << " devices";
  }
}

TEST(MultiDevice, AllReduceExplicitIotaAndFlattenedGroups) {
  // Explicit groups {{0,1},{2,3}} on 4 replicas.
  DevicesRun a = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
}
)", 4), 4, 1, 2);
  ASSERT_TRUE(a.status.ok()) << a.status;
  EXPECT_EQ(Floats(a.results[0]), (std::vector<float>{100, 102}));
  EXPECT_EQ(Floats(a.results[1]), (std::vector<float>{100, 102}));
  EXPECT_EQ(Floats(a.results[3]), (std::vector<float>{500, 502}));
  // Iota groups [2,4]<=[4,2]T(1,0) = {{0,2,4,6},{1,3,5,7}} on 8 replicas.
  DevicesRun b = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] all-reduce(p), replica_groups=[2,4]<=[4,2]T(1,0), to_apply=add
}
)", 8), 8, 1, 1);
  ASSERT_TRUE(b.status.ok()) << b.status;
  for (int64_t d = 0; d < 8; ++d) {
    EXPECT_EQ(Floats(b.results[d])[0], d % 2 == 0 ? 1200.f : 1600.f) << d;
  }
  // Flattened ids on 2 replicas x 4 partitions: groups {0,5} {1,4} {2,7} {3,6}.
  DevicesRun c = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] all-reduce(p), channel_id=1, replica_groups={{0,5},{1,4},{2,7},{3,6}}, use_global_device_ids=true, to_apply=add
}
)", 2, 4), 2, 4, 1);
  ASSERT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(Floats(c.results[0])[0], 500.f);
  EXPECT_EQ(Floats(c.results[4])[0], 500.f);
  EXPECT_EQ(Floats(c.results[7])[0], 900.f);
  // channel_id without use_global_device_ids: replica groups {{0},{1}} hold every partition
  // of their replica (cross-replica-and-partition).
  DevicesRun d = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] all-reduce(p), channel_id=1, replica_groups={{0},{1}}, to_apply=add
}
)", 2, 2), 2, 2, 1);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(Floats(d.results[1])[0], 100.f);  // devices 0 + 1
  EXPECT_EQ(Floats(d.results[2])[0], 500.f);  // devices 2 + 3
  // No channel_id on 2 x 2: cross-replica within each partition: {0,2} and {1,3}.
  DevicesRun e = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] all-reduce(p), replica_groups={}, to_apply=add
}
)", 2, 2), 2, 2, 1);
  ASSERT_TRUE(e.status.ok()) << e.status;
  EXPECT_EQ(Floats(e.results[0])[0], 200.f);
  EXPECT_EQ(Floats(e.results[3])[0], 400.f);
}

TEST(MultiDevice, AllReduceMeshAxesGroupsMatchTheirExplicitGroups) {
  // mesh a=2 x b=4 with devices [[7,6,5,4],[3,2,1,0]], grouped over b:(2)2:
  // {{7,6},{5,4},{3,2},{1,0}}; and flattened device ids over a 2 x 2 mesh of partitions.
  const std::string body = R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), replica_groups=GROUPS, to_apply=add
}
)";
  auto with = [&](const std::string& groups) {
    std::string b = body;
    b.replace(b.find("GROUPS"), 6, groups);
    return b;
  };
  DevicesRun mesh = RunOnDevices(
      HloText(with("mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'b':(2)2}"), 8), 8, 1, 2);
  DevicesRun list = RunOnDevices(HloText(with("{{7,6},{5,4},{3,2},{1,0}}"), 8), 8, 1, 2);
  ASSERT_TRUE(mesh.status.ok()) << mesh.status;
  ASSERT_TRUE(list.status.ok()) << list.status;
  for (int64_t d = 0; d < 8; ++d) {
    EXPECT_EQ(Floats(mesh.results[d]), Floats(list.results[d])) << d;
  }
  // Devices 6 and 7: 600 + 700 + (i + i).
  EXPECT_EQ(Floats(mesh.results[6]), (std::vector<float>{1300, 1302}));
  EXPECT_EQ(Floats(mesh.results[0]), (std::vector<float>{100, 102}));
  const std::string partitions =
      "ENTRY e {\n  p = f32[1] parameter(0)\n  ROOT r = f32[1] all-reduce(p), channel_id=1, "
      "replica_groups=GROUPS, use_global_device_ids=true, to_apply=add\n}\n";
  auto with_p = [&](const std::string& groups) {
    std::string b = partitions;
    b.replace(b.find("GROUPS"), 6, groups);
    return b;
  };
  DevicesRun pm = RunOnDevices(HloText(with_p("@mesh<x=2,y=2> {x}"), 1, 4), 1, 4, 1);
  DevicesRun pl = RunOnDevices(HloText(with_p("{{0,2},{1,3}}"), 1, 4), 1, 4, 1);
  ASSERT_TRUE(pm.status.ok()) << pm.status;
  ASSERT_TRUE(pl.status.ok()) << pl.status;
  for (int64_t d = 0; d < 4; ++d) EXPECT_EQ(Floats(pm.results[d]), Floats(pl.results[d])) << d;
  EXPECT_EQ(Floats(pm.results[1])[0], 400.f);  // partitions 1 + 3
}

TEST(MultiDevice, AllReduceAnyReductionFoldsInRankOrder) {
  // to_apply = 2 a + b is not commutative: devices fold in rank order, the group's first
  // device first. Group {{2,0,1,3}}: ((2 x2 + x0) * 2 + x1) * 2 + x3 with x_d = 100 d.
  DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] all-reduce(p), replica_groups={{2,0,1,3}}, to_apply=f
}
)", 4, 1, R"(
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  two = f32[] constant(2)
  t = f32[] multiply(a, two)
  ROOT r = f32[] add(t, b)
}
)"), 4, 1, 1);
  ASSERT_TRUE(r.status.ok()) << r.status;
  const float want = ((200.f * 2 + 0) * 2 + 100) * 2 + 300;
  for (int64_t d = 0; d < 4; ++d) EXPECT_EQ(Floats(r.results[d])[0], want) << d;
}

TEST(MultiDevice, AllReduceIntegerMaxAndNarrowFloatRounding) {
  // s32 maximum of the replica ids; bf16 sum of {256, 1, 1, 1} folded exactly and rounded
  // once, as XLA's CPU backend computes it (the installed XLA gives 264 for {256, 1 x 7}):
  // the exact sum 259 rounds (to even) to 260. Rounding after every step in rank order would
  // give 256, since 256 + 1 = 257 rounds back to 256 each time.
  DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  id = u32[] replica-id()
  s = s32[] convert(id)
  v = s32[2] broadcast(s), dimensions={}
  mx = s32[2] all-reduce(v), replica_groups={}, to_apply=smax
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  big = bf16[] constant(256)
  one = bf16[] constant(1)
  b = bf16[] select(first, big, one)
  bv = bf16[3] broadcast(b), dimensions={}
  sum = bf16[3] all-reduce(bv), replica_groups={}, to_apply=badd
  ROOT out = (s32[2], bf16[3]) tuple(mx, sum)
}
)", 4, 1, R"(
smax {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] maximum(a, b)
}
badd {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT r = bf16[] add(a, b)
}
)"), 4, 1, 0);
  ASSERT_TRUE(r.status.ok()) << r.status;
  for (int64_t d = 0; d < 4; ++d) {
    EXPECT_EQ(PrintShapedLiteral(r.results[d]), "(s32[2], bf16[3]) ( {3, 3}, {260, 260, 260} )")
        << d;
  }
}

TEST(MultiDevice, AllReduceOfSeveralOperands) {
  DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[2] parameter(0)
  n = f32[2] negate(p)
  ROOT r = (f32[2], f32[2]) all-reduce(p, n), replica_groups={{0,1}}, to_apply=add
}
)", 2), 2, 1, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(PrintShapedLiteral(r.results[1]), "(f32[2], f32[2]) ( {100, 102}, {-100, -102} )");
}

// ------------------------------------------------------------------------------------------
// all-gather, reduce-scatter, all-to-all, collective-broadcast, collective-permute

TEST(MultiDevice, AllGatherConcatenatesInRankOrder) {
  for (int64_t n : {1, 2, 4, 8}) {
    DevicesRun r = RunOnDevices(HloText(StrCat(R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[)", 2 * n, R"(] all-gather(p), replica_groups={}, dimensions={0}
}
)"), n), n, 1, 2);
    ASSERT_TRUE(r.status.ok()) << n << ": " << r.status;
    std::vector<float> want;
    for (int64_t d = 0; d < n; ++d) {
      want.push_back(100.f * d);
      want.push_back(100.f * d + 1);
    }
    for (int64_t d = 0; d < n; ++d) EXPECT_EQ(Floats(r.results[d]), want) << n;
  }
  // Groups listed out of order: rank 0 of {1,0} is device 1. Dimension 1 of a [1,2] value.
  DevicesRun g = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[2] parameter(0)
  q = f32[1,2] reshape(p)
  ROOT r = f32[1,4] all-gather(q), replica_groups={{1,0},{3,2}}, dimensions={1}
}
)", 4), 4, 1, 2);
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_EQ(Floats(g.results[0]), (std::vector<float>{100, 101, 0, 1}));
  EXPECT_EQ(Floats(g.results[2]), (std::vector<float>{300, 301, 200, 201}));
  // Iota groups and flattened ids on 2 x 2: [2,2]<=[2,2]T(1,0) = {{0,2},{1,3}}.
  DevicesRun f = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[2] all-gather(p), channel_id=1, replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}, use_global_device_ids=true
}
)", 2, 2), 2, 2, 1);
  ASSERT_TRUE(f.status.ok()) << f.status;
  EXPECT_EQ(Floats(f.results[1]), (std::vector<float>{100, 300}));
  EXPECT_EQ(Floats(f.results[2]), (std::vector<float>{0, 200}));
}

TEST(MultiDevice, ReduceScatterGivesEachRankItsShard) {
  for (int64_t n : {1, 2, 4, 8}) {
    DevicesRun r = RunOnDevices(HloText(StrCat(R"(
ENTRY e {
  p = f32[8] parameter(0)
  ROOT r = f32[)", 8 / n, R"(] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add
}
)"), n), n, 1, 8);
    ASSERT_TRUE(r.status.ok()) << n << ": " << r.status;
    const int64_t shard = 8 / n;
    for (int64_t d = 0; d < n; ++d) {
      std::vector<float> want;
      for (int64_t i = d * shard; i < (d + 1) * shard; ++i) {
        want.push_back(static_cast<float>(50 * n * (n - 1) + n * i));
      }
      EXPECT_EQ(Floats(r.results[d]), want) << n << " devices, device " << d;
    }
  }
  // Groups {{3,1},{2,0}}: device 3 is rank 0 of its group and gets the first half.
  DevicesRun g = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[2] reduce-scatter(p), replica_groups={{3,1},{2,0}}, dimensions={0}, to_apply=add
}
)", 4), 4, 1, 4);
  ASSERT_TRUE(g.status.ok()) << g.status;
  EXPECT_EQ(Floats(g.results[3]), (std::vector<float>{400, 402}));
  EXPECT_EQ(Floats(g.results[1]), (std::vector<float>{404, 406}));
  EXPECT_EQ(Floats(g.results[0]), (std::vector<float>{204, 206}));
}

TEST(MultiDevice, AllToAllArrayForm) {
  for (int64_t n : {1, 2, 4, 8}) {
    DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[8] parameter(0)
  ROOT r = f32[8] all-to-all(p), replica_groups={}, dimensions={0}
}
)", n), n, 1, 8);
    ASSERT_TRUE(r.status.ok()) << n << ": " << r.status;
    const int64_t chunk = 8 / n;
    for (int64_t d = 0; d < n; ++d) {
      // Chunk d of every device, in device order.
      std::vector<float> want;
      for (int64_t g = 0; g < n; ++g) {
        for (int64_t i = d * chunk; i < (d + 1) * chunk; ++i) want.push_back(100.f * g + i);
      }
      EXPECT_EQ(Floats(r.results[d]), want) << n << " devices, device " << d;
    }
  }
  // Dimension 1 of a [2,4] value across 2 devices with groups {{1,0}}.
  DevicesRun g = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[2,4] reshape(p)
  ROOT r = f32[2,4] all-to-all(q), replica_groups={{1,0}}, dimensions={1}
}
)", 2), 2, 1, 8);
  ASSERT_TRUE(g.status.ok()) << g.status;
  // Device 1 is rank 0: it keeps columns 0-1 of itself, then columns 0-1 of device 0.
  EXPECT_EQ(Floats(g.results[1]), (std::vector<float>{100, 101, 0, 1, 104, 105, 4, 5}));
  EXPECT_EQ(Floats(g.results[0]), (std::vector<float>{102, 103, 2, 3, 106, 107, 6, 7}));
}

TEST(MultiDevice, AllToAllTupleForm) {
  for (int64_t n : {1, 2, 4, 8}) {
    std::string operands, shapes;
    for (int64_t j = 0; j < n; ++j) {
      StrAppend(&operands, j ? ", " : "", "x", j);
      StrAppend(&shapes, j ? ", " : "", "f32[1]");
    }
    std::string slices;
    for (int64_t j = 0; j < n; ++j) {
      StrAppend(&slices, "  x", j, " = f32[1] slice(p), slice={[", j, ":", j + 1, "]}\n");
    }
    DevicesRun r = RunOnDevices(HloText(StrCat("ENTRY e {\n  p = f32[", n, "] parameter(0)\n", slices,
                                       "  ROOT r = (", shapes, ") all-to-all(", operands,
                                       "), replica_groups={}\n}\n"),
                                n),
                         n, 1, n);
    ASSERT_TRUE(r.status.ok()) << n << ": " << r.status;
    for (int64_t d = 0; d < n; ++d) {
      // Element j came from device j: its operand d, i.e. 100 j + d.
      for (int64_t j = 0; j < n; ++j) {
        EXPECT_EQ(Floats(r.results[d].tuple_elements()[j])[0], 100.f * j + d);
      }
    }
  }
}

TEST(MultiDevice, CollectiveBroadcastFromEachGroupsFirstDevice) {
  DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] collective-broadcast(p), replica_groups={{1,0},{3,2}}
}
)", 4), 4, 1, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(Floats(r.results[0]), (std::vector<float>{100, 101}));
  EXPECT_EQ(Floats(r.results[1]), (std::vector<float>{100, 101}));
  EXPECT_EQ(Floats(r.results[2]), (std::vector<float>{300, 301}));
  for (int64_t n : {1, 2, 4, 8}) {
    DevicesRun all = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] collective-broadcast(p), replica_groups={}
}
)", n), n, 1, 1);
    ASSERT_TRUE(all.status.ok()) << all.status;
    for (int64_t d = 0; d < n; ++d) EXPECT_EQ(Floats(all.results[d])[0], 0.f);
  }
}

TEST(MultiDevice, CollectivePermuteRingsAndMissingTargets) {
  for (int64_t n : {1, 2, 4, 8}) {
    std::string pairs;
    for (int64_t d = 0; d < n; ++d) StrAppend(&pairs, d ? "," : "", "{", d, ",", (d + 1) % n, "}");
    DevicesRun r = RunOnDevices(HloText(StrCat(R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] collective-permute(p), source_target_pairs={)", pairs, "}\n}\n"), n),
                         n, 1, 2);
    ASSERT_TRUE(r.status.ok()) << n << ": " << r.status;
    for (int64_t d = 0; d < n; ++d) {
      const int64_t from = (d + n - 1) % n;
      EXPECT_EQ(Floats(r.results[d]), (std::vector<float>{100.f * from, 100.f * from + 1}));
    }
  }
  // Only 0 -> 2 and 2 -> 1: devices 0 and 3 receive nothing (zeros); device 3 takes no part.
  DevicesRun z = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] collective-permute(p), source_target_pairs={{0,2},{2,1}}
}
)", 4), 4, 1, 1);
  ASSERT_TRUE(z.status.ok()) << z.status;
  EXPECT_EQ(Floats(z.results[0])[0], 0.f);
  EXPECT_EQ(Floats(z.results[1])[0], 200.f);
  EXPECT_EQ(Floats(z.results[2])[0], 0.f);
  EXPECT_EQ(Floats(z.results[3])[0], 0.f);
  // channel_id: pairs are partition ids, applied within each replica (2 x 2).
  DevicesRun c = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}
}
)", 2, 2), 2, 2, 1);
  ASSERT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(Floats(c.results[0])[0], 100.f);
  EXPECT_EQ(Floats(c.results[1])[0], 0.f);
  EXPECT_EQ(Floats(c.results[2])[0], 300.f);
  EXPECT_EQ(Floats(c.results[3])[0], 200.f);
}

TEST(MultiDevice, CombinedCollectivePermuteMovesEveryOperandAlike) {
  // Two operands in one permute (and in its async form) around a ring of 4.
  DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[2] parameter(0)
  n = f32[2] negate(p)
  c = (f32[2], f32[2]) collective-permute(p, n), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  s = ((f32[2], f32[2]), (f32[2], f32[2]), u32[], u32[]) collective-permute-start(p, n), source_target_pairs={{0,3},{3,2},{2,1},{1,0}}
  d = (f32[2], f32[2]) collective-permute-done(s)
  ROOT t = ((f32[2], f32[2]), (f32[2], f32[2])) tuple(c, d)
}
)", 4), 4, 1, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  for (int64_t d = 0; d < 4; ++d) {
    const Literal& t = r.results[d];
    ASSERT_EQ(t.tuple_elements().size(), 2u);
    const int64_t prev = (d + 3) % 4, next = (d + 1) % 4;
    const auto& sync = t.tuple_elements()[0].tuple_elements();
    const auto& async = t.tuple_elements()[1].tuple_elements();
    EXPECT_EQ(Floats(sync[0]), (std::vector<float>{100.f * prev, 100.f * prev + 1})) << d;
    EXPECT_EQ(Floats(sync[1]), (std::vector<float>{-100.f * prev, -100.f * prev - 1})) << d;
    EXPECT_EQ(Floats(async[0]), (std::vector<float>{100.f * next, 100.f * next + 1})) << d;
    EXPECT_EQ(Floats(async[1]), (std::vector<float>{-100.f * next, -100.f * next - 1})) << d;
  }
  // One device (the evaluator's own path): a pair {0,0} keeps every operand, none gives zeros.
  for (const char* pairs : {"{{0,0}}", "{}"}) {
    auto m = Parse(HloText(StrCat(R"(
ENTRY e {
  p = f32[2] parameter(0)
  n = f32[2] negate(p)
  ROOT c = (f32[2], f32[2]) collective-permute(p, n), source_target_pairs=)", pairs, "\n}\n"), 1));
    ASSERT_NE(m, nullptr);
    std::vector<Literal> args;
    args.push_back(DeviceVector(3, 2));
    auto out = EvaluateModule(*m, args);
    ASSERT_TRUE(out.ok()) << out.status();
    const bool keep = std::string(pairs) == "{{0,0}}";
    EXPECT_EQ(Floats(out->tuple_elements()[0]),
              (keep ? std::vector<float>{300, 301} : std::vector<float>{0, 0}));
    EXPECT_EQ(Floats(out->tuple_elements()[1]),
              (keep ? std::vector<float>{-300, -301} : std::vector<float>{0, 0}));
  }
}

TEST(MultiDevice, RaggedAllToAllMovesRowsToEachPeersOffsets) {
  // Every device sends 1 row from input offset 0 to rank 0 and 2 rows from input offset 2 to
  // rank 1; device d asks its rows to land at offset d on rank 0 and 2 d on rank 1.
  DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[4] parameter(0)
  zero = f32[] constant(0)
  out = f32[4] broadcast(zero), dimensions={}
  in_off = s32[2] constant({0, 2})
  sizes = s32[2] constant({1, 2})
  id = u32[] replica-id()
  i = s32[] convert(id)
  two = s32[] constant(2)
  i2 = s32[] multiply(i, two)
  a = s32[1] reshape(i)
  b = s32[1] reshape(i2)
  out_off = s32[2] concatenate(a, b), dimensions={0}
  ROOT r = f32[4] ragged-all-to-all(p, out, in_off, sizes, out_off, sizes), replica_groups={}
}
)", 2), 2, 1, 4);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(Floats(r.results[0]), (std::vector<float>{0, 100, 0, 0}));
  EXPECT_EQ(Floats(r.results[1]), (std::vector<float>{2, 3, 102, 103}));
}

TEST(MultiDevice, ReduceScatterAndBroadcastWithGlobalIdsAndPartitions) {
  // Flattened ids on 2 x 2; device 3 is rank 0 of {3,0} and takes the first shard.
  DevicesRun rs = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[2] reduce-scatter(p), channel_id=1, replica_groups={{3,0},{1,2}}, use_global_device_ids=true, dimensions={0}, to_apply=add
}
)", 2, 2), 2, 2, 4);
  ASSERT_TRUE(rs.status.ok()) << rs.status;
  EXPECT_EQ(Floats(rs.results[3]), (std::vector<float>{300, 302}));
  EXPECT_EQ(Floats(rs.results[0]), (std::vector<float>{304, 306}));
  EXPECT_EQ(Floats(rs.results[1]), (std::vector<float>{300, 302}));
  EXPECT_EQ(Floats(rs.results[2]), (std::vector<float>{304, 306}));
  // collective-broadcast with channel_id: partition groups within each replica. Iota
  // [1,2]<=[2] = {{0,1}}: partition 0 is the root; explicit {{1,0}}: partition 1 is.
  for (const char* groups : {"[1,2]<=[2]", "{{1,0}}"}) {
    DevicesRun cb = RunOnDevices(HloText(StrCat(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] collective-broadcast(p), channel_id=1, replica_groups=)", groups, "\n}\n"),
                                        2, 2),
                                 2, 2, 1);
    ASSERT_TRUE(cb.status.ok()) << cb.status;
    const float root_offset = groups[0] == '[' ? 0 : 100;
    EXPECT_EQ(Floats(cb.results[0])[0], root_offset) << groups;
    EXPECT_EQ(Floats(cb.results[1])[0], root_offset) << groups;
    EXPECT_EQ(Floats(cb.results[2])[0], 200 + root_offset) << groups;
    EXPECT_EQ(Floats(cb.results[3])[0], 200 + root_offset) << groups;
  }
}

TEST(MultiDevice, ReplicaAndPartitionIds) {
  DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
}
)", 2, 3), 2, 3, 0);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.results.size(), 6u);
  EXPECT_EQ(PrintShapedLiteral(r.results[4]), "(u32[], u32[]) ( 1, 1 )");
  EXPECT_EQ(PrintShapedLiteral(r.results[2]), "(u32[], u32[]) ( 0, 2 )");
}

// ------------------------------------------------------------------------------------------
// SPMD shard conversions: each device takes its partition's tile, and shard-to-full puts
// together every partition's tile of the same replica.

// full(r, c) = 10 r + c; each partition adds 1000 * partition + 100000 * replica to its tile,
// then the tiles are put back together under `tiling`.
std::string SpmdRoundTrip(const std::string& tiling, int64_t replicas, int64_t partitions,
                          int64_t shard_rows) {
  std::string text = StrCat(R"(
ENTRY e {
  i = f32[8,3] iota(), iota_dimension=0
  j = f32[8,3] iota(), iota_dimension=1
  ten = f32[] constant(10)
  tens = f32[8,3] broadcast(ten), dimensions={}
  ri = f32[8,3] multiply(i, tens)
  full = f32[8,3] add(ri, j)
  s = f32[8,3] custom-call(full), custom_call_target="Sharding", sharding=)", tiling, R"(
  shard = f32[2,3] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  pid = u32[] partition-id()
  pf = f32[] convert(pid)
  rid = u32[] replica-id()
  rf = f32[] convert(rid)
  k = f32[] constant(1000)
  kr = f32[] constant(100000)
  pk = f32[] multiply(pf, k)
  rk = f32[] multiply(rf, kr)
  add = f32[] add(pk, rk)
  addb = f32[2,3] broadcast(add), dimensions={}
  shifted = f32[2,3] add(shard, addb)
  ms = f32[2,3] custom-call(shifted), custom_call_target="Sharding", sharding={manual}
  ROOT f = f32[8,3] custom-call(ms), custom_call_target="SPMDShardToFullShape", sharding=)",
                        tiling, "\n}\n");
  const std::string shard = StrCat("f32[", shard_rows, ",3]");
  for (size_t at = 0; (at = text.find("f32[2,3]", at)) != std::string::npos; at += shard.size()) {
    text.replace(at, 8, shard);
  }
  return HloText(text, replicas, partitions);
}

MultiDeviceOptions WithSpmdPlugin() {
  CustomCallRegistry registry;
  EXPECT_TRUE(RegisterSpmdPlugin(&registry).ok());
  MultiDeviceOptions o;
  o.evaluator.custom_call = CustomCallDispatcher::Create(std::move(registry), {})->AsFunction();
  return o;
}

TEST(MultiDeviceSpmd, EachPartitionTakesItsTileAndShardToFullGathersThem) {
  // Tile t is held by partition order[t].
  const std::vector<int64_t> order = {2, 0, 3, 1};
  DevicesRun r = RunOnDevices(SpmdRoundTrip("{devices=[4,1]2,0,3,1}", 1, 4, 2), 1, 4, 0,
                              WithSpmdPlugin());
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.results.size(), 4u);
  std::vector<float> expected;
  for (int row = 0; row < 8; ++row) {
    for (int col = 0; col < 3; ++col) {
      expected.push_back(static_cast<float>(10 * row + col + 1000 * order[row / 2]));
    }
  }
  for (int64_t d = 0; d < 4; ++d) EXPECT_EQ(Floats(r.results[d]), expected) << "device " << d;
}

TEST(MultiDeviceSpmd, ShardsAreExchangedWithinAReplicaAndReplicatedTilesAgree) {
  // 2 replicas x 4 partitions; tiles of 4 rows held by two partitions each (the last tile
  // dimension replicates): tile 0 by partitions 0 and 1 (which add different amounts, so the
  // later one, partition 1, is what the full value shows), tile 1 by 2 and 3.
  DevicesRun r = RunOnDevices(
      SpmdRoundTrip("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", 2, 4, 4),
      2, 4, 0, WithSpmdPlugin());
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.results.size(), 8u);
  for (int64_t d = 0; d < 8; ++d) {
    const int64_t replica = d / 4;
    std::vector<float> expected;
    for (int row = 0; row < 8; ++row) {
      const int64_t holder = row < 4 ? 1 : 3;
      for (int col = 0; col < 3; ++col) {
        expected.push_back(static_cast<float>(10 * row + col + 1000 * holder + 100000 * replica));
      }
    }
    EXPECT_EQ(Floats(r.results[d]), expected) << "device " << d;
  }
}

TEST(MultiDeviceSpmd, APartitionThatSkipsTheExchangeIsADeadlock) {
  // Partition 1 takes the other branch and never reaches the shard-to-full conversion.
  std::string text = HloText(R"(
ENTRY e {
  x = f32[4] iota(), iota_dimension=0
  s = f32[4] custom-call(x), custom_call_target="Sharding", sharding={devices=[2]0,1}
  m = f32[2] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  pid = u32[] partition-id()
  zero = u32[] constant(0)
  first = pred[] compare(pid, zero), direction=EQ
  ROOT c = f32[4] conditional(first, m, m), true_computation=gather_it, false_computation=skip
}
)", 1, 2, R"(
gather_it {
  a = f32[2] parameter(0)
  ROOT f = f32[4] custom-call(a), custom_call_target="SPMDShardToFullShape", sharding={devices=[2]0,1}
}
skip {
  b = f32[2] parameter(0)
  ROOT z = f32[4] broadcast(f32[] constant(0)), dimensions={}
}
)");
  DevicesRun r = RunOnDevices(text, 1, 2, 0, WithSpmdPlugin());
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(Contains(std::string(r.status.message()), "%f")) << r.status;
  EXPECT_TRUE(Contains(std::string(r.status.message()), "deadlock")) << r.status;
  EXPECT_LT(r.seconds, 5.0);
}

// ------------------------------------------------------------------------------------------
// Async forms

TEST(MultiDevice, AsyncStartDoneForms) {
  DevicesRun r = RunOnDevices(HloText(R"(
wrapped {
  w = f32[2] parameter(0)
  ROOT a = f32[2] all-reduce(w), replica_groups={}, to_apply=add
}

ENTRY e {
  p = f32[2] parameter(0)
  ars = f32[2] all-reduce-start(p), replica_groups={}, to_apply=add
  ard = f32[2] all-reduce-done(ars)
  ags = (f32[2], f32[8]) all-gather-start(p), replica_groups={}, dimensions={0}
  agd = f32[8] all-gather-done(ags)
  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  cpd = f32[2] collective-permute-done(cps)
  as = ((f32[2]), f32[2], s32[]) async-start(p), calls=wrapped
  ad = f32[2] async-done(as), calls=wrapped
  ROOT t = (f32[2], f32[8], f32[2], f32[2]) tuple(ard, agd, cpd, ad)
}
)", 4), 4, 1, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(PrintShapedLiteral(r.results[1]),
            "(f32[2], f32[8], f32[2], f32[2]) ( {600, 604}, "
            "{0, 1, 100, 101, 200, 201, 300, 301}, {0, 1}, {600, 604} )");
}

TEST(MultiDevice, AsyncWrappedReduceScatterAndAllToAll) {
  DevicesRun r = RunOnDevices(HloText(R"(
wrapped_rs {
  w = f32[4] parameter(0)
  ROOT rs = f32[1] reduce-scatter(w), replica_groups={}, dimensions={0}, to_apply=add
}

wrapped_a2a {
  w = f32[4] parameter(0)
  ROOT t = f32[4] all-to-all(w), replica_groups={}, dimensions={0}
}

ENTRY e {
  p = f32[4] parameter(0)
  st1 = ((f32[4]), f32[1], s32[]) async-start(p), calls=wrapped_rs
  d1 = f32[1] async-done(st1), calls=wrapped_rs
  st2 = ((f32[4]), f32[4], s32[]) async-start(p), calls=wrapped_a2a
  d2 = f32[4] async-done(st2), calls=wrapped_a2a
  ROOT t = (f32[1], f32[4]) tuple(d1, d2)
}
)", 4), 4, 1, 4);
  ASSERT_TRUE(r.status.ok()) << r.status;
  // Device 2: element 2 summed over devices (600 + 4 * 2); element 2 of every device.
  EXPECT_EQ(PrintShapedLiteral(r.results[2]), "(f32[1], f32[4]) ( {608}, {2, 102, 202, 302} )");
}

// ------------------------------------------------------------------------------------------
// Deadlocks, timeouts, errors, cancel

constexpr char kSkipOnReplica0[] = R"(
with_ar {
  x = f32[2] parameter(0)
  ROOT ar = f32[2] all-reduce(x), replica_groups={}, to_apply=add
}

without_ar {
  ROOT y = f32[2] parameter(0)
}

ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  skip = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[2] conditional(skip, p, p), true_computation=without_ar, false_computation=with_ar
}
)";

TEST(MultiDevice, DeviceThatSkipsACollectiveIsADeadlockNotAHang) {
  for (int64_t n : {2, 4}) {
    DevicesRun r = RunOnDevices(HloText(kSkipOnReplica0, n), n, 1, 2);
    ASSERT_FALSE(r.status.ok()) << n;
    EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition) << r.status;
    const std::string msg(r.status.message());
    EXPECT_TRUE(Contains(msg, "collective deadlock")) << msg;
    EXPECT_TRUE(Contains(msg, "device 1 (replica 1, partition 0) waits at %ar (all-reduce, "
                              "execution 1) for the operands of device 0 (replica 0, "
                              "partition 0), which finished without reaching it"))
        << msg;
    EXPECT_EQ(Contains(msg, "device 3 (replica 3"), n == 4) << msg;
    EXPECT_LT(r.seconds, 5.0);
  }
}

TEST(MultiDevice, DevicesAtDifferentCollectivesDeadlock) {
  DevicesRun r = RunOnDevices(HloText(R"(
b0 {
  x = f32[2] parameter(0)
  ROOT first = f32[2] all-reduce(x), replica_groups={}, to_apply=add
}

b1 {
  x = f32[2] parameter(0)
  ROOT second = f32[2] all-reduce(x), replica_groups={}, to_apply=add
}

ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] replica-id()
  i = s32[] convert(id)
  ROOT c = f32[2] conditional(i, p, p), branch_computations={b0, b1}
}
)", 2), 2, 1, 2);
  ASSERT_FALSE(r.status.ok());
  const std::string msg(r.status.message());
  EXPECT_TRUE(Contains(msg, "device 0 (replica 0, partition 0) waits at %first")) << msg;
  EXPECT_TRUE(Contains(msg, "device 1 (replica 1, partition 0) waits at %second")) << msg;
  EXPECT_TRUE(Contains(msg, "which waits at %second")) << msg;
  EXPECT_LT(r.seconds, 5.0);
}

// Device 0 loops forever; the others wait for it at the all-reduce.
constexpr char kSpinOnReplica0[] = R"(
cond {
  s = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}

body {
  s = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(s, one)
}

spin {
  x = f32[2] parameter(0)
  zero = s32[] constant(0)
  w = s32[] while(zero), condition=cond, body=body
  ROOT y = f32[2] all-reduce(x), replica_groups={}, to_apply=add
}

go {
  x = f32[2] parameter(0)
  ROOT y = f32[2] all-reduce(x), replica_groups={}, to_apply=add
}

ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[2] conditional(first, p, p), true_computation=spin, false_computation=go
}
)";

TEST(MultiDevice, TimeoutIsABackstopForADeviceThatNeverArrives) {
  MultiDeviceOptions o;
  o.collective_timeout_seconds = 0.3;
  DevicesRun r = RunOnDevices(HloText(kSpinOnReplica0, 2), 2, 1, 2, o);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDeadlineExceeded) << r.status;
  const std::string msg(r.status.message());
  EXPECT_TRUE(Contains(msg, "device 1 (replica 1, partition 0) waits at %y")) << msg;
  EXPECT_TRUE(Contains(msg, "device 0 (replica 0, partition 0), which is still running")) << msg;
  EXPECT_LT(r.seconds, 5.0);
}

TEST(MultiDevice, CancelReleasesEveryDevice) {
  CancelToken cancel;
  MultiDeviceOptions o;
  o.evaluator.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel.Cancel();
  });
  DevicesRun r = RunOnDevices(HloText(kSpinOnReplica0, 4), 4, 1, 2, o);
  canceller.join();
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), absl::StatusCode::kCancelled) << r.status;
  EXPECT_LT(r.seconds, 5.0);
}

TEST(MultiDevice, AnErrorOnOneDeviceReleasesTheOthers) {
  DevicesRun r = RunOnDevices(HloText(R"(
bad {
  x = f32[2] parameter(0)
  ROOT y = f32[2] custom-call(x), custom_call_target="no_such_target"
}

good {
  x = f32[2] parameter(0)
  ROOT y = f32[2] all-reduce(x), replica_groups={}, to_apply=add
}

ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] replica-id()
  two = u32[] constant(2)
  is_two = pred[] compare(id, two), direction=EQ
  ROOT c = f32[2] conditional(is_two, p, p), true_computation=bad, false_computation=good
}
)", 4), 4, 1, 2);
  ASSERT_FALSE(r.status.ok());
  const std::string msg(r.status.message());
  EXPECT_TRUE(Contains(msg, "device 2 (replica 2, partition 0): ")) << msg;
  EXPECT_TRUE(Contains(msg, "no_such_target")) << msg;
  EXPECT_LT(r.seconds, 5.0);
}

TEST(MultiDevice, DeviceOutsideEveryGroupIsAnError) {
  DevicesRun r = RunOnDevices(HloText(R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
}
)", 1, 3), 1, 3, 1);
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(Contains(std::string(r.status.message()),
                       "device 2 (replica 0, partition 2) is in no replica group of %r"))
      << r.status;
}

TEST(MultiDevice, CollectivesInsideLoopsMatchByExecution) {
  // Three all-reduces per device through a while loop: the k-th execution meets the k-th.
  DevicesRun r = RunOnDevices(HloText(R"(
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}

body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ar = f32[2] all-reduce(v), replica_groups={}, to_apply=add
  ROOT t = (s32[], f32[2]) tuple(j, ar)
}

ENTRY e {
  p = f32[2] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[2]) tuple(zero, p)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT out = f32[2] get-tuple-element(w), index=1
}
)", 2), 2, 1, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  // (x0 + x1) doubles twice more: 4 * {100, 102}.
  EXPECT_EQ(Floats(r.results[0]), (std::vector<float>{400, 408}));
  EXPECT_EQ(Floats(r.results[1]), (std::vector<float>{400, 408}));
}

// ------------------------------------------------------------------------------------------
// Argument modes and the session

TEST(DeviceArguments, ModesAsXlasMultihostRunner) {
  auto m = Parse(HloText(R"(
ENTRY e {
  a = f32[2] parameter(0)
  b = pred[] parameter(1)
  ROOT t = (f32[2], pred[]) tuple(a, b)
}
)", 2, 2));
  ASSERT_NE(m, nullptr);
  DeviceGrid grid{2, 2};
  FakeDataEngine engine(1);
  auto ids = MakeDeviceArguments(*m, ArgumentMode::kUseDeviceIdAsInput, grid, &engine, false);
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_EQ(ids->size(), 4u);
  // Device 1 is replica 0, partition 1: XLA device id 1 * 2 + 0 = 2 (even: pred true).
  EXPECT_EQ(PrintShapedLiteral((*ids)[1][0]), "f32[2] {2, 2}");
  EXPECT_EQ(PrintShapedLiteral((*ids)[1][1]), "pred[] true");
  EXPECT_EQ(PrintShapedLiteral((*ids)[2][0]), "f32[2] {1, 1}");
  EXPECT_EQ(PrintShapedLiteral((*ids)[2][1]), "pred[] false");
  auto zeros = MakeDeviceArguments(*m, ArgumentMode::kUseZerosAsInput, grid, &engine, false);
  ASSERT_TRUE(zeros.ok());
  ASSERT_EQ(zeros->size(), 1u);
  EXPECT_EQ(PrintShapedLiteral((*zeros)[0][1]), "pred[] false");
  auto shared = MakeDeviceArguments(*m, ArgumentMode::kUseSharedRandomInputs, grid, &engine,
                                    false);
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(shared->size(), 1u);
  auto random = MakeDeviceArguments(*m, ArgumentMode::kUseRandomInputs, grid, &engine, false);
  ASSERT_TRUE(random.ok());
  ASSERT_EQ(random->size(), 4u);
  EXPECT_FALSE((*random)[0][0] == (*random)[1][0]);
  EXPECT_FALSE(ParseArgumentMode("use_device_ids").ok());
  EXPECT_EQ(*ParseArgumentMode("use_zeros_as_input"), ArgumentMode::kUseZerosAsInput);
}

constexpr char kSessionModule[] = R"(
ENTRY e {
  p = f32[2] parameter(0)
  ar = f32[2] all-reduce(p), replica_groups={}, to_apply=add
  ROOT g = f32[8] all-gather(ar), replica_groups={}, dimensions={0}
}
)";

TEST(MultiDeviceSession, RunsEveryDeviceAndComparesEach) {
  auto m = Parse(HloText(kSessionModule, 4));
  ASSERT_NE(m, nullptr);
  ReplayOptions o;
  o.hlo_argument_mode = "use_device_id_as_input";
  o.reference_platform = "interpreter";
  auto r = ReplaySession(*m, o).Run();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->num_replicas, 4);
  ASSERT_EQ(r->iterations.size(), 1u);
  const ReplayIteration& it = r->iterations[0];
  ASSERT_EQ(it.devices.size(), 4u);
  EXPECT_EQ(it.argument_source, "--hlo_argument_mode=use_device_id_as_input");
  // Sum of ids 0..3 = 6, gathered from 4 devices.
  EXPECT_EQ(PrintShapedLiteral(it.devices[3].result), "f32[8] {6, 6, 6, 6, 6, 6, 6, 6}");
  EXPECT_EQ(PrintShapedLiteral(it.devices[2].arguments[0]), "f32[2] {2, 2}");
  for (const DeviceReplay& d : it.devices) {
    ASSERT_TRUE(d.comparison.has_value());
    EXPECT_TRUE(d.comparison->ok());
  }
  EXPECT_TRUE(r->compared());
  EXPECT_TRUE(r->all_match());
}

TEST(MultiDeviceSession, OverridesAndTheSingleDevicePath) {
  auto m = Parse(HloText(R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT ar = f32[2] all-reduce(p), replica_groups={}, to_apply=add
}
)", 4));
  ASSERT_NE(m, nullptr);
  ReplayOptions o;
  o.hlo_argument_mode = "use_device_id_as_input";
  o.num_replicas = 2;
  auto two = ReplaySession(*m, o).Run();
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->iterations[0].devices.size(), 2u);
  EXPECT_EQ(PrintShapedLiteral(two->iterations[0].result), "f32[2] {1, 1}");
  // One device: the single-device path (no per-device entries), the all-reduce is the identity.
  o.num_replicas = 1;
  o.hlo_argument_mode = "";
  auto one = ReplaySession(*m, o, ReplayInputs{std::vector<Literal>{DeviceVector(3, 2)}, {}, {}})
                 .Run();
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(one->iterations[0].devices.empty());
  EXPECT_EQ(PrintShapedLiteral(one->iterations[0].result), "f32[2] {300, 301}");
  // Snapshot arguments are the same on every device; the snapshot result is compared with
  // device 0's.
  o.num_replicas = 0;
  Literal expected(Shape::Array(PrimitiveType::kF32, {2}));
  expected.mutable_data_as<float>()[0] = 400;
  expected.mutable_data_as<float>()[1] = 404;
  ReplayInputs in{std::vector<Literal>{DeviceVector(1, 2)}, std::move(expected), {}};
  auto snap = ReplaySession(*m, o, std::move(in)).Run();
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_EQ(snap->iterations[0].argument_source, "snapshot (every device)");
  EXPECT_EQ(PrintShapedLiteral(snap->iterations[0].devices[3].result), "f32[2] {400, 404}");
  EXPECT_EQ(snap->iterations[0].compared_against, "snapshot result (device 0)");
  EXPECT_TRUE(snap->all_match());
  o.num_replicas = -1;
  EXPECT_FALSE(ReplaySession(*m, o).Run().ok());
  o.num_replicas = 0;
  o.hlo_argument_mode = "bogus";
  auto bad = ReplaySession(*m, o).Run();
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(std::string(bad.status().message()), "use_device_id_as_input"));
}

TEST(MultiDeviceSession, DeadlockSurfacesAsTheRunsError) {
  auto m = Parse(HloText(kSkipOnReplica0, 2));
  ASSERT_NE(m, nullptr);
  auto r = ReplaySession(*m, ReplayOptions{}).Run();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(std::string(r.status().message()), "collective deadlock")) << r.status();
}

// ------------------------------------------------------------------------------------------
// hlowb replay

struct CliResult {
  int code = -1;
  std::string output;
};

CliResult Replay(const std::string& args) {
  std::string cmd = std::string(HLOWB_BINARY) + " replay " + args + " 2>&1";
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("hlowb_multi_device_" + std::to_string(getpid()) + "_" + name))
                         .string();
  std::ofstream(path) << text;
  return path;
}

TEST(MultiDeviceCli, PerDeviceOutputAndFlags) {
  const std::string path = WriteTemp("ar.hlo", HloText(kSessionModule, 4));
  CliResult r = Replay(path + " --hlo_argument_mode=use_device_id_as_input --print_literals "
                              "--reference_platform=interpreter");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "devices: 4 (4 replicas x 1 partition), one thread each"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "arguments from --hlo_argument_mode=use_device_id_as_input"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "    device 2 (replica 2, partition 0): run ")) << r.output;
  EXPECT_TRUE(Contains(r.output, "      argument 0 (p): f32[2] {2, 2}")) << r.output;
  EXPECT_TRUE(Contains(r.output, "      result: f32[8] {6, 6, 6, 6, 6, 6, 6, 6}")) << r.output;
  EXPECT_TRUE(Contains(r.output, "      comparison with reference platform interpreter: OK"))
      << r.output;
  // --num_replicas overrides the module: 2 devices sum ids 0 and 1 (the all-gather's declared
  // shape then no longer fits, so use a module whose shapes do not depend on the count).
  const std::string ar = WriteTemp("ar2.hlo", HloText(R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT ar = f32[2] all-reduce(p), replica_groups={}, to_apply=add
}
)", 4));
  r = Replay(ar + " --num_replicas=2 --num_partitions=1 --hlo_argument_mode=use_device_id_as_input "
                  "--print_literals");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "devices: 2 (2 replicas x 1 partition)")) << r.output;
  EXPECT_TRUE(Contains(r.output, "      result: f32[2] {1, 1}")) << r.output;
  r = Replay(ar + " --hlo_argument_mode=bogus");
  EXPECT_EQ(r.code, 2) << r.output;
  r = Replay(ar + " --num_replicas=0");
  EXPECT_EQ(r.code, 2) << r.output;
  const std::string dead = WriteTemp("dead.hlo", HloText(kSkipOnReplica0, 2));
  r = Replay(dead);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(Contains(r.output, "collective deadlock")) << r.output;
  std::filesystem::remove(path);
  std::filesystem::remove(ar);
  std::filesystem::remove(dead);
}

}  // namespace
}  // namespace hlowb
