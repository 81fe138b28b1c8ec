/* powercutfs: a pass-through FUSE file system that holds every file's written data in memory until that file is
 * fsynced, so that killing this process forgets exactly what a power cut forgets. Metadata (create, rename, unlink,
 * truncate, mkdir, chmod...) goes to the backing directory at once. See README.md for the model and its reasons. */
#define FUSE_USE_VERSION 35
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "held_pages.h"
#include "powercutfs.h"

int root_fd = -1;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int pc_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    int r = has_fd(fi) ? fstat(fh_of(fi)->fd, st) : fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);
    if (r < 0) return -errno;
    pthread_mutex_lock(&lock);
    struct inode *i = find_inode(st->st_dev, st->st_ino);
    if (i) st->st_size = i->size;
    pthread_mutex_unlock(&lock);
    return 0;
}

/* A name that goes away: the last name of an inode nobody has open takes its unsynced pages with it. */
static struct inode *last_name(const char *path) {
    struct stat st;
    if (fstatat(root_fd, rel(path), &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
        return NULL;
    return find_inode(st.st_dev, st.st_ino);
}

static int pc_unlink(const char *path) {
    pthread_mutex_lock(&lock);
    struct inode *i = last_name(path);
    int r = unlinkat(root_fd, rel(path), 0) < 0 ? -errno : 0;
    if (!r && i) release_if_idle(i, 1);
    pthread_mutex_unlock(&lock);
    return r;
}

static int pc_rename(const char *from, const char *to, unsigned int flags) {
    pthread_mutex_lock(&lock);
    struct inode *replaced = (flags & RENAME_EXCHANGE) ? NULL : last_name(to);
    int r = renameat2(root_fd, rel(from), root_fd, rel(to), flags) < 0 ? -errno : 0;
    if (!r && replaced) release_if_idle(replaced, 1);
    pthread_mutex_unlock(&lock);
    return r;
}

static int open_handle(int fd, struct fuse_file_info *fi) {
    struct handle *h = malloc(sizeof *h);
    if (!h) { close(fd); return -ENOMEM; }
    pthread_mutex_lock(&lock);
    h->fd = fd;
    h->inode = inode_for_fd(fd);
    if (h->inode) h->inode->opens++;
    pthread_mutex_unlock(&lock);
    if (!h->inode) { close(fd); free(h); return -ENOMEM; }
    fi->fh = (uintptr_t)h;
    return 0;
}

/* O_APPEND is left to the kernel (it sends the offset); O_TRUNC arrives as a separate truncate (no atomic_o_trunc).
 * Write-only opens read too: a partial page is completed from the backing file. */
static int open_flags(int flags) {
    flags &= ~(O_APPEND | O_TRUNC | O_CREAT | O_EXCL);
    return (flags & O_ACCMODE) == O_WRONLY ? (flags & ~O_ACCMODE) | O_RDWR : flags;
}

static int pc_open(const char *path, struct fuse_file_info *fi) {
    int fd = openat(root_fd, rel(path), open_flags(fi->flags));
    return fd < 0 ? -errno : open_handle(fd, fi);
}

static int pc_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
    int fd = openat(root_fd, rel(path), open_flags(fi->flags) | O_CREAT | (fi->flags & O_EXCL), mode);
    if (fd < 0) return -errno;
    if (fi->flags & O_TRUNC) {
        int r = open_handle(fd, fi);
        if (r) return r;
        pthread_mutex_lock(&lock);
        struct inode *i = fh_of(fi)->inode;
        drop_pages(i);
        i->size = 0;
        r = ftruncate(fd, 0) < 0 ? -errno : 0;
        pthread_mutex_unlock(&lock);
        return r;
    }
    return open_handle(fd, fi);
}

static int pc_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)path;
    struct handle *h = fh_of(fi);
    pthread_mutex_lock(&lock);
    struct inode *i = h->inode;
    int r = 0;
    if (off >= i->size) goto out;
    if ((off_t)size > i->size - off) size = i->size - off;
    for (size_t done = 0; done < size;) {
        off_t pos = off + done;
        off_t index = pos / PAGE;
        size_t in = pos % PAGE, n = PAGE - in < size - done ? PAGE - in : size - done;
        struct page *p = i->npages ? get_page(i, index) : NULL;
        if (p) memcpy(buf + done, p->data + in, n);
        else if (!i->npages) n = size - done; /* nothing held: one read of the whole rest */
        if (!p && (r = read_backing(h->fd, (unsigned char *)buf + done, n, pos)) < 0) goto out;
        done += n;
    }
    r = size;
out:
    pthread_mutex_unlock(&lock);
    return r;
}

static int pc_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)path;
    struct handle *h = fh_of(fi);
    /* A real file system allocates the blocks at write(): a full disk fails here, not at the later fsync. */
    if (fallocate(h->fd, FALLOC_FL_KEEP_SIZE, off, size) < 0 && errno != EOPNOTSUPP) return -errno;
    pthread_mutex_lock(&lock);
    struct inode *i = h->inode;
    int r = 0;
    if (i->wfd < 0 && (i->wfd = dup(h->fd)) < 0) { r = -errno; goto out; }
    for (size_t done = 0; done < size;) {
        off_t pos = off + done;
        off_t index = pos / PAGE;
        size_t in = pos % PAGE, n = PAGE - in < size - done ? PAGE - in : size - done;
        struct page *p = get_page(i, index);
        if (!p && (r = add_page(i, h->fd, index, &p)) < 0) goto out;
        memcpy(p->data + in, buf + done, n);
        done += n;
    }
    if (off + (off_t)size > i->size) i->size = off + size;
    r = size;
out:
    pthread_mutex_unlock(&lock);
    return r;
}

/* Truncation is metadata: the backing file takes the new size at once (see README.md). */
static int pc_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    int fd = has_fd(fi) ? fh_of(fi)->fd : openat(root_fd, rel(path), O_WRONLY);
    if (fd < 0) return -errno;
    pthread_mutex_lock(&lock);
    int r = ftruncate(fd, size) < 0 ? -errno : 0;
    struct stat st;
    if (!r && fstat(fd, &st) == 0) {
        struct inode *i = find_inode(st.st_dev, st.st_ino);
        if (i) truncate_inode(i, size);
    }
    pthread_mutex_unlock(&lock);
    if (!has_fd(fi)) close(fd);
    return r;
}

static int pc_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi) {
    (void)path;
    if (mode & ~FALLOC_FL_KEEP_SIZE) return -EOPNOTSUPP;
    struct handle *h = fh_of(fi);
    if (fallocate(h->fd, FALLOC_FL_KEEP_SIZE, off, len) < 0) return -errno;
    if (mode & FALLOC_FL_KEEP_SIZE) return 0;
    /* The size grows as a write's would: held until fsync. */
    pthread_mutex_lock(&lock);
    if (off + len > h->inode->size) h->inode->size = off + len;
    pthread_mutex_unlock(&lock);
    return 0;
}

static int pc_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)path;
    struct handle *h = fh_of(fi);
    pthread_mutex_lock(&lock);
    struct inode *i = h->inode;
    int r = write_back(i, i->wfd >= 0 ? i->wfd : h->fd, datasync);
    if (!r && i->size > 0) {
        /* A size grown by fallocate with no page written after it. */
        struct stat st;
        if (fstat(h->fd, &st) == 0 && st.st_size < i->size && ftruncate(h->fd, i->size) < 0) r = -errno;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

static int pc_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)path; (void)datasync;
    return fsync(dirfd((DIR *)(uintptr_t)fi->fh)) < 0 ? -errno : 0;
}

static int pc_release(const char *path, struct fuse_file_info *fi) {
    (void)path;
    struct handle *h = fh_of(fi);
    pthread_mutex_lock(&lock);
    struct stat st;
    int gone = fstat(h->fd, &st) == 0 && st.st_nlink == 0;
    h->inode->opens--;
    release_if_idle(h->inode, gone);
    pthread_mutex_unlock(&lock);
    close(h->fd);
    free(h);
    return 0;
}

static void *pc_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    /* Every write reaches this process at write() (so a full disk fails there); O_TRUNC comes as a truncate. */
    conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_ATOMIC_O_TRUNC);
    cfg->use_ino = 1;
    cfg->hard_remove = 1;
    cfg->nullpath_ok = 1;
    cfg->direct_io = 0; /* through the page cache: SQLite mmaps its -shm file */
    return NULL;
}

/* A clean unmount (SIGTERM) writes everything back, as an orderly shutdown would. */
static void pc_destroy(void *data) {
    (void)data;
    pthread_mutex_lock(&lock);
    write_back_all();
    pthread_mutex_unlock(&lock);
}

static const struct fuse_operations ops = {
    .getattr = pc_getattr, .opendir = pc_opendir, .readdir = pc_readdir, .releasedir = pc_releasedir,
    .mkdir = pc_mkdir, .rmdir = pc_rmdir, .symlink = pc_symlink,
    .readlink = pc_readlink, .link = pc_link, .unlink = pc_unlink, .rename = pc_rename, .chmod = pc_chmod,
    .chown = pc_chown, .utimens = pc_utimens, .statfs = pc_statfs, .open = pc_open, .create = pc_create,
    .read = pc_read, .write = pc_write, .truncate = pc_truncate, .fallocate = pc_fallocate, .fsync = pc_fsync,
    .fsyncdir = pc_fsyncdir, .release = pc_release, .init = pc_init, .destroy = pc_destroy,
};

static void usage(FILE *out) {
    fprintf(out, "usage: powercutfs [--help] BACKING_DIR MOUNTPOINT\n"
                 "Mounts BACKING_DIR at MOUNTPOINT (in the foreground). Written data is held in memory until its\n"
                 "file is fsynced; SIGKILL forgets it (a power cut), SIGTERM writes it back and unmounts.\n"
                 "After a SIGKILL: fusermount3 -uz MOUNTPOINT, then mount again.\n");
}

int main(int argc, char **argv) {
    const char *pos[2];
    int npos = 0;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) { usage(stdout); return 0; }
        if (argv[k][0] == '-') { fprintf(stderr, "powercutfs: unknown option %s\n", argv[k]); usage(stderr); return 2; }
        if (npos == 2) { fprintf(stderr, "powercutfs: unexpected argument %s\n", argv[k]); usage(stderr); return 2; }
        pos[npos++] = argv[k];
    }
    if (npos != 2) { usage(stderr); return 2; }
    if ((root_fd = open(pos[0], O_RDONLY | O_DIRECTORY)) < 0) { perror(pos[0]); return 1; }
    char *fargs[] = {argv[0], (char *)pos[1], "-f", "-o",
                     geteuid() == 0 ? "fsname=powercutfs,subtype=powercut,allow_other"
                                    : "fsname=powercutfs,subtype=powercut", NULL};
    return fuse_main(5, fargs, &ops, NULL);
}
