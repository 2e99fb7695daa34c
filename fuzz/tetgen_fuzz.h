// The TetGen target's input: the .node file, then kTetGenSeparator, then the .ele file. Without
// the separator the whole input is the .node file and there is no .ele file (the reader must say so).
#pragma once

#include <string_view>

namespace pliant::fuzz {
inline constexpr std::string_view kTetGenSeparator = "\n%%ele%%\n";
}  // namespace pliant::fuzz
