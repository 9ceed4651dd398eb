#include "replay/backends/xla/xla_cpu_backend.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "core/ir/primitive_type.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "replay/backends/xla/xla_cpu_helper_script.h"

extern char** environ;

namespace hlowb {
namespace {

namespace fs = std::filesystem;

constexpr char kHowToGetJax[] =
    "the xla-cpu platform runs real XLA through Python with jax installed: run scripts/setup "
    "(it installs the pinned jax into the project's .venv) or set HLOWB_PYTHON to a python "
    "that can `import jax`";

bool IsExecutable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

// `.venv/bin/python` in `dir` or any folder above it.
std::optional<std::string> VenvPythonAbove(fs::path dir) {
  for (int depth = 0; depth < 16 && !dir.empty(); ++depth) {
    fs::path candidate = dir / ".venv" / "bin" / "python";
    if (IsExecutable(candidate)) return candidate.string();
    fs::path parent = dir.parent_path();
    if (parent == dir) break;
    dir = parent;
  }
  return std::nullopt;
}

// Removes the exchange folder unless asked to keep it.
class ExchangeDir {
 public:
  ExchangeDir(std::string path, bool keep) : path_(std::move(path)), keep_(keep) {}
  ~ExchangeDir() {
    if (!keep_ && !path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const { return StrCat(path_, "/", name); }

 private:
  std::string path_;
  bool keep_;
};

absl::StatusOr<std::unique_ptr<ExchangeDir>> MakeExchangeDir(bool keep) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ =
      StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/hlowb-xla-cpu-XXXXXX");
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return absl::InternalError(StrCat("cannot create a folder from ", templ, ": ",
                                      std::strerror(errno), "; set TMPDIR to a writable folder"));
  }
  return std::make_unique<ExchangeDir>(std::string(buf.data()), keep);
}

std::string DimsText(const Shape& shape) {
  if (shape.rank() == 0) return "scalar";
  std::string out;
  for (int i = 0; i < shape.rank(); ++i) StrAppend(&out, i == 0 ? "" : "x", shape.dimension(i));
  return out;
}

bool IsSubByte(PrimitiveType t) { return BitWidth(t) < 8 && t != PrimitiveType::kPred; }

// Collects the array leaves of `shape` depth-first; Unimplemented for tokens and the like.
absl::Status CollectLeaves(const Shape& shape, const std::string& where,
                           std::vector<const Shape*>* leaves) {
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple_shapes()) {
      if (absl::Status st = CollectLeaves(e, where, leaves); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) {
    return absl::UnimplementedError(
        StrCat(where, " has shape ", PrintShape(shape, false),
               "; the xla-cpu platform exchanges arrays and tuples of arrays only"));
  }
  if (shape.IsDynamic()) {
    return absl::UnimplementedError(
        StrCat(where, " has dynamic shape ", PrintShape(shape, false),
               "; the xla-cpu platform exchanges static shapes only"));
  }
  leaves->push_back(&shape);
  return absl::OkStatus();
}

void CollectLiteralLeaves(const Literal& literal, std::vector<const Literal*>* leaves) {
  if (literal.shape().IsTuple()) {
    for (const Literal& e : literal.tuple_elements()) CollectLiteralLeaves(e, leaves);
    return;
  }
  leaves->push_back(&literal);
}

void CollectMutableLeaves(Literal* literal, std::vector<Literal*>* leaves) {
  if (literal->shape().IsTuple()) {
    for (Literal& e : *literal->mutable_tuple_elements()) CollectMutableLeaves(&e, leaves);
    return;
  }
  leaves->push_back(literal);
}

// Element bytes as the helper expects them: row-major, little-endian, sub-byte types one per
// byte holding only their own bits.
std::string LeafBytes(const Literal& leaf) {
  std::string bytes(reinterpret_cast<const char*>(leaf.data().data()), leaf.data().size());
  PrimitiveType t = leaf.shape().element_type();
  if (IsSubByte(t)) {
    const uint8_t mask = static_cast<uint8_t>((1u << BitWidth(t)) - 1);
    for (char& c : bytes) c = static_cast<char>(static_cast<uint8_t>(c) & mask);
  }
  return bytes;
}

struct HelperResult {
  std::string status;
  std::map<std::string, std::string> fields;
  struct Leaf {
    std::string type, dims, file;
  };
  std::vector<Leaf> leaves;                      // device 0's (the only device's)
  std::map<int64_t, std::vector<Leaf>> device_leaves;  // every device's, by device index
};

absl::StatusOr<HelperResult> ParseResultFile(const std::string& text, const std::string& path) {
  HelperResult r;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  int64_t current_device = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    std::string key;
    if (!(words >> key)) continue;
    if (number == 1) {
      std::string version;
      words >> version;
      if (key != "hlowb-xla-cpu-result" || version != "1") {
        return absl::InternalError(
            StrCat(path, " is not a protocol 1 result of the xla-cpu helper: '", line, "'"));
      }
      continue;
    }
    if (key == "device") {
      if (!(words >> current_device) || current_device < 0) {
        return absl::InternalError(StrCat(path, ":", number, ": malformed device line"));
      }
      continue;
    }
    if (key == "leaf") {
      HelperResult::Leaf leaf;
      if (!(words >> leaf.type >> leaf.dims >> leaf.file)) {
        return absl::InternalError(StrCat(path, ":", number, ": malformed leaf line '", line, "'"));
      }
      if (current_device == 0) r.leaves.push_back(leaf);
      r.device_leaves[current_device].push_back(std::move(leaf));
      continue;
    }
    std::string value;
    std::getline(words >> std::ws, value);
    if (key == "status") {
      r.status = value;
    } else {
      r.fields[key] = value;
    }
  }
  if (r.status.empty()) return absl::InternalError(StrCat(path, " has no status line"));
  return r;
}

std::string Tail(const std::string& text, size_t max_chars = 2000) {
  std::string t = text.size() > max_chars ? "..." + text.substr(text.size() - max_chars) : text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

// Starts `python helper dir`, output to dir/helper.log, in its own process group so a kill
// takes any children with it; waits for it within the timeout and the cancel token.
absl::Status RunHelper(const std::string& python, const ExchangeDir& dir,
                       const XlaCpuOptions& options) {
  const std::string helper = dir.File("xla_cpu_helper.py");
  const std::string log = dir.File("helper.log");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<std::string> argv_strings = {python, helper, dir.path()};
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int err = posix_spawn(&pid, python.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) {
    return absl::FailedPreconditionError(StrCat("cannot start ", python, ": ",
                                                std::strerror(err), "; ", kHowToGetJax));
  }

  const auto start = std::chrono::steady_clock::now();
  auto wait = std::chrono::milliseconds(2);
  int status = 0;
  while (true) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      return absl::InternalError(StrCat("waiting for the xla-cpu helper failed: ",
                                        std::strerror(errno)));
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool cancelled = options.cancel != nullptr && options.cancel->IsCancelled();
    if (cancelled || elapsed > options.timeout_seconds) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (cancelled) return absl::CancelledError("xla-cpu run cancelled");
      auto output = ReadFileToString(log, 1 << 20);
      return absl::DeadlineExceededError(StrCat(
          "the xla-cpu helper (", python, ") did not finish within ", options.timeout_seconds,
          " s and was killed; raise the timeout for large modules",
          output.ok() && !output->empty() ? StrCat("; its output:\n", Tail(*output)) : ""));
    }
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, std::chrono::milliseconds(50));
  }
  // The helper writes result.txt and exits 0 even when XLA fails; anything else is a crash.
  std::error_code ec;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && fs::exists(dir.File("result.txt"), ec)) {
    return absl::OkStatus();
  }
  auto output = ReadFileToString(log, 1 << 20);
  if (WIFSIGNALED(status) && output.ok()) {
    // XLA stops on a failed internal check with a fatal log line ("F1126 12:00:00.0 1 file.cc:1]
    // Check failed: ..."): that line is the module's problem, the stack trace after it is noise.
    std::istringstream lines(*output);
    std::string line;
    while (std::getline(lines, line)) {
      const bool fatal = line.size() > 2 && line[0] == 'F' && std::isdigit(line[1]) &&
                         line.find("] ") != std::string::npos;
      if (fatal || line.find("Check failed:") != std::string::npos) {
        std::string what = fatal ? line.substr(line.find("] ") + 2) : line;
        return absl::InternalError(StrCat(
            "XLA aborted while compiling or running the module (the xla-cpu helper was killed by "
            "signal ", WTERMSIG(status), "): ", what));
      }
    }
  }
  std::string how = WIFSIGNALED(status)
                        ? StrCat("was killed by signal ", WTERMSIG(status), " (",
                                 strsignal(WTERMSIG(status)), ")")
                        : StrCat("exited with status ", WEXITSTATUS(status),
                                 WEXITSTATUS(status) == 0 ? " without writing its result" : "");
  return absl::InternalError(StrCat(
      "the xla-cpu helper (", python, ") ", how,
      output.ok() && !output->empty() ? StrCat("; its output:\n", Tail(*output)) : ""));
}

// Reads one result leaf into `leaf`, checking type and dimensions against the expected shape.
absl::Status ReadLeaf(const ExchangeDir& dir, const HelperResult::Leaf& got, int index,
                      Literal* leaf) {
  const Shape& want = leaf->shape();
  const std::string want_type(PrimitiveTypeName(want.element_type()));
  if (got.type != want_type || got.dims != DimsText(want)) {
    return absl::InternalError(StrCat("XLA's result leaf ", index, " is ", got.type, "[",
                                      got.dims, "], the module's root says ", want_type, "[",
                                      DimsText(want), "]"));
  }
  auto bytes = ReadFileToString(dir.File(got.file));
  if (!bytes.ok()) return bytes.status();
  if (bytes->size() != leaf->data().size()) {
    return absl::InternalError(StrCat("XLA's result leaf ", index, " has ", bytes->size(),
                                      " bytes, expected ", leaf->data().size()));
  }
  if (!bytes->empty()) std::memcpy(leaf->mutable_data()->data(), bytes->data(), bytes->size());
  PrimitiveType t = want.element_type();
  if (IsSubByte(t)) {
    // Back to the literal's convention: signed sub-byte values sign-extended, unsigned masked.
    const int bits = BitWidth(t);
    for (uint8_t& b : *leaf->mutable_data()) {
      uint8_t v = b & static_cast<uint8_t>((1u << bits) - 1);
      if (IsSignedIntegral(t) && (v & (1u << (bits - 1))) != 0) {
        v = static_cast<uint8_t>(v | ~((1u << bits) - 1));
      }
      b = v;
    }
  }
  return absl::OkStatus();
}

double ParseSeconds(const std::map<std::string, std::string>& fields, const std::string& key) {
  auto it = fields.find(key);
  if (it == fields.end()) return 0;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  return end != it->second.c_str() ? v : 0;
}

std::string Field(const std::map<std::string, std::string>& fields, const std::string& key) {
  auto it = fields.find(key);
  return it == fields.end() ? "" : it->second;
}

}  // namespace

absl::StatusOr<std::string> FindXlaPython() {
  if (const char* env = std::getenv("HLOWB_PYTHON"); env != nullptr && *env != '\0') {
    if (!IsExecutable(env)) {
      return absl::FailedPreconditionError(
          StrCat("HLOWB_PYTHON is '", env, "', which is not an executable file; ", kHowToGetJax));
    }
    return std::string(env);
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    if (auto p = VenvPythonAbove(exe.parent_path())) return *p;
  }
  fs::path cwd = fs::current_path(ec);
  if (!ec) {
    if (auto p = VenvPythonAbove(cwd)) return *p;
  }
#ifdef HLOWB_SOURCE_DIR
  if (auto p = VenvPythonAbove(fs::path(HLOWB_SOURCE_DIR))) return *p;
#endif
  return absl::FailedPreconditionError(
      StrCat("no Python with jax found (HLOWB_PYTHON is unset and there is no .venv/bin/python "
             "above the hlowb executable or the current folder); ",
             kHowToGetJax));
}

absl::StatusOr<XlaCpuDevicesRun> RunHloTextOnXlaCpuDevices(
    const std::string& hlo_text, const Shape& result_shape,
    const std::vector<std::vector<Literal>>& device_arguments, int64_t num_replicas,
    int64_t num_partitions, const XlaCpuOptions& options) {
  const int64_t num_devices = num_replicas * num_partitions;
  if (num_replicas < 1 || num_partitions < 1 || num_devices > kMaxXlaCpuDevices) {
    return absl::InvalidArgumentError(StrCat("the xla-cpu platform runs 1 to ", kMaxXlaCpuDevices,
                                             " devices; asked for ", num_replicas, " replica(s) x ",
                                             num_partitions, " partition(s)"));
  }
  if (device_arguments.size() != 1 &&
      static_cast<int64_t>(device_arguments.size()) != num_devices) {
    return absl::InvalidArgumentError(StrCat("argument lists for ", device_arguments.size(),
                                             " devices; the run has ", num_devices));
  }
  std::vector<const Shape*> result_leaves;
  if (absl::Status st = CollectLeaves(result_shape, "the module's result", &result_leaves);
      !st.ok()) {
    return st;
  }
  std::string python = options.python;
  if (python.empty()) {
    auto found = FindXlaPython();
    if (!found.ok()) return found.status();
    python = *found;
  }
  auto dir = MakeExchangeDir(options.keep_exchange_dir);
  if (!dir.ok()) return dir.status();
  const ExchangeDir& d = **dir;

  std::string request = "hlowb-xla-cpu-request 1\nmodule module.hlo\n";
  if (num_devices > 1) StrAppend(&request, "devices ", num_replicas, " ", num_partitions, "\n");
  for (const XlaFfiHandler& h : options.ffi_handlers) {
    if (h.target.find_first_of(" \t\n") != std::string::npos ||
        h.symbol.find_first_of(" \t\n") != std::string::npos ||
        h.library.find('\n') != std::string::npos) {
      return absl::InvalidArgumentError(
          StrCat("FFI handler ", h.symbol, " for ", h.target, ": names with spaces cannot be "
                 "passed to the xla-cpu helper"));
    }
    StrAppend(&request, "ffi ", h.target, " ", h.symbol, " ", h.library, "\n");
  }
  int leaf_number = 0;
  for (size_t list = 0; list < device_arguments.size(); ++list) {
    const std::vector<Literal>& arguments = device_arguments[list];
    // One list: every device's arguments; several: device `list`'s.
    if (device_arguments.size() > 1) StrAppend(&request, "device ", list, "\n");
    for (size_t a = 0; a < arguments.size(); ++a) {
      std::vector<const Shape*> shapes;
      if (absl::Status st = CollectLeaves(arguments[a].shape(), StrCat("argument ", a), &shapes);
          !st.ok()) {
        return st;
      }
      std::vector<const Literal*> leaves;
      CollectLiteralLeaves(arguments[a], &leaves);
      for (const Literal* leaf : leaves) {
        if (leaf->elided()) {
          return absl::InvalidArgumentError(StrCat("argument ", a, " has no data (elided)"));
        }
        std::string name = StrCat("arg", leaf_number++, ".bin");
        if (absl::Status st = WriteStringToFile(d.File(name), LeafBytes(*leaf)); !st.ok()) {
          return st;
        }
        StrAppend(&request, "arg ", PrimitiveTypeName(leaf->shape().element_type()), " ",
                  DimsText(leaf->shape()), " ", name, "\n");
      }
    }
  }
  for (auto [name, contents] : {std::pair<const char*, const std::string*>{"module.hlo", &hlo_text},
                                {"request.txt", &request}}) {
    if (absl::Status st = WriteStringToFile(d.File(name), *contents); !st.ok()) return st;
  }
  if (absl::Status st = WriteStringToFile(d.File("xla_cpu_helper.py"), kXlaCpuHelperScript);
      !st.ok()) {
    return st;
  }

  if (absl::Status st = RunHelper(python, d, options); !st.ok()) return st;

  const std::string result_path = d.File("result.txt");
  auto result_text = ReadFileToString(result_path);
  if (!result_text.ok()) return result_text.status();
  auto parsed = ParseResultFile(*result_text, result_path);
  if (!parsed.ok()) return parsed.status();
  std::string message;
  if (auto m = ReadFileToString(d.File("message.txt")); m.ok()) message = Tail(*m, 8000);
  const std::string jaxlib = Field(parsed->fields, "jaxlib");
  if (parsed->status == "no_jax") {
    return absl::FailedPreconditionError(StrCat(message, "; ", kHowToGetJax));
  }
  if (parsed->status == "unsupported_jaxlib") {
    return absl::FailedPreconditionError(
        StrCat("the xla-cpu helper cannot drive this jaxlib: ", message,
               "; install the pinned jax/jaxlib 0.10.2 (scripts/setup) or point HLOWB_PYTHON at "
               "a Python that has it"));
  }
  if (parsed->status == "xla_error") {
    return absl::InvalidArgumentError(StrCat("XLA (jaxlib ", jaxlib, ") rejected or failed to run "
                                             "the module: ", message));
  }
  if (parsed->status != "ok") {
    return absl::InternalError(StrCat("the xla-cpu helper reports '", parsed->status, "': ",
                                      message));
  }

  XlaCpuDevicesRun run;
  for (int64_t device = 0; device < num_devices; ++device) {
    auto found = parsed->device_leaves.find(device);
    const size_t got = found == parsed->device_leaves.end() ? 0 : found->second.size();
    if (got != result_leaves.size()) {
      return absl::InternalError(StrCat("XLA returned ", got, " result array(s)",
                                        num_devices > 1 ? StrCat(" for device ", device) : "",
                                        "; the module's root has ", result_leaves.size()));
    }
    Literal result(result_shape);
    std::vector<Literal*> out_leaves;
    CollectMutableLeaves(&result, &out_leaves);
    for (size_t i = 0; i < out_leaves.size(); ++i) {
      if (absl::Status st = ReadLeaf(d, found->second[i], static_cast<int>(i), out_leaves[i]);
          !st.ok()) {
        return st;
      }
    }
    run.results.push_back(std::move(result));
  }
  run.compile_seconds = ParseSeconds(parsed->fields, "compile_seconds");
  run.run_seconds = ParseSeconds(parsed->fields, "run_seconds");
  run.jaxlib_version = jaxlib;
  run.method = Field(parsed->fields, "method");
  if (auto opt = ReadFileToString(d.File("optimized.hlo")); opt.ok()) {
    run.optimized_module = std::move(*opt);
  }
  if (options.keep_exchange_dir) run.exchange_dir = d.path();
  return run;
}

absl::StatusOr<XlaCpuRun> RunHloTextOnXlaCpu(const std::string& hlo_text,
                                             const Shape& result_shape,
                                             const std::vector<Literal>& arguments,
                                             const XlaCpuOptions& options) {
  std::vector<std::vector<Literal>> lists;
  lists.push_back(arguments);
  auto devices = RunHloTextOnXlaCpuDevices(hlo_text, result_shape, lists, 1, 1, options);
  if (!devices.ok()) return devices.status();
  XlaCpuRun run;
  run.result = std::move(devices->results[0]);
  run.compile_seconds = devices->compile_seconds;
  run.run_seconds = devices->run_seconds;
  run.optimized_module = std::move(devices->optimized_module);
  run.jaxlib_version = std::move(devices->jaxlib_version);
  run.method = std::move(devices->method);
  run.exchange_dir = std::move(devices->exchange_dir);
  return run;
}

namespace {

// Manual sharding for a value of `shape` (a tuple sharding of manual leaves for tuples).
Sharding ManualSharding(const Shape& shape) {
  Sharding s;
  if (shape.IsTuple()) {
    s.type = ShardingType::kTuple;
    for (const Shape& e : shape.tuple_shapes()) s.tuple_elements.push_back(ManualSharding(e));
    return s;
  }
  s.type = ShardingType::kManual;
  return s;
}

// The text the helper compiles: metadata dropped, elided constants given the caller's values
// and, for a run over several partitions, every instruction marked manually sharded, so XLA's
// SPMD partitioner (required for more than one partition) leaves the per-device program as it
// is, which is what our multi-device replay runs on every device.
absl::StatusOr<std::string> HelperText(const Module& module, const XlaCpuOptions& options,
                                       bool manual) {
  if (module.entry() == nullptr || module.entry()->root() == nullptr) {
    return absl::InvalidArgumentError("the module has no entry computation to run on xla-cpu");
  }
  PrintOptions print;
  print.print_metadata = false;
  std::string text = PrintModule(module, print);
  // XLA fills `{...}` constants with its own pattern: give them the caller's values instead,
  // on a copy, so both platforms see the same numbers.
  bool has_elided = false;
  for (const auto& comp : module.computations()) {
    for (const Instruction* instr : comp->instructions()) {
      if (instr->opcode() == Opcode::kConstant && instr->literal() != nullptr &&
          instr->literal()->elided()) {
        has_elided = true;
      }
    }
  }
  if (has_elided && !options.elided_constant) {
    return absl::InvalidArgumentError(
        "the module has constants with elided data ({...}) and no values were given for them");
  }
  if (!has_elided && !manual) return text;
  auto copy = ParseModule(text);
  if (!copy.ok()) {
    return absl::InternalError(StrCat("re-reading the printed module failed: ",
                                      copy.status().message()));
  }
  std::map<std::string, const Instruction*> originals;
  for (const auto& comp : module.computations()) {
    for (const Instruction* instr : comp->instructions()) {
      originals[StrCat(comp->name(), "/", instr->name())] = instr;
    }
  }
  for (const auto& comp : (*copy)->computations()) {
    for (Instruction* instr : comp->instructions()) {
      if (manual) instr->set_sharding(std::make_unique<Sharding>(ManualSharding(instr->shape())));
      if (instr->opcode() != Opcode::kConstant || instr->literal() == nullptr ||
          !instr->literal()->elided()) {
        continue;
      }
      auto it = originals.find(StrCat(comp->name(), "/", instr->name()));
      if (it == originals.end()) {
        return absl::InternalError(StrCat("constant ", instr->name(), " vanished on re-reading"));
      }
      auto value = options.elided_constant(*it->second);
      if (!value.ok()) return value.status();
      instr->set_literal(std::make_unique<Literal>(std::move(*value)));
    }
  }
  return PrintModule(**copy, print);
}

}  // namespace

absl::StatusOr<XlaCpuRun> RunOnXlaCpu(const Module& module, const std::vector<Literal>& arguments,
                                      const XlaCpuOptions& options) {
  auto text = HelperText(module, options, /*manual=*/false);
  if (!text.ok()) return text.status();
  return RunHloTextOnXlaCpu(*text, module.entry()->root()->shape(), arguments, options);
}

absl::StatusOr<XlaCpuDevicesRun> RunOnXlaCpuDevices(
    const Module& module, const std::vector<std::vector<Literal>>& device_arguments,
    int64_t num_replicas, int64_t num_partitions, const XlaCpuOptions& options) {
  auto text = HelperText(module, options, /*manual=*/num_partitions > 1);
  if (!text.ok()) return text.status();
  return RunHloTextOnXlaCpuDevices(*text, module.entry()->root()->shape(), device_arguments,
                                   num_replicas, num_partitions, options);
}

}  // namespace hlowb
