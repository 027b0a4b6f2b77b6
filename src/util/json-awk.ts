/**
 * A strict JSON reader in POSIX awk (busybox, mawk and gawk run it alike), for the rendered scripts that read the API
 * server's and Prometheus' answers without jq. Linear in the document: awk splits it at every `"` (RS), so a record
 * is either the text between two strings (punctuation, numbers, literals, whitespace: cut into tokens by one gsub and
 * one split) or a string's content, taken whole; no record is walked character by character and no string grows by
 * concatenation past STRING_CAP (a longer string is read, not kept).
 *
 * The document must end with a newline (`printf '%s\n' "$body" | awk ...`): the last record then is the text after
 * the last string, which is how an unterminated string is told from a complete document.
 *
 * A program is this reader followed by its handler functions:
 * - `take(v, s)`: a scalar value `v` (a string's content, unescaped, when `s` is 1; else the literal as written);
 * - `opened(t)`: an object (`t` "o") or an array ("a") opens, before it is pushed on the stack;
 * - `finish()`: at the end; `err` is "" for a well-formed document, else why it is not.
 * At a call the stack describes where the value is: depth `jd`, and for each level `i` its type `jt[i]` ("o", "a"),
 * its current key `jk[i]` (objects) or index `ji[i]` (arrays); `jpath()` spells it `.data.result[0]`.
 */

/** Longest string content kept, in bytes: keys and compared values are far shorter; a longer one is cut and marked. */
export const STRING_CAP = 4096;

export const JSON_READER_AWK = String.raw`BEGIN { RS = "\""; jd = 0; want = "value"; instr = 0; laststr = 0; err = "" }
function bad(why) { if (err == "") err = why }
function jpath(   i, p) { p = ""; for (i = 1; i <= jd; i++) p = p (jt[i] == "o" ? "." jk[i] : "[" ji[i] "]"); return p }
function after() { want = jd == 0 ? "end" : "," }
function misplaced() { bad(want == "end" ? "more after the end" : "a value where " want " was expected") }
function value(v, s) {
  if (want == "key") { if (s) { jk[jd] = v; want = ":" } else bad("a key that is not a string"); return }
  if (want != "value") { misplaced(); return }
  jf[jd] = 0; take(v, s); after()
}
function open(t) {
  if (want != "value") { misplaced(); return }
  jf[jd] = 0; opened(t); jd++; jt[jd] = t; ji[jd] = 0; jk[jd] = ""; jf[jd] = 1; want = t == "o" ? "key" : "value"
}
function shut(t) {
  if (jd == 0 || jt[jd] != t || !(want == "," || (jf[jd] && want == (t == "o" ? "key" : "value")))) { bad("a misplaced " (t == "o" ? "}" : "]")); return }
  jd--; after()
}
function comma() { if (want != ",") { bad("a misplaced ,"); return } if (jt[jd] == "a") { ji[jd]++; want = "value" } else want = "key" }
function literal(w) {
  if (w ~ /^(true|false|null)$/ || w ~ /^-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][-+]?[0-9]+)?$/) value(w, 0)
  else bad("a stray " substr(w, 1, 40))
}
function outside(r,   n, i, p, part) {
  gsub(/[{}:,]|\[|\]/, "\n&\n", r)
  n = split(r, part, "\n")
  for (i = 1; i <= n && err == ""; i++) {
    p = part[i]
    if (p == "{") open("o"); else if (p == "[") open("a"); else if (p == "}") shut("o"); else if (p == "]") shut("a")
    else if (p == ",") comma(); else if (p == ":") { if (want == ":") want = "value"; else bad("a misplaced :") }
    else { gsub(/^[ \t\r]+|[ \t\r]+$/, "", p); if (p != "") literal(p) }
  }
}
function unesc(s,   out, i, c) {
  out = ""
  while ((i = index(s, "\\")) > 0) {
    c = substr(s, i + 1, 1)
    out = out substr(s, 1, i - 1) (c == "\"" || c == "\\" || c == "/" ? c : c ~ /[bfnrt]/ ? " " : "\\" c)
    s = substr(s, i + 2)
  }
  return out s
}
# the content of a string, kept up to STRING_CAP bytes; an odd run of backslashes at the end of a record escapes the quote
function piece(r,   n, k) {
  n = length(r); k = 0; tot += n
  if (tot == n && n <= ${STRING_CAP} && substr(r, n, 1) != "\\") { instr = 0; value(index(r, "\\") ? unesc(r) : r, 1); return }
  while (k < n && substr(r, n - k, 1) == "\\") k++
  if (slen < ${STRING_CAP}) { str = str substr(r, 1, ${STRING_CAP} - slen); slen = length(str) }
  if (k % 2 == 1) { tot++; if (slen < ${STRING_CAP}) { str = str "\""; slen++ } return }
  if (tot > ${STRING_CAP}) str = str "..."
  instr = 0; value(unesc(str), 1)
}
err != "" { next }
{
  if (instr) { laststr = 1; piece($0); next }
  laststr = 0; instr = 1
  if ($0 == ":") { if (want == ":") want = "value"; else bad("a misplaced :") } else if ($0 == ",") comma(); else outside($0)
  str = ""; slen = 0; tot = 0
}
END {
  if (err == "" && laststr) bad("an unterminated string")
  if (err == "" && want != "end") bad(jd > 0 || want != "value" ? "cut short" : "empty")
  finish()
}
`;

// the scripts hold the program between single quotes
if (JSON_READER_AWK.includes('\'')) throw new Error('JSON_READER_AWK holds a single quote');
