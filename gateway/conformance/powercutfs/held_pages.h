/* The unsynced state of the files under powercutfs: each backing inode's written pages, held in memory until that
 * inode is fsynced. The caller holds its own lock around every call. */
#ifndef HELD_PAGES_H
#define HELD_PAGES_H
#include <sys/types.h>

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

struct inode *find_inode(dev_t dev, ino_t ino);
struct inode *inode_for_fd(int fd);
void drop_pages(struct inode *i);
void release_if_idle(struct inode *i, int gone);
struct page *get_page(struct inode *i, off_t index);
int add_page(struct inode *i, int fd, off_t index, struct page **out);
int read_backing(int fd, unsigned char *buf, size_t len, off_t off);
int write_back(struct inode *i, int fd, int datasync);
void write_back_all(void);
void truncate_inode(struct inode *i, off_t size);
#endif
