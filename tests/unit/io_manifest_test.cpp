// Unit tests of src/io/manifest.cpp: which paths a manifest may list, what OutputLog records, the
// manifest read back, and removal that takes only listed regular files inside the folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pliant/error.h"
#include "pliant/io/manifest.h"

namespace pliant::io {
namespace {

namespace fs = std::filesystem;

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("pliant_manifest_test." + std::to_string(::getpid())) / info->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_.parent_path());
  }
  void touch(const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "x\n";
  }
  fs::path dir_;
};

TEST(ManifestPath, OnlyPlainRelativePathsInsideTheFolder) {
  for (const char* good : {"summary.json", "frames/frame_000000.vtu", "a/b/c", "..x", "x.."})
    EXPECT_TRUE(isManifestPath(good)) << good;
  for (const char* bad : {"", "/etc/passwd", "../x", "frames/../../x", "a//b", "./x", "a/.", "a/", "..", "."})
    EXPECT_FALSE(isManifestPath(bad)) << bad;
}

TEST_F(ManifestTest, TheLogRecordsWhatIsWrittenAndTheManifestReadsBack) {
  OutputLog log((dir_ / "out").string());
  EXPECT_EQ(log.file("frames/frame_000001.vtu"), (dir_ / "out" / "frames" / "frame_000001.vtu").string());
  fs::create_directories(dir_ / "out" / "frames");
  log.write("summary.json", "{}\n");
  log.note((dir_ / "out" / "." / "page.html").string());  // inside, however spelt
  log.note((dir_ / "page.html").string());                // outside: not the folder's to clean
  EXPECT_THROW((void)log.file("../x"), std::logic_error);
  log.writeManifest();
  const std::vector<std::string> expected = {"frames/frame_000001.vtu", "page.html", "summary.json"};
  EXPECT_EQ(readManifest((dir_ / "out").string()), expected);
  EXPECT_TRUE(readManifest((dir_ / "missing").string()).empty());
  std::ofstream(dir_ / "out" / kManifestFileName) << "[1, 2]";
  EXPECT_THROW((void)readManifest((dir_ / "out").string()), Error);
  std::ofstream(dir_ / "out" / kManifestFileName) << R"({"format": "pliant-run-manifest", "files": [3]})";
  EXPECT_THROW((void)readManifest((dir_ / "out").string()), Error);
}

TEST_F(ManifestTest, RemovesOnlyListedRegularFilesInsideTheFolder) {
  const fs::path out = dir_ / "out";
  touch(out / "frames" / "frame_000000.vtu");
  touch(out / "sub" / "deep" / "a.txt");
  touch(out / "kept.ckpt");
  touch(out / "unlisted.txt");
  touch(dir_ / "outside" / "victim.txt");
  touch(dir_ / "outside" / "target.txt");
  fs::create_directory_symlink(dir_ / "outside", out / "link");
  fs::create_symlink(dir_ / "outside" / "target.txt", out / "symlinked.txt");
  fs::create_directories(out / "folder.vtu");
  const std::vector<std::string> listed = {"frames/frame_000000.vtu",
                                           "sub/deep/a.txt",
                                           "kept.ckpt",
                                           "link/victim.txt",
                                           "../outside/victim.txt",
                                           (dir_ / "outside" / "victim.txt").string(),
                                           "symlinked.txt",
                                           "folder.vtu",
                                           "missing.vtu"};
  EXPECT_EQ(removeListedFiles(out.string(), listed, {"kept.ckpt"}), 2u);
  EXPECT_FALSE(fs::exists(out / "frames"));  // emptied folders go too
  EXPECT_FALSE(fs::exists(out / "sub"));
  EXPECT_TRUE(fs::exists(out / "kept.ckpt"));
  EXPECT_TRUE(fs::exists(out / "unlisted.txt"));
  EXPECT_TRUE(fs::exists(dir_ / "outside" / "victim.txt"));
  EXPECT_TRUE(fs::exists(dir_ / "outside" / "target.txt"));
  EXPECT_TRUE(fs::is_symlink(out / "symlinked.txt"));
  EXPECT_TRUE(fs::is_symlink(out / "link"));
  EXPECT_TRUE(fs::is_directory(out / "folder.vtu"));
  EXPECT_TRUE(fs::exists(out));
}

}  // namespace
}  // namespace pliant::io
