// Runs a command for the command-line tests: its exit status and everything it wrote to
// standard output and standard error, in order.
#ifndef HLOWB_TESTS_UNIT_COMMAND_UTIL_H_
#define HLOWB_TESTS_UNIT_COMMAND_UTIL_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace hlowb::testing {

struct CommandResult {
  int code = -1;  // -1 when the command could not start or did not exit normally
  std::string out;
};

// `cmd` runs under /bin/sh with stderr joined to stdout.
inline CommandResult RunCommand(const std::string& cmd) {
  CommandResult r;
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

#ifdef HLOWB_BINARY
// `hlowb ARGS`, after `env` (a prefix such as "-u XLA_FLAGS A=b" for env(1), or empty).
inline CommandResult RunHlowb(const std::string& args, const std::string& env = "") {
  return RunCommand((env.empty() ? std::string() : "env " + env + " ") +
                    std::string(HLOWB_BINARY) + " " + args);
}
#endif

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_COMMAND_UTIL_H_
