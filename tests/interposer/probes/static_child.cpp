// A statically linked program: nothing can be preloaded into it.
#include <cstdio>

int main() {
  std::puts("static child ran");
  return 0;
}
