// The V8 half of rezolus_malloc: asks the isolate to make its heap small
// once, as V8's memory reducer does on its own when a process goes quiet.
// C++ because V8's memory-pressure call has no Node-API form.
#include <v8.h>

extern "C" int rezolus_reduce_heap(void) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  if (isolate == nullptr) return 0;
  // moderate: an incremental mark that ends in a full GC which shrinks the
  // young generation to its least and gives the old space's free pages back
  isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kModerate);
  // the level is a standing state that makes V8 keep its heap small (more
  // GCs); the GC just started keeps its flags, so the state goes at once
  isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kNone);
  return 1;
}
