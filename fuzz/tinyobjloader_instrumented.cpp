// tinyobjloader's implementation (Debian's header), compiled into the fuzz build in place of
// Debian's prebuilt library, so that libFuzzer sees coverage inside it and ASan checks it.
// TINYOBJLOADER_USE_DOUBLE comes from the build, as for src/io/mesh_io.cpp.
#define TINYOBJLOADER_IMPLEMENTATION
#include <tiny_obj_loader.h>
