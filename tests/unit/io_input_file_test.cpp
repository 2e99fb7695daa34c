// Unit tests of src/io/input_file.cpp (issue 12 item 6): an input path that is not a regular file
// (a character device, a FIFO, a folder) is refused before anything is read, and so is a file
// past its kind's size limit, through every reader that takes a path (scene, OBJ, TetGen, Gmsh).
// A hang would be the bug: each test arms an alarm that kills the test binary instead, and ctest
// has a TIMEOUT on every test as well.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/mesh_io.h"
#include "pliant/io/scenes.h"

namespace pliant {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string errorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected pliant::Error";
  return "";
}

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::alarm(60);
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("pliant_input_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    ::alarm(0);
  }
  std::string fifo(const std::string& name) {
    const std::string path = (dir_ / name).string();
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path;
  }
  // A sparse file of `bytes` bytes (nothing written).
  std::string sized(const std::string& name, std::uint64_t bytes) {
    const fs::path path = dir_ / name;
    std::ofstream(path).put('{');
    fs::resize_file(path, bytes);
    return path.string();
  }
  fs::path dir_;
};

TEST_F(InputFileTest, EveryReaderRefusesACharacterDeviceAFifoAndAFolder) {
  // Each reader is given paths with its own extension: a symlink to /dev/zero (what is checked is
  // the file opened, not the name), a FIFO with no writer and a folder.
  struct Reader {
    const char* extension;
    std::function<void(const std::string&)> read;
  };
  const std::vector<Reader> readers = {
      {".json", [](const std::string& p) { (void)loadSceneFile(p); }},
      {".obj", [](const std::string& p) { (void)io::readObj(p); }},
      {".node", [](const std::string& p) { (void)io::readTetGen(p); }},
      {".msh", [](const std::string& p) { (void)io::readGmsh(p); }},
  };
  for (const Reader& reader : readers) {
    SCOPED_TRACE(reader.extension);
    const std::string zero = (dir_ / (std::string("zero") + reader.extension)).string();
    fs::create_symlink("/dev/zero", zero);
    std::string message = errorOf([&] { reader.read(zero); });
    EXPECT_TRUE(contains(message, zero + ": is a character device, not a regular file; expected ")) << message;
    const std::string pipe = fifo(std::string("pipe") + reader.extension);
    message = errorOf([&] { reader.read(pipe); });
    EXPECT_TRUE(contains(message, pipe + ": is a FIFO (named pipe), not a regular file")) << message;
    const std::string folder = (dir_ / (std::string("folder") + reader.extension)).string();
    fs::create_directories(folder);
    message = errorOf([&] { reader.read(folder); });
    EXPECT_TRUE(contains(message, folder + ": is a folder, not a regular file")) << message;
  }
  const std::string message = errorOf([] { (void)loadSceneFile("/dev/zero"); });
  EXPECT_TRUE(contains(message, "/dev/zero: is a character device")) << message;
}

TEST_F(InputFileTest, TetGenNodeFileNextToAFifoElementFileIsRefused) {
  // readTetGen opens the .ele next to the .node: that second file is checked too.
  std::ofstream(dir_ / "m.node") << "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n";
  const std::string pipe = fifo("m.ele");
  const std::string message = errorOf([&] { (void)io::readTetGen((dir_ / "m.node").string()); });
  EXPECT_TRUE(contains(message, pipe + ": is a FIFO")) << message;
}

TEST_F(InputFileTest, FilesPastTheSizeLimitAreRefusedNamingSizeAndLimit) {
  const std::string scene = sized("big.json", io::kMaxSceneFileBytes + 1);
  std::string message = errorOf([&] { (void)loadSceneFile(scene); });
  EXPECT_TRUE(contains(message, scene + ": 67108865 bytes, more than the 67108864 bytes allowed for a scene file"))
      << message;
  const std::string mesh = sized("big.obj", io::kMaxMeshFileBytes + 1);
  message = errorOf([&] { (void)io::readObj(mesh); });
  EXPECT_TRUE(contains(message, mesh + ": 1073741825 bytes, more than the 1073741824 bytes allowed for an OBJ file"))
      << message;
  // At the limit the size check passes (and the parser sees the text).
  const std::string edge = sized("edge.json", 64);
  message = errorOf([&] { (void)loadSceneFile(edge); });
  EXPECT_FALSE(contains(message, "allowed")) << message;
}

TEST_F(InputFileTest, ReadsARegularFileWholeAndNamesAMissingOne) {
  std::ofstream(dir_ / "a.txt") << "hello\n";
  EXPECT_EQ(io::readInputFile((dir_ / "a.txt").string(), "a text file", 100), "hello\n");
  io::InputFile file((dir_ / "a.txt").string(), "a text file", 100);
  EXPECT_EQ(file.size(), 6u);
  char first[2];
  file.read(first, 2);
  EXPECT_EQ(std::string(first, 2), "he");
  EXPECT_EQ(file.readRest(), "llo\n");
  const std::string missing = (dir_ / "missing.txt").string();
  const std::string message = errorOf([&] { (void)io::readInputFile(missing, "a text file", 100); });
  EXPECT_TRUE(contains(message, missing + ": cannot open: No such file or directory (expected a text file)"))
      << message;
}

}  // namespace
}  // namespace pliant
