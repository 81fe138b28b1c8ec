// A pseudo-terminal a gateway opens like /dev/ttyUSB0, reached through a symlink at a path of the caller's choice.
#pragma once

// Opens a raw pty and points link_path at its slave side; returns the master fd (non-blocking) or -1. The slave
// stays open so writes do not fail with EIO while no reader has it open.
int pty_link_open(const char* link_path, const char* who);
