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
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#define PAGE 4096

struct page {
    off_t index;
    unsigned char data[PAGE];
};

/* The unsynced state of one backing inode (it follows renames; dropped once clean, or unlinked and closed). */
struct inode {
    dev_t dev;
    ino_t ino;
    void *pages;     /* tsearch tree of struct page, keyed by index */
    size_t npages;
    off_t size;      /* the size the writers see: the backing size grown by unsynced writes */
    int opens;       /* open handles */
    int wfd;         /* a writable descriptor kept to write the pages back at fsync or a clean unmount */
    struct inode *next;
};

struct handle {
    int fd;
    struct inode *inode;
};

static int root_fd = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct inode *inodes;

static const char *rel(const char *path) { return path[1] ? path + 1 : "."; }
static struct handle *fh_of(struct fuse_file_info *fi) { return (struct handle *)(uintptr_t)fi->fh; }
/* An open file's fi holds its handle; a directory's holds a DIR * and is never passed to the file operations. */
static int has_fd(struct fuse_file_info *fi) { return fi && fi->fh; }

static int cmp_page(const void *a, const void *b) {
    off_t x = ((const struct page *)a)->index, y = ((const struct page *)b)->index;
    return x < y ? -1 : x > y;
}

static struct inode *find_inode(dev_t dev, ino_t ino) {
    for (struct inode *i = inodes; i; i = i->next)
        if (i->dev == dev && i->ino == ino) return i;
    return NULL;
}

static struct inode *inode_for_fd(int fd) {
    struct stat st;
    if (fstat(fd, &st) < 0) return NULL;
    struct inode *i = find_inode(st.st_dev, st.st_ino);
    if (i) return i;
    i = calloc(1, sizeof *i);
    if (!i) return NULL;
    i->dev = st.st_dev;
    i->ino = st.st_ino;
    i->size = st.st_size;
    i->wfd = -1;
    i->next = inodes;
    inodes = i;
    return i;
}

static void drop_pages(struct inode *i) {
    tdestroy(i->pages, free);
    i->pages = NULL;
    i->npages = 0;
}

/* Forgets an inode's state once nothing refers to it: no open handle and no unsynced page (or no name left). */
static void release_if_idle(struct inode *i, int gone) {
    if (i->opens > 0 || (i->npages > 0 && !gone)) return;
    drop_pages(i);
    if (i->wfd >= 0) close(i->wfd);
    for (struct inode **p = &inodes; *p; p = &(*p)->next)
        if (*p == i) { *p = i->next; break; }
    free(i);
}

static struct page *get_page(struct inode *i, off_t index) {
    struct page key = {.index = index};
    void *found = tfind(&key, &i->pages, cmp_page);
    return found ? *(struct page **)found : NULL;
}

/* In index order, for write-back and truncation. */
struct collect { struct page **v; size_t n; };
static void collect_page(const void *node, VISIT which, void *arg) {
    if (which != postorder && which != leaf) return;
    struct collect *c = arg;
    c->v[c->n++] = *(struct page **)node;
}
static struct page **sorted_pages(struct inode *i, size_t *n) {
    struct collect c = {malloc((i->npages ? i->npages : 1) * sizeof(struct page *)), 0};
    if (!c.v) return NULL;
    twalk_r(i->pages, collect_page, &c);
    *n = c.n;
    return c.v;
}

/* Reads the backing file's bytes, zeros past its end. */
static int read_backing(int fd, unsigned char *buf, size_t len, off_t off) {
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, buf + done, len - done, off + done);
        if (r < 0) return -errno;
        if (r == 0) break;
        done += r;
    }
    memset(buf + done, 0, len - done);
    return 0;
}

static int write_back(struct inode *i, int fd, int datasync) {
    if (i->npages) {
        size_t n;
        struct page **v = sorted_pages(i, &n);
        if (!v) return -ENOMEM;
        for (size_t k = 0; k < n; k++) {
            off_t start = v[k]->index * PAGE;
            size_t len = i->size - start < PAGE ? (size_t)(i->size - start) : PAGE;
            if (pwrite(fd, v[k]->data, len, start) != (ssize_t)len) { free(v); return errno ? -errno : -EIO; }
        }
        free(v);
        drop_pages(i);
    }
    return (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
}

static int pc_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    int r = has_fd(fi) ? fstat(fh_of(fi)->fd, st) : fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);
    if (r < 0) return -errno;
    pthread_mutex_lock(&lock);
    struct inode *i = find_inode(st->st_dev, st->st_ino);
    if (i) st->st_size = i->size;
    pthread_mutex_unlock(&lock);
    return 0;
}

static int pc_opendir(const char *path, struct fuse_file_info *fi) {
    int fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -errno;
    DIR *d = fdopendir(fd);
    if (!d) { close(fd); return -errno; }
    fi->fh = (uintptr_t)d;
    return 0;
}

static int pc_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
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

static int pc_releasedir(const char *path, struct fuse_file_info *fi) {
    (void)path;
    closedir((DIR *)(uintptr_t)fi->fh);
    return 0;
}

static int pc_mkdir(const char *path, mode_t mode) { return mkdirat(root_fd, rel(path), mode) < 0 ? -errno : 0; }
static int pc_rmdir(const char *path) { return unlinkat(root_fd, rel(path), AT_REMOVEDIR) < 0 ? -errno : 0; }
static int pc_symlink(const char *to, const char *path) { return symlinkat(to, root_fd, rel(path)) < 0 ? -errno : 0; }
static int pc_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
    return (has_fd(fi) ? fchmod(fh_of(fi)->fd, mode) : fchmodat(root_fd, rel(path), mode, 0)) < 0 ? -errno : 0;
}
static int pc_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
    int r = has_fd(fi) ? fchown(fh_of(fi)->fd, uid, gid) : fchownat(root_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
    return r < 0 ? -errno : 0;
}
static int pc_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
    int r = has_fd(fi) ? futimens(fh_of(fi)->fd, tv) : utimensat(root_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW);
    return r < 0 ? -errno : 0;
}
static int pc_readlink(const char *path, char *buf, size_t size) {
    ssize_t n = readlinkat(root_fd, rel(path), buf, size - 1);
    if (n < 0) return -errno;
    buf[n] = 0;
    return 0;
}
static int pc_link(const char *from, const char *to) {
    return linkat(root_fd, rel(from), root_fd, rel(to), 0) < 0 ? -errno : 0;
}
static int pc_statfs(const char *path, struct statvfs *sv) {
    (void)path;
    return fstatvfs(root_fd, sv) < 0 ? -errno : 0;
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
        if (!p) {
            if (!(p = malloc(sizeof *p))) { r = -ENOMEM; goto out; }
            p->index = index;
            /* The page as the writer would see it: the backing bytes up to the current size, zeros after. */
            off_t start = index * PAGE;
            size_t have = i->size > start ? (i->size - start < PAGE ? (size_t)(i->size - start) : PAGE) : 0;
            if ((r = read_backing(h->fd, p->data, have, start)) < 0) { free(p); goto out; }
            memset(p->data + have, 0, PAGE - have);
            if (!tsearch(p, &i->pages, cmp_page)) { free(p); r = -ENOMEM; goto out; }
            i->npages++;
        }
        memcpy(p->data + in, buf + done, n);
        done += n;
    }
    if (off + (off_t)size > i->size) i->size = off + size;
    r = size;
out:
    pthread_mutex_unlock(&lock);
    return r;
}

static void truncate_inode(struct inode *i, off_t size) {
    if (i->npages) {
        size_t n;
        struct page **v = sorted_pages(i, &n);
        for (size_t k = 0; v && k < n; k++) {
            off_t start = v[k]->index * PAGE;
            if (start >= size) {
                tdelete(v[k], &i->pages, cmp_page);
                free(v[k]);
                i->npages--;
            } else if (start + PAGE > size) {
                memset(v[k]->data + (size - start), 0, PAGE - (size - start));
            }
        }
        free(v);
    }
    i->size = size;
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
    for (struct inode *i = inodes; i; i = i->next)
        if (i->npages && i->wfd >= 0) write_back(i, i->wfd, 0);
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
