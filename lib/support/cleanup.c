/* cleanup.c - see cleanup.h. */
#define _POSIX_C_SOURCE 200809L
#include "cleanup.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define CLEANUP_SLOTS 64
#define CLEANUP_PATH 4096

struct slot {
	volatile sig_atomic_t used; /* 0 free, 1 file, 2 directory */
	char path[CLEANUP_PATH];
};

static struct slot slots[CLEANUP_SLOTS];
static int installed;

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* files first, then directories (emptied by the first pass) */
static void remove_all(void)
{
	for (int i = 0; i < CLEANUP_SLOTS; i++)
		if (slots[i].used == 1) {
			unlink(slots[i].path);
			slots[i].used = 0;
		}
	for (int i = CLEANUP_SLOTS - 1; i >= 0; i--)
		if (slots[i].used == 2) {
			rmdir(slots[i].path);
			slots[i].used = 0;
		}
}

static void on_signal(int sig)
{
	remove_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install(void)
{
	if (installed)
		return;
	installed = 1;
	for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++) {
		struct sigaction old;
		if (sigaction(caught[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue; /* started ignoring it (nohup): keep that */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigfillset(&sa.sa_mask);
		sigaction(caught[i], &sa, NULL);
	}
	signal(SIGXFSZ, SIG_IGN);
}

static int add(const char *path, int kind)
{
	size_t n = strlen(path);
	if (n >= CLEANUP_PATH)
		return -1;
	install();
	for (int i = 0; i < CLEANUP_SLOTS; i++) {
		if (slots[i].used)
			continue;
		memcpy(slots[i].path, path, n + 1);
		slots[i].used = kind; /* published after the path is complete */
		return i;
	}
	return -1;
}

int cleanup_add_file(const char *path)
{
	return add(path, 1);
}

int cleanup_add_dir(const char *path)
{
	return add(path, 2);
}

void cleanup_remove(int handle)
{
	if (handle >= 0 && handle < CLEANUP_SLOTS)
		slots[handle].used = 0;
}

void cleanup_run(void)
{
	remove_all();
}
