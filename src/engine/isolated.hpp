#pragma once
// Work run in a child process with a time limit, so that a crash or a hang in it (HDF5's
// decoders on a damaged file) ends the child, never the caller.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>

namespace h5tile::detail {

// How a child process of run_isolated ended.
struct ChildEnd {
  bool finished = false;   // the work returned or threw, and the child exited
  bool timed_out = false;  // still running at the limit: killed (SIGKILL)
  int signal = 0;          // the signal that ended it (SIGSEGV, SIGABRT, ...); 0 if none
  int exit_status = -1;    // its exit status where it exited without finishing; -1 if unknown
  std::string last_words;  // the last line it wrote to stderr (a check's or a sanitizer's report)
};

// Runs `work` in a child process made by `fork` (fork(2), or a wrapper that keeps a library's
// state consistent across it) and waits for it at most `limit`; a child still running then is
// killed. The child restores the default action of the signals of a crash (so that it ends by
// its signal, whatever handlers the caller installed: a runtime's fault handler, a
// sanitizer's), runs `work`, reports that it finished (an exception counts: the caller meets
// the same error, with its own type, when it does the work itself) and ends with _exit(0): no
// atexit handlers, no flush of the caller's buffers or files. Its stderr is collected (the
// last line is kept), not mixed into the caller's. Throws IoError where no child can
// be started. The caller must not be inside a lock that `work` takes (the child would wait for
// it forever, as the thread holding it is not copied).
[[nodiscard]] ChildEnd run_isolated(const std::function<pid_t()>& fork, const std::function<void()>& work,
                                    std::chrono::duration<double> limit);

// "SIGSEGV (segmentation fault)", for messages.
[[nodiscard]] std::string describe_signal(int signal);

}  // namespace h5tile::detail
