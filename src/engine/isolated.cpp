#include "engine/isolated.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

// The signals that end a process that crashed (or was ended by a sanitizer or a check).
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP, SIGSYS};

class Pipe {
 public:
  Pipe() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) {
      const int err = errno;
      throw IoError(fmt::format("cannot create a pipe for a child process: {}", std::strerror(err)), err);
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    close_read();
    close_write();
  }
  [[nodiscard]] int read_end() const noexcept { return fds_[0]; }
  [[nodiscard]] int write_end() const noexcept { return fds_[1]; }
  void close_read() noexcept { close(0); }
  void close_write() noexcept { close(1); }

 private:
  void close(int i) noexcept {
    if (fds_[i] >= 0) {
      ::close(fds_[i]);
      fds_[i] = -1;
    }
  }
  int fds_[2] = {-1, -1};
};

[[noreturn]] void run_child(const Pipe& status, const Pipe& err, const std::function<void()>& work) noexcept {
  ::dup2(err.write_end(), STDERR_FILENO);
  sigset_t crash;
  sigemptyset(&crash);
  for (const int sig : kCrashSignals) {
    std::signal(sig, SIG_DFL);
    sigaddset(&crash, sig);
  }
  pthread_sigmask(SIG_UNBLOCK, &crash, nullptr);
  try {
    work();
  } catch (...) {
    // An error that the work reports, not a crash: the caller meets it too.
  }
  const char finished = 1;
  while (::write(status.write_end(), &finished, 1) < 0 && errno == EINTR) {
  }
  ::_exit(0);
}

// Whether the child has ended (without reaping it): the end of a pipe can be delayed where
// another child of this process, forked meanwhile, holds a copy of its write end.
bool has_ended(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

// What a child writes to stderr: the end of it, for its last line.
class Output {
 public:
  // Reads what is there, as read(2) returns.
  ssize_t read_from(int fd) {
    char buffer[4096];
    const auto got = ::read(fd, buffer, sizeof buffer);
    if (got > 0) {
      tail_.append(buffer, static_cast<std::size_t>(got));
      if (tail_.size() > kKeep) {
        tail_.erase(0, tail_.size() - kKeep);
      }
    }
    return got;
  }
  [[nodiscard]] std::string last_line() const {
    auto end = tail_.find_last_not_of(" \n\r\t");
    if (end == std::string::npos) {
      return {};
    }
    const auto begin = tail_.rfind('\n', end);
    return tail_.substr(begin == std::string::npos ? 0 : begin + 1,
                        end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  }

 private:
  static constexpr std::size_t kKeep = 4096;
  std::string tail_;
};

}  // namespace

ChildEnd run_isolated(const std::function<pid_t()>& fork, const std::function<void()>& work,
                      std::chrono::duration<double> limit) {
  using Clock = std::chrono::steady_clock;
  Pipe status;
  Pipe err;
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    throw IoError(fmt::format("cannot start a child process: {}", std::strerror(error)), error);
  }
  if (pid == 0) {
    run_child(status, err, work);
  }
  status.close_write();
  err.close_write();
  ChildEnd end;
  Output output;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(limit);
  pollfd ready[2] = {{status.read_end(), POLLIN, 0}, {err.read_end(), POLLIN, 0}};
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      end.timed_out = true;
      break;
    }
    const int rc = ::poll(ready, 2, static_cast<int>(std::min<decltype(left)>(left, 100)));
    if (rc < 0 && errno != EINTR) {
      end.timed_out = true;  // cannot wait for it: treated as not finishing
      break;
    }
    if (rc > 0 && ready[1].revents != 0) {
      const auto got = output.read_from(ready[1].fd);
      if (got == 0 || (got < 0 && errno != EINTR)) {
        ready[1].fd = -1;  // its stderr is closed: poll it no more
      }
    }
    if (rc > 0 && ready[0].revents != 0) {
      char byte = 0;
      const auto got = ::read(status.read_end(), &byte, 1);
      if (got < 0 && errno == EINTR) continue;
      end.finished = got == 1;
      break;  // finished, or the end of the pipe: the child has ended
    }
    if (rc == 0 && has_ended(pid)) {
      break;
    }
  }
  if (end.timed_out) {
    ::kill(pid, SIGKILL);
  }
  int wait_status = 0;
  pid_t waited = 0;
  while ((waited = ::waitpid(pid, &wait_status, 0)) < 0 && errno == EINTR) {
  }
  if (waited == pid) {
    if (WIFSIGNALED(wait_status) && !end.timed_out) {
      end.signal = WTERMSIG(wait_status);
      end.finished = false;
    } else if (WIFEXITED(wait_status)) {
      end.exit_status = WEXITSTATUS(wait_status);
      end.finished = end.finished && end.exit_status == 0;
    }
  }
  // Otherwise (ECHILD: SIGCHLD ignored, so the system reaped it) what the pipe said stands.
  // The rest of its stderr, without waiting (another child may hold a copy of the write end).
  if (ready[1].fd >= 0 && ::fcntl(ready[1].fd, F_SETFL, O_NONBLOCK) == 0) {
    ssize_t got = 0;
    while ((got = output.read_from(ready[1].fd)) > 0 || (got < 0 && errno == EINTR)) {
    }
  }
  end.last_words = output.last_line();
  return end;
}

std::string describe_signal(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGABRT: return "SIGABRT (aborted)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGTRAP: return "SIGTRAP (trap)";
    case SIGSYS: return "SIGSYS (bad system call)";
    case SIGKILL: return "SIGKILL (killed)";
    case SIGTERM: return "SIGTERM (terminated)";
    default: return fmt::format("signal {}", signal);
  }
}

}  // namespace h5tile::detail
