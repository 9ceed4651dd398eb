// `hlowb worker` as the app's replay controller drives it: a child process spoken to in
// length-delimited protobuf messages. A replay answers with progress and a result; a cancel
// stops a long run; a worker that aborts mid-run (the test-only flag) or receives a garbled
// frame ends without taking the caller with it.
#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <filesystem>

#include "replay_fixtures.h"
#include "core/proto/literal_convert.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "replay/worker/worker.pb.h"

namespace hlowb::worker {
namespace {

// A worker child process with a reader thread collecting its responses.
class WorkerProcess {
 public:
  explicit WorkerProcess(const std::vector<std::string>& extra_args = {}) {
    signal(SIGPIPE, SIG_IGN);
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], STDIN_FILENO);
      dup2(from_child[1], STDOUT_FILENO);
      close(to_child[1]);
      close(from_child[0]);
      std::vector<std::string> args = {HLOWB_BINARY, "worker"};
      args.insert(args.end(), extra_args.begin(), extra_args.end());
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    to_ = to_child[1];
    from_ = from_child[0];
    reader_ = std::thread([this] {
      google::protobuf::io::FileInputStream in(from_);
      for (;;) {
        Response r;
        bool eof = false;
        if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&r, &in, &eof)) break;
        std::lock_guard<std::mutex> lock(mu_);
        responses_.push_back(std::move(r));
        cv_.notify_all();
      }
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
      cv_.notify_all();
    });
  }
  ~WorkerProcess() {
    CloseInput();
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
    if (from_ >= 0) close(from_);
  }

  bool Send(const Request& request) {
    google::protobuf::io::FileOutputStream out(to_);
    return google::protobuf::util::SerializeDelimitedToZeroCopyStream(request, &out) &&
           out.Flush();
  }
  bool SendRaw(const std::string& bytes) {
    return write(to_, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  }
  void CloseInput() {
    if (to_ >= 0) close(to_);
    to_ = -1;
  }
  // The next response; nullopt when the worker's output ended or 30 s passed.
  std::optional<Response> Next() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::seconds(30),
                      [&] { return !responses_.empty() || closed_; }) ||
        responses_.empty()) {
      return std::nullopt;
    }
    Response r = std::move(responses_.front());
    responses_.pop_front();
    return r;
  }
  // The final answer (result or error) to request `id`, skipping progress.
  std::optional<Response> Answer(uint64_t id, int* progress_count = nullptr) {
    for (;;) {
      auto r = Next();
      if (!r) return std::nullopt;
      if (r->id() != id) continue;
      if (r->has_progress()) {
        if (progress_count) ++*progress_count;
        continue;
      }
      return r;
    }
  }
  // The exit status as waitpid reports it.
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool waited_ = false;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Response> responses_;
  bool closed_ = false;
};

constexpr char kSmall[] = R"(HloModule small
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] add(a, b)
  ROOT m = f32[4] multiply(s, s)
}
)";

// A loop of many iterations over a 64k vector: long enough to cancel.
constexpr char kLong[] = R"(HloModule long
cond {
  p = (s32[], f32[65536]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(100000)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[65536]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[65536] get-tuple-element(p), index=1
  w = f32[65536] sine(v)
  ROOT t = (s32[], f32[65536]) tuple(j, w)
}
ENTRY e {
  x = f32[65536] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[65536]) tuple(zero, x)
  loop = (s32[], f32[65536]) while(init), condition=cond, body=body
  ROOT r = f32[65536] get-tuple-element(loop), index=1
}
)";

Request ReplayOf(uint64_t id, const std::string& text) {
  Request r;
  r.set_id(id);
  r.mutable_replay()->set_module_text(text);
  r.mutable_replay()->set_reference_platform("interpreter");
  r.mutable_replay()->set_seed(5);
  return r;
}

TEST(Worker, ReplaysWithProgressAndResult) {
  WorkerProcess w;
  Request req = ReplayOf(7, kSmall);
  req.mutable_replay()->set_return_result_literals(true);
  req.mutable_replay()->set_iterations(2);
  ASSERT_TRUE(w.Send(req));
  int progress = 0;
  auto answer = w.Answer(7, &progress);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_result()) << answer->error().message();
  const ReplayResult& r = answer->result();
  EXPECT_EQ(r.module_name(), "small");
  EXPECT_TRUE(r.all_match());
  ASSERT_EQ(r.iterations_size(), 2);
  EXPECT_TRUE(r.iterations(0).matched());
  EXPECT_EQ(r.iterations(0).compared_against(), "reference platform interpreter");
  auto lit = LiteralFromProto(r.iterations(0).result());
  ASSERT_TRUE(lit.ok()) << lit.status();
  EXPECT_EQ(lit->element_count(), 4);
  EXPECT_GE(progress, 1);

  // Errors come back as answers, and the worker carries on.
  ASSERT_TRUE(w.Send(ReplayOf(8, "HloModule broken\nENTRY e {")));
  auto bad = w.Answer(8);
  ASSERT_TRUE(bad.has_value());
  ASSERT_TRUE(bad->has_error());
  EXPECT_EQ(bad->error().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  ASSERT_TRUE(w.Send(ReplayOf(9, kSmall)));
  auto again = w.Answer(9);
  ASSERT_TRUE(again.has_value() && again->has_result());
  // A --host_transfers word the parser does not know is refused with its message.
  Request odd = ReplayOf(10, kSmall);
  odd.mutable_replay()->set_host_transfers("sometimes");
  ASSERT_TRUE(w.Send(odd));
  auto refused = w.Answer(10);
  ASSERT_TRUE(refused.has_value() && refused->has_error());
  EXPECT_EQ(refused->error().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(refused->error().message().find("--host_transfers must be error, zeros or fake"),
            std::string::npos)
      << refused->error().message();

  w.CloseInput();
  int status = w.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(Worker, CancelStopsALongRun) {
  WorkerProcess w;
  ASSERT_TRUE(w.Send(ReplayOf(1, kLong)));
  // Wait for the run to be under way, then cancel it.
  auto first = w.Next();
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->has_progress());
  Request cancel;
  cancel.set_id(2);
  cancel.mutable_cancel()->set_id(1);
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(w.Send(cancel));
  auto answer = w.Answer(1);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_error());
  EXPECT_EQ(answer->error().code(), static_cast<int>(absl::StatusCode::kCancelled));
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(5));
}

TEST(Worker, AbortMidRunAndGarbledInputEndTheWorkerOnly) {
  {
    WorkerProcess w({"--test_abort_after_instructions=3"});
    ASSERT_TRUE(w.Send(ReplayOf(1, kSmall)));
    EXPECT_FALSE(w.Answer(1).has_value());  // output ends: no answer
    int status = w.Wait();
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << status;
  }
  {
    WorkerProcess w;
    ASSERT_TRUE(w.SendRaw(std::string("\x05\xff\xff\xff\xff\xff", 6)));
    w.CloseInput();
    int status = w.Wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  }
}

TEST(Worker, ProfilesEveryInstructionAndCapturesOne) {
  WorkerProcess w;
  Request req = ReplayOf(1, hlowb::testing::kProfiledModule);
  req.mutable_replay()->set_profile(true);
  req.mutable_replay()->set_capture_instruction("s");
  ASSERT_TRUE(w.Send(req));
  auto answer = w.Answer(1);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_result()) << answer->error().message();
  const ReplayResult& r = answer->result();
  std::map<std::string, const InstructionTiming*> by_name;
  for (const InstructionTiming& t : r.profile()) by_name[t.computation() + "/" + t.name()] = &t;
  ASSERT_TRUE(by_name.count("body/twice")) << r.DebugString();
  EXPECT_EQ(by_name["body/twice"]->executions(), 3);  // once per loop iteration
  EXPECT_EQ(by_name["cond/c"]->executions(), 4);
  ASSERT_TRUE(by_name.count("e/s"));
  EXPECT_EQ(by_name["e/s"]->executions(), 1);
  EXPECT_GE(by_name["e/s"]->seconds(), 0);
  // log of {16, 32, 48, -64}: one NaN.
  ASSERT_TRUE(by_name.count("e/l"));
  EXPECT_EQ(by_name["e/l"]->nan_count(), 1);
  EXPECT_EQ(by_name["e/l"]->elements(), 4);
  EXPECT_EQ(by_name["e/s"]->nan_count(), 0);
  EXPECT_DOUBLE_EQ(by_name["e/s"]->max(), 6);
  EXPECT_DOUBLE_EQ(by_name["e/s"]->min(), -8);

  EXPECT_EQ(r.captured_instruction(), "s");
  auto captured = LiteralFromProto(r.captured());
  ASSERT_TRUE(captured.ok()) << captured.status();
  ASSERT_EQ(captured->element_count(), 4);
  const float* v = captured->data_as<float>();
  EXPECT_EQ(v[0], 2);
  EXPECT_EQ(v[3], -8);

  // Without the flags nothing extra comes back.
  ASSERT_TRUE(w.Send(ReplayOf(2, hlowb::testing::kProfiledModule)));
  auto plain = w.Answer(2);
  ASSERT_TRUE(plain.has_value() && plain->has_result());
  EXPECT_EQ(plain->result().profile_size(), 0);
  EXPECT_FALSE(plain->result().has_captured());
}

TEST(Worker, ValuesBeyondTheLimitStayBehindWithAWarning) {
  WorkerProcess w({"--max_value_bytes=64"});
  Request req = ReplayOf(1, kSmall);
  req.mutable_replay()->set_return_result_literals(true);
  ASSERT_TRUE(w.Send(req));
  auto answer = w.Answer(1);
  ASSERT_TRUE(answer.has_value() && answer->has_result());
  const ReplayResult& r = answer->result();
  ASSERT_EQ(r.iterations_size(), 1);
  EXPECT_TRUE(r.iterations(0).matched());  // the verdict still comes
  EXPECT_FALSE(r.iterations(0).has_result());
  ASSERT_GE(r.warnings_size(), 1);
  EXPECT_NE(r.warnings(r.warnings_size() - 1).find("64 bytes"), std::string::npos);
  // Within the default limit the values come.
  WorkerProcess roomy;
  ASSERT_TRUE(roomy.Send(req));
  auto full = roomy.Answer(1);
  ASSERT_TRUE(full.has_value() && full->has_result());
  EXPECT_TRUE(full->result().iterations(0).has_result());
  EXPECT_TRUE(full->result().iterations(0).has_reference_result());
}

TEST(Worker, IsolatesTheEntryInstructions) {
  WorkerProcess w;
  Request req = ReplayOf(1, kSmall);
  req.mutable_replay()->set_isolate_instructions(true);
  ASSERT_TRUE(w.Send(req));
  auto answer = w.Answer(1);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_result()) << answer->error().message();
  const ReplayResult& r = answer->result();
  std::vector<std::string> names;
  for (const IsolationRow& row : r.isolation()) {
    names.push_back(row.name());
    EXPECT_EQ(row.test_status(), "MATCHED") << row.name();
    EXPECT_EQ(row.reference_status(), "MATCHED") << row.name();
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"m", "s"}));
  EXPECT_TRUE(r.all_match());
  EXPECT_NE(r.isolation_table().find("MATCHED"), std::string::npos);
}

TEST(Worker, BisectsThePassesOfADumpDirectory) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hlowb_worker_bisect_" + std::to_string(getpid()));
  ASSERT_TRUE(hlowb::testing::WriteBisectDump(dir.string()).ok());
  WorkerProcess w;
  Request req;
  req.set_id(4);
  req.mutable_replay()->set_bisect_passes(true);
  req.mutable_replay()->set_dump_dir(dir.string());
  req.mutable_replay()->set_dump_module("m");
  ASSERT_TRUE(w.Send(req));
  auto answer = w.Answer(4);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_result()) << answer->error().message();
  const ReplayResult& r = answer->result();
  ASSERT_GE(r.first_divergent(), 0) << r.bisect_report();
  ASSERT_LT(r.first_divergent(), r.bisect_size());
  EXPECT_EQ(r.bisect(r.first_divergent()).pass(), "bad-math");
  EXPECT_EQ(r.bisect(r.first_divergent()).verdict(), "DIVERGED");
  EXPECT_GT(r.bisect(r.first_divergent()).max_abs_error(), 0);
  EXPECT_EQ(r.bisect(0).verdict(), "baseline");
  int unchanged = 0;
  for (const BisectRow& row : r.bisect()) unchanged += row.verdict() == "unchanged";
  EXPECT_GE(unchanged, 1);

  // A module the directory does not have is an error naming it.
  req.set_id(5);
  req.mutable_replay()->set_dump_module("nope");
  ASSERT_TRUE(w.Send(req));
  auto missing = w.Answer(5);
  ASSERT_TRUE(missing.has_value() && missing->has_error());
  EXPECT_NE(missing->error().message().find("nope"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlowb::worker
