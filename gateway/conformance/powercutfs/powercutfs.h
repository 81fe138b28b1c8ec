/* What the parts of powercutfs share: the backing directory, the one lock, and an open file's handle. */
#ifndef POWERCUTFS_H
#define POWERCUTFS_H
#define FUSE_USE_VERSION 35
#include <fuse.h>
#include <pthread.h>
#include <stdint.h>

struct handle {
    int fd;
    struct inode *inode;
};

extern int root_fd;           /* the backing directory */
extern pthread_mutex_t lock;  /* around every use of the held pages */

static inline const char *rel(const char *path) { return path[1] ? path + 1 : "."; }
static inline struct handle *fh_of(struct fuse_file_info *fi) { return (struct handle *)(uintptr_t)fi->fh; }
/* An open file's fi holds its handle; a directory's holds a DIR * and is never passed to the file operations. */
static inline int has_fd(struct fuse_file_info *fi) { return fi && fi->fh; }

/* metadata_ops.c: operations that go to the backing directory at once and hold nothing. */
int pc_opendir(const char *path, struct fuse_file_info *fi);
int pc_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi, enum fuse_readdir_flags flags);
int pc_releasedir(const char *path, struct fuse_file_info *fi);
int pc_mkdir(const char *path, mode_t mode);
int pc_rmdir(const char *path);
int pc_symlink(const char *to, const char *path);
int pc_chmod(const char *path, mode_t mode, struct fuse_file_info *fi);
int pc_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi);
int pc_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi);
int pc_readlink(const char *path, char *buf, size_t size);
int pc_link(const char *from, const char *to);
int pc_statfs(const char *path, struct statvfs *sv);
#endif
