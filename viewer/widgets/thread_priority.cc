#include "viewer/widgets/thread_priority.h"

#include <QThread>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace hlowb::viewer {

void LowerThisThreadPriority() {
  thread_local bool lowered = false;
  if (lowered) return;
  lowered = true;
#ifdef __linux__
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#else
  if (QThread* t = QThread::currentThread()) t->setPriority(QThread::LowPriority);
#endif
}

}  // namespace hlowb::viewer
