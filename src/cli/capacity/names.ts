/**
 * A name read from a cluster dump, for messages: names the API server accepts (DNS subdomains and labels,
 * at most 253 characters) come out as they are; anything else (a dump edited by hand, a forged pod) has every
 * character outside [A-Za-z0-9._-] replaced by `?`, so no name carries markup, a terminal escape or a shell
 * metacharacter into text, markdown or JSON output. Bounded: at most 253 characters.
 */
export function displayName(name: string): string {
  if (name.length <= 253 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) return name;
  return name.slice(0, 253).replace(/[^A-Za-z0-9._-]/g, '?');
}
