/* dlist.h - intrusive doubly linked lists: the element has prev and next
 * fields, the owner first and last pointers. Used for the graph IR's node
 * and storage lists and the instruction IR's instruction and weight lists.
 *
 *   DLIST_APPEND(f->first, f->last, n)
 *   DLIST_INSERT(f->first, f->last, n, before)  before a null pointer: append
 *   DLIST_REMOVE(f->first, f->last, n)          leaves n->prev/next NULL
 */
#ifndef GLOW_SUPPORT_DLIST_H
#define GLOW_SUPPORT_DLIST_H

#include <stddef.h>

#define DLIST_APPEND(first, last, n)                 \
	do {                                         \
		(n)->prev = (last);                  \
		(n)->next = NULL;                    \
		if (last)                            \
			(last)->next = (n);          \
		else                                 \
			(first) = (n);               \
		(last) = (n);                        \
	} while (0)

#define DLIST_INSERT(first, last, n, before)         \
	do {                                         \
		if (!(before)) {                     \
			DLIST_APPEND(first, last, n); \
		} else {                             \
			(n)->next = (before);        \
			(n)->prev = (before)->prev;  \
			if ((before)->prev)          \
				(before)->prev->next = (n); \
			else                         \
				(first) = (n);       \
			(before)->prev = (n);        \
		}                                    \
	} while (0)

#define DLIST_REMOVE(first, last, n)                 \
	do {                                         \
		if ((n)->prev)                       \
			(n)->prev->next = (n)->next; \
		else                                 \
			(first) = (n)->next;         \
		if ((n)->next)                       \
			(n)->next->prev = (n)->prev; \
		else                                 \
			(last) = (n)->prev;          \
		(n)->prev = (n)->next = NULL;        \
	} while (0)

#endif
