#include "core/gnuplot.hpp"

#include <cstdio>
#include <cstdlib>

#include "core/log.hpp"

namespace meshslice {

bool gnuplot_installed() {
  static const bool installed = std::system("command -v gnuplot > /dev/null 2>&1") == 0;
  return installed;
}

bool run_gnuplot(const std::string& dir, const std::string& script) {
  const std::string log = script + ".log";
  const std::string command = "cd '" + dir + "' && gnuplot '" + script + "' > '" + log + "' 2>&1";
  if (std::system(command.c_str()) == 0) {
    std::remove((dir + "/" + log).c_str());  // gnuplot's silence
    return true;
  }
  log_info("gnuplot failed on ", dir, "/", script, "; see ", dir, "/", log);
  return false;
}

}  // namespace meshslice
