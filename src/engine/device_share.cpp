#include "engine/device_share.h"

namespace ts::engine {
namespace {
thread_local int g_device_contexts = 1;
}  // namespace

void set_device_contexts_for_this_thread(int n) { g_device_contexts = n > 0 ? n : 1; }
int device_contexts_for_this_thread() { return g_device_contexts; }

}  // namespace ts::engine
