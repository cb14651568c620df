/* textlex.re - the lexical rules the graph IR and instruction IR lexers
 * share (glow.re, gir.re include it inside their re2c block, before their
 * own rules): names' characters, identifiers, numbers, blanks, comments,
 * the end of the input. An including lexer defines LEX_T(NAME), its token
 * NAME (END, INT, FLOAT), and the functions lex_tok and lex_error, and
 * declares tok, cur, bol, cbuf and lval as both lexers do.
 */
bare = [A-Za-z0-9_.$-]+;
ident = [A-Za-z_][A-Za-z0-9_]*;
digits = [0-9]+;
exp = [eE] [+-]? digits;

"\x00" {
	if ((const char *)tok >= p->r.lim)
		return lex_tok(p, lloc, LEX_T(END), tok, tok, true);
	return lex_error(p, lloc, tok, cur, tok, "invalid character %s", tp_char_name(0, cbuf, sizeof cbuf));
}
[ \t\r]+ { continue; }
"\n" { bol = true; continue; }
"//" [^\n\x00]* { continue; }
[%@] { return lex_error(p, lloc, tok, cur, tok, "expected a name after '%s'", *tok == '%' ? "%" : "@"); }

"-"? digits {
	if (!tp_i64(tok, cur, &lval->i))
		return lex_error(p, lloc, tok, cur, tok, "%s", "integer out of range (64-bit signed)");
	return lex_tok(p, lloc, LEX_T(INT), tok, cur, bol);
}
"-"? (digits "." [0-9]* exp? | digits exp) {
	if (!tp_f64(tok, cur, &lval->f))
		return lex_error(p, lloc, tok, cur, tok, "%s", "floating-point number out of range");
	return lex_tok(p, lloc, LEX_T(FLOAT), tok, cur, bol);
}
"nan" { lval->f = NAN; return lex_tok(p, lloc, LEX_T(FLOAT), tok, cur, bol); }
"inf" { lval->f = INFINITY; return lex_tok(p, lloc, LEX_T(FLOAT), tok, cur, bol); }
"-inf" { lval->f = -INFINITY; return lex_tok(p, lloc, LEX_T(FLOAT), tok, cur, bol); }
