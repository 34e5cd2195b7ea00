//===- AtomicFileTest.cpp - Files replaced whole or not at all ------------===//
#include "ingot/AtomicFile.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace ingot;

namespace {

class AtomicFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ingot-atomic-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string &name) const { return (dir_ / name).string(); }
  static std::string read(const std::string &p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto &e : fs::directory_iterator(dir_))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  /// The pid of a process that has exited and been reaped.
  static pid_t deadPid() {
    pid_t child = ::fork();
    if (child == 0)
      ::_exit(0);
    ::waitpid(child, nullptr, 0);
    return child;
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, ReplacesTheWholeFileAndLeavesNoTemp) {
  const std::string out = path("out.json");
  ASSERT_TRUE(writeFileAtomically(out, "old"));
  ASSERT_TRUE(writeFileAtomically(out, "new contents"));
  EXPECT_EQ(read(out), "new contents");
  EXPECT_EQ(entries(), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFileTest, RemovesStaleTempsOfDeadProcessesOnly) {
  const std::string out = path("m.ingot");
  const std::string dead = out + ".tmp-" + std::to_string(deadPid()) + "-0";
  const std::string live = out + ".tmp-" + std::to_string(::getppid()) + "-3";
  const std::string other = path("other.ingot.tmp-") + std::to_string(deadPid()) + "-0";
  const std::string notOurs = out + ".tmp-backup"; // not our naming: kept
  for (const std::string &p : {dead, live, other, notOurs})
    std::ofstream(p) << "partial";
  ASSERT_TRUE(writeFileAtomically(out, "artifact"));
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));    // its process may still be writing
  EXPECT_TRUE(fs::exists(other));   // beside another destination
  EXPECT_TRUE(fs::exists(notOurs));
}

TEST_F(AtomicFileTest, FullDiskKeepsThePreviousFile) {
  const std::string out = path("bench.json");
  ASSERT_TRUE(writeFileAtomically(out, "previous"));
  pid_t child = ::fork();
  if (child == 0) {
    installTempFileCleanup(); // SIGXFSZ ignored: the write fails with EFBIG
    rlimit limit = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    Status st = writeFileAtomically(out, std::string(1 << 16, 'x'));
    const bool named = !st && st.message().find(out) != std::string::npos &&
                       st.message().find("File too large") != std::string::npos;
    ::_exit(named ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "no clear error naming the file";
  EXPECT_EQ(read(out), "previous");
  EXPECT_EQ(entries(), std::vector<std::string>{"bench.json"});
}

TEST_F(AtomicFileTest, SigtermRemovesTheTempFile) {
  const std::string out = path("m.ingot");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    installTempFileCleanup();
    int fd = -1;
    std::string temp;
    if (!createTempFile(out, &fd, &temp))
      ::_exit(1);
    (void)!::write(ready[1], "x", 1);
    ::pause(); // killed here, mid-"write"
    ::_exit(2);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(entries().size(), 1u); // the temp file exists
  ::kill(child, SIGTERM);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_TRUE(entries().empty());
}

} // namespace
