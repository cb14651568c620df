/* rules_device.c - the verifier rules of the device-memory instructions
 * (Instrs.def: copytodevice, copyfromdevice, devicewait; docs/OpenCL.md).
 *
 * A device copy moves a whole buffer between the host and the device: the
 * host side is a mutable weight (a placeholder, which lives in host memory
 * because the caller binds it) and the device side an alloc (activations
 * are device memory on a device backend), seen whole or through a view. The
 * two sides have one type. A wait names the device side of a copy that
 * precedes it and has not been waited for yet, so every copy is completed
 * at a point the text shows: a copy without a later wait on its device side
 * is an error, and so is a wait without a copy to complete.
 */
#include "ir/rules.h"

#include <string.h>

/* The buffer v lives in: a weight, an alloc, or NULL. */
static struct ir_value *root_of(const struct ir_instr *in, unsigned i)
{
	uint64_t off = 0;
	return ir_value_root(in->ops[i].val, &off);
}

static bool is_host(const struct ir_value *r)
{
	const struct ir_weight *w = r && r->vkind == IV_WEIGHT ? (const struct ir_weight *)(const void *)r : NULL;
	return w && !w->is_const;
}

static bool is_device(const struct ir_value *r) { return r && r->vkind == IV_ALLOC; }

/* dir 0: host to device (Dest an alloc, Src a mutable weight); 1: back */
static void device_copy_rule(struct ir_verifier *v, const struct ir_instr *in, int dir)
{
	ir_rule_copy(v, in);
	struct ir_value *dst = root_of(in, 0), *src = root_of(in, 1);
	struct ir_value *dev = dir == 0 ? dst : src, *host = dir == 0 ? src : dst;
	if (!is_device(dev))
		ir_verr(v, in, "the device side (%s) must be an activation (an alloc or a view of one)",
			dir == 0 ? "Dest" : "Src");
	if (!is_host(host))
		ir_verr(v, in, "the host side (%s) must be a mutable weight (a placeholder) or a view of one",
			dir == 0 ? "Src" : "Dest");
	const struct ir_value *b = in->ops[dir].val;
	const struct ir_instr *p = in->next;
	while (p && !(p->kind == IK_devicewait && p->ops[0].val == b))
		p = p->next;
	if (!p)
		ir_verr(v, in, "no devicewait on %%%s follows the copy", b->name ? b->name : "");
}

void ir_rule_copytodevice(struct ir_verifier *v, const struct ir_instr *in) { device_copy_rule(v, in, 0); }

void ir_rule_copyfromdevice(struct ir_verifier *v, const struct ir_instr *in) { device_copy_rule(v, in, 1); }

/* The latest device copy before `in` whose device side is buffer b, NULL
 * if none; *waited: whether a devicewait on b comes between them. */
static const struct ir_instr *copy_before(const struct ir_instr *in, const struct ir_value *b, bool *waited)
{
	*waited = false;
	for (const struct ir_instr *p = in->prev; p; p = p->prev) {
		if (p->kind == IK_devicewait && p->ops[0].val == b)
			*waited = true;
		if ((p->kind == IK_copytodevice && p->ops[0].val == b) ||
		    (p->kind == IK_copyfromdevice && p->ops[1].val == b))
			return p;
	}
	return NULL;
}

void ir_rule_devicewait(struct ir_verifier *v, const struct ir_instr *in)
{
	const struct ir_value *b = in->ops[0].val;
	bool waited;
	const struct ir_instr *c = copy_before(in, b, &waited);
	const char *name = b->name ? b->name : "";
	if (!c)
		ir_verr(v, in, "%%%s is not the device side of a copytodevice or copyfromdevice before the wait", name);
	else if (waited)
		ir_verr(v, in, "the copy of %%%s was already waited for", name);
}
