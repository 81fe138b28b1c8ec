#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include "pty_link.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <termios.h>
#include <unistd.h>

int pty_link_open(const char* link_path, const char* who) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) || unlockpt(master)) {
    fprintf(stderr, "%s: posix_openpt: ", who);
    perror(NULL);
    return -1;
  }
  const char* slave_path = ptsname(master);
  int slave = open(slave_path, O_RDWR | O_NOCTTY);
  struct termios tio;
  if (slave < 0 || tcgetattr(slave, &tio)) {
    fprintf(stderr, "%s: cannot open the pty's slave side %s\n", who, slave_path);
    return -1;
  }
  // Raw, so the line discipline neither echoes nor translates bytes (a USB serial adapter passes them through).
  cfmakeraw(&tio);
  cfsetspeed(&tio, B115200);
  tcsetattr(slave, TCSANOW, &tio);
  fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
  unlink(link_path);
  if (symlink(slave_path, link_path)) {
    fprintf(stderr, "%s: cannot link %s to %s\n", who, link_path, slave_path);
    return -1;
  }
  fprintf(stderr, "# %s: uart0 on %s -> %s\n", who, link_path, slave_path);
  return master;
}

int pty_link_watch_opens(int master, const char* who) {
  int watch = inotify_init1(IN_NONBLOCK);
  if (watch < 0 || inotify_add_watch(watch, ptsname(master), IN_OPEN) < 0) {
    fprintf(stderr, "%s: inotify on the pty: ", who);
    perror(NULL);
    return -1;
  }
  return watch;
}

int pty_link_opened(int watch) {
  char events[1024] __attribute__((aligned(__alignof__(struct inotify_event))));
  int opened = 0;
  while (read(watch, events, sizeof events) > 0) opened = 1;
  return opened;
}
