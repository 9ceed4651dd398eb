// Multi-device replay of device-to-device send/recv (pairs from the
// _xla_send_recv_source_target_pairs frontend attribute, matched by channel and execution,
// several in flight, inside loops), the deadlocks a missing partner causes, and host transfers
// fed per device (--host_transfers=zeros|fake on several devices). Inputs name the device in
// their hundreds, so a value from the wrong device shows as a wrong number.
#include <string>
#include <vector>

#include "core/support/strings.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "replay/multi_device/collective_groups.h"
#include "replay/multi_device/multi_device_runner.h"
#include "replay/session.h"
#include "multi_device_test_util.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::DevicesRun;
using testing::DeviceVector;
using testing::Floats;
using testing::Parse;
using testing::RunOnDevices;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string Attr(const std::string& pairs) {
  return StrCat("frontend_attributes={_xla_send_recv_source_target_pairs=\"", pairs, "\"}");
}

std::string Ring(int64_t n) {
  std::string pairs = "{";
  for (int64_t d = 0; d < n; ++d) StrAppend(&pairs, d ? "," : "", "{", d, ",", (d + 1) % n, "}");
  return pairs + "}";
}

TEST(SendRecvPairs, ParseAndMapToDevices) {
  auto p = ParseSourceTargetPairs("{{0,1}, {1, 2}}");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 2}}));
  EXPECT_TRUE(ParseSourceTargetPairs("{}").ok());
  for (const char* bad : {"", "{{0,1}", "{{0,1},}", "{0,1}", "{{0,1,2}}", "{{a,1}}"}) {
    EXPECT_FALSE(ParseSourceTargetPairs(bad).ok()) << bad;
  }
  auto m = Parse(StrCat(R"(HloModule m
ENTRY e {
  t = token[] after-all()
  a = (f32[1], u32[], token[]) recv(t), channel_id=1, )", Attr("{{0,1},{1,0}}"), R"(
  b = (f32[1], u32[], token[]) recv(t), )", Attr("{{0,1}}"), R"(
  c = (f32[1], u32[], token[]) recv(t), channel_id=2
  d = (f32[1], u32[], token[]) recv(t), channel_id=3, )", Attr("{{0,2}}"), R"(
  e = (f32[1], u32[], token[]) recv(t), channel_id=4, )", Attr("{{0,1},{0,1}}"), R"(
  ROOT r = (f32[1], token[]) recv-done(a), channel_id=1
}
)"));
  ASSERT_NE(m, nullptr);
  auto instr = [&](const std::string& name) -> const Instruction* {
    for (const Instruction* i : m->entry()->instructions()) {
      if (i->name() == name) return i;
    }
    return m->entry()->root();
  };
  const DeviceGrid grid{2, 2};
  // channel_id: partition ids, in every replica.
  auto a = SendRecvDevicePairs(*instr("a"), grid);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}, {2, 3}, {3, 2}}));
  // No channel_id: replica ids, in every partition.
  auto b = SendRecvDevicePairs(*instr("b"), grid);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {1, 3}}));
  auto c = SendRecvDevicePairs(*instr("c"), grid);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(Contains(std::string(c.status().message()), "%c (recv)")) << c.status();
  EXPECT_TRUE(Contains(std::string(c.status().message()), "_xla_send_recv_source_target_pairs"));
  auto d = SendRecvDevicePairs(*instr("d"), grid);
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(Contains(std::string(d.status().message()), "outside 0..1")) << d.status();
  auto e = SendRecvDevicePairs(*instr("e"), grid);
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(Contains(std::string(e.status().message()), "more than once")) << e.status();
}

// One transfer per device: recv and send issued, then both completed (XLA's usual order).
std::string OneTransfer(const std::string& pairs, const std::string& channel = "channel_id=1, ") {
  return StrCat(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  t = token[] after-all()
  r = (f32[2], u32[], token[]) recv(t), )", channel, Attr(pairs), R"(
  s = (f32[2], u32[], token[]) send(p, t), )", channel, Attr(pairs), R"(
  rd = (f32[2], token[]) recv-done(r), )", channel, R"(is_host_transfer=false
  sd = token[] send-done(s), )", channel, R"(is_host_transfer=false
  ROOT x = f32[2] get-tuple-element(rd), index=0
}
)");
}

TEST(SendRecv, TwoDevicesAndDevicesWithoutASourceGetZeros) {
  DevicesRun r = RunOnDevices(OneTransfer("{{0,1}}"), 1, 2, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(Floats(r.results[0]), (std::vector<float>{0, 0}));  // no pair targets device 0
  EXPECT_EQ(Floats(r.results[1]), (std::vector<float>{0, 1}));  // device 0's value
  // Both ways.
  r = RunOnDevices(OneTransfer("{{0,1},{1,0}}"), 1, 2, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(Floats(r.results[0]), (std::vector<float>{100, 101}));
  EXPECT_EQ(Floats(r.results[1]), (std::vector<float>{0, 1}));
}

TEST(SendRecv, FourDevicesByPartitionAndByReplica) {
  // A ring over 4 partitions.
  DevicesRun r = RunOnDevices(OneTransfer(Ring(4)), 1, 4, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  for (int64_t d = 0; d < 4; ++d) {
    EXPECT_EQ(Floats(r.results[d])[0], 100.f * ((d + 3) % 4)) << d;
  }
  // A chain over replica ids (no channel_id): applied in both partitions of a 2 x 2 grid.
  r = RunOnDevices(OneTransfer("{{0,1}}", ""), 2, 2, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(Floats(r.results[0])[0], 0.f);
  EXPECT_EQ(Floats(r.results[1])[0], 0.f);
  EXPECT_EQ(Floats(r.results[2])[0], 0.f);    // replica 1, partition 0 <- device 0
  EXPECT_EQ(Floats(r.results[3])[0], 100.f);  // replica 1, partition 1 <- device 1
  // A chain over partitions 0 -> 2 -> 3 with channel ids: partition 1 and 0 get nothing.
  r = RunOnDevices(OneTransfer("{{0,2},{2,3}}"), 1, 4, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(Floats(r.results[0])[0], 0.f);
  EXPECT_EQ(Floats(r.results[1])[0], 0.f);
  EXPECT_EQ(Floats(r.results[2])[0], 0.f);
  EXPECT_EQ(Floats(r.results[3])[0], 200.f);
}

TEST(SendRecv, SeveralInFlightOnOneChannelCompleteInOrder) {
  // Two transfers issued before either completes, plus a third on another channel that goes
  // the other way round the ring.
  const std::string ring = Ring(4);
  std::string back = "{";
  for (int64_t d = 0; d < 4; ++d) StrAppend(&back, d ? "," : "", "{", (d + 1) % 4, ",", d, "}");
  back += "}";
  const std::string text = StrCat(R"(HloModule m
ENTRY e {
  p = f32[1] parameter(0)
  two = f32[1] constant({2})
  p2 = f32[1] multiply(p, two)
  t = token[] after-all()
  r1 = (f32[1], u32[], token[]) recv(t), channel_id=5, )", Attr(ring), R"(
  r2 = (f32[1], u32[], token[]) recv(t), channel_id=5, )", Attr(ring), R"(
  r3 = (f32[1], u32[], token[]) recv(t), channel_id=6, )", Attr(back), R"(
  snd1 = (f32[1], u32[], token[]) send(p, t), channel_id=5, )", Attr(ring), R"(
  snd3 = (f32[1], u32[], token[]) send(p, t), channel_id=6, )", Attr(back), R"(
  snd2 = (f32[1], u32[], token[]) send(p2, t), channel_id=5, )", Attr(ring), R"(
  d3 = (f32[1], token[]) recv-done(r3), channel_id=6
  d1 = (f32[1], token[]) recv-done(r1), channel_id=5
  d2 = (f32[1], token[]) recv-done(r2), channel_id=5
  sd2 = token[] send-done(snd2), channel_id=5
  sd1 = token[] send-done(snd1), channel_id=5
  sd3 = token[] send-done(snd3), channel_id=6
  x1 = f32[1] get-tuple-element(d1), index=0
  x2 = f32[1] get-tuple-element(d2), index=0
  x3 = f32[1] get-tuple-element(d3), index=0
  ROOT c = f32[3] concatenate(x1, x2, x3), dimensions={0}
}
)");
  DevicesRun r = RunOnDevices(text, 1, 4, 1);
  ASSERT_TRUE(r.status.ok()) << r.status;
  for (int64_t d = 0; d < 4; ++d) {
    const float prev = 100.f * ((d + 3) % 4), next = 100.f * ((d + 1) % 4);
    EXPECT_EQ(Floats(r.results[d]), (std::vector<float>{prev, 2 * prev, next})) << d;
  }
}

TEST(SendRecv, PipelinedRingInsideALoop) {
  // Each of 3 iterations passes the value one step round a 4-device ring and adds 1; the
  // transfers of iteration i match by execution count.
  const std::string ring = Ring(4);
  const std::string text = StrCat(R"(HloModule m
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  t = token[] after-all()
  r = (f32[2], u32[], token[]) recv(t), channel_id=1, )", Attr(ring), R"(
  snd = (f32[2], u32[], token[]) send(v, t), channel_id=1, )", Attr(ring), R"(
  rd = (f32[2], token[]) recv-done(r), channel_id=1
  sd = token[] send-done(snd), channel_id=1
  got = f32[2] get-tuple-element(rd), index=0
  one = f32[] constant(1)
  ones = f32[2] broadcast(one), dimensions={}
  v2 = f32[2] add(got, ones)
  k = s32[] constant(1)
  i2 = s32[] add(i, k)
  ROOT out = (s32[], f32[2]) tuple(i2, v2)
}
ENTRY e {
  p = f32[2] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[2]) tuple(z, p)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT res = f32[2] get-tuple-element(w), index=1
}
)");
  DevicesRun r = RunOnDevices(text, 1, 4, 2);
  ASSERT_TRUE(r.status.ok()) << r.status;
  for (int64_t d = 0; d < 4; ++d) {
    const float from = 100.f * ((d + 1) % 4);  // three steps back round the ring
    EXPECT_EQ(Floats(r.results[d]), (std::vector<float>{from + 3, from + 4})) << d;
  }
}

// Device `skipper` (a partition id) takes the branch without the op (a recv when
// `skip_recv`, else a send); the others run it. The other op runs at the top level.
std::string SkipOn(int64_t skipper, bool skip_recv) {
  const std::string pairs = "{{0,1}}";
  const std::string with_op =
      skip_recv ? StrCat(R"(with_op {
  xw = f32[2] parameter(0)
  tw = token[] after-all()
  rw = (f32[2], u32[], token[]) recv(tw), channel_id=1, )", Attr(pairs), R"(
  rdw = (f32[2], token[]) recv-done(rw), channel_id=1
  ROOT yw = f32[2] get-tuple-element(rdw), index=0
})")
                : StrCat(R"(with_op {
  xw = f32[2] parameter(0)
  tw = token[] after-all()
  sw = (f32[2], u32[], token[]) send(xw, tw), channel_id=1, )", Attr(pairs), R"(
  sdw = token[] send-done(sw), channel_id=1
  ROOT yw = f32[2] copy(xw)
})");
  const std::string top = skip_recv ? StrCat(R"(
  s = (f32[2], u32[], token[]) send(p, t), channel_id=1, )", Attr(pairs), R"(
  sd = token[] send-done(s), channel_id=1
  ROOT out = f32[2] add(c, p))")
                                    : StrCat(R"(
  r = (f32[2], u32[], token[]) recv(t), channel_id=1, )", Attr(pairs), R"(
  rd = (f32[2], token[]) recv-done(r), channel_id=1
  y = f32[2] get-tuple-element(rd), index=0
  ROOT out = f32[2] add(c, y))");
  return StrCat("HloModule m\n", with_op, R"(
without_op {
  xn = f32[2] parameter(0)
  ROOT yn = f32[2] copy(xn)
}
ENTRY e {
  p = f32[2] parameter(0)
  t = token[] after-all()
  pid = u32[] partition-id()
  skip = u32[] constant()", skipper, R"()
  is = pred[] compare(pid, skip), direction=EQ
  c = f32[2] conditional(is, p, p), true_computation=without_op, false_computation=with_op)",
                top, "\n}\n");
}

TEST(SendRecv, AMissingReceiverIsADeadlockNamingTheSend) {
  // Device 1 (the target) never issues the recv: device 0 waits at its send-done.
  DevicesRun r = RunOnDevices(SkipOn(1, true), 1, 2, 2);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition) << r.status;
  const std::string msg(r.status.message());
  EXPECT_TRUE(Contains(msg, "collective deadlock")) << msg;
  EXPECT_TRUE(Contains(msg, "device 0 (replica 0, partition 0) waits at %sd (send-done, "
                            "execution 1) until the recv of channel 1 is issued by device 1 "
                            "(replica 0, partition 1), which finished without reaching it"))
      << msg;
}

TEST(SendRecv, AMissingSenderIsADeadlockNamingTheRecv) {
  // Device 0 (the source) never sends: device 1 waits at its recv-done.
  DevicesRun r = RunOnDevices(SkipOn(0, false), 1, 2, 2);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition) << r.status;
  const std::string msg(r.status.message());
  EXPECT_TRUE(Contains(msg, "device 1 (replica 0, partition 1) waits at %rd (recv-done, "
                            "execution 1) for the value sent on channel 1 by device 0 "
                            "(replica 0, partition 0), which finished without reaching it"))
      << msg;
  // With both present the same module runs: device 1 gets device 0's value.
  DevicesRun ok = RunOnDevices(SkipOn(7, false), 1, 2, 2);
  ASSERT_TRUE(ok.status.ok()) << ok.status;
  EXPECT_EQ(Floats(ok.results[1]), (std::vector<float>{100 + 0, 101 + 1}));
}

TEST(SendRecv, ErrorsNameTheInstruction) {
  // No pairs attribute.
  DevicesRun r = RunOnDevices(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  t = token[] after-all()
  s = (f32[2], u32[], token[]) send(p, t), channel_id=1
  ROOT sd = token[] send-done(s), channel_id=1
}
)", 1, 2, 2);
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(Contains(std::string(r.status.message()), "%s (send)")) << r.status;
  EXPECT_TRUE(Contains(std::string(r.status.message()), "_xla_send_recv_source_target_pairs"))
      << r.status;
  // Validation ranges that do not match the pairs.
  r = RunOnDevices(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  t = token[] after-all()
  s = (f32[2], u32[], token[]) send(p, t), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}",_xla_send_recv_validation="{{0,1},{2,3}}"}
  ROOT sd = token[] send-done(s), channel_id=1
}
)", 1, 2, 2);
  ASSERT_FALSE(r.status.ok());
  EXPECT_TRUE(Contains(std::string(r.status.message()), "%s (send)")) << r.status;
  EXPECT_TRUE(Contains(std::string(r.status.message()), "one {first,last} execution range per "
                                                        "source-target pair (1)"))
      << r.status;
  // On one device, a device-to-device send says what to do.
  auto m = Parse(OneTransfer("{{0,1}}"));
  ASSERT_NE(m, nullptr);
  ReplayOptions o;
  auto one = ReplaySession(*m, o).Run();
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().code(), absl::StatusCode::kUnimplemented) << one.status();
  EXPECT_TRUE(Contains(std::string(one.status().message()), "multi-device")) << one.status();
  // The session runs it on two partitions.
  o.num_partitions = 2;
  auto two = ReplaySession(*m, o).Run();
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->iterations[0].devices.size(), 2u);
  EXPECT_TRUE(two->iterations[0].devices[1].result == two->iterations[0].devices[0].arguments[0]);
}

// Three loop iterations; device 0 sends p + 10 to device 1, which sums what it receives.
std::string ValidatedLoop(const std::string& validation) {
  const std::string attrs = StrCat(
      "frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,1}}\"",
      validation.empty() ? "" : StrCat(",_xla_send_recv_validation=\"", validation, "\""), "}");
  return StrCat(R"(HloModule m
cond {
  s = (s32[], f32[2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  acc = f32[2] get-tuple-element(s), index=2
  t = token[] after-all()
  r = (f32[2], u32[], token[]) recv(t), channel_id=1, )", attrs, R"(
  snd = (f32[2], u32[], token[]) send(v, t), channel_id=1, )", attrs, R"(
  rd = (f32[2], token[]) recv-done(r), channel_id=1
  sd = token[] send-done(snd), channel_id=1
  got = f32[2] get-tuple-element(rd), index=0
  acc2 = f32[2] add(acc, got)
  k = s32[] constant(1)
  i2 = s32[] add(i, k)
  ROOT out = (s32[], f32[2], f32[2]) tuple(i2, v, acc2)
}
ENTRY e {
  p = f32[2] parameter(0)
  ten = f32[] constant(10)
  tens = f32[2] broadcast(ten), dimensions={}
  v = f32[2] add(p, tens)
  z = s32[] constant(0)
  zf = f32[] constant(0)
  acc = f32[2] broadcast(zf), dimensions={}
  init = (s32[], f32[2], f32[2]) tuple(z, v, acc)
  w = (s32[], f32[2], f32[2]) while(init), condition=cond, body=body
  ROOT res = f32[2] get-tuple-element(w), index=2
}
)");
}

TEST(SendRecv, ValidationLimitsTransfersToARangeOfExecutions) {
  // Every execution transfers: 3 x {10, 11}.
  DevicesRun all = RunOnDevices(ValidatedLoop(""), 1, 2, 2);
  ASSERT_TRUE(all.status.ok()) << all.status;
  EXPECT_EQ(Floats(all.results[1]), (std::vector<float>{30, 33}));
  EXPECT_EQ(Floats(all.results[0]), (std::vector<float>{0, 0}));
  // Executions 1 and 2 only.
  DevicesRun some = RunOnDevices(ValidatedLoop("{{1,2}}"), 1, 2, 2);
  ASSERT_TRUE(some.status.ok()) << some.status;
  EXPECT_EQ(Floats(some.results[1]), (std::vector<float>{20, 22}));
  // Execution 0 only.
  DevicesRun first = RunOnDevices(ValidatedLoop("{{0,0}}"), 1, 2, 2);
  ASSERT_TRUE(first.status.ok()) << first.status;
  EXPECT_EQ(Floats(first.results[1]), (std::vector<float>{10, 11}));
  // Never: nothing moves, nothing waits.
  DevicesRun none = RunOnDevices(ValidatedLoop("invalid"), 1, 2, 2);
  ASSERT_TRUE(none.status.ok()) << none.status;
  EXPECT_EQ(Floats(none.results[1]), (std::vector<float>{0, 0}));
}


TEST(MultiDeviceHostTransfers, EachDeviceFeedsItsOwn) {
  auto m = Parse(testing::kHostTransferModule);
  ASSERT_NE(m, nullptr);
  ReplayOptions o;
  o.num_replicas = 2;
  o.num_partitions = 2;
  // The same argument on every device, so only the host data can make devices differ.
  auto inputs = [] { return ReplayInputs{std::vector<Literal>{DeviceVector(1, 3)}, {}, {}}; };
  auto stopped = ReplaySession(*m, o, inputs()).Run();
  ASSERT_FALSE(stopped.ok());
  EXPECT_TRUE(Contains(std::string(stopped.status().message()), "--host_transfers"))
      << stopped.status();

  o.host_transfers = HostTransferMode::kZeros;
  auto zeros = ReplaySession(*m, o, inputs()).Run();
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  ASSERT_EQ(zeros->iterations[0].devices.size(), 4u);
  for (const DeviceReplay& d : zeros->iterations[0].devices) {
    EXPECT_EQ(Floats(d.result), (std::vector<float>{100, 101, 102}));
  }
  std::string warnings;
  for (const std::string& w : zeros->warnings) warnings += w + "\n";
  EXPECT_TRUE(Contains(warnings, "host transfers fed with zeros: device 0 (replica 0, partition "
                                 "0): in, r; device 1 (replica 0, partition 1): in, r; device 2 "
                                 "(replica 1, partition 0): in, r; device 3 (replica 1, "
                                 "partition 1): in, r"))
      << warnings;
  EXPECT_TRUE(Contains(warnings, "values sent to the host were dropped: device 0 (replica 0, "
                                 "partition 0): o, s;"))
      << warnings;

  o.host_transfers = HostTransferMode::kFake;
  auto fake = ReplaySession(*m, o, inputs()).Run();
  auto again = ReplaySession(*m, o, inputs()).Run();
  ASSERT_TRUE(fake.ok() && again.ok());
  const auto& dev = fake->iterations[0].devices;
  for (size_t d = 0; d < dev.size(); ++d) {
    // Repeatable run to run, different from device to device and from the argument.
    EXPECT_TRUE(dev[d].result == again->iterations[0].devices[d].result) << d;
    EXPECT_FALSE(Floats(dev[d].result) == (std::vector<float>{100, 101, 102})) << d;
    for (size_t e = 0; e < d; ++e) EXPECT_FALSE(dev[d].result == dev[e].result) << d << e;
  }
  // Device 0 draws the stream a single-device run draws.
  o.num_replicas = 1;
  o.num_partitions = 1;
  auto single = ReplaySession(*m, o, inputs()).Run();
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_TRUE(single->iterations[0].result == dev[0].result);
  // A reference run on the same devices gets the same host data, so the comparison matches.
  o.num_replicas = 2;
  o.num_partitions = 2;
  o.reference_platform = "interpreter";
  auto compared = ReplaySession(*m, o, inputs()).Run();
  ASSERT_TRUE(compared.ok()) << compared.status();
  EXPECT_TRUE(compared->all_match());
}

}  // namespace
}  // namespace hlowb
