/* The operations of powercutfs that hold nothing: directories, links, modes, owners, times and the file system's
 * figures go to the backing directory at once (see README.md: metadata is not held). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "powercutfs.h"

int pc_opendir(const char *path, struct fuse_file_info *fi) {
    int fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -errno;
    DIR *d = fdopendir(fd);
    if (!d) { close(fd); return -errno; }
    fi->fh = (uintptr_t)d;
    return 0;
}

int pc_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags) {
    (void)path; (void)flags;
    DIR *d = (DIR *)(uintptr_t)fi->fh;
    seekdir(d, off);
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st = {.st_ino = e->d_ino, .st_mode = (mode_t)DTTOIF(e->d_type)};
        if (fill(buf, e->d_name, &st, e->d_off, 0)) break;
    }
    return 0;
}

int pc_releasedir(const char *path, struct fuse_file_info *fi) {
    (void)path;
    closedir((DIR *)(uintptr_t)fi->fh);
    return 0;
}

int pc_mkdir(const char *path, mode_t mode) { return mkdirat(root_fd, rel(path), mode) < 0 ? -errno : 0; }
int pc_rmdir(const char *path) { return unlinkat(root_fd, rel(path), AT_REMOVEDIR) < 0 ? -errno : 0; }
int pc_symlink(const char *to, const char *path) { return symlinkat(to, root_fd, rel(path)) < 0 ? -errno : 0; }
int pc_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
    return (has_fd(fi) ? fchmod(fh_of(fi)->fd, mode) : fchmodat(root_fd, rel(path), mode, 0)) < 0 ? -errno : 0;
}
int pc_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
    int r = has_fd(fi) ? fchown(fh_of(fi)->fd, uid, gid) : fchownat(root_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
    return r < 0 ? -errno : 0;
}
int pc_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
    int r = has_fd(fi) ? futimens(fh_of(fi)->fd, tv) : utimensat(root_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW);
    return r < 0 ? -errno : 0;
}
int pc_readlink(const char *path, char *buf, size_t size) {
    ssize_t n = readlinkat(root_fd, rel(path), buf, size - 1);
    if (n < 0) return -errno;
    buf[n] = 0;
    return 0;
}
int pc_link(const char *from, const char *to) {
    return linkat(root_fd, rel(from), root_fd, rel(to), 0) < 0 ? -errno : 0;
}
int pc_statfs(const char *path, struct statvfs *sv) {
    (void)path;
    return fstatvfs(root_fd, sv) < 0 ? -errno : 0;
}
