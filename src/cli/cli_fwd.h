// Declarations only, for headers that name the command-line types without using them. CLI11 (Debian's 2.1.2) is
// header-only and every file that includes it compiles its parser, formatter and validators again: about 6 s of a
// core at -O2 per file, so only the files that add options or parse include it (through cli/option_binder.h).
#pragma once

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace gcm {
class OptionBinder;
}  // namespace gcm
