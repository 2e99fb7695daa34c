// `pliant sweep` end to end (docs/sweep.md): the table, a case that fails, resuming, the output
// folder's checks, and the same table from 1 thread, 2 threads and 2 MPI ranks (skipped when the
// CLI was built without MPI). The sweep is six cases of a 6x6 cloth for 12 frames.
#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli/cli_fixture.h"

namespace pliant::cli_testing {
namespace {

const std::string kSweeps = std::string(PLIANT_TEST_DATA_DIR) + "/sweeps";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  return out;
}

class CliSweep : public CliFixture {
 protected:
  RunResult sweep(const std::string& args) { return run("sweep " + shellQuote(kSweeps + "/small.json") + " " + args); }

  // A shell command line in the test's folder, killed after 120 s.
  RunResult shell(const std::string& commandLine) {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string command = "cd " + shellQuote(dir_.string()) + " && timeout -k 5 120 " + commandLine + " >" +
                                shellQuote(out.string()) + " 2>" + shellQuote(err.string()) + " </dev/null";
    const int status = std::system(command.c_str());
    RunResult result;
    result.exitCode = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = readFile(out);
    result.err = readFile(err);
    return result;
  }

  // `mpirun -n 2 pliant ARGS` in the test's folder (as root Open MPI needs --allow-run-as-root; on a
  // machine of fewer cores, --oversubscribe). Open MPI keeps some memory until exit: no leak check.
  RunResult mpirun(const std::string& args) {
    return shell("env OMPI_MCA_btl_vader_single_copy_mechanism=none ASAN_OPTIONS=detect_leaks=0 " +
                 shellQuote(PLIANT_MPIEXEC) + " -n 2 --allow-run-as-root --oversubscribe " +
                 shellQuote(PLIANT_CLI_PATH) + " " + args);
  }
};

TEST_F(CliSweep, WritesOneRowPerCaseAndRecordsTheFailingCase) {
  const RunResult r = sweep("--out s --jobs 2");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::vector<std::string> rows = lines(readFile(path("s/results.csv")));
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0], "case,compliance,substeps,corner_y,corner.y.min,energy_J,hash,status,error");
  // Grid order: the last parameter varies fastest.
  EXPECT_EQ(rows[1].rfind("0,1e-06,2,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[4].rfind("3,-1,4,", 0), 0u) << rows[4];
  for (int c : {0, 1, 4, 5}) EXPECT_NE(rows[static_cast<std::size_t>(c + 1)].find(",completed,"), std::string::npos);
  // compliance -1: refused by the scene loader, naming the field; the other cases ran.
  for (int c : {2, 3}) {
    const std::string& row = rows[static_cast<std::size_t>(c + 1)];
    EXPECT_NE(row.find(",failed,"), std::string::npos) << row;
    EXPECT_NE(row.find("/objects/0/stretch/compliance"), std::string::npos) << row;
  }
  EXPECT_TRUE(fs::exists(path("s/cases/0002/scene.json")));
  EXPECT_FALSE(fs::exists(path("s/cases/0002/summary.json")));
  EXPECT_TRUE(fs::exists(path("s/cases/0000/summary.json")));
  EXPECT_FALSE(fs::exists(path("s/cases/0000/frames")));
  // The stiffer cloth sags less: case 1 (1e-6) ends higher than case 5 (0.1), both at 4 substeps.
  const auto cornerY = [&](std::size_t row) {
    const std::string& text = rows[row];
    std::size_t at = 0;
    for (int k = 0; k < 3; ++k) at = text.find(',', at) + 1;
    return std::stod(text.substr(at));
  };
  EXPECT_GT(cornerY(2), cornerY(6));
  EXPECT_NE(r.out.find("4 completed, 0 refused, 2 failed"), std::string::npos) << r.out;
  // pliant view on a sweep folder: one SVG chart per numeric metric, the table with the failures.
  const RunResult view = run("view s");
  ASSERT_EQ(view.exitCode, 0) << view.err;
  const std::string page = readFile(path("s/sweep.html"));
  std::size_t charts = 0;
  for (std::size_t at = 0; (at = page.find("<svg", at)) != std::string::npos; ++at) ++charts;
  EXPECT_EQ(charts, 3u);  // corner_y, corner.y.min, energy_J (not the hash)
  EXPECT_NE(page.find(">substeps = 2</text>"), std::string::npos);
  EXPECT_NE(page.find("expected a number of at least 0, got -1"), std::string::npos);
}

TEST_F(CliSweep, ARefusedStepIsRecordedWithItsReasonAndTheLastGoodFrame) {
  const RunResult r = run("sweep " + shellQuote(kSweeps + "/refused.json") + " --out s -q");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::vector<std::string> rows = lines(readFile(path("s/results.csv")));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].rfind("0,1.0,,12,", 0), 0u) << rows[1];  // values as JSON writes them
  EXPECT_NE(rows[1].find(",completed,"), std::string::npos) << rows[1];
  // Refused at frame 1: the metrics are those of frame 0 (the corner where it started, y = 1 m).
  EXPECT_EQ(rows[2].rfind("1,1e-09,excessive-displacement,0,1,refused,", 0), 0u) << rows[2];
  EXPECT_NE(rows[2].find("displacement above the bound of 1e-09 m"), std::string::npos) << rows[2];
}

TEST_F(CliSweep, ASecondSweepIntoARunningSweepsFolderIsRefused) {
  ASSERT_EQ(sweep("--out s -q").exitCode, 0);
  // flock(1) holds the folder's lock as a running sweep does, while a second sweep starts.
  const RunResult r = shell("flock s/sweep.lock " + shellQuote(PLIANT_CLI_PATH) + " sweep " +
                            shellQuote(kSweeps + "/small.json") + " --out s");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("another pliant sweep is running into this folder"), std::string::npos) << r.err;
}

TEST_F(CliSweep, ResumeSkipsFinishedCasesAndRerunsChangedOnes) {
  ASSERT_EQ(sweep("--out s --jobs 1").exitCode, 0);
  const std::string table = readFile(path("s/results.csv"));
  const auto summaryTime = fs::last_write_time(path("s/cases/0001/summary.json"));
  RunResult again = sweep("--out s --jobs 1");
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_NE(again.out.find("0 to run, 6 already done"), std::string::npos) << again.out;
  EXPECT_EQ(fs::last_write_time(path("s/cases/0001/summary.json")), summaryTime);
  EXPECT_EQ(readFile(path("s/results.csv")), table);
  // A case whose scene no longer matches its record (as if edited) runs again; so does one with no record.
  writeFile(path("s/cases/0001/case.json"),
            R"({"scene_hash": "0000000000000000", "status": "completed", "error": ""})");
  fs::remove(path("s/cases/0004/case.json"));
  again = sweep("--out s --jobs 1");
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_NE(again.out.find("2 to run, 4 already done"), std::string::npos) << again.out;
  EXPECT_EQ(readFile(path("s/results.csv")), table);
}

TEST_F(CliSweep, BadSweepFilesAreRefusedBeforeAnythingRuns) {
  const RunResult r = run("sweep " + shellQuote(kSweeps + "/bad/missing_pointer.json") + " --out s");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("missing_pointer.json: /parameters/0/pointer: the base scene"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/objects/0/stretch/damping"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("s")));
  const RunResult probe = run("sweep " + shellQuote(kSweeps + "/bad/probe_column.json") + " --out s");
  EXPECT_EQ(probe.exitCode, 2);
  EXPECT_NE(probe.err.find("/metrics/0/probe: the base scene has no probe column \"corner.w\""), std::string::npos)
      << probe.err;
  EXPECT_EQ(run("sweep no-such-sweep --out s").exitCode, 2);
}

TEST_F(CliSweep, AFolderOfAnotherSweepNeedsForce) {
  ASSERT_EQ(run("sweep " + shellQuote(kSweeps + "/random_zip.json") + " --out s -q").exitCode, 0);
  RunResult r = sweep("--out s");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("holds the results of another sweep"), std::string::npos) << r.err;
  fs::create_directories(path("other"));
  writeFile(path("other/notes.txt"), "mine");
  r = sweep("--out other");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("is not empty and holds no sweep.json"), std::string::npos) << r.err;
  r = sweep("--out s --force");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(lines(readFile(path("s/results.csv"))).size(), 7u);
}

TEST_F(CliSweep, RandomSamplesAreDrawnFromTheSeedAndTimingsOnlyWhenAsked) {
  ASSERT_EQ(run("sweep " + shellQuote(kSweeps + "/random_zip.json") + " --out a -q").exitCode, 0);
  ASSERT_EQ(run("sweep " + shellQuote(kSweeps + "/random_zip.json") + " --out b -q --jobs 2").exitCode, 0);
  const std::vector<std::string> a = lines(readFile(path("a/results.csv"))), b = lines(readFile(path("b/results.csv")));
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0], "case,/objects/0/stretch/compliance,/solver/substeps,ms,status,error");
  // The same draws (parameters) in both; the timing column is the only one allowed to differ.
  for (std::size_t i = 1; i < a.size(); ++i) {
    EXPECT_EQ(a[i].substr(0, a[i].find(",", a[i].find(",", a[i].find(",") + 1) + 1)),
              b[i].substr(0, b[i].find(",", b[i].find(",", b[i].find(",") + 1) + 1)));
    EXPECT_NE(a[i].find(",completed,"), std::string::npos) << a[i];
  }
}

TEST_F(CliSweep, OneProcessTwoThreadsAndTwoRanksWriteTheSameTable) {
#if !PLIANT_WITH_MPI
  GTEST_SKIP() << "the CLI was built without MPI (PLIANT_WITH_MPI)";
#else
  ASSERT_EQ(sweep("--out one --jobs 1 -q").exitCode, 0);
  ASSERT_EQ(sweep("--out two --jobs 2 -q").exitCode, 0);
  const RunResult ranks = mpirun("sweep " + shellQuote(kSweeps + "/small.json") + " --out ranks -q");
  ASSERT_EQ(ranks.exitCode, 0) << ranks.err << ranks.out;
  const std::string table = readFile(path("one/results.csv"));
  EXPECT_EQ(lines(table).size(), 7u);
  EXPECT_EQ(readFile(path("two/results.csv")), table);
  EXPECT_EQ(readFile(path("ranks/results.csv")), table);
  // Resumed under MPI: nothing runs again, the table is unchanged.
  fs::remove(path("ranks/cases/0005/case.json"));
  const RunResult resumed = mpirun("sweep " + shellQuote(kSweeps + "/small.json") + " --out ranks");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("1 to run, 5 already done"), std::string::npos) << resumed.out;
  EXPECT_EQ(readFile(path("ranks/results.csv")), table);
  // Bad input under MPI: rank 0 says why, the job exits 2.
  const RunResult bad = mpirun("sweep " + shellQuote(kSweeps + "/small.json") + " --out one/cases");
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
#endif
}

}  // namespace
}  // namespace pliant::cli_testing
