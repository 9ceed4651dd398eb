// Loading the largest corpus modules from binary HloProto versus from HLO text, in the same run.
// For each of the three largest corpus files the module is prepared in each format once, then:
//   BM_LoadText             OpenHloBytes on the .hlo text (what opening the file costs)
//   BM_LoadBinaryProto      OpenHloBytes on the .hlo.pb bytes (protobuf parse + conversion)
//   BM_LoadTextProto        OpenHloBytes on the .pbtxt text
//   BM_ParseBinaryProtoOnly protobuf's own parse of the .hlo.pb bytes  } the two halves of
//   BM_ConvertProtoOnly     ModuleFromProto of the parsed message       } BM_LoadBinaryProto
//   BM_WriteBinaryProto     ModuleToProto + SerializeToString
// Counters: bytes_per_second of the input, instructions/s, bytes (input size) and x_text = time
// per load / time of one text load of the same module measured in this process (median of 11),
// so the ratio means the same on a noisy machine.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/proto/hlo.pb.h"
#include "core/proto/open_file.h"
#include "core/proto/proto_convert.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/text_format.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

struct Input {
  std::string name;
  std::string text;
  std::string binary;
  std::string text_proto;
  int64_t instructions = 0;
};

const std::vector<Input>& Inputs() {
  static const auto* inputs = [] {
    auto* v = new std::vector<Input>();
    std::vector<std::pair<uintmax_t, fs::path>> files;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(HLOWB_CORPUS_DIR, ec)) {
      if (e.is_regular_file() && e.path().extension() == ".hlo") {
        files.emplace_back(e.file_size(), e.path());
      }
    }
    std::sort(files.rbegin(), files.rend());
    for (size_t i = 0; i < files.size() && v->size() < 3; ++i) {
      auto text = ReadFileToString(files[i].second.string());
      if (!text.ok()) continue;
      auto m = ParseModule(*text);
      if (!m.ok()) continue;
      Input in{files[i].second.filename().string(), *text, "", "", (*m)->instruction_count()};
      xla::HloProto hp;
      if (!ModuleToProto(**m, hp.mutable_hlo_module()).ok()) continue;
      hp.SerializeToString(&in.binary);
      google::protobuf::TextFormat::PrintToString(hp, &in.text_proto);
      v->push_back(std::move(in));
    }
    return v;
  }();
  return *inputs;
}

// Seconds for one text load of input `i`, measured in this process (median of 11 runs).
double TextSeconds(size_t i) {
  static std::vector<double> cache(Inputs().size(), -1);
  if (cache[i] >= 0) return cache[i];
  std::vector<double> runs;
  for (int r = 0; r < 11; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto m = ParseModule(Inputs()[i].text);
    benchmark::DoNotOptimize(m);
    runs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(runs.begin(), runs.end());
  cache[i] = runs[runs.size() / 2];
  return cache[i];
}

template <typename F>
void Measure(benchmark::State& state, size_t bytes, F&& load) {
  const size_t index = static_cast<size_t>(state.range(0));
  const Input& in = Inputs()[index];
  const double text_seconds = TextSeconds(index);
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (!load(in)) {
      state.SkipWithError("load failed");
      return;
    }
  }
  double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
               static_cast<double>(std::max<int64_t>(1, state.iterations()));
  state.SetLabel(in.name);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  state.counters["instructions/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * in.instructions), benchmark::Counter::kIsRate);
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["x_text"] = per / text_seconds;
}

bool Open(std::string_view bytes, std::string_view name) {
  auto f = OpenHloBytes(bytes, name);
  benchmark::DoNotOptimize(f);
  return f.ok() && f->modules.size() == 1;
}

void BM_LoadText(benchmark::State& state) {
  const Input& in = Inputs()[state.range(0)];
  Measure(state, in.text.size(), [](const Input& i) { return Open(i.text, "m.hlo"); });
}

void BM_LoadBinaryProto(benchmark::State& state) {
  const Input& in = Inputs()[state.range(0)];
  Measure(state, in.binary.size(), [](const Input& i) { return Open(i.binary, "m.hlo.pb"); });
}

void BM_LoadTextProto(benchmark::State& state) {
  const Input& in = Inputs()[state.range(0)];
  Measure(state, in.text_proto.size(),
          [](const Input& i) { return Open(i.text_proto, "m.pbtxt"); });
}

void BM_ParseBinaryProtoOnly(benchmark::State& state) {
  const Input& in = Inputs()[state.range(0)];
  Measure(state, in.binary.size(), [](const Input& i) {
    google::protobuf::Arena arena;
    auto* hp = google::protobuf::Arena::CreateMessage<xla::HloProto>(&arena);
    return hp->ParseFromString(i.binary);
  });
}

void BM_ConvertProtoOnly(benchmark::State& state) {
  const Input& in = Inputs()[state.range(0)];
  xla::HloProto hp;
  if (!hp.ParseFromString(in.binary)) {
    state.SkipWithError("parse failed");
    return;
  }
  Measure(state, in.binary.size(), [&](const Input&) {
    auto m = ModuleFromProto(hp.hlo_module());
    benchmark::DoNotOptimize(m);
    return m.ok();
  });
}

void BM_WriteBinaryProto(benchmark::State& state) {
  const Input& in = Inputs()[state.range(0)];
  auto module = ParseModule(in.text);
  if (!module.ok()) {
    state.SkipWithError("parse failed");
    return;
  }
  Measure(state, in.binary.size(), [&](const Input&) {
    xla::HloModuleProto p;
    if (!ModuleToProto(**module, &p).ok()) return false;
    std::string out;
    p.SerializeToString(&out);
    benchmark::DoNotOptimize(out);
    return true;
  });
}

void Register() {
  for (size_t i = 0; i < Inputs().size(); ++i) {
    const int64_t arg = static_cast<int64_t>(i);
    benchmark::RegisterBenchmark("BM_LoadText", BM_LoadText)
        ->Arg(arg)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_LoadBinaryProto", BM_LoadBinaryProto)
        ->Arg(arg)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_LoadTextProto", BM_LoadTextProto)
        ->Arg(arg)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_ParseBinaryProtoOnly", BM_ParseBinaryProtoOnly)
        ->Arg(arg)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_ConvertProtoOnly", BM_ConvertProtoOnly)
        ->Arg(arg)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_WriteBinaryProto", BM_WriteBinaryProto)
        ->Arg(arg)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace hlowb

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (hlowb::Inputs().empty()) {
    std::fprintf(stderr, "no corpus at %s; nothing to measure\n", HLOWB_CORPUS_DIR);
    return 0;
  }
  hlowb::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
