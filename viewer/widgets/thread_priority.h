// Background work in the app yields to the UI thread.
#ifndef HLOWB_VIEWER_WIDGETS_THREAD_PRIORITY_H_
#define HLOWB_VIEWER_WIDGETS_THREAD_PRIORITY_H_

namespace hlowb::viewer {

// Lowers the calling worker thread's priority once (later calls on the same thread do nothing),
// so that on a busy machine the UI thread wins every time both want the CPU. Linux lets a
// thread have its own nice value (10); elsewhere this is best effort.
void LowerThisThreadPriority();

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_WIDGETS_THREAD_PRIORITY_H_
