// The mesh-axes form of replica groups (XLA's MeshAxesReplicaGroupList): text parse and print
// in every spelling, expansion to explicit groups against hand-worked results, bad input,
// fingerprint printing, the proto field and, when the pinned jax is installed, XLA's own
// expansion of the same text.
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/proto/hlo.pb.h"
#include "core/proto/proto_convert.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "command_util.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using Groups = std::vector<std::vector<int64_t>>;

std::string Module(const std::string& groups) {
  return StrCat(R"(HloModule m, replica_count=12

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %e (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %r = f32[4]{0} all-reduce(f32[4]{0} %p), replica_groups=)",
                groups, R"(, to_apply=%add
}
)");
}

const ReplicaGroups& GroupsOf(const hlowb::Module& m) {
  return *m.entry()->root()->attrs_or_default().replica_groups;
}

std::string GroupsText(const Groups& g) {
  std::string out = "{";
  for (size_t i = 0; i < g.size(); ++i) {
    out += i ? ",{" : "{";
    for (size_t j = 0; j < g[i].size(); ++j) out += StrCat(j ? "," : "", g[i][j]);
    out += "}";
  }
  return out + "}";
}

struct Case {
  std::string text;
  std::string expanded;
};

// Expansions worked out by hand from the mesh's device array, the axes' split dimensions and
// the grouped dimensions moved last (see each comment).
const Case kCases[] = {
    // b spans each row of the 2x4 mesh.
    {"mesh['a'=2,'b'=4] {'b'}", "{{0,1,2,3},{4,5,6,7}}"},
    // a spans each column.
    {"mesh['a'=2,'b'=4] {'a'}", "{{0,4},{1,5},{2,6},{3,7}}"},
    // b = 2 * pre + sub: the sub-axis of size 2 with stride 1 pairs neighbours.
    {"mesh['a'=2,'b'=4] {'b':(2)2}", "{{0,1},{2,3},{4,5},{6,7}}"},
    // b = 2 * sub + rest: stride 2 within the row.
    {"mesh['a'=2,'b'=4] {'b':(1)2}", "{{0,2},{1,3},{4,6},{5,7}}"},
    // Explicit device order: column j of [[7,6,5,4],[3,2,1,0]].
    {"mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'a'}", "{{7,3},{6,2},{5,1},{4,0}}"},
    // Iota device order [0,2,4,6,1,3,5,7]: the columns are {0,1}, {2,3}, ...
    {"mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)) {'a'}", "{{0,1},{2,3},{4,5},{6,7}}"},
    // a = 4 * x + 2 * y + z for a:(1)2 = x, a:(2)2 = y; the group walks y then x.
    {"mesh['a'=8] {'a':(2)2,'a':(1)2}", "{{0,4,2,6},{1,5,3,7}}"},
    // device = 3 * (2 * x + r) + b for a:(1)2 = x; groups fix r and walk b then x.
    {"mesh['a'=4,'b'=3] {'b','a':(1)2}", "{{0,6,1,7,2,8},{3,9,4,10,5,11}}"},
    // Double-quoted names, and an axis given by its number.
    {"mesh[\"a\"=2,\"b\"=4] {\"b\"}", "{{0,1,2,3},{4,5,6,7}}"},
    {"mesh['a'=2,'b'=4] {'1'}", "{{0,1,2,3},{4,5,6,7}}"},
    // The @mesh<...> spelling: devices [[0,2,4,6],[1,3,5,7]]; b = 2 * sub + rest; groups fix
    // rest and walk a then sub.
    {"@mesh<a=2,b=4>([4,2]T(1,0)) {a,b:(1)2}", "{{0,4,1,5},{2,6,3,7}}"},
    {"@mesh<\"x\"=2,\"y\"=2> {\"y\",\"x\"}", "{{0,2,1,3}}"},
    // ooo = 2 * pre + sub: consecutive pairs of the listed devices.
    {"@mesh<ooo=10>(8,3,7,5,4,2,6,0,1,9) {ooo:(5)2}", "{{8,3},{7,5},{4,2},{6,0},{1,9}}"},
    {"mesh['ooo'=10], device_ids=(8,3,7,5,4,2,6,0,1,9) {'ooo':(5)2}",
     "{{8,3},{7,5},{4,2},{6,0},{1,9}}"},
    {"@mesh<u=2,v=3> {}", "{{0},{1},{2},{3},{4},{5}}"},
};

TEST(MeshReplicaGroups, ParsePrintRoundTripAndExpansion) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    auto m = ParseModule(Module(c.text));
    ASSERT_TRUE(m.ok()) << m.status();
    const ReplicaGroups& g = GroupsOf(**m);
    ASSERT_TRUE(g.mesh.has_value());
    EXPECT_EQ(g.mesh->Validate(), "");
    EXPECT_EQ(GroupsText(g.Expanded()), c.expanded);
    const std::string printed = PrintModule(**m);
    EXPECT_NE(printed.find("replica_groups=" + c.text + ", to_apply"), std::string::npos)
        << printed;
    auto again = ParseModule(printed);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(GroupsOf(**again), g);
    EXPECT_EQ(PrintModule(**again), printed);
  }
}

TEST(MeshReplicaGroups, FingerprintFormPrintsTheFullList) {
  auto m = ParseModule(Module("mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'a'}"));
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string fp = PrintModule(**m, PrintOptions::FingerprintForm());
  EXPECT_NE(fp.find("replica_groups={{7,3},{6,2},{5,1},{4,0}}"), std::string::npos) << fp;
  const std::string canonical = PrintModule(**m, PrintOptions::CanonicalForm());
  EXPECT_NE(canonical.find("replica_groups=mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'a'}"),
            std::string::npos)
      << canonical;
}

// "<input>:LINE:COL:" of the first occurrence of `needle` after the replica_groups= of `text`.
std::string Where(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle, text.find("replica_groups="));
  size_t line = 1, col = 1;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return StrCat("<input>:", line, ":", col, ": ");
}

TEST(MeshReplicaGroups, BadInputIsAnErrorWithItsPosition) {
  struct Bad {
    std::string groups;
    std::string at;       // where the error points
    std::string message;  // part of the message
  };
  const Bad kBad[] = {
      {"mesh['a'=2,'b'=4] {'c'}", "'c'}", "unknown mesh axis 'c'"},
      {"mesh['a'=2,'b'=4] {'b':(3)2}", "'b':(3)2", "does not divide the axis size 4"},
      {"mesh['a'=2,'b'=4] {'b':(2)4}", "'b':(2)4", "does not divide the axis size 4"},
      {"mesh['a'=2,'b'=4] {'b':(1)4}", "'b':(1)4", "must be smaller than the axis size 4"},
      {"mesh['a'=2,'b'=4] {'b':(1)1}", "'b':(1)1", "must have a size above 1"},
      {"mesh['a'=2,'b'=4] {'a','a'}", "'a'}", "mesh axis 'a' is used twice"},
      {"mesh['a'=8] {'a':(1)4,'a':(2)2}", "'a':(2)2", "overlap"},
      {"mesh['a'=8] {'a':(1)2,'a':(2)2}", "'a':(2)2", "should be written merged"},
      {"mesh['a'=2,'a'=4] {'a'}", "4]", "mesh axis 'a' is repeated"},
      {"mesh['a'=2,'b'=0] {'a'}", "0]", "needs a positive size"},
      {"mesh['a'=2,'b'=4], device_ids=(0,1,2) {'a'}", "0,1,2", "lists 3 devices but its axes hold 8"},
      {"mesh['a'=2,'b'=4], device_ids=(0,1,2,3,4,5,6,6) {'a'}", "0,1,2,3",
       "permutation of 0..7"},
      {"mesh['a'=2,'b'=4], device_ids=([4,3]T(1,0)) {'a'}", "[4,3]", "does not match"},
      {"mesh['a'=2,\"b\"=4] {'a'}", "\"b\"", "quoted the same way"},
      {"mesh['a'=2,'b'=4] {'a'", "to_apply", "expected a quoted mesh axis name"},
      {"mesh['a'=2,'b'=4] {'a' 'b'}", "'b'}", "expected '}'"},
      {"mesh['a'=2,'b", "'b", "unterminated mesh axis name"},
      {"@mesh<a=2,b=4 {a}", "{a}", "expected '>'"},
  };
  for (const Bad& b : kBad) {
    SCOPED_TRACE(b.groups);
    const std::string text = Module(b.groups);
    auto m = ParseModule(text);
    ASSERT_FALSE(m.ok());
    const std::string msg(m.status().message());
    EXPECT_EQ(msg.rfind(Where(text, b.at), 0), 0u) << msg;
    EXPECT_NE(msg.find(b.message), std::string::npos) << msg;
  }
  // Truncated input ends cleanly too.
  for (const char* cut : {"replica_groups=mesh[", "replica_groups=mesh['a'=2", "replica_groups=@mesh<a=2>("}) {
    auto m = ParseModule(StrCat("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(p), ", cut));
    EXPECT_FALSE(m.ok()) << cut;
  }
}

TEST(MeshReplicaGroups, ProtoRoundTrip) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    auto m = ParseModule(Module(c.text));
    ASSERT_TRUE(m.ok()) << m.status();
    const std::string printed = PrintModule(**m);
    // With the workbench's extras: back to the same text.
    xla::HloModuleProto p;
    std::vector<std::string> warnings;
    ASSERT_TRUE(ModuleToProto(**m, &p, {}, &warnings).ok());
    for (const std::string& w : warnings) EXPECT_EQ(w.find("cannot"), std::string::npos) << w;
    std::string bytes;
    ASSERT_TRUE(p.SerializeToString(&bytes));
    xla::HloModuleProto binary;
    ASSERT_TRUE(binary.ParseFromString(bytes));
    auto back = ModuleFromProto(binary);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(PrintModule(**back), printed);
    // XLA's field alone: the same groups.
    xla::HloModuleProto strict;
    ProtoWriteOptions options;
    options.workbench_extensions = false;
    ASSERT_TRUE(ModuleToProto(**m, &strict, options, nullptr).ok());
    const xla::HloInstructionProto* root = nullptr;
    for (const auto& comp : strict.computations()) {
      for (const auto& i : comp.instructions()) {
        if (i.name() == "r") root = &i;
      }
    }
    ASSERT_NE(root, nullptr);
    ASSERT_TRUE(root->has_mesh_axes_replica_group_list());
    EXPECT_EQ(root->replica_groups_size(), 0);
    EXPECT_FALSE(root->has_iota_collective_device_list());
    auto plain = ModuleFromProto(strict);
    ASSERT_TRUE(plain.ok()) << plain.status();
    ASSERT_TRUE(GroupsOf(**plain).mesh.has_value());
    EXPECT_EQ(GroupsText(GroupsOf(**plain).Expanded()), c.expanded);
  }
}

TEST(MeshReplicaGroups, XlaWrittenProtoReads) {
  // mesh {a=2, b=4}, devices 7..0, grouped over b:(2)2, as XLA writes it.
  auto m = ParseModule(Module("{{0,1},{2,3}}"));
  ASSERT_TRUE(m.ok()) << m.status();
  xla::HloModuleProto p;
  ProtoWriteOptions options;
  options.workbench_extensions = false;
  ASSERT_TRUE(ModuleToProto(**m, &p, options, nullptr).ok());
  for (auto& comp : *p.mutable_computations()) {
    for (auto& i : *comp.mutable_instructions()) {
      if (i.name() != "r") continue;
      i.clear_replica_groups();
      auto* list = i.mutable_mesh_axes_replica_group_list();
      auto* a = list->mutable_mesh()->add_axes();
      a->set_name("a");
      a->set_size(2);
      a = list->mutable_mesh()->add_axes();
      a->set_name("b");
      a->set_size(4);
      for (int64_t d = 7; d >= 0; --d) list->mutable_mesh()->add_device_ids(d);
      auto* ref = list->add_axes();
      ref->set_mesh_axis_index(1);
      ref->mutable_sub_axis_info()->set_pre_size(2);
      ref->mutable_sub_axis_info()->set_size(2);
    }
  }
  auto back = ModuleFromProto(p);
  ASSERT_TRUE(back.ok()) << back.status();
  const std::string printed = PrintModule(**back);
  EXPECT_NE(printed.find("replica_groups=mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'b':(2)2}"),
            std::string::npos)
      << printed;
  EXPECT_EQ(GroupsText(GroupsOf(**back).Expanded()), "{{7,6},{5,4},{3,2},{1,0}}");
  // An inconsistent list is an error, not a crash.
  for (auto& comp : *p.mutable_computations()) {
    for (auto& i : *comp.mutable_instructions()) {
      if (i.name() == "r") {
        i.mutable_mesh_axes_replica_group_list()->mutable_axes(0)->set_mesh_axis_index(5);
      }
    }
  }
  auto bad = ModuleFromProto(p);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("out of range"), std::string::npos) << bad.status();
}

// --- Against the installed XLA -------------------------------------------------------------

std::string Python() { return std::string(HLOWB_SOURCE_DIR) + "/.venv/bin/python"; }

bool HaveJax() {
  static const bool have = access(Python().c_str(), X_OK) == 0 &&
                           testing::RunCommand(Python() + " -c 'import jax'").code == 0;
  return have;
}

TEST(MeshReplicaGroups, ExpansionMatchesXla) {
  if (!HaveJax()) GTEST_SKIP() << "needs the pinned jax in .venv (scripts/setup creates it)";
  const fs::path dir = fs::temp_directory_path() / ("hlowb_mesh_groups_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "out");
  // XLA's reader takes mesh[...] with quoted names and at least two devices per group.
  std::vector<std::string> texts;
  for (const Case& c : kCases) {
    if (c.text.rfind("mesh[", 0) == 0) texts.push_back(c.text);
  }
  for (const char* extra : {"mesh['x'=2,'y'=3,'z'=4] {'z':(2)2,'x'}",
                            "mesh['x'=2,'y'=3,'z'=4], device_ids=([6,4]T(1,0)) {'y','z':(1)2}",
                            "mesh['x'=4,'y'=6] {'y':(3)2,'x':(1)2,'y':(1)3}"}) {
    texts.push_back(extra);
  }
  std::string cmd = Python() + " " + HLOWB_SOURCE_DIR + "/tests/conformance/xla_print.py fingerprint " +
                    (dir / "out").string();
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string file = (dir / (std::to_string(i) + ".hlo")).string();
    ASSERT_TRUE(WriteStringToFile(file, Module(texts[i])).ok());
    cmd += " '" + file + "'";
  }
  auto ran = testing::RunCommand(cmd);
  ASSERT_EQ(ran.code, 0) << ran.out;
  for (size_t i = 0; i < texts.size(); ++i) {
    SCOPED_TRACE(texts[i]);
    auto xla = ReadFileToString((dir / "out" / (std::to_string(i) + ".txt")).string());
    ASSERT_TRUE(xla.ok()) << "XLA could not read it";
    const size_t at = xla->find("replica_groups=");
    ASSERT_NE(at, std::string::npos) << *xla;
    const size_t end = xla->find(", to_apply", at);
    const std::string theirs = xla->substr(at + 15, end - at - 15);
    auto m = ParseModule(Module(texts[i]));
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(GroupsText(GroupsOf(**m).Expanded()), theirs);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlowb
