/**
 * What the library says about props that are valid but likely not what was meant: recorded on the
 * construct as `warning` metadata (the constructs library's own channel, which tools and tests
 * read) and emitted on the process's warning channel, which Node prints to stderr during
 * `cdk8s synth` (silence it with `--no-warnings`). Never a refusal: the value may be right.
 */
import { IConstruct } from 'constructs';
import { nameOf } from './errors';

/** The metadata type of a warning. */
export const WARNING_METADATA = 'warning';
/** The code of the library's process warnings. */
export const WARNING_CODE = 'CDK8S_NODE_AGENTS';

/** Records and emits `<Kind> <path>: message` for `construct` (named as its errors are, see nameOf). */
export function addWarning(construct: IConstruct, message: string): void {
  const text = `${nameOf(construct)}: ${message}`;
  construct.node.addMetadata(WARNING_METADATA, text);
  process.emitWarning(text, { code: WARNING_CODE });
}

/** The warnings recorded on `construct` and below it. */
export function warningsOf(construct: IConstruct): string[] {
  return construct.node.findAll().flatMap((c) => c.node.metadata.filter((m) => m.type === WARNING_METADATA).map((m) => String(m.data)));
}
