// A pseudo-terminal a gateway opens like /dev/ttyUSB0, reached through a symlink at a path of the caller's choice.
#pragma once

// Opens a raw pty and points link_path at its slave side; returns the master fd (non-blocking) or -1. The slave
// stays open so writes do not fail with EIO while no reader has it open.
int pty_link_open(const char* link_path, const char* who);
// Watches the pty's slave side for opens (inotify): a board that resets when its port is opened, as an Uno's USB
// serial chip makes it through DTR. The watch's descriptor, or -1 (the reason on stderr).
int pty_link_watch_opens(int master, const char* who);
// Whether the slave side was opened since the last call.
int pty_link_opened(int watch);
