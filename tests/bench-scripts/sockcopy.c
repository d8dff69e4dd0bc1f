/* sockcopy.c — what a write of N event lines (806 bytes each) to each of 1000 Unix stream
 * sockets costs per byte, with a reader thread (epoll, 64 KiB reads) on the other vCPU, as the
 * fan-out load generator reads: the writer on CPU 0, the reader on CPU 1, N from 1 to 512
 * lines a write (in `writev`s of at most 64, as hld's flusher writes), two passes.
 *   gcc -O2 -pthread -o /tmp/sockcopy tests/bench-scripts/sockcopy.c && /tmp/sockcopy
 * Prints the writer's wall and CPU time per byte, and how long the reader took to drain. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SOCKS 1000
#define LINE 806
static int sv[SOCKS][2];
static volatile long total_read = 0;

static double clock_ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *reader(void *unused) {
  (void)unused;
  pin(1);
  int ep = epoll_create1(0);
  for (int i = 0; i < SOCKS; i++) {
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
    epoll_ctl(ep, EPOLL_CTL_ADD, sv[i][1], &ev);
  }
  static char buf[65536];
  struct epoll_event evs[256];
  for (;;) {
    int n = epoll_wait(ep, evs, 256, -1);
    for (int k = 0; k < n; k++) {
      int r = read(sv[evs[k].data.u32][1], buf, sizeof buf);
      if (r > 0) __sync_fetch_and_add(&total_read, r);
    }
  }
  return NULL;
}

/* Writes `lines` lines to `fd`, waiting (spinning) while the socket is full. */
static void write_lines(int fd, struct iovec *iov, int lines) {
  ssize_t left = (ssize_t)lines * LINE;
  while (left > 0) {
    int k = (int)(left / LINE < 64 ? left / LINE : 64);
    ssize_t w = writev(fd, iov, k);
    if (w < 0) {
      sched_yield();
      continue;
    }
    left -= w;
    /* A partial line: finish it. */
    while (left % LINE) {
      ssize_t x = write(fd, iov[0].iov_base, left % LINE);
      if (x > 0) left -= x; else sched_yield();
    }
  }
}

int main(void) {
  int sndbuf = 1 << 20; /* hld's subscriber sockets have 1 MB */
  for (int i = 0; i < SOCKS; i++) {
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i])) { perror("socketpair"); return 1; }
    setsockopt(sv[i][0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    fcntl(sv[i][0], F_SETFL, O_NONBLOCK);
    fcntl(sv[i][1], F_SETFL, O_NONBLOCK);
  }
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  pin(0);
  static char line[LINE];
  memset(line, 'x', LINE);
  struct iovec iov[64];
  for (int i = 0; i < 64; i++) iov[i] = (struct iovec){.iov_base = line, .iov_len = LINE};
  int counts[] = {1, 4, 16, 64, 128, 256, 512};
  for (int pass = 0; pass < 2; pass++)
    for (unsigned c = 0; c < sizeof counts / sizeof *counts; c++) {
      int lines = counts[c];
      double bytes = (double)lines * LINE * SOCKS;
      long target = total_read + (long)bytes;
      double w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
      for (int i = 0; i < SOCKS; i++) write_lines(sv[i][0], iov, lines);
      double w1 = clock_ns(CLOCK_MONOTONIC), c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
      while (total_read < target) {}
      double w2 = clock_ns(CLOCK_MONOTONIC);
      printf("%3d lines a socket: write %.2f ns/byte wall, %.2f CPU; drained %.1f ms later\n",
             lines, (w1 - w0) / bytes, (c1 - c0) / bytes, (w2 - w1) / 1e6);
    }
  return 0;
}
