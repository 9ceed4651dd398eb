// `hlowb capture [-o DIR] [--pass-by-pass] [--snapshots] [--module-re=RE] [--no-open] --
// COMMAND...`: runs a user's JAX (or any XLA) program with XLA's dump flags, then indexes the dump
// and opens it in the window.
//
// The program runs as a child with its output passed through live; XLA_FLAGS keeps what the user
// already set and gets the dump flags appended (XLA takes the last occurrence of a flag, so ours
// win; a user flag we override is reported). JAX's persistent compilation cache is switched off for
// the run: a cache hit skips compilation and so, silently, the dump.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "app/cli/cli.h"
#include "core/support/strings.h"

extern char** environ;

namespace hlowb::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kCaptureUsage[] =
    "usage: hlowb capture [-o DIR] [--pass-by-pass] [--snapshots] "
    "[--module-re=RE] [--no-open]"
    " -- COMMAND [ARGS...]\n"
    "  runs COMMAND with XLA's dump flags (text and proto of every module) "
    "appended to\n"
    "  XLA_FLAGS, then indexes the dump and opens it in the window\n"
    "  -o DIR          dump folder (default: a new "
    "./hlowb-capture-<timestamp>)\n"
    "  --pass-by-pass  also dump the module after every compiler pass\n"
    "  --snapshots     also dump an HloSnapshot (arguments and result) per "
    "execution\n"
    "  --module-re=RE  only dump modules whose name matches RE\n"
    "  --no-open       do not open the window on the dump\n";

int UsageError(const std::string& message) {
  std::cerr << "hlowb capture: " << message << "\n" << kCaptureUsage;
  return kUsageError;
}

// One flag of an XLA_FLAGS value: name without dashes and its value ("true" for a bare flag).
struct XlaFlag {
  std::string text;  // as written
  std::string name;
  std::string value;
};

std::vector<XlaFlag> SplitXlaFlags(const std::string& flags) {
  std::vector<XlaFlag> out;
  size_t i = 0;
  while (i < flags.size()) {
    while (i < flags.size() && std::isspace(static_cast<unsigned char>(flags[i]))) ++i;
    size_t start = i;
    while (i < flags.size() && !std::isspace(static_cast<unsigned char>(flags[i]))) ++i;
    if (start == i) break;
    XlaFlag f;
    f.text = flags.substr(start, i - start);
    size_t dashes = f.text.find_first_not_of('-');
    std::string body = dashes == std::string::npos ? "" : f.text.substr(dashes);
    size_t eq = body.find('=');
    f.name = body.substr(0, eq);
    f.value = eq == std::string::npos ? "true" : body.substr(eq + 1);
    out.push_back(std::move(f));
  }
  return out;
}

// The user's XLA_FLAGS followed by the capture's, and a warning for every user flag the capture
// overrides or that keeps dumps from being written.
std::string ComposeXlaFlags(const std::string& user, const std::vector<XlaFlag>& ours,
                            std::vector<std::string>* warnings) {
  std::map<std::string, std::string> our_values;
  for (const XlaFlag& f : ours) our_values[f.name] = f.value;
  for (const XlaFlag& f : SplitXlaFlags(user)) {
    auto it = our_values.find(f.name);
    if (it != our_values.end() && it->second != f.value) {
      warnings->push_back(StrCat("XLA_FLAGS already has ", f.text, "; the capture's --", f.name,
                                 "=", it->second, " comes after it and takes effect"));
    } else if (f.name == "xla_enable_dumping" && f.value == "false") {
      warnings->push_back(
          StrCat("XLA_FLAGS has ", f.text, ", which turns every dump off: remove it to capture"));
    } else if (f.name == "xla_dump_hlo_unoptimized_snapshots" && f.value != "false") {
      warnings->push_back(
          StrCat("XLA_FLAGS has ", f.text, ", with which XLA writes no other module files"));
    } else if (f.name == "xla_dump_max_hlo_modules" || f.name == "xla_dump_hlo_pipeline_re" ||
               (f.name == "xla_dump_hlo_module_re" && it == our_values.end())) {
      warnings->push_back(StrCat("XLA_FLAGS has ", f.text, ", which limits what is dumped"));
    }
  }
  std::string out = user;
  for (const XlaFlag& f : ours) StrAppend(&out, out.empty() ? "" : " ", f.text);
  return out;
}

// A folder name in the current directory that does not exist yet.
std::string DefaultCaptureDir() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
  std::string base = StrCat("hlowb-capture-", stamp);
  std::string dir = base;
  std::error_code ec;
  for (int n = 2; fs::exists(dir, ec); ++n) dir = StrCat(base, "-", n);
  return dir;
}

// The child's environment: ours, with the capture's XLA_FLAGS and the compilation cache off.
std::vector<std::string> ChildEnvironment(const std::string& xla_flags) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    if (entry.rfind("XLA_FLAGS=", 0) == 0 || entry.rfind("JAX_ENABLE_COMPILATION_CACHE=", 0) == 0 ||
        entry.rfind("JAX_COMPILATION_CACHE_DIR=", 0) == 0) {
      continue;
    }
    env.emplace_back(entry);
  }
  env.push_back(StrCat("XLA_FLAGS=", xla_flags));
  env.push_back("JAX_ENABLE_COMPILATION_CACHE=false");
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The running child, for the signal handler that passes termination requests on to it.
volatile sig_atomic_t g_child_pid = 0;

void ForwardSignal(int sig) {
  if (g_child_pid > 0) kill(static_cast<pid_t>(g_child_pid), sig);
}

struct ChildResult {
  bool started = false;
  std::string error;  // why it did not start
  int status = 0;     // waitpid status
};

// Runs `command` with `env`, its output going where ours goes, and waits for it. Ctrl+C reaches the
// child through the terminal; we outlive it so the partial dump is still indexed.
ChildResult RunChild(std::vector<std::string> command, std::vector<std::string> env) {
  ChildResult result;
  std::vector<char*> argv = CStrings(command);
  std::vector<char*> envp = CStrings(env);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    result.error = StrCat("cannot create a pipe: ", std::strerror(errno));
    return result;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    result.error = StrCat("cannot fork: ", std::strerror(errno));
    close(error_pipe[0]);
    close(error_pipe[1]);
    return result;
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here on.
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    close(error_pipe[0]);
    execvpe(argv[0], argv.data(), envp.data());
    int err = errno;
    ssize_t ignored = write(error_pipe[1], &err, sizeof(err));
    (void)ignored;
    _exit(127);
  }
  close(error_pipe[1]);
  g_child_pid = pid;
  struct sigaction forward {};
  forward.sa_handler = ForwardSignal;
  sigemptyset(&forward.sa_mask);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  struct sigaction old_int, old_quit, old_term, old_hup;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);

  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child_pid = 0;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    result.error = StrCat("cannot run '", command[0], "': ", std::strerror(exec_errno),
                          exec_errno == ENOENT && command[0].find('/') == std::string::npos
                              ? " (not found on PATH)"
                              : "");
    return result;
  }
  result.started = true;
  result.status = status;
  return result;
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return StrCat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = strsignal(WTERMSIG(status));
    return StrCat("was killed by signal ", WTERMSIG(status), name ? StrCat(" (", name, ")") : "");
  }
  return StrCat("ended with wait status ", status);
}

int CountKind(const DumpIndex& index, const DumpModule& m, std::initializer_list<DumpFileKind> k) {
  int n = 0;
  for (int a : m.artifacts) {
    for (DumpFileKind kind : k) n += index.files[a].name.kind == kind;
  }
  return n;
}

int CountPassSteps(const DumpModule& m) {
  int n = 0;
  for (const DumpState& s : m.states) n += s.stage == StageKind::kPassStep;
  return n;
}

std::string Plural(int64_t n, std::string_view one, std::string_view many) {
  return StrCat(n, " ", n == 1 ? one : many);
}

void PrintSummary(const DumpIndex& index, const std::string& dir) {
  int64_t states = 0, steps = 0, snapshots = 0;
  for (const DumpModule& m : index.modules) {
    states += static_cast<int64_t>(m.states.size());
    steps += CountPassSteps(m);
    snapshots += CountKind(index, m, {DumpFileKind::kSnapshot, DumpFileKind::kUnoptimizedSnapshot});
  }
  std::cout << "captured " << dir << ": " << Plural(index.modules.size(), "module", "modules")
            << ", " << Plural(states, "state", "states") << " ("
            << Plural(steps, "pass step", "pass steps") << "), "
            << Plural(snapshots, "snapshot", "snapshots") << ", "
            << Plural(index.unrecognized.size(), "unrecognised file", "unrecognised files") << "\n";
  for (const DumpModule& m : index.modules) {
    std::cout << "  module " << (m.id_text.empty() ? "-" : m.id_text) << " "
              << (m.name.empty() ? "(unnamed)" : m.name) << ": "
              << Plural(static_cast<int64_t>(m.states.size()), "state", "states") << " ("
              << Plural(CountPassSteps(m), "pass step", "pass steps") << ")";
    int snaps = CountKind(index, m, {DumpFileKind::kSnapshot, DumpFileKind::kUnoptimizedSnapshot});
    if (snaps > 0) std::cout << ", " << Plural(snaps, "snapshot", "snapshots");
    std::cout << "\n";
  }
  for (int u : index.unrecognized) std::cout << "  unrecognised " << index.files[u].path << "\n";
}

bool HaveDisplay() {
  for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) {
    const char* v = std::getenv(var);
    if (v && *v) return true;
  }
  return false;
}

// Starts `hlowb gui DIR` (this same binary) in its own session, not waited for.
bool OpenWindow(const std::string& dir, std::string* error) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) {
    *error = StrCat("cannot find this program's path: ", std::strerror(errno));
    return false;
  }
  exe[len] = '\0';
  std::vector<std::string> args = {exe, "gui", dir};
  std::vector<char*> argv = CStrings(args);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd : {0, 1, 2}) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid;
  int rc = posix_spawn(&pid, exe, &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *error = StrCat("cannot start ", exe, ": ", std::strerror(rc));
    return false;
  }
  return true;
}

bool IsEmptyDir(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec) && !ec;
}

bool HasWhitespace(const std::string& s) {
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'') return true;
  }
  return false;
}

}  // namespace

int RunCapture(const std::vector<std::string>& argv) {
  auto dash = std::find(argv.begin(), argv.end(), "--");
  if (dash == argv.end()) return UsageError("expected -- and the command to run");
  std::vector<std::string> options(argv.begin(), dash);
  std::vector<std::string> command(dash + 1, argv.end());
  if (command.empty()) return UsageError("expected a command after --");
  Args args;
  std::string error;
  if (!ParseArgs(options, {"pass-by-pass", "snapshots", "no-open"}, {"o", "module-re"}, &args,
                 &error)) {
    return UsageError(error);
  }
  if (!args.positional.empty()) {
    return UsageError(StrCat("unexpected argument '", args.positional[0],
                             "' before --; the command goes after --"));
  }
  if (args.Has("o") && args.Get("o").empty()) return UsageError("-o needs a folder");
  if (args.Has("module-re") && args.Get("module-re").empty()) {
    return UsageError("--module-re needs a regular expression");
  }

  std::string dir = args.Has("o") ? args.Get("o") : DefaultCaptureDir();
  std::error_code ec;
  dir = fs::absolute(dir, ec).lexically_normal().string();
  if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (HasWhitespace(dir)) {
    std::cerr << "hlowb capture: the dump folder " << dir
              << " has spaces or quotes, which XLA_FLAGS cannot carry; choose "
                 "another with -o\n";
    return kUsageError;
  }
  if (HasWhitespace(args.Get("module-re"))) {
    std::cerr << "hlowb capture: --module-re cannot hold spaces or quotes "
                 "(XLA_FLAGS is split at "
                 "spaces); use \\s or . instead\n";
    return kUsageError;
  }
  const bool existed = fs::exists(dir, ec);
  if (existed && !fs::is_directory(dir, ec)) {
    std::cerr << "hlowb capture: " << dir << " exists and is not a folder; choose another -o\n";
    return kInputError;
  }
  if (!existed && !fs::create_directories(dir, ec)) {
    std::cerr << "hlowb capture: cannot create " << dir << ": " << ec.message() << "\n";
    return kInputError;
  }
  if (existed && !IsEmptyDir(dir)) {
    std::cerr << "hlowb capture: warning: " << dir
              << " is not empty; the new dump is mixed with what is there\n";
  }

  std::vector<XlaFlag> ours;
  auto add = [&ours](std::string name, std::string value, bool bare) {
    XlaFlag f;
    f.text = bare ? StrCat("--", name) : StrCat("--", name, "=", value);
    f.name = std::move(name);
    f.value = std::move(value);
    ours.push_back(std::move(f));
  };
  add("xla_dump_to", dir, false);
  add("xla_dump_hlo_as_text", "true", true);
  add("xla_dump_hlo_as_proto", "true", true);
  if (args.Has("pass-by-pass")) add("xla_dump_hlo_pass_re", ".*", false);
  if (args.Has("snapshots")) add("xla_dump_hlo_snapshots", "true", true);
  if (args.Has("module-re")) add("xla_dump_hlo_module_re", args.Get("module-re"), false);
  const char* user_flags = std::getenv("XLA_FLAGS");
  std::vector<std::string> warnings;
  std::string xla_flags = ComposeXlaFlags(user_flags ? user_flags : "", ours, &warnings);
  for (const std::string& w : warnings) std::cerr << "hlowb capture: warning: " << w << "\n";
  const char* cache_dir = std::getenv("JAX_COMPILATION_CACHE_DIR");
  if (cache_dir && *cache_dir) {
    std::cerr << "hlowb capture: warning: JAX_COMPILATION_CACHE_DIR=" << cache_dir
              << " is set; a persistent-cache hit skips compilation and writes "
                 "no dump, so it is "
                 "unset and JAX_ENABLE_COMPILATION_CACHE=false for this run\n";
  } else {
    std::cerr << "hlowb capture: note: JAX's persistent compilation cache can "
                 "skip compilation "
                 "and silently leave no dump; it is off for this run "
                 "(JAX_ENABLE_COMPILATION_CACHE=false)\n";
  }
  std::cerr << "hlowb capture: dumping into " << dir << "\nhlowb capture: XLA_FLAGS=" << xla_flags
            << "\n";

  ChildResult child = RunChild(command, ChildEnvironment(xla_flags));
  if (!child.started) {
    std::cerr << "hlowb capture: " << child.error << "\n";
    if (!existed && IsEmptyDir(dir)) fs::remove(dir, ec);
    return kInputError;
  }
  const bool command_ok = WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0;
  if (!command_ok) {
    std::cerr << "hlowb capture: the command " << DescribeStatus(child.status)
              << "; indexing what it dumped\n";
  }
  if (IsEmptyDir(dir)) {
    std::cerr << "hlowb capture: nothing was dumped into " << dir;
    if (command_ok) {
      std::cerr << ": the command compiled nothing with XLA"
                << (args.Has("module-re") ? ", or no module matched --module-re" : "")
                << ", or it replaced XLA_FLAGS before XLA read them";
    }
    std::cerr << "\n";
    if (!existed) fs::remove(dir, ec);
    return kInputError;
  }
  absl::StatusOr<DumpIndex> index = IndexDumpDirectory(dir);
  if (!index.ok()) {
    std::cerr << "hlowb capture: cannot index " << dir << ": " << index.status().message() << "\n";
    return kInputError;
  }
  PrintSummary(*index, dir);
  if (index->modules.empty()) {
    std::cerr << "hlowb capture: " << dir << " holds no module files\n";
    return kInputError;
  }
  if (!args.Has("no-open")) {
    if (!HaveDisplay()) {
      std::cout << "no display to open the window on; later: hlowb gui " << dir << "\n";
    } else if (std::string open_error; !OpenWindow(dir, &open_error)) {
      std::cerr << "hlowb capture: " << open_error << "; open it with: hlowb gui " << dir << "\n";
    } else {
      std::cout << "opening the window on " << dir << "\n";
    }
  }
  return command_ok ? kOk : kInputError;
}

}  // namespace hlowb::cli
