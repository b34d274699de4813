// Uses the whole public API header and the logging functions with the installed package only.
#include <hit/hit.hpp>

#include <string>

int main(int argc, char** argv) {
  hit::Environment env(argc, argv);
  hit::log::info("consumer: " + std::to_string(env.size()) + " process");
  hit::log::rank(hit::log::Level::warn,
                 "kind " + std::string(hit::to_string(hit::device_kind("emu"))));
  return 0;
}
