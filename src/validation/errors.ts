/**
 * The one way the library refuses what a user built, modelled on aws-cdk's `ValidationError(msg,
 * scope)`: the error takes the construct that refuses (or, for a factory that has none, the factory's
 * name) and its message starts with that construct's kind and path ("LogCollectorDaemonSet
 * chart/logs", the construct the user built even when one built inside it refuses, see owner.ts) or
 * the factory ("FluentBitFilter.grep"), then the prop, the bad value and the fix. The prefix is built
 * here and in owner.ts only (test/lib/errors.test.ts greps src/ for any other).
 */
import { IConstruct } from 'constructs';
import { describeConstruct, kindOf } from './owner';

/**
 * Who refuses: a construct of this library (it registered its kind), or, where there is no construct,
 * a name: the factory the user called ("FluentBitFilter.grep"), or the object a tool reads.
 */
export type RefusedBy = IConstruct | string;

/** An error in a construct's props or a factory's arguments, prefixed by who refuses them. */
export class ValidationError extends Error {
  /** The construct that refused, as aws-cdk's errors carry it; absent for a factory. */
  public readonly construct?: IConstruct;

  public constructor(by: RefusedBy, message: string) {
    super(`${nameOf(by)}: ${message}`);
    this.name = 'ValidationError';
    if (typeof by !== 'string') this.construct = by;
  }
}

/**
 * The prefix of what `by` refuses or warns about: a factory's name, or "<Kind> <path>" of the construct
 * the user built (see describeConstruct); a root construct, whose path is empty, is named by its kind.
 */
export function nameOf(by: RefusedBy): string {
  if (typeof by === 'string') return by;
  return by.node.path === '' ? kindOf(by) : describeConstruct(by);
}

/** How `throwIfProblems` words its error. */
export interface ProblemsWording {
  /** What the problems are in, after who refuses: a method ("runbook") or a prop ("promotion"). */
  readonly at?: string;
  /** Lists every problem under it, one too ("invalid props"). */
  readonly heading?: string;
}

/**
 * The one way to raise what a check returned: one ValidationError for all problems, raised by `by`.
 * Without a heading one problem reads "<by>: problem" and several "<by>: N problems:" then one per
 * line; with a heading (the constructs' "invalid props") every problem is listed under it; `at`
 * comes first ("<by>: runbook: problem").
 */
export function throwIfProblems(by: RefusedBy, problems: readonly string[], wording: ProblemsWording = {}): void {
  if (problems.length === 0) return;
  const list = `\n  - ${problems.join('\n  - ')}`;
  const text = wording.heading !== undefined ? `${wording.heading}:${list}` : problems.length === 1 ? problems[0] : `${problems.length} problems:${list}`;
  throw new ValidationError(by, wording.at === undefined ? text : `${wording.at}: ${text}`);
}
