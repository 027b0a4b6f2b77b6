/**
 * The one way the library fails on what a user built: a ValidationError whose message starts with
 * where it happened, either the construct the user built ("LogCollectorDaemonSet chart/logs", from
 * `constructWhere`) or the factory they called ("FluentBitFilter.grep"), then the prop, the bad
 * value and the fix. The prefix is built here and in owner.ts only: no other error names a
 * construct's path by hand (test/lib/errors.test.ts greps for it).
 */
import { IConstruct } from 'constructs';
import { describeConstruct } from './owner';

/** An error in a construct's props or a factory's arguments, prefixed by where it happened. */
export class ValidationError extends Error {
  /** @param where the construct ("<Kind> <path>", see `constructWhere`) or the factory */
  public constructor(where: string, message: string) {
    super(`${where}: ${message}`);
    this.name = 'ValidationError';
  }
}

/**
 * "<Kind> <path>" of the construct the user built (see describeConstruct); a root construct, whose
 * path is empty, is named by its kind alone.
 */
export function constructWhere(construct: IConstruct, kind: string): string {
  return construct.node.path === '' ? kind : describeConstruct(construct, kind);
}

/**
 * Throws one ValidationError for all problems, prefixed by `where`. Without a heading one problem
 * reads "where: problem" and several "where: N problems:" then one per line; with a heading (the
 * constructs' "invalid props") every problem is listed under it.
 */
export function throwIfProblems(where: string, problems: readonly string[], heading?: string): void {
  if (problems.length === 0) return;
  const list = `\n  - ${problems.join('\n  - ')}`;
  if (heading !== undefined) throw new ValidationError(where, `${heading}:${list}`);
  if (problems.length === 1) throw new ValidationError(where, problems[0]);
  throw new ValidationError(where, `${problems.length} problems:${list}`);
}

/**
 * Runs `build`, turning a plain Error raised by a pure helper that knows no construct (a shared check,
 * a renderer) into a ValidationError prefixed by `where`. ValidationErrors pass as they are, and so do
 * crashes (a TypeError is a bug, not a refusal).
 */
export function refusedAs<T>(where: string, build: () => T): T {
  try {
    return build();
  } catch (e) {
    if (e instanceof Error && e.constructor === Error) throw new ValidationError(where, e.message);
    throw e;
  }
}
