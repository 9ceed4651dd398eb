// `hlowb gui [--screenshot=FILE] [--select=NAME] [--module=M] [--step=S] [--size=WxH] [PATH]`:
// opens the main window on PATH (a file or a dump directory). With --screenshot it renders
// the window once loading and layout have finished, writes a PNG and exits (the offscreen
// platform is used when there is no display).
#ifndef HLOWB_APP_GUI_GUI_MAIN_H_
#define HLOWB_APP_GUI_GUI_MAIN_H_

#include <string>
#include <vector>

namespace hlowb::gui {

// `argv0` is the program's argv[0]; `args` are the arguments after `gui`. Returns the exit
// code: 0 success, 1 failure (message on stderr), 2 usage error.
int RunGui(const char* argv0, const std::vector<std::string>& args);

// Sets the organization and application names QSettings uses.
void SetApplicationNames();

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_GUI_MAIN_H_
