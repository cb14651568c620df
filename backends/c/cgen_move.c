/* cgen_move.c - the emitter of the data-movement kinds (transpose, slices,
 * concatenation pieces, tiles, gathers, ...): data movement of any element
 * kind is one strided copy (cb_copy_nd) or a reference kernel over raw
 * elements. */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cb_copy_nd(dst + doff, ds, src + soff, ss, dims, rank) */
static void emit_copy_nd(struct cg *g, struct ir_value *dst, int64_t doff, const int64_t *ds0, struct ir_value *src,
			 int64_t soff, const int64_t *ss0, const int64_t *dims0, unsigned rank0)
{
	size_t es = elem_size((enum elem_kind)dst->type->elem);
	char a[96], o[96];
	/* drop dimensions of size 1, merge neighbours contiguous in both */
	int64_t ds[GLOW_MAX_RANK + 2], ss[GLOW_MAX_RANK + 2], dims[GLOW_MAX_RANK + 2];
	unsigned rank = 0;
	for (unsigned i = 0; i < rank0; i++) {
		if (dims0[i] == 1)
			continue;
		if (rank && ds[rank - 1] == ds0[i] * dims0[i] && ss[rank - 1] == ss0[i] * dims0[i]) {
			dims[rank - 1] *= dims0[i];
			ds[rank - 1] = ds0[i];
			ss[rank - 1] = ss0[i];
			continue;
		}
		dims[rank] = dims0[i];
		ds[rank] = ds0[i];
		ss[rank] = ss0[i];
		rank++;
	}
	/* a short strided innermost run over a longer one: loop the longer one
	 * innermost (fewer, longer runs) */
	if (rank >= 2 && dims[rank - 1] < 16 && dims[rank - 2] > dims[rank - 1] &&
	    !(ss[rank - 1] == 1 && ds[rank - 1] == 1)) {
		int64_t t;
		t = dims[rank - 1], dims[rank - 1] = dims[rank - 2], dims[rank - 2] = t;
		t = ds[rank - 1], ds[rank - 1] = ds[rank - 2], ds[rank - 2] = t;
		t = ss[rank - 1], ss[rank - 1] = ss[rank - 2], ss[rank - 2] = t;
	}
	unsigned t1 = cg_i64_table(g, ds, rank), t2 = cg_i64_table(g, ss, rank), t3 = cg_i64_table(g, dims, rank);
	os_printf(g->body, "\tcb_copy_nd((uint8_t *)%s + %" PRId64 ", tb%u, (const uint8_t *)%s + %" PRId64
		  ", tb%u, tb%u, %u, %zu);\n",
		  PTR(dst, "void", o), doff * (int64_t)es, t1, PTR(src, "void", a), soff * (int64_t)es, t2, t3, rank,
		  es);
}

void cg_emit_move(struct cg *g, struct ir_instr *in)
{
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	const struct type *dt = dst->type, *st = src->type;
	int64_t ds[GLOW_MAX_RANK + 1], ss[GLOW_MAX_RANK + 1], dims[GLOW_MAX_RANK + 1];
	unsigned rank = dt->rank;
	if (rank > 7) {
		cg_unsupported(g, in, "rank above 7");
		return;
	}
	int64_t sst[GLOW_MAX_RANK + 1], dst_[GLOW_MAX_RANK + 1];
	cg_strides_of(st, sst);
	cg_strides_of(dt, dst_);
	unsigned n;
	switch (in->kind) {
	case IK_transpose: {
		const int64_t *sh = ir_ints(in, AN_shuffle, &n);
		for (unsigned i = 0; i < rank; i++) {
			dims[i] = (int64_t)dt->dims[i];
			ds[i] = dst_[i];
			ss[i] = sst[sh[i]];
		}
		emit_copy_nd(g, dst, 0, ds, src, 0, ss, dims, rank);
		return;
	}
	case IK_extracttensor: {
		const int64_t *start = ir_ints(in, AN_start, &n);
		int64_t off = 0;
		for (unsigned i = 0; i < rank; i++)
			off += start[i] * sst[i];
		for (unsigned i = 0; i < rank; i++)
			dims[i] = (int64_t)dt->dims[i];
		emit_copy_nd(g, dst, 0, dst_, src, off, sst, dims, rank);
		return;
	}
	case IK_inserttensor: {
		const int64_t *start = ir_ints(in, AN_start, &n);
		int64_t count = ir_int(in, AN_count), axis = ir_int(in, AN_axis);
		for (int64_t c = 0; c < count; c++) {
			int64_t off = 0;
			for (unsigned i = 0; i < rank; i++)
				off += (start[i] + ((int64_t)i == axis ? c * (int64_t)st->dims[i] : 0)) * dst_[i];
			for (unsigned i = 0; i < rank; i++)
				dims[i] = (int64_t)st->dims[i];
			emit_copy_nd(g, dst, off, dst_, src, 0, sst, dims, rank);
		}
		return;
	}
	case IK_tile: {
		unsigned axis = (unsigned)ir_int(in, AN_axis);
		unsigned j = 0;
		for (unsigned i = 0; i < rank; i++) {
			if (i == axis) {
				dims[j] = ir_int(in, AN_count);
				ds[j] = dst_[i] * (int64_t)st->dims[i];
				ss[j++] = 0;
			}
			dims[j] = (int64_t)st->dims[i];
			ds[j] = dst_[i];
			ss[j++] = sst[i];
		}
		emit_copy_nd(g, dst, 0, ds, src, 0, ss, dims, j);
		return;
	}
	case IK_broadcast: {
		unsigned axis = (unsigned)ir_int(in, AN_axis);
		for (unsigned i = 0; i < rank; i++) {
			dims[i] = (int64_t)dt->dims[i];
			ss[i] = 0;
			if (i >= axis && i - axis < st->rank && st->dims[i - axis] == dt->dims[i])
				ss[i] = sst[i - axis];
		}
		emit_copy_nd(g, dst, 0, dst_, src, 0, ss, dims, rank);
		return;
	}
	case IK_flip: {
		unsigned axis = (unsigned)ir_int(in, AN_axis);
		for (unsigned i = 0; i < rank; i++) {
			dims[i] = (int64_t)dt->dims[i];
			ss[i] = i == axis ? -sst[i] : sst[i];
		}
		int64_t off = dims[axis] > 0 ? (dims[axis] - 1) * sst[axis] : 0;
		emit_copy_nd(g, dst, 0, dst_, src, off, ss, dims, rank);
		return;
	}
	case IK_spacetodepth: case IK_depthtospace: {
		/* the spatial side viewed as N x H/b x b x W/b x b x C, the
		 * depth side as N x H/b x W/b x (b x b x C) (dcr) or
		 * (C x b x b) (crd) */
		bool to_depth = in->kind == IK_spacetodepth;
		const struct type *big = to_depth ? st : dt;
		int64_t b = ir_int(in, AN_block_size), N = (int64_t)big->dims[0], H = (int64_t)big->dims[1],
			W = (int64_t)big->dims[2], C = (int64_t)big->dims[3];
		bool crd = !to_depth && ir_int(in, AN_mode) == 1;
		int64_t oh = H / b, ow = W / b, oc = C * b * b;
		int64_t sp[6] = {H * W * C, b * W * C, W * C, b * C, C, 1}; /* n, y, by, x, bx, c */
		int64_t dp[6] = {oh * ow * oc, ow * oc, crd ? b : b * C, oc, crd ? 1 : C, crd ? b * b : 1};
		int64_t d6[6] = {N, oh, b, ow, b, C};
		if (to_depth)
			emit_copy_nd(g, dst, 0, dp, src, 0, sp, d6, 6);
		else
			emit_copy_nd(g, dst, 0, sp, src, 0, dp, d6, 6);
		return;
	}
	case IK_pad: {
		if (ir_int(in, AN_mode) != 0) {
			const int64_t *pads = ir_ints(in, AN_pads, &n);
			unsigned t1 = cg_dims_table(g, st), t2 = cg_dims_table(g, dt), t3 = cg_i64_table(g, pads, rank);
			char a[96], o[96];
			os_printf(g->body, "\tcb_pad_mode(%s, tb%u, %s, tb%u, tb%u, %u, %d, %zu);\n", PTR(src, "void", a), t1,
				  PTR(dst, "void", o), t2, t3, rank, (int)ir_int(in, AN_mode),
				  elem_size((enum elem_kind)dt->elem));
			return;
		}
		if (!cg_ctype(dt->elem)) {
			cg_unsupported(g, in, "constant padding of this element kind is not compiled");
			return;
		}
		const int64_t *pads = ir_ints(in, AN_pads, &n);
		char o[96];
		double val = ir_float(in, AN_value);
		os_printf(g->body, "\tfor (size_t i = 0; i < %" PRIu64 "u; i++)\n\t\t%s[i] = (%s)%.17g;\n",
			  type_numel(dt), PTR(dst, cg_ctype(dt->elem), o), cg_ctype(dt->elem), val);
		int64_t doff = 0, soff = 0;
		for (unsigned i = 0; i < rank; i++) {
			int64_t b = pads[i];
			int64_t lo = b < 0 ? -b : 0; /* cropped from the source */
			int64_t d0 = b > 0 ? b : 0;
			int64_t len = (int64_t)st->dims[i] - lo;
			if (len > (int64_t)dt->dims[i] - d0)
				len = (int64_t)dt->dims[i] - d0;
			if (len <= 0)
				return;
			dims[i] = len;
			doff += d0 * dst_[i];
			soff += lo * sst[i];
		}
		emit_copy_nd(g, dst, doff, dst_, src, soff, sst, dims, rank);
		return;
	}
	default: unreachable("not a data movement kind");
	}
}
