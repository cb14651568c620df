/* cleanup.h - files and directories removed if the process is stopped by a
 * signal before it is done with them.
 *
 * A tool that writes a temporary file (an output renamed into place at the
 * end, a C bundle's build directory) registers its path; when the work is
 * finished (committed or removed by the tool itself) it unregisters it. If
 * SIGINT, SIGTERM, SIGHUP or SIGQUIT arrives in between, the handler removes
 * every registered path (files with unlink, directories with rmdir, in the
 * reverse order of registration, so a directory's files go first) and then
 * lets the signal take its default action, so the exit status still says
 * which signal stopped the process.
 *
 * SIGXFSZ (a write past the file-size limit) is ignored once anything is
 * registered: the write then fails with EFBIG, and the tool's own error path
 * reports it and removes its temporary files.
 *
 * The table is fixed-size and written only by the thread that registers;
 * the handler reads it with async-signal-safe calls only.
 */
#ifndef GLOW_SUPPORT_CLEANUP_H
#define GLOW_SUPPORT_CLEANUP_H

/* Registers a path (a copy is kept); returns a handle for cleanup_remove,
 * or -1 when the table is full or the path too long (the path is then not
 * protected, which is never an error for the caller). */
int cleanup_add_file(const char *path);
int cleanup_add_dir(const char *path);
/* Forgets a registration (the path itself is left alone); -1 is ignored. */
void cleanup_remove(int handle);
/* Removes every registered path now, as the signal handler would, and
 * forgets them (for fatal paths that exit without unwinding). */
void cleanup_run(void);

#endif
