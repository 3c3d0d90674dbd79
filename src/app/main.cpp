#include <cstdio>

int main() {
  std::puts("ticksentry");
  return 0;
}
