/* The held pages of powercutfs (held_pages.h): a list of inodes, each with a tsearch tree of 4 KiB pages. */
#define _GNU_SOURCE
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "held_pages.h"

static struct inode *inodes;

static int cmp_page(const void *a, const void *b) {
    off_t x = ((const struct page *)a)->index, y = ((const struct page *)b)->index;
    return x < y ? -1 : x > y;
}

struct inode *find_inode(dev_t dev, ino_t ino) {
    for (struct inode *i = inodes; i; i = i->next)
        if (i->dev == dev && i->ino == ino) return i;
    return NULL;
}

struct inode *inode_for_fd(int fd) {
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

void drop_pages(struct inode *i) {
    tdestroy(i->pages, free);
    i->pages = NULL;
    i->npages = 0;
}

/* Forgets an inode's state once nothing refers to it: no open handle and no unsynced page (or no name left). */
void release_if_idle(struct inode *i, int gone) {
    if (i->opens > 0 || (i->npages > 0 && !gone)) return;
    drop_pages(i);
    if (i->wfd >= 0) close(i->wfd);
    for (struct inode **p = &inodes; *p; p = &(*p)->next)
        if (*p == i) { *p = i->next; break; }
    free(i);
}

struct page *get_page(struct inode *i, off_t index) {
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

/* A new page for a write at index: the page as the writer would see it, the backing bytes up to the current size and
 * zeros after. */
int add_page(struct inode *i, int fd, off_t index, struct page **out) {
    struct page *p = malloc(sizeof *p);
    if (!p) return -ENOMEM;
    p->index = index;
    off_t start = index * PAGE;
    size_t have = i->size > start ? (i->size - start < PAGE ? (size_t)(i->size - start) : PAGE) : 0;
    int r = read_backing(fd, p->data, have, start);
    if (r < 0) { free(p); return r; }
    memset(p->data + have, 0, PAGE - have);
    if (!tsearch(p, &i->pages, cmp_page)) { free(p); return -ENOMEM; }
    i->npages++;
    *out = p;
    return 0;
}

/* Reads the backing file's bytes, zeros past its end. */
int read_backing(int fd, unsigned char *buf, size_t len, off_t off) {
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

int write_back(struct inode *i, int fd, int datasync) {
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

/* A clean unmount writes every held page back. */
void write_back_all(void) {
    for (struct inode *i = inodes; i; i = i->next)
        if (i->npages && i->wfd >= 0) write_back(i, i->wfd, 0);
}

void truncate_inode(struct inode *i, off_t size) {
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
